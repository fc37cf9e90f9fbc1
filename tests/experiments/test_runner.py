"""The experiment runner on the scripted model: grid ids, recording, resuming, invalid outputs,
budgets and config errors, from a YAML file on disk as a user writes it."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.cli import cli

from stratagem.analysis.cells import cell_table
from stratagem.experiments.config import load_config
from stratagem.experiments.grid import expand
from stratagem.experiments.records import EncodedJson
from stratagem.experiments.runner import (
    CACHE_FILE,
    STORE_FILE,
    Runner,
    RunSummary,
    stored_request,
)
from stratagem.experiments.store import ResultStore
from stratagem.llm.cache import ResponseCache
from stratagem.llm.providers.scripted import _REGISTERED, register_script
from stratagem.llm.types import Message, Request

GARBAGE = "I would rather not say."


class CountingScript:
    """A scripted model that remembers every request the provider received."""

    def __init__(self) -> None:
        self.calls: list[Request] = []

    def __call__(self, request: Request, sample: int) -> str:
        self.calls.append(request)
        return self.answer(request)

    def answer(self, request: Request) -> str:
        return "cooperate" if "cooperate" in request.choices else request.choices[0]


class OddRoundsGarbage(CountingScript):
    """Garbage in odd rounds (every attempt, re-asks included), a legal reply in even rounds."""

    def answer(self, request: Request) -> str:
        first_user = next(m.content for m in request.messages if m.role == "user")
        rounds = re.findall(r"Round (\d+)(?: of \d+)?: choose your action", first_user)
        if int(rounds[-1]) % 2:
            return GARBAGE
        if request.json_schema is not None:
            return '{"DECISION": "cooperate"}'
        return "[move] (let us see) cooperate"


@pytest.fixture
def script() -> Iterator[CountingScript]:
    counter = CountingScript()
    register_script("runner-count", counter)
    yield counter
    _REGISTERED.pop("runner-count", None)


def write_config(path: Path, **overrides: Any) -> Path:
    data: dict[str, Any] = {
        "name": "basics",
        "output": str(path.parent / "out"),
        "models": [{"model": "scripted/runner-count"}],
        "agents": [{"name": "plain", "output": "choice"}],
        "games": ["dilemma"],
        "opponents": ["TitForTat", "AlwaysDefect"],
        "rounds": [3],
        "seeds": [0],
        "concurrency": 1,
        "retry": {"base_delay": 0},
    }
    data.update(overrides)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def run_file(path: Path) -> RunSummary:
    return asyncio.run(Runner(load_config(path), show_progress=False).run())


def rounds_by_episode(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    with ResultStore(db) as store:
        return {
            e.id: [(r.round, r.actions, r.payoffs, r.valid) for r in store.rounds(e.id)]
            for e in store.episodes(status="finished")
        }


def test_grid_ids_are_stable_and_growing_the_grid_keeps_them(tmp_path: Path) -> None:
    file = write_config(tmp_path / "exp.yaml")
    ids = [s.id for s in expand(load_config(file))]
    assert ids == [s.id for s in expand(load_config(file))]
    assert len(ids) == len(set(ids)) == 2
    assert all(re.fullmatch(r"[0-9a-f]{16}", i) for i in ids)
    # How a model is reached, and how fast, is not part of what an episode is.
    write_config(
        file,
        models=[{"model": "scripted/runner-count", "base_url": "http://x", "max_concurrency": 9}],
        concurrency=7,
        output=str(tmp_path / "elsewhere"),
    )
    assert [s.id for s in expand(load_config(file))] == ids
    # Another seed adds episodes and keeps the old ones; other rounds make other episodes.
    write_config(file, seeds=[0, 1])
    grown = [s.id for s in expand(load_config(file))]
    assert len(grown) == 4 and set(ids) < set(grown)
    write_config(file, rounds=[4])
    assert not set(ids) & {s.id for s in expand(load_config(file))}


def test_run_records_every_round_and_call_then_resumes_for_free(
    tmp_path: Path, script: CountingScript
) -> None:
    file = write_config(tmp_path / "exp.yaml")
    summary = run_file(file)
    assert (summary.episodes, summary.finished, summary.failed, summary.skipped) == (2, 2, 0, 0)
    assert summary.stopped is None and summary.errors == []
    # Both episodes open with the same prompt, but each episode has its own model seed (derived
    # from its id), so they sample independently: every request is paid, none shared.
    assert len(script.calls) == 6
    assert len({c.seed for c in script.calls}) == 2
    assert (summary.calls, summary.cached_calls) == (6, 0)
    db = tmp_path / "out" / STORE_FILE
    specs = {s.opponent: s.id for s in expand(load_config(file))}
    with ResultStore(db) as store:
        assert [e.id for e in store.episodes("basics", status="finished")] == list(specs.values())
        vs_tft, vs_alld = (store.rounds(specs[o]) for o in ("TitForTat", "AlwaysDefect"))
        assert [(r.actions, r.payoffs, r.valid) for r in vs_tft] == [
            (("cooperate", "cooperate"), (10.0, 10.0), True)
        ] * 3
        assert [(r.actions, r.payoffs) for r in vs_alld] == [
            (("cooperate", "defect"), (0.0, 15.0))
        ] * 3
        assert store.episode(specs["TitForTat"]).payoffs == (30.0, 30.0)  # type: ignore[union-attr]
        for episode_id in specs.values():
            calls = store.llm_calls(episode_id)
            assert [(c.round, c.player, c.request["purpose"]) for c in calls] == [
                (t, 0, "decision") for t in (1, 2, 3)
            ]
            assert all(c.text == "cooperate" and c.input_tokens and c.error is None for c in calls)
            assert [r.tokens[0] for r in store.rounds(episode_id)] == [  # type: ignore[index]
                c.input_tokens + c.output_tokens  # type: ignore[operator]
                for c in calls
            ]
        assert sum(not c.cached for c in store.llm_calls()) == 6
    with ResponseCache(tmp_path / "out" / CACHE_FILE) as cache:
        assert len(cache) == 6

    before = rounds_by_episode(db)
    again = run_file(file)
    assert (again.skipped, again.finished, again.calls) == (2, 0, 0)
    assert len(script.calls) == 6  # not one provider call
    assert rounds_by_episode(db) == before

    # A new seed: only its two episodes are played, each of its requests paid once.
    write_config(file, seeds=[0, 1])
    grown = run_file(file)
    assert (grown.episodes, grown.skipped, grown.finished) == (4, 2, 2)
    assert len(script.calls) == 12
    after = rounds_by_episode(db)
    assert len(after) == 4 and {k: after[k] for k in before} == before


@pytest.mark.parametrize(
    ("output", "invalid", "played", "payoffs"),
    [
        ("tag", "forfeit", None, (0.0, 0.0)),
        ("json", "default:defect", "defect", None),
    ],
)
def test_invalid_outputs_are_reasked_then_recorded_as_invalid(
    tmp_path: Path, output: str, invalid: str, played: str | None, payoffs: Any
) -> None:
    script = OddRoundsGarbage()
    register_script("runner-odd", script)
    try:
        file = write_config(
            tmp_path / "exp.yaml",
            models=[{"model": "scripted/runner-odd"}],
            agents=[{"name": output, "output": output, "max_reasks": 2, "invalid": invalid}],
            opponents=["AlwaysCooperate"],
            rounds=[4],
        )
        summary = run_file(file)
    finally:
        _REGISTERED.pop("runner-odd", None)
    assert (summary.finished, summary.failed) == (1, 0)
    # Rounds 1 and 3: the first ask and 2 re-asks, all garbage; rounds 2 and 4: one call.
    assert len(script.calls) == 3 + 1 + 3 + 1
    (spec,) = expand(load_config(file))
    with ResultStore(tmp_path / "out" / STORE_FILE) as store:
        rounds = store.rounds(spec.id)
        assert [r.valid for r in rounds] == [False, True, False, True]
        assert [r.actions for r in rounds] == [
            (played, "cooperate"),
            ("cooperate", "cooperate"),
        ] * 2
        # The forfeit scores (0, 0); a default move scores what it plays (D vs C: 15 / 0).
        assert [r.payoffs for r in rounds[::2]] == [payoffs or (15.0, 0.0)] * 2
        assert [r.payoffs for r in rounds[1::2]] == [(10.0, 10.0)] * 2
        calls = store.llm_calls(spec.id)
        assert [(c.round, c.request["purpose"]) for c in calls] == [
            (1, "decision"), (1, "reask"), (1, "reask"), (2, "decision"),
            (3, "decision"), (3, "reask"), (3, "reask"), (4, "decision"),
        ]  # fmt: skip
        events = store.events(spec.id, "invalid")
        assert [(e.round, e.player) for e in events] == [(1, 0), (3, 0)]
        for event in events:
            assert event.data["texts"] == [GARBAGE] * 3
            assert event.data["played"] == played
            assert event.data["error"]
        (cell,) = cell_table(store, "basics")
        assert cell.invalid_rate == 0.5
        assert cell.cooperation == 1.0  # over the valid moves only
        assert cell.score == (20.0 if played is None else 50.0)


def test_budget_stops_new_calls_cleanly_and_a_higher_cap_finishes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], script: CountingScript
) -> None:
    grid = {"opponents": ["TitForTat"], "seeds": [0, 1, 2, 3], "rounds": [4]}
    # A reference run without a cap tells what each call costs in tokens (scripted: words).
    reference = write_config(tmp_path / "ref" / "exp.yaml", **grid)
    assert run_file(reference).finished == 4
    specs = [s.id for s in expand(load_config(reference))]
    with ResultStore(tmp_path / "ref" / "out" / STORE_FILE) as store:
        tokens = [(c.input_tokens or 0) + (c.output_tokens or 0) for c in store.llm_calls()]
        first = [(c.input_tokens or 0) + (c.output_tokens or 0) for c in store.llm_calls(specs[0])]
    assert len(tokens) == 16 and len(first) == 4
    script.calls.clear()

    # The cap is reached by the 3rd call: the 4th is never made, the run stops, exit 3.
    cap = sum(first[:3]) - 1
    file = write_config(tmp_path / "exp.yaml", budget={"max_tokens": cap}, **grid)
    code, out, err = cli(capsys, "run", str(file), "--no-progress")
    assert code == 3
    assert len(script.calls) == 3
    (line,) = err.strip().splitlines()
    assert line == (
        f"stopped: budget reached: used {sum(first[:3]):,} of the {cap:,} token cap (max_tokens) "
        "(calls already under way when it was reached were paid too); "
        "no new model calls are made (cached answers still replay). Raise the cap to continue."
    )
    assert "1 failed" in out
    db = tmp_path / "out" / STORE_FILE
    with ResultStore(db) as store:
        stopped = store.episode(specs[0])
        assert stopped is not None and stopped.status == "failed"
        assert "budget" in (stopped.error or "")
        assert len(store.rounds(specs[0])) == 3
        assert all(store.episode(i) is None for i in specs[1:])  # never started

    # The cap spans re-runs: the same cap replays what was paid and makes no new call.
    code, _, err = cli(capsys, "run", str(file), "--no-progress")
    assert code == 3 and len(err.strip().splitlines()) == 1
    assert len(script.calls) == 3

    write_config(file, budget={"max_tokens": 10 * sum(tokens)}, **grid)
    code, out, err = cli(capsys, "run", str(file), "--no-progress")
    assert code == 0 and err == ""
    assert "4 played" in out
    assert len(script.calls) == 16  # every request paid exactly once over the three runs
    with ResultStore(db) as store:
        assert store.status_counts("basics")["finished"] == 4
        assert sum(not c.cached for c in store.llm_calls()) == 16
    assert rounds_by_episode(db) == rounds_by_episode(tmp_path / "ref" / "out" / STORE_FILE)


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"agents": [{"output": "xml"}]}, "agents.0.output: got 'xml', allowed: "),
        ({"concurency": 2}, "concurency: unknown field"),
        ({"rounds": [3, 0]}, "rounds: "),
        ({"models": [{"model": "gpt-4o"}]}, "models.0.model: "),
        ({"opponents": ["TitForTat", "TitForTot"]}, "opponents.1: unknown strategy 'TitForTot'"),
        ({"games": ["dilema"]}, "games.0: "),
        ({"agents": [{"invalid": "default:maybe"}]}, "agents.0.invalid: 'maybe' is not an action"),
        ({"budget": {"max_usd": -1}}, "budget.max_usd: "),
    ],
)
def test_config_errors_name_file_and_field_on_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], override: dict[str, Any], message: str
) -> None:
    file = write_config(tmp_path / "bad.yaml", **override)
    code, out, err = cli(capsys, "run", str(file), "--no-progress")
    assert code == 2 and out == ""
    (line,) = err.strip().splitlines()
    assert line.startswith(f"error: {file}: ") and message in line
    assert "Traceback" not in err
    assert not (tmp_path / "out").exists()  # nothing was run or created


def test_missing_and_malformed_files_are_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope.yaml"
    code, _, err = cli(capsys, "run", str(missing))
    assert code == 2 and err.strip() == f"error: {missing}: no such experiment file"
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: x\nmodels: [\n", encoding="utf-8")
    code, _, err = cli(capsys, "run", str(broken))
    (line,) = err.strip().splitlines()
    assert code == 2 and line.startswith(f"error: {broken}:") and "not valid YAML" in line


def test_a_call_record_keeps_the_cache_keys_encoding_of_its_request() -> None:
    """The request is encoded once for its cache key, its cache row and its record: the record
    is that text with `n`, the purpose and the retries added, and reads as the request does."""
    request = Request(
        (Message("system", "Règles"), Message("user", "Round 1")),
        choices=("a", "b"), temperature=1, seed=3, n=2,
    )  # fmt: skip
    canonical = ResponseCache.key_and_request("m", request, 0)[1]
    stored = stored_request(request, "decision", 2, canonical)
    assert isinstance(stored, EncodedJson) and stored.text.endswith(canonical[1:])
    plain = stored_request(request, "decision", 2, None)  # no cache: encoded by the store
    assert plain == {**request.to_json(), "purpose": "decision", "retries": 2}
    as_read = json.loads(json.dumps(plain))
    assert json.loads(stored.text) == {**as_read, "temperature": 1.0}  # as the key reads it
