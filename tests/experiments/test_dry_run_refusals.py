"""Issue 33 items 11 and N3: `run --dry-run` refuses what `run` refuses, with the same line, and a
model string never opens a file.

Before, `local//etc/passwd` opened any path as a GGUF model (and a browser's play request could
name one); `scripted/banana`, a missing API key and a missing Ray passed the dry run and failed the
run (the key and Ray only once the run had created its results directory). Now a local model
is named, its own GGUF file given as `path:`; and the dry run and the run ask the same checks
(`Runner.check`, `registry.check_ready`) before anything is stored or sent."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from support.cli import cli
from support.small_experiment import experiment, write

from stratagem.errors import StratagemError
from stratagem.experiments.config import config_from_dict
from stratagem.experiments.runner import Runner
from stratagem.llm.providers.local import LocalProvider
from stratagem.llm.registry import ModelConfig, create_provider

KEY = "sk-test-never-printed-0123456789"


def refused_alike(capsys: pytest.CaptureFixture[str], file: Path, *flags: str) -> str:
    """The one error line of `run FILE --dry-run`, checked to be the run's own line too; each
    exits 2, prints no plan, creates nothing."""
    lines = []
    for dry in (["--dry-run"], []):
        code, out, err = cli(capsys, "run", str(file), "--no-progress", *flags, *dry)
        assert (code, out) == (2, ""), err
        (line,) = err.strip().splitlines()
        assert line.startswith(f"error: {file}: ") and "Traceback" not in err
        assert not (file.parent / "out").exists()
        lines.append(line.removeprefix("error: "))
    assert lines[0] == lines[1]
    return lines[0]


# -- item 11: local models are named -------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["/etc/passwd", "../models/x.gguf", "~/x.gguf", "models/x.gguf", "x.gguf/"]
)
def test_a_local_model_string_is_never_a_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    file = write(tmp_path, experiment(tmp_path, models=[{"model": f"local/{name}"}]))
    line = refused_alike(capsys, file)
    assert line == (
        f"{file}: models.0.model: local model '{name}': a local model is named, never a path: "
        "local/gemma-3-270m, or a name of yours with its GGUF file given as `path:` in its "
        "model entry"
    )


def test_a_real_gguf_file_named_in_the_model_string_is_not_opened(tmp_path: Path) -> None:
    """The documented way of old, `local/<path>.gguf`, names a file that exists and is a GGUF:
    still refused, by the provider too (the Python API, a browser's play request)."""
    gguf = tmp_path / "mine.gguf"
    gguf.write_bytes(b"GGUF")
    with pytest.raises(StratagemError, match="a local model is named, never a path"):
        create_provider(ModelConfig(model=f"local/{gguf}"))
    with pytest.raises(StratagemError, match="a local model is named, never a path"):
        LocalProvider(f"local/{gguf}")


@pytest.mark.parametrize(
    ("entry", "why"),
    [
        ({"model": "local/mine"}, "local/mine: give its GGUF file as `path:` in its model entry"),
        ({"model": "local/mine", "path": "/etc/passwd"}, "local/mine: path '/etc/passwd' is not"),
        ({"model": "local/mine", "path": "/etc"}, "local/mine: path '/etc': cannot read it"),
        ({"model": "local/gemma-3-270m", "path": "x.gguf"}, "is the packaged model and takes"),
        ({"model": "openai/gpt-4o-mini", "path": "x.gguf"}, "path: a GGUF file, for local/"),
        ({"model": "local/mine", "params": {"n_ctxx": 1}}, "local/mine: unknown params n_ctxx"),
    ],
)
def test_a_local_model_of_your_own_needs_a_gguf_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], entry: dict[str, Any], why: str
) -> None:
    if "params" in entry:
        (tmp_path / "m.gguf").write_bytes(b"GGUF")
        entry = {**entry, "path": str(tmp_path / "m.gguf")}
    file = write(tmp_path, experiment(tmp_path, models=[entry]))
    line = refused_alike(capsys, file)
    assert line.startswith(f"{file}: models.0") and why in line


def test_a_named_gguf_file_is_what_the_provider_runs(tmp_path: Path) -> None:
    """The entry's `path` reaches the provider (not loaded until its first call)."""
    gguf = tmp_path / "mine.gguf"
    gguf.write_bytes(b"GGUF")
    data = experiment(tmp_path, models=[{"model": "local/mine", "path": str(gguf)}])
    runner = Runner(config_from_dict(data, "exp.yaml"), show_progress=False)
    runner.check()
    from stratagem.experiments.clients import model_configs

    (config,) = model_configs(runner.config).values()
    provider = create_provider(config)
    assert isinstance(provider, LocalProvider) and provider.path == gguf


# -- item 11: an unknown scripted model ----------------------------------------------------------


def test_an_unknown_scripted_model_is_refused_by_the_dry_run_as_by_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = write(tmp_path, experiment(tmp_path, models=[{"model": "scripted/banana"}]))
    line = refused_alike(capsys, file)
    assert line.startswith(f"{file}: unknown scripted model 'banana'")


# -- N3: the environment ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "variable"),
    [
        ({"model": "openai/gpt-4o-mini"}, "OPENAI_API_KEY"),
        ({"model": "anthropic/claude-3-5-haiku-latest"}, "ANTHROPIC_API_KEY"),
        (
            {"model": "openai/m", "base_url": "http://127.0.0.1:9/v1", "api_key_env": "MY_KEY"},
            "MY_KEY",
        ),
        (
            {
                "model": "openai/m",
                "endpoints": [
                    {"base_url": "http://127.0.0.1:9/v1"},
                    {"base_url": "http://127.0.0.1:10/v1", "api_key_env": "MY_KEY"},
                ],
            },
            "MY_KEY",
        ),
    ],
)
def test_a_missing_api_key_is_refused_by_the_dry_run_as_by_the_run(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    entry: dict[str, Any],
    variable: str,
) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "MY_KEY"):
        monkeypatch.delenv(name, raising=False)
    # Another model's key is set: it is never printed.
    monkeypatch.setenv("OTHER_KEY", KEY)
    other = {"id": "other", "model": "openai/o", "base_url": "http://127.0.0.1:9/v1",
             "api_key_env": "OTHER_KEY"}  # fmt: skip
    file = write(tmp_path, experiment(tmp_path, models=[other, entry]))
    line = refused_alike(capsys, file)
    assert f"the environment variable {variable} is not set" in line
    assert KEY not in line


def test_a_key_that_is_set_passes_and_is_never_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    file = write(tmp_path, experiment(tmp_path, models=[{"model": "openai/gpt-4o-mini"}]))
    code, out, err = cli(capsys, "run", str(file), "--dry-run")
    assert code == 0, err
    assert out.startswith("plan: ") and KEY not in out + err


def test_a_missing_ray_is_refused_by_the_dry_run_as_by_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails as if not installed
    file = write(tmp_path, experiment(tmp_path))
    line = refused_alike(capsys, file, "--executor", "ray")
    assert line == (
        f"{file}: --executor ray needs Ray: pip install 'stratagem[ray]' (on every node)"
    )


def test_a_ray_address_nothing_answers_on_is_refused_by_the_dry_run_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = write(tmp_path, experiment(tmp_path))
    line = refused_alike(capsys, file, "--executor", "ray", "--address", "127.0.0.1:9")
    assert line.startswith(f"{file}: cannot connect to Ray at 127.0.0.1:9: ")


def test_the_run_checks_even_when_called_without_a_plan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`Runner.run` from Python refuses the same way, before its results directory exists."""
    import asyncio

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    data = experiment(tmp_path, models=[{"model": "openai/gpt-4o-mini"}])
    runner = Runner(config_from_dict(data, "exp.yaml"), show_progress=False)
    with pytest.raises(StratagemError, match="OPENAI_API_KEY is not set"):
        asyncio.run(runner.run())
    assert not (tmp_path / "out").exists()
