"""Benchmark: `--executor ray` against the local executor, on this machine (issue 26).

Part 1, the quickstart (examples/quickstart.yaml: the embedded model against three strategies on
three Prisoner's Dilemma variants) played by the local executor and by 2 Ray worker actors on a
one-machine Ray cluster, side by side in one run: wall time, calls and tokens of each, and
whether the episodes (ids, actions, payoffs) are the same. Each Ray worker loads its own copy
of the model, and both share the machine's cores.

Part 2, a simulated cluster: N fake OpenAI-compatible servers (`latency_server.py`, 200 ms
jittered by +-50%, each answering 32 calls at once) in one endpoint pool, played by M Ray
workers (and by the local executor, M = 0), 32 x N episodes at once: answered calls per second
as a share of the servers' limit (N x 32 / 0.2 s), and this process's CPU per call (with Ray,
the coordinator's: what bounds a real cluster's calls per second, whatever its workers). On a
2-core machine the coordinator, the workers and the servers share the cores, so this shows the
overheads, not a cluster's speed.

    .venv/bin/python benchmarks/ray_executor.py [--skip-quickstart] [--waves 3]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from latency_server import start, url_of

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # a one-machine cluster
os.environ.setdefault("RAY_AUTH_MODE", "disabled")

import ray

from stratagem.experiments import event_loop
from stratagem.experiments.config import ExperimentConfig, load_config
from stratagem.experiments.runner import STORE_FILE, Runner, RunSummary
from stratagem.experiments.store import ResultStore

REPO = Path(__file__).resolve().parents[1]
LATENCY, JITTER, CAP, ROUNDS = 0.2, 0.5, 32, 5


def play(config: ExperimentConfig, workers: int) -> tuple[RunSummary, float, float]:
    """One run: its summary, wall seconds and this process's CPU seconds (the coordinator's,
    with Ray); `workers` 0 is the local executor."""
    executor = "ray" if workers else "local"
    options = {"workers": workers} if workers else {}
    runner = Runner(config, executor=executor, executor_options=options, show_progress=False)
    began, cpu = time.perf_counter(), time.process_time()
    summary = event_loop.run(runner.run())
    if summary.failed or summary.stopped:
        raise SystemExit(f"the run failed: {summary}")
    return summary, time.perf_counter() - began, time.process_time() - cpu


def stored(out: Path) -> dict[str, Any]:
    with ResultStore(out / STORE_FILE) as store:
        return {
            e.id: (e.payoffs, [r.actions for r in store.rounds(e.id)])
            for e in store.episodes(status="finished")
        }


def quickstart(scratch: Path) -> None:
    print("Part 1: the quickstart on the embedded model (9 episodes of 10 rounds)")
    data = yaml.safe_load((REPO / "examples" / "quickstart.yaml").read_text("utf-8"))
    results = {}
    for label, workers in (("local executor", 0), ("ray, 2 workers", 2)):
        out = scratch / f"quickstart-{workers}"
        file = scratch / f"quickstart-{workers}.yaml"
        file.write_text(yaml.safe_dump(data | {"output": str(out)}), encoding="utf-8")
        summary, wall, _ = play(load_config(file), workers)
        results[label] = stored(out)
        print(
            f"  {label:<16} {wall:6.1f} s wall, {summary.calls} calls, "
            f"{summary.tokens:,} tokens, {summary.finished} episodes"
        )
    same = results["local executor"] == results["ray, 2 workers"]
    print(f"  the same episodes (ids, actions, payoffs): {'yes' if same else 'NO'}")


def pool_config(urls: list[str], out: Path, episodes: int) -> ExperimentConfig:
    return ExperimentConfig.model_validate({
        "name": f"sim-{len(urls)}",
        "output": str(out),
        "models": [{
            "model": "openai/fake", "timeout_s": 10, "max_concurrency": CAP * len(urls),
            "endpoints": [{"base_url": u, "max_concurrency": CAP} for u in urls],
            "params": {"health_wait_s": 10},
        }],
        "games": ["pd"], "opponents": ["TitForTat"], "rounds": [ROUNDS],
        "repetitions": episodes, "concurrency": CAP * len(urls),
    })  # fmt: skip


def simulated(scratch: Path, waves: int) -> None:
    print(
        f"\nPart 2: N servers ({LATENCY * 1000:.0f} ms +-{JITTER:.0%}, {CAP} at once each) x M "
        f"workers; {waves} waves of {CAP} x N episodes of {ROUNDS} rounds"
    )
    print(
        f"  {'servers':>7} {'workers':>8} {'calls/s':>8} {'limit':>7} {'share':>6} "
        f"{'this process, CPU ms/call':>26}"
    )
    for servers in (1, 2, 4):
        processes = [start(LATENCY, JITTER, CAP, 0) for _ in range(servers)]
        try:
            urls = [url_of(p) for p in processes]
            limit = servers * CAP / LATENCY
            for workers in (0, 1, 2, 4):
                out = scratch / f"sim-{servers}-{workers}"
                config = pool_config(urls, out, waves * CAP * servers)
                summary, wall, cpu = play(config, workers)
                rate = summary.calls / wall
                label = "local" if workers == 0 else str(workers)
                print(
                    f"  {servers:>7} {label:>8} {rate:>8.0f} {limit:>7.0f} {rate / limit:>6.2f} "
                    f"{1000 * cpu / summary.calls:>26.2f}"
                )
        finally:
            for process in processes:
                process.terminate()
                process.wait(timeout=10)


def main(argv: Any = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-quickstart", action="store_true")
    parser.add_argument("--waves", type=int, default=3)
    args = parser.parse_args(argv)
    ray.init(include_dashboard=False, log_to_driver=False, num_cpus=os.cpu_count())
    try:
        with tempfile.TemporaryDirectory() as scratch:
            if not args.skip_quickstart:
                quickstart(Path(scratch))
            simulated(Path(scratch), args.waves)
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
