"""Issue 26 item 1: a pool of OpenAI-compatible servers per model entry (`stratagem.llm.pool`).

Three fake servers on 127.0.0.1 (tests/support/fake_openai.py), through the runner and the real
SQLite store: an episode keeps to one server, a killed server's calls move to the others and the
run finishes with the results of a one-server run and the spend of the calls answered; a 429
lowers one server's concurrency; a server whose /v1/models lacks the model gets no traffic; every
server out stops `stratagem run` with one line.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.cli import cli
from support.fake_openai import FakeOpenAIServer

from stratagem.errors import StratagemError
from stratagem.experiments.config import config_from_dict, load_config
from stratagem.experiments.runner import STORE_FILE, Runner, RunSummary
from stratagem.experiments.store import ResultStore
from stratagem.llm.pool import RAISE_EVERY, EndpointPool, rendezvous, shown_url
from stratagem.llm.registry import EndpointConfig, ModelConfig, create_provider
from stratagem.llm.routing import routing_key
from stratagem.llm.types import Message, Request

KEY_ENV = "STRATAGEM_POOL_TEST_KEY"
KEY = "sk-pool-test-0123456789abcdef"
PRICE = {"input": 1.0, "output": 1.0}
"""USD per million tokens: each fake answer (7 + 3 tokens) costs 1e-5 USD."""
CALL_USD = 10 / 1e6
SEEDS = 8
ROUNDS = 3


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)


@pytest.fixture
def servers() -> Iterator[list[FakeOpenAIServer]]:
    with ExitStack() as stack:
        yield [stack.enter_context(FakeOpenAIServer(["ok"], repeat=True)) for _ in range(3)]


def model_entry(urls: list[str], **extra: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"model": "openai/fake", "api_key_env": KEY_ENV, "price": PRICE}
    if len(urls) == 1:
        entry["base_url"] = urls[0]
    else:
        entry["endpoints"] = [{"base_url": u} for u in urls]  # no cap: never saturated
        entry["params"] = {"health_wait_s": 1}
    return entry | extra


def write_config(path: Path, urls: list[str], out: str = "out") -> Path:
    data: dict[str, Any] = {
        "name": "pool",
        "output": str(path.parent / out),
        "models": [model_entry(urls)],
        "agents": [{"name": "choice", "output": "choice"}],
        "games": ["dilemma"],
        "opponents": ["TitForTat"],
        "rounds": [ROUNDS],
        "seeds": list(range(SEEDS)),
        "concurrency": 4,
        "retry": {"base_delay": 0, "max_delay": 0},
    }
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def run_file(path: Path) -> RunSummary:
    return asyncio.run(Runner(load_config(path), show_progress=False).run())


def results(out: Path) -> dict[str, Any]:
    """Every episode's id, status, payoffs and per-round actions."""
    with ResultStore(out / STORE_FILE) as store:
        return {
            e.id: (e.status, e.payoffs, [(r.actions, r.payoffs) for r in store.rounds(e.id)])
            for e in store.episodes()
        }


def endpoints_by_episode(out: Path) -> dict[str | None, set[str]]:
    with ResultStore(out / STORE_FILE) as store:
        calls = store.llm_calls()
    seen: dict[str | None, set[str]] = {}
    for call in calls:
        assert call.error is None and not call.cached
        seen.setdefault(call.episode_id, set()).add(call.response["endpoint"])
    return seen


def paid(out: Path) -> tuple[int, float]:
    with ResultStore(out / STORE_FILE) as store:
        totals = store.call_totals()
        return int(totals["calls"]), float(totals["paid_usd"])


def test_episodes_keep_to_one_server_and_results_equal_one_server(
    tmp_path: Path, servers: list[FakeOpenAIServer]
) -> None:
    urls = [s.base_url for s in servers]
    summary = run_file(write_config(tmp_path / "pool.yaml", urls))
    assert (summary.finished, summary.failed, summary.stopped) == (SEEDS, 0, None)
    seen = endpoints_by_episode(tmp_path / "out")
    assert len(seen) == SEEDS and all(len(used) == 1 for used in seen.values())
    for episode, used in seen.items():  # each on its rendezvous choice (none saturated or down)
        assert used == {max(urls, key=lambda u: rendezvous(str(episode), u))}
    served = sum(len(s.served) for s in servers)
    assert paid(tmp_path / "out") == (served, pytest.approx(served * CALL_USD))

    with FakeOpenAIServer(["ok"], repeat=True) as one:
        single = run_file(write_config(tmp_path / "one.yaml", [one.base_url], out="one"))
    assert single.finished == SEEDS
    assert results(tmp_path / "out") == results(tmp_path / "one")


def test_a_killed_server_s_calls_move_and_the_run_finishes(
    tmp_path: Path, servers: list[FakeOpenAIServer]
) -> None:
    """A server dies after its first answer: every episode finishes, each call is stored once,
    and the spend is that of the answers given (the requests it dropped cost nothing)."""
    victims: list[FakeOpenAIServer] = []
    first = threading.Lock()  # the servers answer on threads of their own

    def die_after_first(server: FakeOpenAIServer) -> None:
        original = server.next_behaviour

        def serve(body: dict[str, Any]) -> str:
            with first:
                if not victims:  # the first server asked: every later request to it is dropped
                    victims.append(server)
                    server.dead = True
            return original(body)

        server.next_behaviour = serve  # type: ignore[method-assign]

    for server in servers:
        die_after_first(server)
    summary = run_file(write_config(tmp_path / "pool.yaml", [s.base_url for s in servers]))
    assert (summary.finished, summary.failed, summary.stopped) == (SEEDS, 0, None)
    (victim,) = victims
    assert len(victim.served) == 1 and victim.dropped >= 1  # its episode's next call moved
    answered = sum(len(s.served) for s in servers)
    assert answered == SEEDS * ROUNDS
    assert paid(tmp_path / "out") == (answered, pytest.approx(answered * CALL_USD))
    with FakeOpenAIServer(["ok"], repeat=True) as one:
        run_file(write_config(tmp_path / "one.yaml", [one.base_url], out="one"))
    assert results(tmp_path / "out") == results(tmp_path / "one")


def pool_of(urls: list[str], max_concurrency: int | None = None) -> EndpointPool:
    config = ModelConfig(
        model="openai/fake",
        api_key_env=KEY_ENV,
        endpoints=tuple(EndpointConfig(base_url=u, max_concurrency=max_concurrency) for u in urls),
        params={"health_wait_s": 1},
    )
    pool = create_provider(config)
    assert isinstance(pool, EndpointPool)
    return pool


REQUEST = Request(messages=(Message("user", "hello"),), choices=("cooperate", "defect"))


def key_preferring(url: str, urls: list[str]) -> str:
    """An episode id whose rendezvous choice among `urls` is `url`."""
    return next(
        k for k in (f"episode-{i}" for i in range(1000))
        if max(urls, key=lambda u: rendezvous(k, u.rstrip("/"))) == url
    )  # fmt: skip


async def call(pool: EndpointPool, episode: str) -> str:
    token = routing_key.set(episode)
    try:
        response = await pool.complete(REQUEST, 0)
    finally:
        routing_key.reset(token)
    assert response.text == "cooperate" and response.endpoint is not None
    return response.endpoint


def test_a_429_halves_that_server_s_concurrency_and_successes_raise_it() -> None:
    with FakeOpenAIServer(["429"]) as busy, FakeOpenAIServer(["ok"], repeat=True) as other:
        urls = [busy.base_url, other.base_url]
        episode = key_preferring(busy.base_url, urls)

        async def scenario() -> list[float]:
            pool = pool_of(urls, max_concurrency=8)
            limits = [pool.endpoints[0].limit]
            # The 429 moves the call to the other server at once, not against the retries.
            assert await call(pool, episode) == other.base_url
            limits.append(pool.endpoints[0].limit)
            for _ in range(RAISE_EVERY):
                assert await call(pool, episode) == busy.base_url
            limits.append(pool.endpoints[0].limit)
            await pool.aclose()
            return limits

        assert asyncio.run(scenario()) == [8, 1, 2]
        assert busy.served == ["429"] + ["ok"] * RAISE_EVERY and other.served == ["ok"]


def test_the_health_check_refuses_a_server_without_the_model() -> None:
    with (
        FakeOpenAIServer(["ok"], repeat=True, models=["other-model"]) as wrong,
        FakeOpenAIServer(["ok"], repeat=True) as right,
    ):
        urls = [wrong.base_url, right.base_url]

        async def scenario() -> str:
            pool = pool_of(urls)
            for i in range(6):
                assert await call(pool, f"episode-{i}") == right.base_url
            await pool.aclose()
            return pool.endpoints[0].state + ": " + pool.endpoints[0].reason

        assert asyncio.run(scenario()) == "out: serves other-model, not fake"
        assert wrong.served == [] and len(right.served) == 6

        async def none_serves() -> None:
            pool = pool_of([wrong.base_url])
            try:
                await call(pool, "episode-0")
            finally:
                await pool.aclose()

        with pytest.raises(StratagemError, match=r"every endpoint is out: .*serves other-model"):
            asyncio.run(none_serves())


def test_every_server_out_stops_the_run_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeOpenAIServer(["401"], repeat=True) as a, FakeOpenAIServer(["403"], repeat=True) as b:
        path = write_config(tmp_path / "pool.yaml", [a.base_url, b.base_url])
        code, _, err = cli(capsys, "run", str(path), "--no-progress", "--yes")
    stopped = [line for line in err.splitlines() if line.startswith("stopped:")]
    assert code == 3 and len(stopped) == 1
    assert "every endpoint is out" in stopped[0]
    assert f"{a.base_url} (HTTP 401)" in stopped[0] and f"{b.base_url} (HTTP 403)" in stopped[0]
    assert KEY not in err


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"base_url": "http://127.0.0.1:1/v1"}, "give base_url or endpoints, not both"),
        ({"endpoints": []}, "endpoints is empty"),
        ({"endpoints": [{"base_url": "gpu-3:8000/v1"}]}, r"is not an http\(s\) URL"),
        ({"model": "anthropic/claude-3-5-haiku-latest"}, "for OpenAI-compatible"),
    ],
)
def test_a_bad_endpoints_setting_is_one_line(change: dict[str, Any], words: str) -> None:
    entry = model_entry(["http://127.0.0.1:1/v1", "http://127.0.0.1:2/v1"]) | change
    data = {"name": "bad", "output": "out", "models": [entry], "games": ["dilemma"],
            "opponents": ["TitForTat"]}  # fmt: skip
    with pytest.raises(StratagemError, match=words) as caught:
        config_from_dict(data, "exp.yaml")
    assert "\n" not in str(caught.value) and "exp.yaml" in str(caught.value)


def closed_port_url() -> str:
    """The URL of a port nothing listens on: a server that is down."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_the_pool_starts_with_the_healthy_servers_and_waits_boundedly_for_none() -> None:
    down = closed_port_url()
    with FakeOpenAIServer(["ok"], repeat=True) as up:

        async def scenario() -> tuple[str, int]:
            pool = pool_of([down, up.base_url])
            for i in range(4):
                assert await call(pool, f"episode-{i}") == up.base_url
            state, rechecks = pool.endpoints[0].state, len(pool._rechecks)
            await pool.aclose()
            return state, rechecks

        assert asyncio.run(scenario()) == ("down", 1)  # re-checked in the background

    async def all_down() -> None:
        pool = pool_of([down])
        try:
            await call(pool, "episode-0")
        finally:
            await pool.aclose()

    # health_wait_s given: refused connections are waited for too (test_pool_health.py)
    with pytest.raises(StratagemError, match=r"healthy after 1 s: .*connection refused"):
        asyncio.run(all_down())


def test_the_recorded_url_never_carries_credentials() -> None:
    assert shown_url("https://user:sk-secret@gpu-3:8000/v1/") == "https://gpu-3:8000/v1"
    assert shown_url("http://gpu-3:8000/v1") == "http://gpu-3:8000/v1"


def test_one_outage_cools_a_server_once_and_one_call_probes_it_after() -> None:
    """Calls in flight when a server dies fail together: that is one failure (a 0.5 s cool-down),
    not one each (30 s, long after it is back); once cooled, one call probes it, not all."""
    with FakeOpenAIServer(["ok"], repeat=True) as dying, FakeOpenAIServer(["ok"]) as other:
        urls = [dying.base_url, other.base_url]
        episode = key_preferring(dying.base_url, urls)

        async def scenario() -> tuple[int, int, int, int]:
            pool = pool_of(urls, max_concurrency=8)
            assert await call(pool, episode) == dying.base_url
            dying.kill()
            sent = 0
            original = pool.endpoints[0].provider.complete

            async def counted(request: Request, sample: int) -> Any:
                nonlocal sent
                sent += 1
                return await original(request, sample)

            pool.endpoints[0].provider.complete = counted  # type: ignore[method-assign]
            moved = await asyncio.gather(*(call(pool, episode) for _ in range(8)))
            assert set(moved) == {other.base_url}
            outage = (sent, pool.endpoints[0].failures)
            pool.endpoints[0].cool_until = 0.0  # its cool-down is over: probe it
            await asyncio.gather(*(call(pool, episode) for _ in range(8)))
            await pool.aclose()
            return (*outage, sent - outage[0], pool.endpoints[0].failures)

        sent, failures, probes, failures_after = asyncio.run(scenario())
        assert sent == 8 and failures == 1  # 8 calls failed at once: one outage
        assert probes == 1 and failures_after == 2  # one probe failed: the cool-down doubles
