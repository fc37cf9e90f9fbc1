"""Issue 23 item 5: a server that echoes the key in a normal 200 reply. Before, the key was stored
in the store and the cache, exported, printed by `show --full`, rendered in the report and sent
back to the model in the re-ask that the invalid reply caused. A real `stratagem run` against the
fake OpenAI-compatible and Anthropic servers on 127.0.0.1 with a sentinel key; then no byte of
any of those holds it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.cli import cli
from support.fake_anthropic import FakeAnthropicServer
from support.fake_openai import FakeOpenAIServer

from stratagem.experiments.runner import STORE_FILE
from stratagem.experiments.store import ResultStore
from stratagem.llm.secrets import REDACTED

KEY_ENV = "STRATAGEM_ECHO_TEST_KEY"
SENTINEL = "sk-SENTINEL-7f3a9c1e5b2d4f60"


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, SENTINEL)


def write_config(tmp_path: Path, model: str, base_url: str) -> Path:
    data: dict[str, Any] = {
        "name": "echo",
        "output": str(tmp_path / "out"),
        "models": [{"model": model, "base_url": base_url, "api_key_env": KEY_ENV}],
        # chat history: the invalid reply stays in the conversation, besides being quoted in
        # the re-ask's correction.
        "agents": [{"name": "plain", "history": "chat"}],
        "games": ["dilemma"],
        "opponents": ["TitForTat"],
        "rounds": [2],
        "seeds": [0],
        "retry": {"base_delay": 0, "max_delay": 0},
    }
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def everything_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, bytes]:
    """Each place a user meets the run's data: every file of the results directory (store,
    cache, their WAL files if any, after the run closed them), an export, `show --full` of each
    episode, the report."""
    out = tmp_path / "out"
    seen: dict[str, bytes] = {}
    code, printed, _ = cli(capsys, "export", str(tmp_path / "export.jsonl"), "--store", str(out))
    assert code == 0, printed
    seen["export"] = (tmp_path / "export.jsonl").read_bytes()
    with ResultStore(out / STORE_FILE) as store:
        episodes = [episode.id for episode in store.episodes()]
    assert episodes
    for episode in episodes:
        code, printed, _ = cli(capsys, "show", str(out), episode, "--full")
        assert code == 0
        seen[f"show {episode}"] = printed.encode()
    code, printed, _ = cli(capsys, "report", str(out), "--out", str(tmp_path / "report.html"))
    assert code == 0, printed
    seen["report"] = (tmp_path / "report.html").read_bytes()
    for path in sorted(out.rglob("*")):
        if path.is_file():
            seen[str(path.relative_to(out))] = path.read_bytes()
    assert {STORE_FILE, "cache.db"} <= set(seen)
    return seen


def assert_no_key(seen: dict[str, bytes], bodies: list[dict[str, Any]]) -> None:
    holding = [name for name, data in seen.items() if SENTINEL.encode() in data]
    assert holding == []
    sent = [i for i, body in enumerate(bodies) if SENTINEL in json.dumps(body)]
    assert sent == []


def test_a_key_echoed_by_an_openai_compatible_server_goes_nowhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeOpenAIServer(["echo", "ok", "echo", "ok"]) as server:
        path = write_config(tmp_path, "openai/fake-model", server.base_url)
        code, printed, _ = cli(capsys, "run", str(path))
        bodies, served = list(server.requests), list(server.served)
    assert code == 0, printed
    # Each round: the echo (invalid), a re-ask, a valid choice.
    assert served == ["echo", "ok", "echo", "ok"]
    assert REDACTED in json.dumps(bodies[1])  # the re-ask carried the masked reply back
    with ResultStore(tmp_path / "out" / STORE_FILE) as store:
        replies = [call.response for call in store.llm_calls() if call.response]
    assert any(REDACTED in json.dumps(reply) for reply in replies)  # recorded, masked
    assert_no_key(everything_written(tmp_path, capsys), bodies)


class EchoingAnthropic(FakeAnthropicServer):
    """The Anthropic fake, answering its first request with the key it was sent as text (not a
    choice: invalid), and its next ones with the choice plus a tool call quoting the key."""

    def __init__(self) -> None:
        super().__init__()
        self.keys_seen: list[str] = []

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        data = super().answer(body)
        header = self.keys_seen[-1]
        if len(self.requests) == 1:
            data["content"] = [{"type": "text", "text": f"You sent the key {header}"}]
            data["stop_reason"] = "end_turn"
        else:
            note = {"type": "tool_use", "id": "toolu_2", "name": "note", "input": {"key": header}}
            data["content"].append(note)
        return data

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        base: Any = super()._handler_class()
        fake = self

        class Handler(base):  # type: ignore[misc,valid-type]
            def do_POST(self) -> None:
                # The SDK sends the key as `x-api-key` or, in newer versions, as a bearer token.
                key = self.headers.get("x-api-key") or self.headers.get("Authorization", "")
                fake.keys_seen.append(key.removeprefix("Bearer "))
                super().do_POST()

        return Handler


@pytest.fixture
def anthropic_server() -> Iterator[EchoingAnthropic]:
    with EchoingAnthropic() as server:
        yield server


def test_a_key_echoed_by_an_anthropic_server_goes_nowhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], anthropic_server: EchoingAnthropic
) -> None:
    path = write_config(tmp_path, "anthropic/claude-fake", anthropic_server.base_url)
    code, printed, _ = cli(capsys, "run", str(path))
    bodies = list(anthropic_server.requests)
    assert code == 0, printed
    assert set(anthropic_server.keys_seen) == {SENTINEL}  # the key really was echoed
    assert len(bodies) == 3  # round 1: the echo and its re-ask; round 2: one call
    assert REDACTED in json.dumps(bodies[1])
    with ResultStore(tmp_path / "out" / STORE_FILE) as store:
        calls = [call.response for call in store.llm_calls() if call.response]
    assert any(REDACTED in json.dumps(reply.get("tool_calls")) for reply in calls)
    assert_no_key(everything_written(tmp_path, capsys), bodies)
