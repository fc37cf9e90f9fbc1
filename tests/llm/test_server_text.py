"""Issue 33 item 2: text from a server that is not valid Unicode. JSON's `\\u` escapes can spell a
lone surrogate (`"\\udcff"`), which no UTF-8 byte can hold: before, the answered call could not be
stored (SQLite refused to encode it), so the run crashed with a traceback and every re-run paid
for the call again. Now every text a server sends (reply, reasoning, tool arguments, error
bodies, model name) keeps such a code point as its escape, the six characters `\\udcff`: it is
stored, cached, replayed, printed and rendered like any other text."""

from __future__ import annotations

import asyncio
import json
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from support.cli import cli
from support.fake_anthropic import FakeAnthropicServer
from support.fake_bedrock import FakeBedrockServer
from support.fake_openai import FakeOpenAIServer, _reply_for, completion_body
from support.small_experiment import experiment, write

from stratagem.experiments.runner import CACHE_FILE, STORE_FILE
from stratagem.experiments.store import ResultStore
from stratagem.llm.cache import ResponseCache
from stratagem.llm.errors import TransientError
from stratagem.llm.pipeline import build_client
from stratagem.llm.providers.openai import create as create_openai
from stratagem.llm.registry import ModelConfig
from stratagem.llm.types import Message, Request
from stratagem.web.data import Perspective, Sources

LONE = "\udcff"
"""A lone surrogate: what `json.loads('"\\udcff"')` gives."""
SHOWN = "\\udcff"
"""How it is kept: its escape, six ASCII characters."""


class SurrogateServer(FakeOpenAIServer):
    """The OpenAI fake, answering in turn: a 500 whose error body holds a lone surrogate (retried);
    a 200 whose content, reasoning, tool-call arguments and `model` hold one (not a legal move:
    re-asked); then valid choices, each with the surrogate in `model`. `"400"` in `pattern`
    answers a 400 whose message holds one instead."""

    def __init__(self, pattern: list[str]) -> None:
        super().__init__()
        self.script = pattern

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        base: Any = super()._handler_class()
        fake = self

        class Handler(base):  # type: ignore[misc,valid-type]
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                body = json.loads(raw)
                with fake._lock:
                    index = len(fake.requests)
                    fake.requests.append(body)
                step = fake.script[index] if index < len(fake.script) else "ok"
                model = f"fake-{LONE}"
                if step in ("500", "400"):
                    error = {"error": {"message": f"broken {LONE} body", "type": "x"}}
                    self._send(int(step), json.dumps(error).encode())
                    return
                if step == "odd":
                    data = completion_body(model, LONE, reasoning=f"thinking {LONE}")
                    call = {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "note", "arguments": json.dumps({"k": LONE})},
                    }
                    data["choices"][0]["message"]["tool_calls"] = [call]
                else:
                    data = completion_body(model, _reply_for(body, "cooperate"))
                encoded = json.dumps(data).encode()
                assert b"\\udcff" in encoded  # the JSON escape, as a server sends it
                self._send(200, encoded)

        return Handler


def write_config(tmp_path: Path, model: str, base_url: str) -> Path:
    return write(tmp_path, experiment(
        tmp_path, name="odd", models=[{"model": model, "base_url": base_url}],
        agents=[{"name": "plain", "history": "chat"}], retry={"base_delay": 0, "max_delay": 0},
    ))  # fmt: skip


def stored_calls(out: Path) -> list[dict[str, Any]]:
    with ResultStore(out / STORE_FILE) as store:
        return [
            {"text": c.text, "response": c.response, "error": c.error, "cached": c.cached}
            for c in store.llm_calls()
        ]


def shown_everywhere(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """What `status`, `show --full`, `report` and `export` print or write, and what the viewer's
    data layer answers, for the results directory: each must work (capsys encodes strictly, as
    a UTF-8 terminal does)."""
    out = tmp_path / "out"
    seen = []
    code, printed, err = cli(capsys, "status", str(out))
    assert code == 0, err
    seen.append(printed)
    with ResultStore(out / STORE_FILE) as store:
        episodes = [e.id for e in store.episodes()]
    for episode in episodes:
        code, printed, err = cli(capsys, "show", str(out), episode, "--full")
        assert code == 0, err
        seen.append(printed)
    report = tmp_path / "report.html"
    code, printed, err = cli(capsys, "report", str(out), "--out", str(report))
    assert code == 0, err
    seen.append(report.read_text(encoding="utf-8"))
    export = tmp_path / "export.jsonl"
    code, printed, err = cli(capsys, "export", str(export), "--store", str(out))
    assert code == 0, err
    seen.append(export.read_text(encoding="utf-8"))
    sources = Sources([out])
    try:
        for episode in episodes:
            view = sources.episode(out.name, episode, Perspective.parse("all"))
            seen.append(json.dumps(view, ensure_ascii=False))
    finally:
        sources.close()
    everything = "\n".join(seen)
    everything.encode("utf-8")  # no lone surrogate left anywhere
    return everything


def test_a_lone_surrogate_from_a_server_is_stored_shown_and_replayed_free(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with SurrogateServer(["500", "odd"]) as server:
        path = write_config(tmp_path, "openai/fake-model", server.base_url)
        code, printed, err = cli(capsys, "run", str(path), "--no-progress")
        first = len(server.requests)
        assert code == 0, err
        # Round 1: the 500 (retried), the odd reply, its re-ask; round 2: one call.
        assert first == 4
        calls = stored_calls(tmp_path / "out")
        odd = next(c for c in calls if c["text"] == SHOWN)
        assert odd["response"]["reasoning"] == f"thinking {SHOWN}"
        assert odd["response"]["tool_calls"][0]["arguments"] == {"k": SHOWN}
        # The reply's `model` field is not read: the call is the configured model's.
        assert {c["response"]["model"] for c in calls} == {"openai/fake-model"}
        assert SHOWN in shown_everywhere(tmp_path, capsys)

        # The store gone, the cache kept: every episode plays again, every answer replayed from
        # the cache as it was stored, nothing sent.
        (tmp_path / "out" / STORE_FILE).unlink()
        code, printed, err = cli(capsys, "run", str(path), "--no-progress")
        assert code == 0, err
        assert len(server.requests) == first
    assert "3 model calls (3 cached, 0 failed)" in printed
    again = stored_calls(tmp_path / "out")
    assert [c["text"] for c in again] == [c["text"] for c in calls]
    assert all(c["cached"] for c in again)


def test_a_lone_surrogate_in_an_error_body_is_one_clean_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A refusal (400) quoting the surrogate: the run stops cleanly (exit 3), the failed call and
    the episode's reason are stored, and every command shows them."""
    with SurrogateServer(["400"]) as server:
        path = write_config(tmp_path, "openai/fake-model", server.base_url)
        code, _, err = cli(capsys, "run", str(path), "--no-progress")
    assert code == 3, err
    assert f"broken {SHOWN} body" in err and "Traceback" not in err
    (call,) = stored_calls(tmp_path / "out")
    assert call["error"] is not None and f"broken {SHOWN} body" in call["error"]
    assert f"broken {SHOWN} body" in shown_everywhere(tmp_path, capsys)


def ask_twice(config: ModelConfig, cache_file: Path) -> tuple[list[str], list[bool]]:
    """One question asked through the full pipeline, then again from a fresh client on the same
    cache file: (the reply texts and reasonings, whether each came from the cache)."""

    async def ask() -> tuple[str, bool]:
        cache = ResponseCache(cache_file)
        client = build_client(config, cache=cache)
        try:
            (response,) = await client.generate(Request((Message("user", "Move?"),)))
        finally:
            await client.aclose()
            cache.close()
        return f"{response.text}|{response.reasoning}", response.cached

    first, again = asyncio.run(ask()), asyncio.run(ask())
    return [first[0], again[0]], [first[1], again[1]]


def test_the_anthropic_provider_keeps_a_lone_surrogate_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key-0000")
    with FakeAnthropicServer(reply=f"C{LONE}", thinking=f"hm {LONE}") as server:
        config = ModelConfig(
            model="anthropic/claude-fake",
            base_url=server.base_url,
            params={"thinking": {"type": "enabled", "budget_tokens": 1024}, "max_tokens": 2048},
        )
        texts, cached = ask_twice(config, tmp_path / CACHE_FILE)
        assert len(server.requests) == 1
    assert texts == [f"C{SHOWN}|hm {SHOWN}"] * 2 and cached == [False, True]


def test_the_bedrock_provider_keeps_a_lone_surrogate_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fake credentials from the environment, as tests/llm/test_bedrock_provider.py sets them."""
    for name in ("AWS_PROFILE", "AWS_REGION", "AWS_BEARER_TOKEN_BEDROCK", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(name, raising=False)
    for name, value in {
        "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE0000",
        "AWS_SECRET_ACCESS_KEY": "secret-example-0000",
        "AWS_DEFAULT_REGION": "us-west-2",
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_CONFIG_FILE": str(tmp_path / "no-aws-config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-aws-credentials"),
    }.items():
        monkeypatch.setenv(name, value)
    with FakeBedrockServer(reply=f"C{LONE}", reasoning=f"hm {LONE}") as server:
        config = ModelConfig(
            model="bedrock/us.deepseek.r1-v1:0", params={"endpoint_url": server.endpoint_url}
        )
        texts, cached = ask_twice(config, tmp_path / CACHE_FILE)
        assert len(server.requests) == 1
    assert texts == [f"C{SHOWN}|hm {SHOWN}"] * 2 and cached == [False, True]


def test_the_provider_escapes_an_error_body_and_model_ids_before_anyone_reads_them() -> None:
    """An endpoint pool reads a server's error (its reason, shown under the progress bar and by
    `stratagem status`) and its `/models` ids (shown when none is the model wanted) before the
    pipeline sees them: the provider escapes them itself."""

    async def go(base_url: str) -> tuple[str, list[str]]:
        provider = create_openai(ModelConfig(model="openai/fake", base_url=base_url))
        try:
            with pytest.raises(TransientError) as caught:
                await provider.complete(Request((Message("user", "Move?"),)), 0)
            return str(caught.value), await provider.model_ids()
        finally:
            await provider.aclose()

    with SurrogateServer(["500"]) as server:
        server.models = [f"m{LONE}", "fake"]
        error, ids = asyncio.run(go(server.base_url))
    assert f"broken {SHOWN} body" in error
    assert ids == [f"m{SHOWN}", "fake"]
