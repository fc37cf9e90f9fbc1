"""The ToM study's reports as forecasts (`studies/tom/forecasts.py`): a V1 report's top items are
point guesses of what the opponent needs, scored against its real target; flat, V0 and V2
reports are counted, not scored. On hand-made games and on a store of played TradeCraft games."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from support.tom_games import new_store, play
from tom_builders import game, rep

from stratagem.analysis.report import build_report
from stratagem.analysis.report_data import ReportData
from stratagem.games.tradecraft.rules import load_rules
from stratagem.studies.tom import forecasts as tf
from stratagem.studies.tom.records import Items, SeatCounts


def needs_y(target: Items, domain: Sequence[str]) -> set[str]:
    """A hand-made relevance: items starting with the target's name feed it."""
    return {i for i in domain if any(i.startswith(t) for t in target)}


def test_top_items_are_guesses_and_the_rest_is_counted() -> None:
    g = game(
        "e",
        group="V2",
        targets=({"x": 1}, {"y": 1}),
        reports=[
            rep(1, 0, {"x1": 9}, {"y1": 9, "q": 9, "y2": 2}, {"x1": 4}),  # y1 right, q wrong
            rep(2, 0, {"x1": 9}, {"y1": 5, "q": 5}),  # flat: no guess
            rep(3, 0, {"x1": 9}, {"y1": 0, "q": 7}),  # q wrong
            rep(3, 1, {"y1": 8}),  # the opponent's V0
        ],
        counts=(SeatCounts(report_failures=2), SeatCounts(report_failures=1)),
    )
    found = tf.game_forecasts(g, "tom-V2", needs_y)
    assert [(f.when, f.outcome) for f in found.forecasts] == [
        ("turn 1 (proposal): q", 0),
        ("turn 1 (proposal): y1", 1),
        ("turn 3 (proposal): q", 0),
    ]
    assert all(f.probabilities is None and f.seat == 0 for f in found.forecasts)
    assert {f.kind for f in found.forecasts} == {tf.kind("V2")}
    assert dict(found.skipped) == {tf.FLAT: 1, tf.NO_TRUTH_V2: 1, tf.OWN_V0: 4, tf.UNREAD: 3}


def test_the_opponents_reports_are_never_guesses() -> None:
    g = game("e", focal=1, reports=[rep(1, 0, {"a": 1}, {"b": 3, "c": 0})])
    assert tf.game_forecasts(g, "", needs_y).forecasts == []


def test_forecasts_of_played_games_use_the_opponents_real_target(tmp_path: Path) -> None:
    store = new_store(tmp_path / "stratagem.db")
    for k, group in enumerate(("V0", "V1", "V2", "V1")):
        play(store, f"g{k}", group=group, seed=k, max_turn=4)
    (experiment,) = store.experiments()
    data = ReportData.load(store, experiment)
    found = tf.tom_forecasts(data, data.episodes)
    rules = load_rules()
    expected = []
    orders = {0: 0, 2: 0}
    for e in data.episodes:
        (outcome,) = store.events(e.record.id, "outcome")
        for b in store.beliefs(e.record.id):
            if b.order in orders:
                orders[b.order] += 1
            if b.order != 1:
                continue  # only the focal seat reports V1 (the baseline reports V0)
            target = outcome.data["targets"][1 - b.player]
            feeds = rules.feeders(target, 3, fuel=True)
            values = b.content["values"]
            best = max(values.values())
            if len(set(values.values())) > 1:
                expected += [
                    (e.record.id, b.content["turn"], item, int(item in feeds))
                    for item, score in values.items()
                    if score == best
                ]
    got = [(f.episode_id, int(f.when.split()[1]), f.when.rsplit(": ", 1)[1], f.outcome)
           for f in found.forecasts]  # fmt: skip
    assert sorted(got) == sorted(expected) and expected
    assert 0 < sum(f.outcome for f in found.forecasts) < len(found.forecasts)
    assert found.skipped[tf.OWN_V0] == orders[0] and found.skipped[tf.NO_TRUTH_V2] == orders[2]
    assert {f.kind for f in found.forecasts} == {tf.kind("V1"), tf.kind("V2")}
    assert {(f.model, f.agent) for f in found.forecasts} == {
        ("openai/gpt-test", "tom-V1"),
        ("openai/gpt-test", "tom-V2"),
    }
    store.close()
    html = build_report(tmp_path).read_text(encoding="utf-8")
    assert 'id="calibration"' in html and "Accuracy of point guesses" in html
    assert tf.kind("V1").replace("'", "&#39;") in html
