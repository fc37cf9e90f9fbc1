"""Issue 33 item 11: a pool whose every server refuses the connection stops at once, in one line
naming them (before: after 15 s of retries); `params.health_wait_s`, when given, still waits for
servers that are starting, and for its whole length (before: 15.5 s of a stated 30).

Fake OpenAI-compatible servers on 127.0.0.1 (tests/support/fake_openai.py) and closed ports.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.cli import cli
from support.fake_openai import FakeOpenAIServer

from stratagem.errors import StratagemError
from stratagem.llm.pool import EndpointPool
from stratagem.llm.registry import EndpointConfig, ModelConfig, create_provider
from stratagem.llm.routing import routing_key
from stratagem.llm.types import Message, Request

KEY_ENV = "STRATAGEM_POOL_HEALTH_TEST_KEY"
REQUEST = Request(messages=(Message("user", "hello"),), choices=("cooperate", "defect"))


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-pool-health-test-0123456789")


def free_port() -> int:
    """A port nothing listens on now: a server that is down, or not started yet."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def pool_of(urls: list[str], **params: Any) -> EndpointPool:
    config = ModelConfig(
        model="openai/fake",
        api_key_env=KEY_ENV,
        endpoints=tuple(EndpointConfig(base_url=u) for u in urls),
        params=params,
    )
    pool = create_provider(config)
    assert isinstance(pool, EndpointPool)
    return pool


async def first_call(pool: EndpointPool) -> str:
    token = routing_key.set("episode-0")
    try:
        response = await pool.complete(REQUEST, 0)
    finally:
        routing_key.reset(token)
        await pool.aclose()
    assert response.endpoint is not None
    return response.endpoint


def timed_failure(pool: EndpointPool) -> tuple[str, float]:
    start = time.monotonic()
    with pytest.raises(StratagemError) as caught:
        asyncio.run(first_call(pool))
    return str(caught.value), time.monotonic() - start


def test_every_server_refusing_stops_the_pool_at_once_naming_them() -> None:
    urls = [f"http://127.0.0.1:{free_port()}/v1" for _ in range(2)]
    message, seconds = timed_failure(pool_of(urls))
    assert seconds < 3  # before: 15.5 s of re-checks, then "no endpoint healthy after 30 s"
    assert message == (
        f"openai/fake: no endpoint is up: {urls[0]} (connection refused); {urls[1]} "
        "(connection refused); nothing listens there: a wrong host or port, or servers not "
        "started yet (params.health_wait_s waits for them)"
    )


def test_a_run_whose_servers_all_refuse_stops_at_once_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    urls = [f"http://127.0.0.1:{free_port()}/v1" for _ in range(2)]
    data = {
        "name": "refused", "output": str(tmp_path / "out"),
        "models": [{"model": "openai/fake", "api_key_env": KEY_ENV,
                    "endpoints": [{"base_url": u} for u in urls]}],
        "agents": [{"name": "choice", "output": "choice"}],
        "games": ["dilemma"], "opponents": ["TitForTat"], "rounds": [2], "seeds": [0, 1, 2],
        "retry": {"base_delay": 0, "max_delay": 0},
    }  # fmt: skip
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    start = time.monotonic()
    code, _, err = cli(capsys, "run", str(path), "--no-progress", "--yes")
    seconds = time.monotonic() - start
    stopped = [line for line in err.splitlines() if line.startswith("stopped:")]
    assert code == 3 and len(stopped) == 1 and "Traceback" not in err, err
    assert "no endpoint is up" in stopped[0] and all(
        f"{u} (connection refused)" in err for u in urls
    )
    assert seconds < 10  # before: over 15 s


def test_a_given_health_wait_waits_for_a_server_that_starts_late() -> None:
    """The documented grace for servers a job starts with the run: given, it covers refused
    connections too, and the pool plays once the server is up."""
    port = free_port()
    late = FakeOpenAIServer(["ok"], repeat=True, port=port)
    starter = threading.Timer(1.0, late.__enter__)
    starter.start()
    try:
        url = f"http://127.0.0.1:{port}/v1"
        assert asyncio.run(first_call(pool_of([url], health_wait_s=20))) == url
    finally:
        starter.join()
        late.close()
    assert late.served == ["ok"]


def test_the_wait_lasts_the_whole_health_wait() -> None:
    """`health_wait_s: 2` re-checks until 2 s have passed, not until the next backoff step would
    pass them (1.5 s; with the default 30 s, 15.5 s)."""
    url = f"http://127.0.0.1:{free_port()}/v1"
    message, seconds = timed_failure(pool_of([url], health_wait_s=2))
    assert 2 <= seconds < 4
    assert message.startswith(f"openai/fake: no endpoint healthy after 2 s: {url} (")


def test_a_server_that_answers_badly_is_waited_for_not_refused_at_once() -> None:
    """Only refusals everywhere stop at once: a server that accepts the connection and drops it
    (one still starting) is waited for, with the default wait (shortened here)."""
    refused = f"http://127.0.0.1:{free_port()}/v1"
    with FakeOpenAIServer(["ok"]) as starting:
        starting.dead = True  # accepts, then closes the connection unanswered
        pool = pool_of([refused, starting.base_url])
        pool.health_wait_s = 1.0
        message, seconds = timed_failure(pool)
    assert 1 <= seconds < 3
    assert message.startswith("openai/fake: no endpoint healthy after 1 s: ")
    assert f"{refused} (connection refused)" in message
    assert f"{starting.base_url} (connection error: " in message


@pytest.mark.parametrize("value", ["abc", -1, True, 100_000])
def test_a_bad_health_wait_is_one_line_at_load(
    value: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = {
        "name": "wait", "output": str(tmp_path / "out"),
        "models": [{"model": "openai/fake", "api_key_env": KEY_ENV,
                    "endpoints": [{"base_url": "http://127.0.0.1:9/v1"}],
                    "params": {"health_wait_s": value}}],
        "games": ["dilemma"], "opponents": ["TitForTat"],
    }  # fmt: skip
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    code, out, err = cli(capsys, "run", str(path), "--dry-run")
    assert (code, out) == (2, "")
    assert err.strip() == (
        f"error: {path}: models.0: openai/fake: params.health_wait_s must be seconds from 0 to "
        f"86,400, got {value!r}"
    )
    data["models"][0]["params"] = {"health_wait_s": 1}  # type: ignore[index]
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    code, out, err = cli(capsys, "run", str(path), "--dry-run")
    assert code == 0 and "over 1 endpoints" in out, err


def test_servers_refusing_or_out_stop_the_pool_at_once_each_with_its_reason() -> None:
    refused = f"http://127.0.0.1:{free_port()}/v1"
    with FakeOpenAIServer(["ok"], models=["other"]) as wrong:
        message, seconds = timed_failure(pool_of([wrong.base_url, refused]))
    assert seconds < 3
    assert message.startswith(
        f"openai/fake: no endpoint is up: {wrong.base_url} (serves other, not fake); {refused} "
        "(connection refused); nothing listens there"
    )
