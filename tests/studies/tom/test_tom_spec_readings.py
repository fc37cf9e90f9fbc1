"""seed-002 §2.6, §3.2, §5, §6, §7 as the spec decides (issue 24, items 14-19), each on the
smallest game that shows it, and the options that keep every reading the spec leaves open."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from support.tom_games import EXPERIMENT, new_store, play
from tom_builders import game, prop, rep

from stratagem.agents.tom.scores import ScoreReading, repair_score
from stratagem.analysis.episodes import load_episodes
from stratagem.analysis.report import build_report
from stratagem.analysis.report_views import Note
from stratagem.errors import StratagemError
from stratagem.studies.tom.extract import tom_data
from stratagem.studies.tom.options import TomOptions
from stratagem.studies.tom.outcomes import outcome_metrics
from stratagem.studies.tom.proposals import fit_mr, mr_map, proposal_points
from stratagem.studies.tom.records import TomGame
from stratagem.studies.tom.section import reading_notes
from stratagem.studies.tom.section_blocks import decision_blocks
from stratagem.studies.tom.utility import (
    DecisionSample,
    UtilityFit,
    decision_samples,
    fit_utility,
)
from stratagem.studies.tom.utility_grid import LOSS_GRID, fit_grid

SKIP = TomOptions(skip_empty=True)

# -- item 14: empty proposals are valid and delivered (§2.6), so §5, §6 and §7 keep them --------


def five_turns() -> TomGame:
    """Seat 0 (focal, V0 a=8, b=3, c=1) proposes on odd turns, the baseline on even ones; two
    of the five proposals are empty: the baseline's at turn 2, the focal's at turn 5."""
    v0 = {"a": 8, "b": 3, "c": 1}
    return game(
        "five",
        group="V0",
        turns=5,
        reports=[rep(t, 0, v0) for t in range(1, 6)] + [rep(t, 1, {"a": 2}) for t in range(1, 6)],
        proposals=[
            prop(1, 0, {"b": 1}, {"a": 1}, accepted=False),  # request 8, offer 3
            prop(2, 1, {}, {}, accepted=True),  # empty, the focal seat decides
            prop(3, 0, {"b": 1, "c": 2}, {"a": 2}, accepted=False),  # request 16, offer 5
            prop(4, 1, {"a": 1}, {"b": 1}, accepted=False),
            prop(5, 0, {}, {}, accepted=True),  # empty, request 0, offer 0
        ],
    )


def test_empty_proposals_count_in_5_6_and_7_unless_skip_empty() -> None:
    g = [five_turns()]
    # points (8, 3), (16, 5), (0, 0): x̄ = 8, ȳ = 8/3, Sxy = 40, Sxx = 128 -> m = 0.3125
    kept = fit_mr(proposal_points(g))
    assert (kept.n, kept.m) == (3, pytest.approx(0.3125))
    assert mr_map(g, TomOptions(bootstrap=50))[("m", "V0")].m == pytest.approx(0.3125)
    skipped = fit_mr(proposal_points(g, SKIP))
    assert (skipped.n, skipped.m) == (2, pytest.approx(0.25))  # (16-8, 5-3): 2/8
    # §7: the focal seat's empty proposal was accepted, its two others rejected
    focal = outcome_metrics(g)[("m", "V0")].focal
    assert (focal.proposals, focal.acceptance) == (3, pytest.approx(1 / 3))
    focal = outcome_metrics(g, SKIP)[("m", "V0")].focal
    assert (focal.proposals, focal.acceptance) == (2, 0.0)
    # §6: the focal seat decided the baseline's turns 2 (empty) and 4
    assert [s.turn for s in decision_samples(g)] == [2, 4]
    assert [s.turn for s in decision_samples(g, SKIP)] == [4]


# -- item 15: ρ on the grid, β and b from LogisticRegression(lbfgs), chosen by log-likelihood ----

# Six decisions on which the training log-likelihood picks ρ = -1 and the penalised objective
# sklearn minimises (C = 1) picks ρ = -0.5.
X15 = np.array([[2.0, 7.0], [9.0, 4.0], [4.0, 7.0], [2.0, 3.0], [1.0, 8.0], [5.0, 2.0]])
Y15 = np.array([1.0, 0.0, 0.0, 1.0, 1.0, 1.0])
G15 = np.array([0, 0, 1, 1, 2, 2], dtype=np.int64)


def _reference(x: np.ndarray, y: np.ndarray, c: float = 1.0) -> tuple[float, float, float]:
    """§6 as written: at each grid ρ, LogisticRegression(lbfgs, C) on the standardised U; the
    ρ with the highest training log-likelihood (the first on a tie), with its β and b."""
    best: tuple[float, float, float, float] | None = None
    for rho in LOSS_GRID:
        u = x[:, 0] - rho * x[:, 1]
        ut = (u - u.mean()) / u.std()
        lr = LogisticRegression(solver="lbfgs", C=c).fit(ut.reshape(-1, 1), y.astype(int))
        z = lr.coef_[0, 0] * ut + lr.intercept_[0]
        loss = float(np.sum(np.logaddexp(0.0, z) - y * z))
        if best is None or loss < best[0] - 1e-9:
            best = (loss, float(rho), float(lr.coef_[0, 0]), float(lr.intercept_[0]))
    assert best is not None
    return best[1], best[2], best[3]


def test_rho_stays_on_the_grid_chosen_by_training_log_likelihood() -> None:
    rho, beta, b = _reference(X15, Y15)
    assert rho == -1.0
    fit = fit_grid(X15, Y15, G15, 0, TomOptions(), lambda _: None)
    assert fit.params == fit.grid_params == {"rho": rho}
    assert (fit.beta, fit.b) == pytest.approx((beta, b), abs=1e-6)
    # through the whole fit: three episodes, the model fitted on all six decisions
    samples = [
        DecisionSample(f"e{k}", "m", "V0", i + 1, (g,), (l,), int(y))
        for i, ((g, l), y, k) in enumerate(zip(X15, Y15, G15, strict=True))  # noqa: E741
    ]
    full = fit_utility(samples, 0)
    assert isinstance(full, UtilityFit) and full.params == {"rho": -1.0}


def test_refinement_off_the_grid_is_an_option() -> None:
    fit = fit_grid(X15, Y15, G15, 0, TomOptions(refine=True), lambda _: None)
    assert fit.grid_params == {"rho": -1.0}
    assert fit.params["rho"] not in LOSS_GRID and -2.0 <= fit.params["rho"] <= 3.0


# -- item 16: §5's bootstrap resamples every game of the group ----------------------------------


def test_the_bootstrap_resamples_games_without_a_focal_proposal_too() -> None:
    v0 = {"a": 2, "b": 1}
    spread = game(
        "spread",
        reports=[rep(1, 0, v0), rep(3, 0, v0)],
        proposals=[prop(1, 0, {"a": 1}, {"b": 1}), prop(3, 0, {"a": 2}, {"b": 3})],
    )
    silent = game("silent", reports=[rep(2, 1, v0)], proposals=[prop(2, 1, {"a": 1}, {})])
    s = mr_map([spread, silent], TomOptions(bootstrap=400))[("m", "V1")]
    assert (s.n, s.episodes) == (2, 2)
    # a replicate drawing "silent" twice (P = 1/4) has no point: undefined, skipped, counted
    assert 250 < s.m_defined < 350 and s.replicates == 400 and s.m == pytest.approx(1.0)
    alone = mr_map([spread], TomOptions(bootstrap=400))[("m", "V1")]
    assert alone.m == s.m and alone.m_defined == 400


# -- item 17: a V2 read after an unread V1 keeps its features (Table 2) --------------------------


def test_an_unread_v1_keeps_the_g2_and_l2_of_a_read_v2() -> None:
    g = game(
        "v2",
        group="V2",
        reports=[rep(2, 0, {"a": 2, "b": 5}, None, {"a": 7, "b": 1})],
        proposals=[prop(2, 1, {"a": 2}, {"b": 1}, accepted=True)],
    )
    (s,) = decision_samples([g])
    assert (s.g, s.l) == ((4.0, None, 14.0), (5.0, None, 1.0))


# -- item 18: a test fold with one class ----------------------------------------------------------


def _one_class_fold() -> list[DecisionSample]:
    """Episodes a and b have both classes; c only accepts, which a and b predict right."""
    rows = [("a", 10, 1), ("a", 0, 0), ("b", 10, 1), ("b", 0, 0), ("c", 9, 1), ("c", 10, 1)]
    return [DecisionSample(e, "m", "V0", 1, (g,), (0.0,), y) for e, g, y in rows]


def test_a_one_class_fold_scores_over_both_classes_by_default() -> None:
    both = fit_utility(_one_class_fold(), 0)
    present = fit_utility(_one_class_fold(), 0, TomOptions(f1_classes="present"))
    assert isinstance(both, UtilityFit) and isinstance(present, UtilityFit)
    assert sorted(both.fold_f1) == [0.5, 1.0, 1.0]  # §6: accept F1 1, reject F1 0/0 -> 0
    assert sorted(present.fold_f1) == [1.0, 1.0, 1.0]
    assert both.one_class_folds == present.one_class_folds == 1


def test_the_report_says_how_many_folds_had_one_class() -> None:
    v0 = {"a": 0, "b": 0}
    games = []
    for e, rows in {"a": [(10, 1), (0, 0)], "b": [(10, 1), (0, 0)], "c": [(9, 1), (10, 1)]}.items():
        reports, proposals = [], []
        for turn, (value, y) in enumerate(rows, start=1):
            reports.append(rep(turn, 0, v0 | {"a": value}))
            proposals.append(prop(turn, 1, {"a": 1}, {}, accepted=bool(y)))
        games.append(game(e, group="V0", reports=reports, proposals=proposals))
    notes = [b.text for b in decision_blocks(games, TomOptions(), 50) if isinstance(b, Note)]
    assert any("m · V0: 1 of 3" in n and "f1_classes = 'both'" in n for n in notes), notes


# -- item 19: the agent's §3.2 repairs on every stored report, and duplicate rows reported ------


def test_the_shared_repairs_and_their_open_readings() -> None:
    assert repair_score(7.5) == (8, "score 7.5 rounded")
    assert repair_score(6.5) == (6, "score 6.5 rounded")  # ties to even, as the agent reads
    assert repair_score(6.5, ScoreReading("half_up"))[0] == 7
    assert repair_score(7.9, ScoreReading("down"))[0] == 7
    assert repair_score("7") == (7, None)
    assert repair_score("7", ScoreReading(strings=False)) == (0, "unreadable score '7' set to 0")
    assert repair_score(11) == (10, "score 11 clipped to 10")


def test_imported_reports_are_repaired_and_duplicates_reported(tmp_path: Path) -> None:
    store = new_store(tmp_path / "stratagem.db")
    play(store, "other-tool", group="V1", seed=1, max_turn=2, finish=False)
    (row,) = [b for b in store.beliefs("other-tool") if (b.round, b.player, b.order) == (1, 0, 1)]
    (kept,) = [b for b in store.beliefs("other-tool") if (b.round, b.player, b.order) == (2, 0, 1)]
    # what another tool wrote: turn 2's decision V1 of seat 0 again, and turn 1's V1 again
    other = {"turn": 2, "phase": "decision", "values": dict.fromkeys(kept.content["values"], 7.5)}
    store.add_belief("other-tool", 2, 0, 1, other)
    store.add_belief("other-tool", 1, 0, 1, row.content)
    store.finish_episode("other-tool", [0.0, 0.0])
    (g,) = tom_data(load_episodes(store, EXPERIMENT), store.beliefs).games
    report = g.report(2, 0)
    assert report is not None and report.v1 == kept.content["values"]  # the first row
    assert g.duplicates == (
        "turn 2, seat 0 (decision) V1 again, different scores",
        "turn 1, seat 0 (proposal) V1 again, the same scores",
    )
    assert not g.repairs  # an ignored row is not read
    notes = [b.text for b in reading_notes([g], TomOptions()) if isinstance(b, Note)]
    assert len(notes) == 1 and "2 duplicate belief rows in 1 game" in notes[0]
    assert "episode 'other-tool' turn 2, seat 0 (decision) V1 again" in notes[0]


def test_a_report_from_another_tool_is_read_as_the_agent_reads_a_reply(tmp_path: Path) -> None:
    store = new_store(tmp_path / "stratagem.db")
    play(store, "other-tool", group="V1", seed=1, max_turn=2, finish=False)
    domain = sorted(store.beliefs("other-tool")[0].content["values"])
    raw = {domain[0]: 7.5, domain[1]: "6.5", domain[2]: 11, "minecraft:diamond": 3}
    # the baseline (seat 1) deciding at turn 1 is never asked for V1: a row no agent wrote
    store.add_belief("other-tool", 1, 1, 1, {"turn": 1, "phase": "decision", "values": raw})
    store.finish_episode("other-tool", [0.0, 0.0])
    episodes = load_episodes(store, EXPERIMENT)
    (g,) = tom_data(episodes, store.beliefs).games  # 7.5 used to fail the whole analysis
    report = g.report(1, 1)
    assert report is not None and report.v1 is not None
    # over the domain the notes give: fractions and text read, 11 clipped, diamond dropped
    # (in nobody's hand), the items it left out 0
    assert dict(report.v1) == {i: 0 for i in domain} | {domain[0]: 8, domain[1]: 6, domain[2]: 10}
    first = domain[0].removeprefix("minecraft:")
    assert f"turn 1, seat 1 (decision) V1[{first}]: score 7.5 rounded" in g.repairs
    assert "turn 1, seat 1 (decision) V1: dropped diamond (in nobody's hand)" in g.repairs
    assert len(g.repairs) == 3 + 1 + len(domain) - 3 and not g.duplicates
    (half_up,) = tom_data(episodes, store.beliefs, TomOptions(score_rounding="half_up")).games
    report = half_up.report(1, 1)
    assert report is not None and report.v1 is not None and report.v1[domain[1]] == 7
    notes = [b.text for b in reading_notes([g], TomOptions()) if isinstance(b, Note)]
    assert len(notes) == 1
    assert notes[0].startswith(f"{len(domain) + 1} scores in 1 game needed §3.2's repairs")


def test_the_report_counts_repairs_and_duplicates(tmp_path: Path) -> None:
    store = new_store(tmp_path / "stratagem.db")
    play(store, "other-tool", group="V1", seed=1, max_turn=2, finish=False)
    row = store.beliefs("other-tool")[0]
    store.add_belief("other-tool", row.round, row.player, row.order, row.content)
    values = dict.fromkeys(row.content["values"], 7.5)
    store.add_belief("other-tool", 1, 1, 1, {"turn": 1, "phase": "decision", "values": values})
    store.finish_episode("other-tool", [0.0, 0.0])
    store.close()
    page = build_report(tmp_path).read_text(encoding="utf-8")
    part = page[page.index('<section id="tom">') :]
    n = len(values)
    assert f"{n} scores in 1 game needed §3.2&#39;s repairs" in part
    assert "1 duplicate belief row in 1 game" in part


# -- the options: named, checked, one line ---------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "named"),
    [
        ({"folds": 1}, "folds must be a whole number from 2 to 100, got 1"),
        ({"level": 1.0}, "level must be strictly between 0 and 1, got 1.0"),
        ({"epsilon": 0.0}, "epsilon must be positive, got 0.0"),
        ({"epsilons": ()}, "epsilons must be a non-empty list of numbers"),
        ({"bootstrap": True}, "bootstrap must be a whole number from 1 to 100,000, got True"),
        ({"selection": "test"}, "selection must be one of train, inner_cv, got 'test'"),
        ({"f1_classes": "all"}, "f1_classes must be one of both, present, got 'all'"),
        ({"score_rounding": "up"}, "score_rounding must be one of half_even, half_up, down"),
        ({"skip_empty": "yes"}, "skip_empty must be true or false, got 'yes'"),
        ({"C": float("inf")}, "C must be a finite number, got inf"),
    ],
)
def test_a_bad_option_is_one_line_naming_it(values: dict[str, object], named: str) -> None:
    with pytest.raises(StratagemError) as info:
        TomOptions(**values)  # type: ignore[arg-type]
    assert named in str(info.value) and "\n" not in str(info.value)


def test_fractional_amounts_of_a_game_that_allows_them_are_read_not_refused() -> None:
    """A game played with `fractional_amounts` records fractions as "p/q" (games.tradecraft.game);
    the analysis reads them as the engine does instead of calling the game damaged."""
    from stratagem.studies.tom.extract import _items

    assert _items({"coal": "1/2", "stick": 2, "plank": "4/2"}, "proposal.offer") == {
        "coal": 0.5,
        "stick": 2,
        "plank": 2,
    }
    for bad in ({"coal": "-1/2"}, {"coal": "lots"}, {"coal": 1.5}, {"coal": True}):
        with pytest.raises(StratagemError, match=r"proposal\.offer\[coal\]"):
            _items(bad, "proposal.offer")


def test_the_report_takes_the_options_from_set_and_states_them(tmp_path: Path) -> None:
    """`stratagem report --set tom.skip_empty=true` reaches every block and is stated on top."""
    store = new_store(tmp_path / "stratagem.db")
    play(store, "g", group="V1", seed=1, max_turn=2)
    store.close()
    default = build_report(tmp_path).read_text(encoding="utf-8")
    assert (
        "Analysis options that differ" not in default
        and "left out: option skip_empty" not in default
    )
    out = tmp_path / "skip.html"
    build_report(tmp_path, out_path=out, settings={"tom": {"skip_empty": "true"}})
    part = out.read_text(encoding="utf-8")
    part = part[part.index('<section id="tom">') :]
    assert (
        "Analysis options that differ from the defaults: skip_empty = True (default False)" in part
    )
    assert "left out: option skip_empty" in part
