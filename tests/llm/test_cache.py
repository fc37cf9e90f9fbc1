"""The response cache: stable keys, exact round trips, first writer wins, shared by processes."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from stratagem.errors import StratagemError
from stratagem.llm.cache import ResponseCache
from stratagem.llm.types import Message, Request, Response, Tool, ToolCall, Usage

MODEL = "openai/gpt-4o-mini"


def request(text: str = "Play.", **kw: object) -> Request:
    return Request(messages=(Message("system", "You play."), Message("user", text)), **kw)  # type: ignore[arg-type]


def test_key_is_stable_and_leaves_out_n() -> None:
    base = request(temperature=0.7, seed=3)
    assert ResponseCache.key(MODEL, base, 0) == ResponseCache.key(
        MODEL, request(temperature=0.7, seed=3), 0
    )
    assert ResponseCache.key(MODEL, base, 0) == ResponseCache.key(
        MODEL, request(temperature=0.7, seed=3, n=5), 0
    )
    assert len(ResponseCache.key(MODEL, base, 0)) == 64


def test_key_changes_with_everything_that_changes_the_answer() -> None:
    base = request(temperature=0.7)
    keys = {
        ResponseCache.key(MODEL, base, 0),
        ResponseCache.key(MODEL, base, 1),
        ResponseCache.key("openai/gpt-4o", base, 0),
        ResponseCache.key(MODEL, request("Play!", temperature=0.7), 0),
        ResponseCache.key(MODEL, request(temperature=0.8), 0),
        ResponseCache.key(MODEL, request(temperature=0.7, seed=1), 0),
        ResponseCache.key(MODEL, request(temperature=0.7, max_tokens=5), 0),
        ResponseCache.key(MODEL, request(temperature=0.7, choices=("a", "b")), 0),
        ResponseCache.key(MODEL, request(temperature=0.7, tools=(Tool("nash", "d"),)), 0),
        ResponseCache.key(MODEL, request(temperature=0.7, json_schema={"type": "object"}), 0),
    }
    assert len(keys) == 10


def test_keys_are_those_earlier_releases_wrote() -> None:
    """The key is the hash of one canonical JSON object, as it always was, so a cache written by
    an earlier release still replays (the request is now encoded once for the key and the row)."""
    import hashlib
    import json

    from stratagem.llm.cache import CACHE_FORMAT

    def earlier(model: str, req: Request, sample: int) -> str:
        body = req.to_json()
        body.pop("n", None)
        if body.get("temperature") is not None:
            body["temperature"] = float(body["temperature"])
        payload = {"format": CACHE_FORMAT, "model": model, "request": body, "sample": sample}
        text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    for req in (
        request(),
        request('Spiel «ß» 🎲 "quoted"\n', temperature=1, seed=2, n=3),
        request(choices=("a", "b"), max_tokens=8, tools=(Tool("nash", "d"),)),
        request(json_schema={"type": "object", "properties": {"z": {}, "a": {}}}),
    ):
        for model, sample in ((MODEL, 0), ("local/gemma#thinking", 7)):
            assert ResponseCache.key(model, req, sample) == earlier(model, req, sample)
    # And pinned: the key of this request as the release before this change computed it.
    pinned = "12419cd2dc28b4464a15164b3902968637e10ddacfa9ce793349fd1997ebc8bf"
    assert ResponseCache.key(MODEL, request(), 0) == pinned


def test_integer_and_float_temperature_share_a_key() -> None:
    assert ResponseCache.key(MODEL, request(temperature=1), 0) == ResponseCache.key(
        MODEL, request(temperature=1.0), 0
    )


def test_round_trip_is_exact_and_marked_cached() -> None:
    cache = ResponseCache()
    req = request()
    original = Response(
        text="defect",
        tool_calls=(ToolCall("c1", "nash", {"game": "pd", "k": [1, 2]}),),
        reasoning="they defected",
        usage=Usage(12, 3),
        latency_s=0.25,
        cost_usd=0.001,
        model=MODEL,
    )
    key = cache.key(MODEL, req, 0)
    assert cache.get(key) is None
    cache.put(key, MODEL, req, original)
    got = cache.get(key)
    assert got is not None
    assert got.cached is True
    assert got == Response(**{**original.__dict__, "cached": True})
    assert key in cache and len(cache) == 1


def test_first_writer_wins() -> None:
    cache = ResponseCache()
    req = request()
    key = cache.key(MODEL, req, 0)
    cache.put(key, MODEL, req, Response("first"))
    cache.put(key, MODEL, req, Response("second"))
    got = cache.get(key)
    assert got is not None and got.text == "first"


def test_persists_in_a_file(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "cache.sqlite"
    req = request()
    key = ResponseCache.key(MODEL, req, 0)
    with ResponseCache(path) as cache:
        cache.put(key, MODEL, req, Response("cooperate", usage=Usage(5, 1)))
    with ResponseCache(path) as cache:
        got = cache.get(key)
    assert got is not None and got.text == "cooperate" and got.usage == Usage(5, 1)


def test_not_a_database_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "junk.sqlite"
    path.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(StratagemError, match="response cache"):
        ResponseCache(path)


_WRITER = textwrap.dedent(
    """
    import sys
    from stratagem.llm.cache import ResponseCache
    from stratagem.llm.types import Message, Request, Response
    cache = ResponseCache(sys.argv[1])
    tag = sys.argv[2]
    for i in range(40):
        req = Request(messages=(Message("user", f"q{i}"),))
        key = cache.key("m/x", req, 0)
        cache.put(key, "m/x", req, Response(f"{tag}{i}"))
        req = Request(messages=(Message("user", f"{tag}-only-{i}"),))
        cache.put(cache.key("m/x", req, 0), "m/x", req, Response(tag))
    cache.close()
    """
)


def test_shared_by_concurrent_processes(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    ResponseCache(path).close()  # create it (WAL) before the writers race
    procs = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(path), tag]) for tag in ("a", "b")
    ]
    assert [p.wait(timeout=60) for p in procs] == [0, 0]
    with ResponseCache(path) as cache:
        assert len(cache) == 40 + 2 * 40
        for i in range(40):
            req = Request(messages=(Message("user", f"q{i}"),))
            got = cache.get(cache.key("m/x", req, 0))
            assert got is not None and got.text in {f"a{i}", f"b{i}"}
            for tag in ("a", "b"):
                req = Request(messages=(Message("user", f"{tag}-only-{i}"),))
                other = cache.get(cache.key("m/x", req, 0))
                assert other is not None and other.text == tag
