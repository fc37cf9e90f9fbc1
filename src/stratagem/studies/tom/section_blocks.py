"""The later blocks of the ToM section (`section`): decisions (§6, Table 1 and Figure 6), and the
additions the paper does not report, outcomes (§7) and calibration against the real target."""

from __future__ import annotations

from collections.abc import Sequence

from stratagem.analysis.plots import figure_png
from stratagem.analysis.report_data import plural
from stratagem.analysis.report_views import (
    Block,
    CellView,
    Heading,
    Note,
    PlotGrid,
    TableGrid,
    make_table,
    plot_view,
)
from stratagem.games.tradecraft.rules import load_rules
from stratagem.studies.tom.calibration import (
    calibration_points,
    calibration_summary,
    rules_relevance,
)
from stratagem.studies.tom.options import TomOptions
from stratagem.studies.tom.outcomes import outcome_metrics
from stratagem.studies.tom.plots import coefficient_figure
from stratagem.studies.tom.records import GROUPS, TomGame
from stratagem.studies.tom.utility import (
    FEATURES,
    ORDER,
    DecisionSample,
    PlainFit,
    UtilityFit,
    decision_samples,
    effective_coefficients,
    normalised,
    plain_logistic,
    table1,
)

ORDER_NAMES = {"V0": "Zero-order", "V1": "First-order", "V2": "Second-order"}
PAPER_TABLE1: tuple[tuple[str, str, str, str], ...] = (
    ("GPT-4o", "0.77 ± 0.28", "0.94 ± 0.09", "1.00 ± 0.00"),
    ("o3", "0.80 ± 0.19", "1.00 ± 0.00", "1.00 ± 0.00"),
    ("o4-mini (the table's “o4”)", "0.74 ± 0.18", "0.80 ± 0.09", "0.83 ± 0.04"),
    ("GPT-5 (medium)", "0.74 ± 0.24", "0.92 ± 0.06", "0.85 ± 0.11"),
)
"""seed-002 §11.1, Table 1 verbatim: macro-F1, mean ± std over episode-wise 3-fold CV."""


def f1_cell(fit: UtilityFit | PlainFit | str | None) -> CellView:
    if fit is None:
        return CellView("–", "num empty")
    if isinstance(fit, str):
        return CellView("not fitted", "num empty")
    return CellView(f"{fit.f1_mean:.2f} ± {fit.f1_std:.2f}", "num")


def _n(fit: UtilityFit | PlainFit | str | None) -> int | None:
    return None if fit is None or isinstance(fit, str) else fit.n


def _reasons(fits: dict[tuple[str, str], UtilityFit | str], what: str) -> Note | None:
    why = [f"{m} · {g}: {r}" for (m, g), r in sorted(fits.items()) if isinstance(r, str)]
    if not why:
        return None
    return Note(f"{what} not fitted for " + "; ".join(why) + ".")


def decision_blocks(games: Sequence[TomGame], options: TomOptions, dpi: int) -> list[Block]:
    blocks: list[Block] = [Heading("Decisions (§6)")]
    fits = table1(games, options)
    samples = decision_samples(games, options)
    models = sorted({m for m, _ in fits})
    focal_decided = sum(
        1 for g in games for p in g.proposals if p.decider == g.focal and p.accepted is not None
    )
    excluded = (
        f"{plural(len(samples), 'focal decision')} with readable reports of "
        f"{focal_decided} decided by the focal agents (empty proposals "
        f"{'left out: option skip_empty' if options.skip_empty else 'kept'}; decisions that "
        "stayed invalid are never scored)."
    )
    fit = "L-BFGS-B refinement off the grid" if options.refine else "parameters on the grid"
    f1 = (
        "over the accept and reject classes (a class absent from a fold and its predictions "
        "scores 0)"
        if options.f1_classes == "both"
        else "over the classes present in each fold"
    )
    ours = make_table(
        "Table 1 (this experiment): macro-F1 of the utility model",
        "Each group's utility model (zero order U(0) = G0 − ρL0; first order adds w1(G1 − γL1); "
        "second order adds w2(G2 − κL2)), fitted to the focal agent's accept/reject decisions "
        "from its own reports: G_k sums its order-k values over what it would receive, L_k "
        f"over what it would give. Macro-F1 {f1}, mean ± std over {options.folds} "
        f"episode-wise folds; n decisions. Grid search ({fit}), logistic fit C = "
        f"{options.C:g}, selection {options.selection!r}. " + excluded,
        ["Model", *(x for g in GROUPS for x in (ORDER_NAMES[g], "n"))],
        [
            [m, *(x for g in GROUPS for x in (f1_cell(fits.get((m, g))), _n(fits.get((m, g)))))]
            for m in models
        ],
        tag="as seed-002 Table 1",
        fold=False,
    )
    paper = make_table(
        "Table 1 (the paper's, for reference)",
        "Published values (seed-002 §11.1): macro-F1, mean ± std over 3 episode-wise folds, "
        "about 20 games per model and group. Not computed here.",
        ["Model", *ORDER_NAMES.values()],
        [list(row) for row in PAPER_TABLE1],
        tag="the paper's Table 1",
        fold=False,
    )
    blocks.append(TableGrid((ours, paper)))
    note = _reasons(fits, "The utility model is")
    if note is not None:
        blocks.append(note)
    blocks += _one_class_note(fits, options)
    blocks += _coefficient_blocks(fits, dpi)
    blocks += _plain_blocks(games, samples, options)
    return blocks


def _one_class_note(
    fits: dict[tuple[str, str], UtilityFit | str], options: TomOptions
) -> list[Block]:
    """§6 leaves a fold of one class open (`f1_classes`): say how many folds had one."""
    cells = [
        f"{m} · {g}: {fit.one_class_folds} of {len(fit.fold_f1)}"
        for (m, g), fit in sorted(fits.items())
        if isinstance(fit, UtilityFit) and fit.one_class_folds
    ]
    if not cells:
        return []
    scored = (
        "averaged over both classes, the absent one scoring 0 (0.5 when predicted right)"
        if options.f1_classes == "both"
        else "averaged over the class present (1.0 when predicted right)"
    )
    return [
        Note(
            "Test folds whose decisions were all accepts or all rejects: "
            f"{'; '.join(cells)}. Their macro-F1 is {scored}: option f1_classes "
            f"= {options.f1_classes!r} (§6 leaves this 0/0 open)."
        )
    ]


def _coefficient_blocks(fits: dict[tuple[str, str], UtilityFit | str], dpi: int) -> list[Block]:
    rows = {
        key: normalised(effective_coefficients(fit))
        for key, fit in sorted(fits.items())
        if isinstance(fit, UtilityFit)
    }
    if not rows:
        return [Note("No utility model could be fitted, so there are no coefficients to show.")]
    png = figure_png(coefficient_figure(rows, FEATURES), dpi=dpi)
    return [
        PlotGrid(
            (
                plot_view(
                    png,
                    "Normalised decision coefficients",
                    "The effective weight of each gain (G) and loss (L) on the log-odds of "
                    "accepting, c / max|c| per model and group (§6 [A]: c_G0 = β/s_U, c_L0 = "
                    "−βρ/s_U, ...). Positive: more likely to accept.",
                ),
            ),
            columns=1,
        ),
        make_table(
            "Normalised decision coefficients",
            "The values of the plot; a feature the group's model does not have shows a dash.",
            ["Model", "Group", *FEATURES],
            [[m, g, *(c.get(f) for f in FEATURES)] for (m, g), c in rows.items()],
            fold=False,
        ),
    ]


def _plain_blocks(
    games: Sequence[TomGame], samples: Sequence[DecisionSample], options: TomOptions
) -> list[Block]:
    rows: list[list[object]] = []
    reasons = []
    for model, group in sorted({(g.model, g.group) for g in games}):
        cell = [s for s in samples if (s.model, s.group) == (model, group)]
        fit = plain_logistic(cell, ORDER[group], options)
        if isinstance(fit, str):
            reasons.append(f"{model} · {group}: {fit}")
            rows.append([model, group, f1_cell(fit), None, *([None] * len(FEATURES))])
            continue
        coeffs = [fit.coefficients.get(f) for f in FEATURES]
        rows.append([model, group, f1_cell(fit), fit.n, *coeffs])
    blocks: list[Block] = [
        make_table(
            "Robustness: plain logistic regression",
            "§6 [A]: a plain logistic regression on the group's raw features (G0, L0, … up to "
            "its order), same folds; coefficients per raw unit (log-odds per point of value).",
            ["Model", "Group", "Macro-F1", "n", *FEATURES],
            rows,
            decimals=3,
            fold=False,
        )
    ]
    if reasons:
        blocks.append(Note("The plain regression is not fitted for " + "; ".join(reasons) + "."))
    return blocks


def _pct(value: float | None) -> CellView:
    return CellView("–", "num empty") if value is None else CellView(f"{value:.1%}", "num")


def outcome_blocks(games: Sequence[TomGame], options: TomOptions) -> list[Block]:
    """§7: how games ended and what went wrong, per model and group (not in the paper)."""
    cells = outcome_metrics(games, options)
    proposals = "non-empty proposals (option skip_empty)" if options.skip_empty else "proposals"
    ends = make_table(
        "Outcomes (not reported in the paper)",
        "§7 [A]: the share of games the focal agent won alone, the opponent won, both crafted "
        "their target in the same turn (tie), or nobody did before the turn limit (timeout); "
        "the focal agent's mean score (3 a sole win, 1 a tie, 0 otherwise under the default "
        "scoring) and the mean game length in turns.",
        ["Model", "Group", "Games", "Focal wins", "Opponent wins", "Ties", "Timeouts",
         "Focal score", "Turns"],
        [
            [m, g, o.games, _pct(o.focal_win_rate), _pct(o.opponent_win_rate), _pct(o.tie_rate),
             _pct(o.timeout_rate), o.mean_focal_score, o.mean_length]
            for (m, g), o in cells.items()
        ],
        tag="seed-002 §7, beyond the paper",
        fold=False,
    )  # fmt: skip
    rows: list[list[object]] = []
    for (m, g), o in cells.items():
        for side, r in (("focal", o.focal), ("baseline", o.baseline)):
            rows.append(
                [m, g, side, r.proposals, _pct(r.acceptance), _pct(r.invalid_rate),
                 r.craft_errors_per_turn, _pct(r.parse_failure_rate)]
            )  # fmt: skip
    errors = make_table(
        "Acceptance and errors by seat (not reported in the paper)",
        f"Per seat role: its delivered {proposals} and the share the other seat "
        "accepted; invalid proposals (submissions the engine refused or could not read, "
        "re-asks included, over all submissions); failed craft_recipe_check calls per turn; "
        "and V reports that could not be read over reports asked for. All counted, never "
        "hidden: an unreadable report is left out of the metrics above, not replaced.",
        ["Model", "Group", "Seat", "Proposals", "Accepted", "Invalid proposals",
         "Craft errors / turn", "Report parse failures"],
        rows,
        decimals=2,
        fold=False,
    )  # fmt: skip
    return [Heading("Outcomes (§7, not reported in the paper)"), ends, errors]


def calibration_blocks(games: Sequence[TomGame], options: TomOptions) -> list[Block]:
    """V1 against the opponent's real target (beyond the paper, `calibration`)."""
    blocks: list[Block] = [Heading("Calibration against the real target (beyond the paper)")]
    points = calibration_points(games, rules_relevance(load_rules()))
    summary = calibration_summary(points)
    if not summary:
        return [*blocks, Note("No focal V1 or opponent V0 report to score.")]
    rows = [
        [m, g, "focal V1" if src == "V1_focal" else "opponent V0 (reference)", s.mean_auc,
         s.auc_points, s.mean_relevant, s.mean_irrelevant, s.points]
        for (m, g, src), s in summary.items()
    ]  # fmt: skip
    undefined = sum(1 for p in points if p.auc is None)
    blocks.append(
        make_table(
            "Calibration: AUC against the opponent's real target",
            "Not in the paper, which scores V1 only against the opponent's self-report. Here "
            "an item is relevant when it feeds a recipe of the opponent's real target within "
            "three crafting steps (fuel included); AUC is the chance that the report scores a "
            "relevant item above an irrelevant one (0.5: no better than chance). The "
            "opponent's own V0 is scored the same way, as a reference. Reports whose domain "
            f"holds only one class give no AUC ({undefined} of {len(points)} reports).",
            [
                "Model",
                "Group",
                "Report",
                "Mean AUC",
                "Reports with an AUC",
                "Mean score, relevant",
                "Mean score, irrelevant",
                "Reports",
            ],
            rows,
            tag="beyond the paper",
            fold=False,
        )
    )
    return blocks
