"""Issue 26 item 1: `endpoints_file:`, a model's pool read from a file of URLs (one a line, as a
cluster job writes it) when the run starts; a bad file is one line at exit status 2.

Two fake servers on 127.0.0.1 (tests/support/fake_openai.py), `stratagem run` in-process and
the real SQLite store.
"""

from __future__ import annotations

import re
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.cli import cli
from support.fake_openai import FakeOpenAIServer

from stratagem.errors import StratagemError
from stratagem.experiments.config import config_from_dict
from stratagem.experiments.runner import STORE_FILE
from stratagem.experiments.store import ResultStore

KEY_ENV = "STRATAGEM_POOL_FILE_TEST_KEY"
KEY = "sk-pool-file-test-0123456789abcdef"
SEEDS = 6


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)


def write_config(path: Path, **pool: Any) -> Path:
    model = {"model": "openai/fake", "api_key_env": KEY_ENV, "params": {"health_wait_s": 1}}
    data: dict[str, Any] = {
        "name": "pool-file",
        "output": str(path.parent / "out"),
        "models": [model | pool],
        "agents": [{"name": "choice", "output": "choice"}],
        "games": ["dilemma"],
        "opponents": ["TitForTat"],
        "rounds": [2],
        "seeds": list(range(SEEDS)),
        "retry": {"base_delay": 0, "max_delay": 0},
    }
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def test_the_pool_is_read_from_the_file_when_the_run_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # a relative endpoints_file is relative to the cwd
    with ExitStack() as stack:
        servers = [stack.enter_context(FakeOpenAIServer(["ok"], repeat=True)) for _ in range(2)]
        path = write_config(tmp_path / "exp.yaml", endpoints_file="hosts.txt")
        # written after the experiment file, as a cluster job would, with its comments
        lines = [
            "# written by the job",
            "",
            f"{servers[0].base_url}  # node 1",
            servers[1].base_url,
        ]
        (tmp_path / "hosts.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        code, _, err = cli(capsys, "run", str(path), "--no-progress", "--yes")
    assert code == 0, err
    with ResultStore(tmp_path / "out" / STORE_FILE) as store:
        used = {call.response["endpoint"] for call in store.llm_calls()}
        assert len(store.episodes()) == SEEDS
    assert used == {s.base_url for s in servers}
    assert all(s.served for s in servers)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (None, r"endpoints_file hosts\.txt: no such file"),
        ("# no server came up\n\n", r"endpoints_file hosts\.txt: lists no URL"),
        ("http://127.0.0.1:1/v1\ngpu-3:8000\n", r"hosts\.txt, line 2: 'gpu-3:8000' is not an http"),
    ],
)
def test_a_bad_endpoints_file_is_one_line_at_status_2(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    text: str | None,
    words: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    if text is not None:
        (tmp_path / "hosts.txt").write_text(text, encoding="utf-8")
    path = write_config(tmp_path / "exp.yaml", endpoints_file="hosts.txt")
    code, _, err = cli(capsys, "run", str(path), "--no-progress", "--yes")
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err
    assert re.search(words, lines[0]), lines[0]


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"endpoints": [{"base_url": "http://127.0.0.1:1/v1"}]}, "endpoints or endpoints_file"),
        ({"base_url": "http://127.0.0.1:1/v1"}, "give base_url or endpoints_file, not both"),
        ({"model": "anthropic/claude-3-5-haiku-latest"}, "for OpenAI-compatible"),
    ],
)
def test_endpoints_file_with_another_way_to_reach_the_model_is_one_line(
    change: dict[str, Any], words: str
) -> None:
    entry = {"model": "openai/fake", "endpoints_file": "hosts.txt"} | change
    data = {"name": "bad", "output": "out", "models": [entry], "games": ["dilemma"],
            "opponents": ["TitForTat"]}  # fmt: skip
    with pytest.raises(StratagemError, match=words) as caught:
        config_from_dict(data, "exp.yaml")
    assert "\n" not in str(caught.value) and "exp.yaml" in str(caught.value)
