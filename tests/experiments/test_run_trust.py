"""What a user of a paid API relies on (issue 11): one writer per directory, edited files not merged
silently, bounded counts, the plan before a run, and spend counted once for every paid call."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from stratagem.analysis.cells import cell_table
from stratagem.errors import StratagemError
from stratagem.experiments.config import load_config
from stratagem.experiments.grid import Grid, expand
from stratagem.experiments.lock import WriterLock
from stratagem.experiments.runner import STORE_FILE, Runner, RunSummary
from stratagem.experiments.store import ResultStore
from stratagem.llm.providers.scripted import _REGISTERED, register_script
from stratagem.llm.types import Request


@pytest.fixture
def counted() -> Iterator[list[Request]]:
    calls: list[Request] = []

    def reply(request: Request, sample: int) -> str:
        calls.append(request)
        return request.choices[0] if request.choices else "cooperate"

    register_script("trust", reply)
    yield calls
    _REGISTERED.pop("trust", None)


def write(tmp_path: Path, **settings: Any) -> Path:
    data: dict[str, Any] = {
        "name": "trust",
        "output": str(tmp_path / "out"),
        "models": [{"model": "scripted/trust", "price": {"input": 1_000_000, "output": 1_000_000}}],
        "agents": [{"name": "plain", "framing": "neutral"}],
        "games": ["dilemma"],
        "opponents": ["TitForTat"],
        "rounds": [3],
        "seeds": [0, 1],
        "retry": {"base_delay": 0},
        **settings,
    }
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def run(path: Path, **options: Any) -> RunSummary:
    return asyncio.run(Runner(load_config(path), show_progress=False, **options).run())


# -- one writer ----------------------------------------------------------------------------------


def test_a_second_writer_is_refused_with_the_first_ones_pid(
    tmp_path: Path, counted: list[Request]
) -> None:
    path = write(tmp_path)
    with WriterLock(tmp_path / "out"):
        refused = rf"another stratagem process \(PID {os.getpid()}\)"
        with pytest.raises(StratagemError, match=refused):
            run(path)
        # Another process is refused the same way, in one line, exit 2 (on a built-in script:
        # it cannot see the one this process registered, and would refuse that first).
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        data["models"][0]["model"] = "scripted/first"
        other = tmp_path / "other.yaml"
        other.write_text(yaml.safe_dump(data), encoding="utf-8")
        done = subprocess.run(
            [str(Path(sys.executable).with_name("stratagem")), "run", str(other), "--no-progress",
             "--yes"],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 2
        (line,) = done.stderr.strip().splitlines()
        assert f"(PID {os.getpid()}) is writing to this directory" in line
    assert counted == []
    assert run(path).finished == 2  # released: the next run proceeds


# -- edited files --------------------------------------------------------------------------------


def test_an_edited_setting_is_refused_unless_forced(tmp_path: Path, counted: list[Request]) -> None:
    path = write(tmp_path)
    assert run(path).finished == 2
    write(tmp_path, agents=[{"name": "plain", "framing": "prisoner"}])
    with pytest.raises(StratagemError) as info:
        run(path)
    message = str(info.value)
    assert "agents.0.framing: 'neutral' -> 'prisoner'" in message
    assert "new `name`" in message and "--force" in message
    # Growing the grid is not a change: another seed, another opponent.
    write(tmp_path, seeds=[0, 1, 2], opponents=["TitForTat", "AlwaysDefect"])
    summary = run(path)
    assert (summary.skipped, summary.finished) == (2, 4)
    # Forced, the changed agent's episodes are added.
    write(tmp_path, agents=[{"name": "plain", "framing": "prisoner"}])
    assert run(path, force=True).finished == 2


# -- bounded counts ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            {"repetitions": 1_000_000_000},
            "repetitions: Input should be less than or equal to 10000",
        ),
        ({"rounds": [1e20]}, "rounds.0.int: Unable to parse input string as an integer"),
        ({"rounds": [20_000]}, "every round count must be from 1 to 10,000"),
        ({"seeds": [1e23]}, "seeds.0: Unable to parse input string as an integer"),
        ({"seeds": [2**63]}, "seeds.0: Input should be less than or equal to 9223372036854775807"),
        ({"concurrency": 10**9}, "concurrency: Input should be less than or equal to 10000"),
    ],
)
def test_counts_beyond_the_bounds_are_one_line_errors(
    tmp_path: Path, settings: dict[str, Any], message: str
) -> None:
    with pytest.raises(StratagemError) as info:
        load_config(write(tmp_path, **settings))
    assert message in str(info.value) and "\n" not in str(info.value)


def test_a_huge_grid_is_counted_not_listed(tmp_path: Path) -> None:
    path = write(tmp_path, seeds=list(range(2000)), repetitions=10_000)
    grid = Grid(load_config(path))
    assert grid.size() == 2000 * 10_000  # counted in no time, nothing listed
    with pytest.raises(StratagemError, match="more than the 1,000,000 one file may list"):
        Runner(load_config(path), show_progress=False)
    small = write(tmp_path, seeds=[0, 1, 2], repetitions=2, opponents=["TitForTat", "Alternator"])
    assert Grid(load_config(small)).size() == len(expand(load_config(small))) == 12


def test_repeated_values_are_refused_up_front(tmp_path: Path) -> None:
    with pytest.raises(StratagemError, match=r"seeds: 1 is listed twice"):
        Grid(load_config(write(tmp_path, seeds=[0, 1, 1])))
    with pytest.raises(StratagemError, match=r"rounds \(of 'pd'\): 16 is listed twice"):
        Grid(load_config(write(tmp_path, games=["pd"], rounds=["study", 16])))


# -- the plan ------------------------------------------------------------------------------------


def test_the_plan_counts_episodes_calls_tokens_and_dollars(
    tmp_path: Path, counted: list[Request]
) -> None:
    path = write(tmp_path, agents=[{"name": "plain"}, {"name": "asks", "questions": True,
                                    "framing": "prisoner"}])  # fmt: skip
    plan = Runner(load_config(path), show_progress=False).plan()
    # 2 agents x 2 seeds; 3 rounds: the plain agent 3 calls, the asking one 3 + 4 x 3 questions.
    assert (plan.episodes, plan.finished) == (4, 0)
    assert plan.calls == 2 * 3 + 2 * 15
    assert plan.tokens == plan.calls * 600  # no paid call yet: the default per call
    assert plan.usd == pytest.approx(plan.tokens * 1.0)  # $1 per token at the price given
    assert plan.above(load_config(path).confirm) == "more than $1.00 (confirm.usd)"
    assert "4 episodes to play (0 already finished), about 36 model calls" in plan.text()

    run(path)
    again = Runner(load_config(path), show_progress=False).plan()
    assert (again.episodes, again.finished, again.calls) == (0, 4, 0)


# -- spend ---------------------------------------------------------------------------------------


def test_spend_counts_every_paid_call_once_across_restarts(
    tmp_path: Path, counted: list[Request]
) -> None:
    """A run stopped by its budget, then re-run with a higher cap: the calls of the episode that
    was restarted were paid for too, and status counts them (the summary of each run its own)."""
    path = write(tmp_path, budget={"max_usd": 600})
    first = run(path)
    assert first.stopped is not None and first.failed >= 1
    write(tmp_path, budget={"max_usd": 100_000})
    second = run(path)
    assert second.finished == 2 and second.failed == 0
    with ResultStore(tmp_path / "out" / STORE_FILE) as store:
        totals = store.call_totals("trust")
        # Every call once, in status as in the runs' summaries; those the provider answered (not
        # replayed from the cache) are what was paid, and the spend shown is exactly theirs.
        assert totals["calls"] == first.calls + second.calls
        assert totals["calls"] - totals["cached"] == len(counted)
        assert totals["cost_usd"] == totals["paid_usd"] == first.cost_usd + second.cost_usd
        assert totals["paid_usd"] > 740
    conn = sqlite3.connect(tmp_path / "out" / STORE_FILE)
    detached = conn.execute("SELECT COUNT(*) FROM llm_calls WHERE episode_id IS NULL").fetchone()
    conn.close()
    assert detached[0] > 0  # the restarted episode's first calls, still counted above


# -- thinking variants ---------------------------------------------------------------------------


def test_a_thinking_variant_is_other_episodes_than_the_same_model(tmp_path: Path) -> None:
    models = [
        {"id": "claude", "model": "anthropic/claude-3-7-sonnet-20250219"},
        {"id": "claude-thinking", "model": "anthropic/claude-3-7-sonnet-20250219",
         "params": {"thinking_budget": "60%"}, "price": {"input": 3, "output": 15}},
    ]  # fmt: skip
    specs = expand(load_config(write(tmp_path, models=models)))
    plain = [s.id for s in specs if s.model is not None and s.model.name == "claude"]
    thinking = [s.id for s in specs if s.model is not None and s.model.name == "claude-thinking"]
    assert len(plain) == len(thinking) == 2 and not set(plain) & set(thinking)
    # Without such a setting the key is the first release's (ids of old results unchanged).
    assert all("model_settings" not in s.key() for s in specs if s.model.name == "claude")  # type: ignore[union-attr]


def test_a_reasoning_setting_its_provider_ignores_is_refused_when_the_file_loads(
    tmp_path: Path,
) -> None:
    models = [{"model": "anthropic/claude-3-7-sonnet-20250219",
               "params": {"reasoning_effort": "high"}}]  # fmt: skip
    with pytest.raises(StratagemError, match=r"models\.0: .*reasoning_effort"):
        load_config(write(tmp_path, models=models))


def test_a_model_entrys_id_names_its_rows(tmp_path: Path, counted: list[Request]) -> None:
    """The id, not the model string, labels the rows, so a thinking variant beside its plain entry
    gets its own rows; the id is stored with the spec but is not part of the episode's id."""
    path = write(tmp_path, models=[{"id": "alias", "model": "scripted/trust"}])
    run(path)
    with ResultStore(tmp_path / "out" / STORE_FILE) as store:
        episodes = store.episodes("trust")
        assert {e.spec["model_id"] for e in episodes} == {"alias"}
        (cell,) = cell_table(store, "trust")
    assert cell.model == "alias"
    ids = [s.id for s in expand(load_config(path))]
    plain = write(tmp_path, models=[{"model": "scripted/trust"}])
    assert ids == [s.id for s in expand(load_config(plain))]
    # In a line-up too, the seat's rows are named by its entry's id.
    lineup = write(tmp_path, models=[{"id": "alias", "model": "scripted/trust"}],
                   games=["ultimatum"], opponents=[], lineups=[["plain", "plain"]])  # fmt: skip
    run(lineup)
    with ResultStore(tmp_path / "out" / STORE_FILE) as store:
        models = {c.model for c in cell_table(store, "trust") if c.game == "ultimatum"}
    assert models == {"alias"}
