"""Issue 33 items 8, 10 and 11: the URLs of a model's servers are checked when the experiment is
loaded, in one line at exit status 2, before anything is sent or stored.

- A URL with `user:password@` (as `base_url`, in `endpoints:`, in an `endpoints_file`, or as
  `magic balance --base-url`) is refused, and the refusal never shows the password; before, the
  run crashed in a 320-line traceback with its episodes left interrupted.
- A URL that is not one (`notaurl`, `http://[::1`, port 99999) is refused.
- One server listed twice (any spelling: scheme and host case, default port, trailing slash) is
  refused, naming both places; a pool has at most `MAX_ENDPOINTS` servers.

`stratagem run` in-process, the real SQLite store, fake servers on 127.0.0.1 where a run plays.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.cli import cli
from support.fake_openai import FakeOpenAIServer

from stratagem.errors import StratagemError
from stratagem.experiments.config import config_from_dict
from stratagem.experiments.limits import MAX_ENDPOINTS
from stratagem.experiments.runner import STORE_FILE
from stratagem.llm.registry import EndpointConfig, ModelConfig

KEY_ENV = "STRATAGEM_URL_TEST_KEY"
PASSWORD = "hunter2-Very-Secret"
WITH_PASSWORD = f"http://alice:{PASSWORD}@127.0.0.1:9/v1"


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-url-test-0123456789")


def experiment(tmp_path: Path, model: dict[str, Any]) -> Path:
    data: dict[str, Any] = {
        "name": "urls",
        "output": str(tmp_path / "out"),
        "models": [{"model": "openai/fake", "api_key_env": KEY_ENV} | model],
        "agents": [{"name": "choice", "output": "choice"}],
        "games": ["dilemma"],
        "opponents": ["TitForTat"],
        "rounds": [2],
        "seeds": [0, 1],
        "retry": {"base_delay": 0, "max_delay": 0},
    }
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def refused(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """The one error line of a command refused at exit status 2."""
    code, out, err = cli(capsys, *argv)
    assert (code, out) == (2, ""), err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err.strip()


@pytest.mark.parametrize(
    ("model", "where"),
    [
        ({"base_url": WITH_PASSWORD}, "models.0.base_url"),
        ({"endpoints": [{"base_url": "http://127.0.0.1:8/v1"}, {"base_url": WITH_PASSWORD}]},
         "models.0.endpoints.1.base_url"),
        ({"endpoints_file": "hosts.txt"}, "endpoints_file hosts.txt, line 2"),
    ],
)  # fmt: skip
def test_a_url_with_credentials_is_refused_without_showing_them(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    model: dict[str, Any],
    where: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "hosts.txt").write_text(f"http://127.0.0.1:8/v1\n{WITH_PASSWORD}\n", "utf-8")
    path = experiment(tmp_path, model)
    for argv in (("--dry-run",), ("--yes", "--no-progress")):
        line = refused(capsys, "run", str(path), *argv)
        assert PASSWORD not in line and "alice" not in line
        assert where in line
        assert "'http://***@127.0.0.1:9/v1' has credentials in it" in line
        assert "api_key_env" in line
    assert not (tmp_path / "out" / STORE_FILE).exists()  # nothing started, nothing interrupted


def test_magic_balance_refuses_a_base_url_with_credentials_or_that_is_not_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ("magic", "balance", "--game", "chameleon", "--model", "openai/x", "--dry-run",
            "--output", str(tmp_path / "out"), "--base-url")  # fmt: skip
    assert refused(capsys, *base, WITH_PASSWORD) == (
        "error: base url: 'http://***@127.0.0.1:9/v1' has credentials in it; a key goes in an "
        "environment variable named by api_key_env, never in the URL"
    )
    assert refused(capsys, *base, "notaurl") == (
        "error: base url: 'notaurl' is not an http(s) URL, e.g. http://gpu-3:8000/v1"
    )


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("notaurl", "'notaurl' is not an http(s) URL, e.g. http://gpu-3:8000/v1"),
        ("ftp://gpu-3/v1", "'ftp://gpu-3/v1' is not an http(s) URL"),
        ("http://[::1", "'http://[::1' is not a valid URL (Invalid IPv6 URL)"),
        ("http://gpu-3:99999/v1", "'http://gpu-3:99999/v1': its port is not from 1 to 65535"),
        ("http://gpu-3:0/v1", "'http://gpu-3:0/v1': its port is not from 1 to 65535"),
        ("http://:8000/v1", "'http://:8000/v1' names no host"),
        ("http://gpu 3:8000/v1", "has a space or control character in it"),
    ],
)
def test_a_url_that_is_not_one_is_refused_at_load(url: str, words: str, tmp_path: Path) -> None:
    for model, where in (
        ({"base_url": url}, "models.0.base_url"),
        ({"endpoints": [{"base_url": url}]}, "models.0.endpoints.0.base_url"),
    ):
        data = yaml.safe_load(experiment(tmp_path, model).read_text("utf-8"))
        with pytest.raises(StratagemError) as caught:
            config_from_dict(data, "exp.yaml")
        line = str(caught.value)
        assert line.startswith(f"exp.yaml: {where}: '") and words in line and "\n" not in line


def test_the_python_api_refuses_the_same_urls() -> None:
    """`ModelConfig` (the API's door to a provider) refuses what the experiment file does."""
    with pytest.raises(ValueError, match=r"has credentials in it") as caught:
        ModelConfig(model="openai/fake", base_url=WITH_PASSWORD)
    assert PASSWORD not in str(caught.value)
    with pytest.raises(ValueError, match=r"port is not from 1 to 65535"):
        EndpointConfig(base_url="http://gpu-3:99999/v1")
    with pytest.raises(ValueError, match=r"endpoints 1 and 2 name one server: http://gpu-3/v1"):
        ModelConfig(
            model="openai/fake",
            endpoints=(
                EndpointConfig(base_url="http://gpu-3/v1"),
                EndpointConfig(base_url="HTTP://GPU-3:80/v1/"),
            ),
        )


SAME_SERVER = ["http://gpu-1:8000/v1", "http://GPU-1:8000/v1/", "HTTP://gpu-1:8000/v1"]


def test_one_server_listed_twice_inline_is_refused_naming_both() -> None:
    for first, again in ((0, 1), (0, 2)):
        urls = ["http://gpu-0:80/v1", SAME_SERVER[first], "https://gpu-2/v1", SAME_SERVER[again]]
        pool = [{"base_url": u} for u in urls]
        data = {"name": "dup", "output": "out", "games": ["dilemma"], "opponents": ["TitForTat"],
                "models": [{"model": "openai/m", "endpoints": pool}]}  # fmt: skip
        with pytest.raises(StratagemError) as caught:
            config_from_dict(data, "exp.yaml")
        assert str(caught.value) == (
            f"exp.yaml: models.0.endpoints.3: {SAME_SERVER[again]} is endpoints.1 again (one "
            "server: http://gpu-1:8000/v1); list each server once"
        )
    # The default port, spelled or not, is the same server too.
    data["models"] = [{"model": "openai/m", "endpoints": [
        {"base_url": "https://gpu-2/v1"}, {"base_url": "https://gpu-2:443/v1"}]}]  # fmt: skip
    with pytest.raises(StratagemError, match=r"endpoints\.1: https://gpu-2:443/v1 is endpoints\.0"):
        config_from_dict(data, "exp.yaml")


def test_an_endpoints_file_listing_a_server_twice_is_refused_naming_both_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, two copies of one URL showed 18 of the plan's 9 episodes on it and the run sent
    it twice the health checks; 2,000 copies sent it 1,488."""
    monkeypatch.chdir(tmp_path)
    lines = ["# the job's nodes", "http://127.0.0.1:8/v1", "http://127.0.0.1:7/v1", "",
             "http://127.0.0.1:8/v1/  # twice"]  # fmt: skip
    (tmp_path / "hosts.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    path = experiment(tmp_path, {"endpoints_file": "hosts.txt"})
    for argv in (("--dry-run",), ("--yes", "--no-progress")):
        assert refused(capsys, "run", str(path), *argv) == (
            f"error: {path}: endpoints_file hosts.txt, line 5: http://127.0.0.1:8/v1/ is line 2 "
            "again (one server: http://127.0.0.1:8/v1); list each server once"
        )
    assert not (tmp_path / "out" / STORE_FILE).exists()


def test_a_pool_has_at_most_max_endpoints_servers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, 100,000 lines printed a 100,003-line plan; now the file is refused at the first
    line past the bound, at once."""
    monkeypatch.chdir(tmp_path)
    urls = [f"http://node-{i}:8000/v1" for i in range(100_000)]
    (tmp_path / "hosts.txt").write_text("\n".join(urls) + "\n", encoding="utf-8")
    path = experiment(tmp_path, {"endpoints_file": "hosts.txt"})
    start = time.monotonic()
    assert refused(capsys, "run", str(path), "--dry-run") == (
        f"error: {path}: endpoints_file hosts.txt, line {MAX_ENDPOINTS + 1}: more than "
        f"{MAX_ENDPOINTS:,} servers in one pool (MAX_ENDPOINTS)"
    )
    assert time.monotonic() - start < 10
    inline = {"endpoints": [{"base_url": u} for u in urls[: MAX_ENDPOINTS + 1]]}
    (tmp_path / "inline").mkdir()
    data = yaml.safe_load(experiment(tmp_path / "inline", inline).read_text("utf-8"))
    with pytest.raises(StratagemError) as caught:
        config_from_dict(data, "exp.yaml")
    assert str(caught.value) == (
        f"exp.yaml: models.0.endpoints: {MAX_ENDPOINTS + 1:,} servers, more than the "
        f"{MAX_ENDPOINTS:,} one pool may have (MAX_ENDPOINTS)"
    )
    # The bound itself is fine: the plan shows each of those servers' share once.
    (tmp_path / "hosts.txt").write_text("\n".join(urls[:MAX_ENDPOINTS]) + "\n", encoding="utf-8")
    code, out, err = cli(capsys, "run", str(path), "--dry-run")
    assert code == 0, err
    assert f"over {MAX_ENDPOINTS} endpoints (hosts.txt)" in out


def test_a_valid_pool_still_plays(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The checks refuse no URL a pool plays with: a trailing slash, the scheme in capitals."""
    with FakeOpenAIServer(["ok"], repeat=True) as a, FakeOpenAIServer(["ok"], repeat=True) as b:
        pool = [{"base_url": a.base_url + "/"}, {"base_url": b.base_url.replace("http", "HTTP")}]
        path = experiment(tmp_path, {"endpoints": pool, "params": {"health_wait_s": 5}})
        code, _, err = cli(capsys, "run", str(path), "--yes", "--no-progress")
    assert code == 0, err
    assert a.served or b.served
