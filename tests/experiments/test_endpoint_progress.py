"""Issue 26, *Visible*: one line per pool server under the progress bar, and `endpoints.json`
(`experiments.endpoint_progress`), driven directly with clients of two fake servers."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

import pytest
from rich.console import Console, Group
from support.fake_openai import COMPLETION_TOKENS, FakeOpenAIServer

from stratagem.experiments.endpoint_progress import (
    ENDPOINTS_FILE,
    EndpointProgress,
    ProgressWithEndpoints,
    pools_of,
    read_live_figures,
)
from stratagem.llm.pipeline import CallContext, ModelClient, build_client
from stratagem.llm.registry import EndpointConfig, ModelConfig
from stratagem.llm.retry import RetryPolicy
from stratagem.llm.types import Message, Request

KEY_ENV = "STRATAGEM_ENDPOINT_PROGRESS_KEY"


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-endpoint-progress-0123456789")


def clients_of(urls: list[str]) -> dict[str, ModelClient]:
    pooled = ModelConfig(
        model="openai/fake",
        api_key_env=KEY_ENV,
        endpoints=tuple(EndpointConfig(base_url=u) for u in urls),
        params={"health_wait_s": 1},
    )
    single = ModelConfig(model="scripted/echo")  # no pool: no lines
    retry = RetryPolicy(base_delay=0, max_delay=0)
    return {
        "pooled": build_client(pooled, retry=retry),
        "single": build_client(single, retry=retry),
    }


def rendered(progress: ProgressWithEndpoints) -> str:
    console = Console(file=io.StringIO(), width=200, color_system=None)
    console.print(Group(*progress.get_renderables()))
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert isinstance(text, str)
    return text


def test_lines_and_endpoints_json_show_what_each_server_served(tmp_path: Path) -> None:
    with (
        FakeOpenAIServer(["ok"], repeat=True) as first,
        FakeOpenAIServer(["ok"], repeat=True) as second,
    ):
        servers = {first.base_url: first, second.base_url: second}
        clients = clients_of(list(servers))
        progress = ProgressWithEndpoints(console=Console(file=io.StringIO()), auto_refresh=False)
        progress.add_task("run", total=1)

        async def run() -> None:
            with EndpointProgress(progress, pools_of(clients), tmp_path, "exp-1") as shown:
                written_at_start = read_live_figures(tmp_path)
                assert written_at_start is not None
                assert all(f.calls == 0 for f in written_at_start.servers.values())
                for i in range(12):
                    request = Request(messages=(Message("user", f"hello {i}"),))
                    await clients["pooled"].generate(request, CallContext(episode_id=f"ep-{i}"))
                shown.update()
            for client in clients.values():
                await client.aclose()

        asyncio.run(run())

    lines = [line for line in rendered(progress).splitlines() if "calls" in line]
    assert len(lines) == 2
    live = read_live_figures(tmp_path)  # written at the end
    assert live is not None and live.experiment == "exp-1"
    assert {url for _, url in live.servers} == set(servers)
    for (model, url), figures in live.servers.items():
        served = len(servers[url].served)
        assert model == "openai/fake" and figures.state == "healthy"
        assert (figures.calls, figures.errors) == (served, 0)
        assert figures.output_tokens == COMPLETION_TOKENS * served
        line = next(line for line in lines if url.removeprefix("http://")[:-3] in line)
        assert f"healthy  {served} calls  0 errors  p50 " in line and "tok/s" in line
    assert sum(f.calls for f in live.servers.values()) == 12
    assert not list(tmp_path.glob(".*tmp"))  # replaced whole, nothing left behind


def test_nothing_is_shown_or_written_without_a_pool(tmp_path: Path) -> None:
    clients = {"single": build_client(ModelConfig(model="scripted/echo"))}
    progress = ProgressWithEndpoints(console=Console(file=io.StringIO()), auto_refresh=False)

    async def run() -> None:
        with EndpointProgress(progress, pools_of(clients), tmp_path):
            pass

    asyncio.run(run())
    assert progress.endpoint_lines == () and not (tmp_path / ENDPOINTS_FILE).exists()


def test_clients_built_after_it_started_are_watched(tmp_path: Path) -> None:
    with FakeOpenAIServer(["ok"], repeat=True) as server:
        progress = ProgressWithEndpoints(console=Console(file=io.StringIO()), auto_refresh=False)

        async def run() -> None:
            with EndpointProgress(progress, {}, tmp_path, "exp-2") as shown:
                assert not (tmp_path / ENDPOINTS_FILE).exists()
                clients = clients_of([server.base_url])  # as an executor builds them
                shown.watch(pools_of(clients))
                await clients["pooled"].generate(Request(messages=(Message("user", "hi"),)))
                for client in clients.values():
                    await client.aclose()

        asyncio.run(run())
    live = read_live_figures(tmp_path)
    assert live is not None and live.experiment == "exp-2"
    assert [f.calls for f in live.servers.values()] == [1] == [len(server.served)]
    (figures,) = live.servers.values()
    assert progress.endpoint_lines == (f"  {figures.line(short=True)}",)
    assert figures.line(short=True).startswith(f"127.0.0.1:{server.base_url[17:-3]}  healthy  1 ")


@pytest.mark.parametrize("text", ["", "{", '{"models": 3}', '{"written_at": 1, "models": [{}]}'])
def test_an_unreadable_endpoints_json_reads_as_none(tmp_path: Path, text: str) -> None:
    (tmp_path / ENDPOINTS_FILE).write_text(text, encoding="utf-8")
    assert read_live_figures(tmp_path) is None


def test_endpoints_json_is_what_the_reader_reads(tmp_path: Path) -> None:
    data = {
        "written_at": 5.0,
        "experiment": None,
        "models": [
            {
                "name": "m",
                "model": "openai/x",
                "endpoints": [
                    {"url": "http://h1:8000/v1", "state": "out", "calls": 3, "errors": 3,
                     "p50_s": None, "p95_s": None, "output_tokens": 0, "busy_s": 0.0}
                ],
            }
        ],
    }  # fmt: skip
    (tmp_path / ENDPOINTS_FILE).write_text(json.dumps(data), encoding="utf-8")
    live = read_live_figures(tmp_path)
    assert live is not None and live.written_at == 5.0
    figures = live.servers["openai/x", "http://h1:8000/v1"]
    assert (figures.state, figures.calls, figures.errors, figures.tokens_per_s) == (
        "out", 3, 3, None,
    )  # fmt: skip
    assert figures.line() == "http://h1:8000/v1  out  3 calls  3 errors  p50 -  p95 -  - tok/s"
