"""The viewer's cells and diff read without loading every round (issue 25 item 9,
`analysis.tallies`) give exactly the answers of the computation they replace (kept here as
`_reference_cells` and `_reference_metrics`: every finished episode loaded whole and counted by
`analysis.cells`), on stores of real runs (matrix games with re-asks, invalid moves and forfeits,
two models and two agents, Ultimatum line-ups, a MAgIC game, TradeCraft) and a hand-written one
with what grouping the rounds could get wrong: payoffs that are not whole numbers, forfeits with
and without invalid events, a game named only, a game that is no matrix game, three seats."""

from __future__ import annotations

import asyncio
import sqlite3
from collections import defaultdict
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from support import tom_games
from support.named import only
from support.scripted_run import run_scripted

from stratagem.analysis.cells import cell_key, cells_of, episode_tally, order_key, seat_totals
from stratagem.analysis.episodes import EpisodeData, load_episodes
from stratagem.analysis.tallies import episode_tallies
from stratagem.experiments.config import config_from_dict
from stratagem.experiments.records import EpisodeBundle, EpisodeRecord, EventRecord, RoundRecord
from stratagem.experiments.runner import STORE_FILE, Runner
from stratagem.experiments.store import ExperimentRecord, ResultStore
from stratagem.llm.providers.scripted import _REGISTERED, register_script
from stratagem.llm.types import Request
from stratagem.web.data import Sources
from stratagem.web.data.diff import CellEpisodes, diff, episode_metrics
from stratagem.web.data.listing import cell_text

# --- the computation `Sources.cells` and `Sources.diff` used before (issue 25, fourth round) ---


def _reference_cells(store: ResultStore, experiment: str) -> list[dict[str, Any]]:
    episodes = load_episodes(store, experiment, event_kinds=("invalid", "decision"))
    costs = store.seat_costs([e.record.id for e in episodes])
    groups: dict[Any, list[EpisodeData]] = defaultdict(list)
    for e in episodes:
        if e.seats:
            groups[cell_key(e, 0)].append(e)
    general = {c.key: c for c in cells_of(episodes, 0)}
    out = []
    for key in sorted(groups, key=order_key):
        rows, cell = groups[key], general[key]
        totals = [seat_totals(e) for e in rows]
        width = max(len(t) for t in totals)
        out.append({
            "cell": cell_text(key), "model": cell.model, "agent": cell.agent, "game": cell.game,
            "opponent": cell.opponent,
            "lineup": [s.name for s in rows[0].seats],
            "rounds": cell.rounds, "episodes": cell.episodes,
            "score": [sum(t[i] for t in totals if i < len(t)) / len(rows)
                      for i in range(width)],
            "cooperation": cell.cooperation, "invalid_rate": cell.invalid_rate,
            "llm_invalid_rate": cell.llm_invalid_rate,
            "cost_usd": sum(sum(costs.get(e.record.id, {}).values()) for e in rows),
        })  # fmt: skip
    return out


def _counted(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows' counted figures: what applies (`metrics`, `outcomes`) is test_applies.py's."""
    return [{k: v for k, v in row.items() if k not in ("metrics", "outcomes")} for row in rows]


def _reference_metrics(store: ResultStore, experiment: str) -> dict[Any, CellEpisodes]:
    episodes = load_episodes(store, experiment, event_kinds=("invalid", "decision"))
    costs = store.seat_costs([e.record.id for e in episodes])
    out: dict[Any, CellEpisodes] = {}
    for e in episodes:
        if not e.seats:
            continue
        key = cell_key(e, 0)
        if key not in out:
            model, agent, game, opponent, rounds = key
            lineup = [s.name for s in e.seats]
            out[key] = CellEpisodes({"cell": cell_text(key), "model": model, "agent": agent,
                                     "game": game, "opponent": opponent, "lineup": lineup,
                                     "rounds": rounds})  # fmt: skip
        _, _, cooperative, valid, invalid = episode_tally(e, 0)
        values: dict[str, float | None] = {
            f"score seat {k}": total for k, total in enumerate(seat_totals(e))
        }
        values["cooperation"] = cooperative / valid if valid and cooperative >= 0 else None
        values["invalid rate"] = invalid / (valid + invalid) if valid + invalid else 0.0
        values["cost usd"] = float(sum(costs.get(e.record.id, {}).values()))
        position = (str(e.record.seed), str(e.spec.get("repetition")))
        out[key].episodes.append((position, values))
    return out


# --- stores ---


def _run(output: Path, name: str, reply: Any, **settings: Any) -> None:
    """A run on two scripted models, `scripted/<name>-a` and `-b`, both answering `reply`."""
    data: dict[str, Any] = {
        "name": name,
        "output": str(output),
        "models": [{"model": f"scripted/{name}-a"}, {"model": f"scripted/{name}-b"}],
        "retry": {"base_delay": 0},
        **settings,
    }
    for suffix in "ab":
        register_script(f"{name}-{suffix}", reply)
    try:
        summary = asyncio.run(Runner(config_from_dict(data, name), show_progress=False).run())
    finally:
        for suffix in "ab":
            _REGISTERED.pop(f"{name}-{suffix}", None)
    assert summary.failed == 0, summary.errors


def _sometimes_wrong() -> Any:
    """A label most calls, a reply that is no move every fourth (re-asked, or invalid)."""
    calls = [0]

    def reply(request: Request, sample: int) -> str:
        calls[0] += 1
        if calls[0] % 4 == 0:
            return "I would rather not say."
        if request.choices:
            return request.choices[calls[0] % len(request.choices)]
        return str(10 * (calls[0] % 7))

    return reply


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One results directory: PD and Stag Hunt against two strategies on two models and two
    agents (one re-asks, one forfeits), and Ultimatum line-ups (decision events, no rounds)."""
    out = tmp_path_factory.mktemp("played") / "out"
    _run(
        out, "fast-matrix", _sometimes_wrong(),
        agents=[{"name": "plain", "max_reasks": 1}, {"name": "blunt", "kind": "plain",
                                                      "max_reasks": 0}],
        games=["pd", "sh"], opponents=["TitForTat", "AlwaysDefect"], rounds=[4],
        seeds=[0, 1], repetitions=2,
    )  # fmt: skip
    _run(
        out, "fast-ultimatum", _sometimes_wrong(),
        agents=[{"name": "plain", "max_reasks": 0}], games=["ultimatum"], seeds=[0, 1, 2],
        lineups=[["plain", "plain"], ["scripted:10", "plain"], ["plain", "scripted:accept"]],
    )  # fmt: skip
    return out


def _round(eid: str, n: int, actions: list[Any], payoffs: list[Any] | None) -> RoundRecord:
    return RoundRecord(eid, n, tuple(actions), None if payoffs is None else tuple(payoffs), True)


def _episode(
    eid: str,
    game: str,
    seats: list[dict[str, Any]],
    rounds: list[tuple[list[Any], list[Any] | None]],
    *,
    seed: int = 0,
    spec: dict[str, Any] | None = None,
    status: str = "finished",
    payoffs: list[float] | None = None,
    events: tuple[EventRecord, ...] = (),
    labels: list[list[str]] | None = None,
    table: Any = None,
) -> EpisodeBundle:
    record = EpisodeRecord(
        id=eid, experiment_id="hand", game=game, players=tuple(seats), seed=seed,
        status=status,  # type: ignore[arg-type]
        spec=spec if spec is not None else {"repetition": seed % 2, "model": seats[0]["name"]},
        labels=None if labels is None else tuple(tuple(ls) for ls in labels),
        game_payoffs=table, payoffs=None if payoffs is None else tuple(payoffs),
        source="import:test",
    )  # fmt: skip
    made = tuple(_round(eid, n + 1, a, p) for n, (a, p) in enumerate(rounds))
    return EpisodeBundle(record, made, events)


LLM = {"name": "zs", "kind": "llm", "model": "m-1"}
LLM2 = {"name": "cot", "kind": "llm", "model": "m-2"}
BOT = {"name": "srep", "kind": "strategy"}
PD = [["cooperation", "defection"], ["cooperation", "defection"]]
PD_TABLE = [[[3.0, 3.0], [0.0, 5.0]], [[5.0, 0.0], [1.0, 1.0]]]
ROUNDED = {"hand-fractions", "hand-events", "hand-not-valid", "hand-huge"}
"""The hand-written episodes only their rounds in order can count (see `hand`)."""


@pytest.fixture(scope="module")
def hand(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store written record by record, as an import writes one."""
    folder = tmp_path_factory.mktemp("hand")
    c, d = "cooperation", "defection"
    invalid = EventRecord("hand-events", 1, "invalid", {"error": "no move"}, round=2, player=0)
    other_seat = EventRecord("hand-fine", 1, "invalid", {"error": "no move"}, round=1, player=1)
    not_valid = EventRecord("hand-not-valid", 1, "decision", {"valid": False}, round=3, player=0)
    bundles = [
        # Whole payoffs, as floats and ints, with forfeits (null moves, no invalid events).
        *(_episode(f"hand-whole-{k}", "pd/pd", [LLM, BOT],
                   [([c, d], [0.0, 5.0]), ([None, c], [0.0, 0.0]), ([c, c], [3, 3]),
                    ([d, c], [5.0, 0.0]), ([c, d], [0.0, 5.0])][: 3 + k], seed=k)
          for k in range(3)),
        # The same seats as above, another cell by what the spec says (its model, its agent).
        _episode("hand-alias", "pd/pd", [LLM, BOT], [([c, c], [3, 3])],
                 spec={"model_id": "alias", "agent": {"name": "tagged"}}),
        _episode("hand-agent", "pd/pd", [LLM, BOT], [([d, c], [5, 0])],
                 spec={"model": "zs", "agent": {"kind": "debate"}, "repetition": "r"}),
        # An invalid event of seat 1 only: seat 0's tally is unchanged.
        _episode("hand-fine", "pd/pd", [LLM, BOT], [([c, None], [1.0, 1.0])],
                 events=(other_seat,)),
        # Payoffs that are not whole numbers: summed in order, 0.1 + 0.2 + 0.3 != 0.3 + 0.2 + 0.1.
        _episode("hand-fractions", "pd/pd", [LLM, BOT],
                 [([c, c], [0.1, 0.3]), ([c, d], [0.2, 0.2]), ([d, d], [0.3, 0.1])], seed=1),
        # A forfeit with an invalid event, in a round whose recorded move is cooperative.
        _episode("hand-events", "pd/pd", [LLM, BOT],
                 [([c, c], [3, 3]), ([c, d], [0, 5]), ([None, d], [0, 0])], seed=2,
                 events=(invalid,)),
        _episode("hand-not-valid", "pd/pd", [LLM, BOT],
                 [([c, c], [3, 3]), ([d, d], [1, 1]), ([c, d], [0, 5])], seed=3,
                 events=(not_valid,)),
        _episode("hand-huge", "pd/pd", [LLM, BOT], [([c, c], [2.0**40, 1.0])], seed=4),
        # Stored labels and payoffs of its own (a variant), and null payoffs in a round.
        _episode("hand-variant", "pd/variant", [LLM2, BOT],
                 [([c, d], None), ([d, d], [1.0, 1.0])], labels=PD, table=PD_TABLE),
        # A game named only that no catalog resolves: no cooperation.
        _episode("hand-unknown", "mystery/x", [LLM2, BOT], [(["up", "left"], [1, 2])]),
        # Three seats, a line-up spec, payoffs shorter and longer than the seats.
        _episode("hand-three", "pd/pd", [LLM, LLM2, BOT],
                 [([c, d, c], [1.0, 2.0, 0.0]), ([d, d, d], [1.0, 2.0, 3.0])],
                 spec={"seats": [{"agent": {"name": "plain"}}, {}, {}], "repetition": 0}),
        # No rounds: the stored payoffs; a decision event that was not valid.
        _episode("hand-one-shot", "ultimatum", [LLM2, BOT], [], payoffs=[40.0, 60.0],
                 spec={"seats": [{}, {}]},
                 events=(EventRecord("hand-one-shot", 1, "decision", {"valid": False},
                                     round=1, player=0),)),
        _episode("hand-no-seats", "pd/pd", [], [], spec={}),
        _episode("hand-running", "pd/pd", [LLM, BOT], [([c, c], [3, 3])], status="running"),
    ]  # fmt: skip
    with ResultStore(folder / STORE_FILE) as store:
        experiment = ExperimentRecord("hand", "hand-written", {}, "")
        for bundle in bundles:
            store.put_episode(bundle, experiment=experiment)
    # What an import checks, an older store may still hold: whole payoffs written as integers,
    # and fewer or more payoffs than seats. And what the seats' calls cost.
    with sqlite3.connect(folder / STORE_FILE) as conn:
        for eid, player, cost in [
            ("hand-whole-0", 0, 0.25),
            ("hand-whole-0", 1, 0.5),
            ("hand-fractions", 0, 0.1),
            ("hand-fractions", 0, 0.2),
            ("hand-one-shot", 0, 1.0),
        ]:
            conn.execute(
                "INSERT INTO llm_calls (episode_id, player, model, cost_usd, "
                "created_at) VALUES (?, ?, 'm-1', ?, '2026-01-01')",
                (eid, player, cost),
            )
        for eid, number, payoffs in [
            ("hand-whole-1", 2, "[0, 0]"),
            ("hand-whole-2", 3, "[3, 3]"),
            ("hand-three", 1, "[1.0, 2.0]"),
            ("hand-three", 2, "[1.0, 2.0, 3.0, 4.0]"),
        ]:
            conn.execute(
                "UPDATE rounds SET payoffs = ? WHERE episode_id = ? AND round = ?",
                (payoffs, eid, number),
            )
    conn.close()
    return folder


@pytest.fixture(scope="module")
def tradecraft(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """TradeCraft games of two models, one with a not-valid first proposal."""
    folder = tmp_path_factory.mktemp("tradecraft")
    with tom_games.new_store(folder / STORE_FILE) as store:
        for k, (model, bad) in enumerate([("m/a", False), ("m/a", True), ("m/b", False)]):
            tom_games.play(store, f"tc-{k}", model=model, seed=k, invalid_first_proposal=bad)
    return folder


@pytest.fixture(scope="module")
def dirs(played: Path, hand: Path, tradecraft: Path, chameleon: tuple[Path, str]) -> list[Path]:
    return [played, hand, tradecraft, chameleon[0]]


@pytest.fixture(scope="module")
def sources(dirs: list[Path]) -> Iterator[Sources]:
    data = Sources(dirs)
    yield data
    data.close()


def _experiments(sources: Sources) -> list[tuple[str, str]]:
    return [(e["source"], e["id"]) for e in sources.experiments()]


def _store(sources: Sources, source: str) -> ResultStore:
    (path,) = [s["path"] for s in sources.sources() if s["id"] == source]
    return ResultStore(Path(path), read_only=True)


# --- tests ---


def test_every_experiment_has_the_cells_it_had(sources: Sources) -> None:
    experiments = _experiments(sources)
    assert len(experiments) == 5
    seen_games = set()
    for source, experiment in experiments:
        with _store(sources, source) as store:
            expected = _reference_cells(store, experiment)
        assert expected, experiment
        # Exactly equal: the same floats, not close ones.
        assert _counted(sources.cells(source, experiment)) == expected, experiment
        seen_games |= {row["game"] for row in expected}
    assert {"pd", "sh", "ultimatum", "pd/pd", "mystery/x"} <= seen_games
    assert any(g.startswith("tradecraft") for g in seen_games)
    assert any(g.startswith("chameleon") for g in seen_games)


def test_every_experiment_has_the_diff_metrics_it_had(sources: Sources) -> None:
    experiments = _experiments(sources)
    for source, experiment in experiments:
        with _store(sources, source) as store:
            expected = _reference_metrics(store, experiment)
            tallies = episode_tallies(store, experiment)
            costs = store.seat_costs([t.id for t in tallies])
        assert episode_metrics(tallies, costs) == expected, experiment
    # And the diffs built on them: an experiment against itself and against another.
    pd = next(x for x in experiments if x[1] == "fast-matrix")
    hand = next(x for x in experiments if x[1] == "hand")
    with _store(sources, pd[0]) as store:
        reference_pd = _reference_metrics(store, pd[1])
    with _store(sources, hand[0]) as store:
        reference_hand = _reference_metrics(store, hand[1])
    for a, b, expected in [(pd, pd, diff(reference_pd, reference_pd)),
                           (hand, pd, diff(reference_hand, reference_pd))]:  # fmt: skip
        answer = sources.diff(a, b)
        assert {k: v for k, v in answer.items() if k not in ("a", "b")} == expected
    assert expected["only_a"] and expected["only_b"]


def test_the_played_stores_hold_what_the_comparison_is_about(sources: Sources) -> None:
    """Invalid moves with events, forfeits, re-asks and not-valid decisions were played."""
    experiments = dict((x, s) for s, x in _experiments(sources))
    with _store(sources, experiments["fast-matrix"]) as store:
        kinds = {e.kind for ep in store.episodes("fast-matrix") for e in store.events(ep.id)}
        nulls = [r for ep in store.episodes("fast-matrix") for r in store.rounds(ep.id)
                 if None in r.actions]  # fmt: skip
    assert "invalid" in kinds and nulls
    rows = sources.cells(experiments["fast-matrix"], "fast-matrix")
    assert len({r["model"] for r in rows}) == 2 and len({r["agent"] for r in rows}) == 2
    assert any(r["invalid_rate"] > 0 for r in rows)
    assert any(r["cooperation"] not in (None, 0.0, 1.0) for r in rows)
    ultimatum = sources.cells(experiments["fast-ultimatum"], "fast-ultimatum")
    assert {r["rounds"] for r in ultimatum} == {"-"} and len(ultimatum) >= 3
    assert any(r["invalid_rate"] > 0 for r in ultimatum)


def test_only_episodes_that_need_their_rounds_are_read_whole(
    sources: Sources, hand: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cells read no episode whole, but those whose rounds in order decide: this is
    what makes them fast (the old computation loaded every round of every episode)."""
    import stratagem.analysis.tallies as tallies_module
    import stratagem.web.data.sources as sources_module

    read: list[str] = []
    real = tallies_module.read_rounds

    def counting(store: ResultStore, ids: list[str]) -> Mapping[str, list[RoundRecord]]:
        read.extend(ids)
        return real(store, ids)

    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("every episode loaded whole")

    monkeypatch.setattr(tallies_module, "read_rounds", counting)
    monkeypatch.setattr(sources_module, "load_episodes", refused, raising=False)
    fresh = Sources([hand])
    rows = fresh.cells(only(fresh), "hand")
    assert set(read) == ROUNDED
    monkeypatch.undo()
    with ResultStore(hand / STORE_FILE, read_only=True) as store:
        assert _counted(rows) == _reference_cells(store, "hand")


def test_a_new_commit_is_read_again(sources: Sources, tmp_path: Path) -> None:
    """The kept answer follows the store: an episode finished later is counted."""
    out = tmp_path / "later"
    reply = lambda request, sample: request.choices[0]  # noqa: E731
    run_scripted(out, "fast-later", reply, rounds=[2], seeds=[0])
    data = Sources([out])
    (first,) = data.cells(only(data), "fast-later")
    run_scripted(out, "fast-later", reply, rounds=[2], seeds=[0, 1])
    (second,) = data.cells(only(data), "fast-later")
    assert (first["episodes"], second["episodes"]) == (1, 2)
    with ResultStore(out / STORE_FILE, read_only=True) as store:
        assert _counted(data.cells(only(data), "fast-later")) == _reference_cells(
            store, "fast-later"
        )
