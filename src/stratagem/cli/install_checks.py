"""What `stratagem doctor` checks of the install, one line each: Python, the package and what it
ships, its dependencies, each optional extra, the embedded model actually answering, a browser for
`view` and `play --web`, and which API keys are set (their names only: a value is never read into
a line).

Each check is a function registered with `@check`, in the order they print; the extras and the
dependencies come from the installed package's own metadata (pyproject), not from a list here.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import webbrowser
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, requires, version
from pathlib import Path

from stratagem.cli.shipped import DOCS, EXAMPLES, example_files, shipped
from stratagem.experiments.play import DEFAULT_MODEL

MIN_PYTHON = (3, 11)
PROBE_MODEL = DEFAULT_MODEL
"""The model the probe loads and asks one question (`model_probe`): the embedded default."""
PROBE_TIMEOUT_S = 300.0
"""First use assembles the GGUF from its packages (seconds); a load and one reply take ~2 s."""
EXTRA_USE = {
    "openspiel": "openspiel:<game> games",
    "textarena": "textarena:<env id> games",
    "pettingzoo": "stratagem.env, a game as a PettingZoo environment",
    "ray": "run --executor ray",
    "bedrock": "bedrock/<model id> models",
    "axelrod": "the Axelrod strategies",
}
"""What each extra is for, where a line says so; an extra not named here still gets its line."""
SKIPPED_EXTRAS = ("dev",)
"""The test and lint tools: `make test` installs them; a user of the command needs none."""
AWS_VARIABLES = ("AWS_BEARER_TOKEN_BEDROCK", "AWS_ACCESS_KEY_ID", "AWS_PROFILE")
"""Where Bedrock's AWS chain looks first (bedrock.BEARER_ENV, then the SDK's own variables)."""
AWS_FILES = (Path("~/.aws/credentials"), Path("~/.aws/config"))
CHROMIUM = ("/usr/bin/chromium", "/usr/bin/chromedriver")
"""What the browser tests drive (tests/support/browser.py): Debian's chromium, chromium-driver."""


@dataclass(frozen=True)
class Finding:
    """One line of the check; `broken`: the install cannot do what it should (exit status 1)."""

    name: str
    text: str
    broken: bool = False

    def line(self) -> str:
        return f"{self.name}: {self.text}"


Check = Callable[[], Iterator[Finding]]
CHECKS: list[Check] = []


def check(fn: Check) -> Check:
    CHECKS.append(fn)
    return fn


def install_findings() -> Iterator[Finding]:
    """Every registered check's lines, in order."""
    for fn in CHECKS:
        yield from fn()


@check
def _python() -> Iterator[Finding]:
    number = ".".join(str(n) for n in sys.version_info[:3])
    old = sys.version_info[:2] < MIN_PYTHON
    need = f"; stratagem needs {'.'.join(map(str, MIN_PYTHON))} or later" if old else ""
    yield Finding("python", f"{number} ({sys.executable}){need}", broken=old)


@check
def _package() -> Iterator[Finding]:
    try:
        number = version("stratagem")
    except PackageNotFoundError:
        number = "not installed as a package (run from a source tree)"
    where = Path(__file__).resolve().parents[1]
    missing = [name for name in (EXAMPLES, DOCS) if not shipped(name).is_dir()]
    if not example_files():
        missing = sorted({*missing, EXAMPLES})
    if missing:
        yield Finding(
            "stratagem",
            f"{number} at {where}; its {' and '.join(missing)} are missing (reinstall it from a "
            "checkout or a wheel built there)",
            broken=True,
        )
    else:
        yield Finding("stratagem", f"{number} at {where}, with its examples and docs")


def _requirements() -> list[tuple[str, str | None]]:
    """(distribution, extra or None) of each requirement of the installed package."""
    try:
        listed = requires("stratagem") or []
    except PackageNotFoundError:
        return []
    found = []
    for line in listed:
        name = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", line)
        extra = re.search(r"""extra\s*==\s*["']([^"']+)["']""", line)
        if name is not None and _applies(line):
            found.append((name.group(0), extra.group(1) if extra else None))
    return found


def _applies(line: str) -> bool:
    """False for a requirement whose platform marker excludes this machine (uvloop on Windows)."""
    return not ("sys_platform != 'win32'" in line and sys.platform == "win32")


def installed_version(distribution: str) -> str | None:
    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


@check
def _dependencies() -> Iterator[Finding]:
    required = [name for name, extra in _requirements() if extra is None]
    if not required:
        yield Finding("dependencies", "unknown (stratagem is not installed as a package)")
        return
    missing = [name for name in required if installed_version(name) is None]
    if missing:
        yield Finding(
            "dependencies",
            f"{len(missing)} of {len(required)} missing: {', '.join(missing)} (reinstall "
            "stratagem: `make setup` in a checkout, or pip install the wheel again)",
            broken=True,
        )
    else:
        yield Finding("dependencies", f"all {len(required)} installed")


@check
def _extras() -> Iterator[Finding]:
    extras: dict[str, list[str]] = {}
    for name, extra in _requirements():
        if extra is not None and extra not in SKIPPED_EXTRAS:
            extras.setdefault(extra, []).append(name)
    for extra, names in extras.items():
        use = f" ({EXTRA_USE[extra]})" if extra in EXTRA_USE else ""
        versions = {name: installed_version(name) for name in names}
        lacking = [name for name, number in versions.items() if number is None]
        if lacking:
            text = (
                f"not installed{use}: in a checkout `pip install -e '.[{extra}]'` adds it "
                f"(`make setup` installs every extra); lacking {', '.join(lacking)}"
            )
        else:
            shown = ", ".join(f"{name} {number}" for name, number in versions.items())
            text = f"installed{use}: {shown}"
        yield Finding(f"extra {extra}", text)


@check
def _embedded_model() -> Iterator[Finding]:
    """The model loaded and asked one question in a child process: a llama.cpp built for
    instructions this CPU lacks dies of SIGILL, which must not take doctor down with it."""
    started = time.perf_counter()
    command = [sys.executable, "-m", "stratagem.cli.model_probe", PROBE_MODEL]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        yield Finding(
            "embedded model",
            f"{PROBE_MODEL} gave no answer within {PROBE_TIMEOUT_S:.0f} s",
            broken=True,
        )
        return
    took = time.perf_counter() - started
    if done.returncode == 0:
        answer = done.stdout.strip().splitlines()[-1:] or [""]
        yield Finding(
            "embedded model", f"{PROBE_MODEL} loads and answers ({answer[0]!r}, {took:.1f} s)"
        )
        return
    yield Finding("embedded model", f"{PROBE_MODEL} {_failure(done)}", broken=True)


def _failure(done: subprocess.CompletedProcess[str]) -> str:
    if done.returncode < 0:
        name = signal.Signals(-done.returncode).name
        hint = ""
        if name == "SIGILL":
            hint = (
                ": llama-cpp-python was compiled for instructions this CPU lacks; reinstall it "
                "with `pip install --force-reinstall --no-cache-dir llama-cpp-python` (the "
                "Makefile's CMAKE_ARGS leave out AMX)"
            )
        return f"crashed ({name}){hint}"
    last = [line for line in done.stderr.strip().splitlines() if line.strip()][-1:]
    return f"fails: {last[0] if last else f'exit status {done.returncode}'}"


@check
def _browser() -> Iterator[Finding]:
    try:
        found = webbrowser.get()
    except webbrowser.Error:
        yield Finding(
            "browser",
            "none found here: `stratagem view` and `play --web` print their address to open in a "
            "browser elsewhere",
        )
        return
    name = getattr(found, "name", None) or type(found).__name__
    yield Finding("browser", f"{name} (`stratagem view` and `play --web` open it)")


@check
def _browser_tests() -> Iterator[Finding]:
    lacking = [path for path in CHROMIUM if shutil.which(path) is None]
    if lacking:
        text = (
            f"{', '.join(lacking)} missing (Debian's chromium, chromium-driver); those tests skip"
        )
    else:
        text = f"{' and '.join(CHROMIUM)} found"
    yield Finding("browser tests", text)


def _keys_used() -> tuple[tuple[str, str], ...]:
    """The providers' usual key variables; a model entry's `api_key_env` may name any other."""
    from stratagem.llm.providers import anthropic, openai

    return (
        (openai.DEFAULT_KEY_ENV, "openai/... models"),
        (anthropic.DEFAULT_KEY_ENV, "anthropic/... models"),
    )


@check
def _keys() -> Iterator[Finding]:
    keys = _keys_used()
    for variable, use in keys:
        state = "set" if os.environ.get(variable, "").strip() else "not set"
        yield Finding(f"key {variable}", f"{state} ({use})")
    known = {variable for variable, _ in keys}
    others = sorted(
        name
        for name, value in os.environ.items()
        if name.endswith("_API_KEY") and name not in known and value.strip()
    )
    if others:
        yield Finding("other keys set", f"{', '.join(others)} (for a model's api_key_env)")
    yield Finding("AWS credentials", f"{_aws()} (bedrock/... models)")


def _aws() -> str:
    """Where Bedrock would find credentials, as far as the environment and ~/.aws say (SSO
    caches and instance roles are not looked into: that needs the network)."""
    given = [name for name in AWS_VARIABLES if os.environ.get(name, "").strip()]
    if given:
        return f"{', '.join(given)} set"
    files = [
        p for p in (Path("~/.aws/credentials"), Path("~/.aws/config")) if p.expanduser().exists()
    ]
    if files:
        return f"{', '.join(str(p) for p in files)} present"
    return "none in the environment or ~/.aws"
