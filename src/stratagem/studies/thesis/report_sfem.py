"""Which strategy does the agent play, and which settings drive its behaviour: the thesis' SFEM
(seed-001 §10.2, fitted in `ThesisData`) and random forest + SHAP (§10.3) sections."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from stratagem.analysis import plots
from stratagem.analysis.report_data import NO_GAMES, listing
from stratagem.analysis.report_views import (
    Block,
    CellView,
    Heading,
    Note,
    Paragraph,
    PlotGrid,
    PlotView,
    Section,
    TableGrid,
    make_table,
    plot_view,
)
from stratagem.errors import StratagemError
from stratagem.studies.thesis.behaviour import BEHAVIOUR_METRICS
from stratagem.studies.thesis.importance import (
    ImportanceResult,
    feature_importance,
    shap_bar_figure,
    shap_violin_figure,
)
from stratagem.studies.thesis.report_data import ThesisData, arch_name

MIN_IMPORTANCE_GAMES = 8
"""Fewer games than this per architecture and model make a random forest meaningless: skipped."""
TOP_STRATEGIES = 5
"""SFEM strategies listed per group, most frequent first."""

SETTING_NAMES: dict[str, str] = {
    "Att": "attitude",
    "OppStr": "opponent",
    "Game": "game",
    "NR": "rounds",
    "Model": "model",
    "Arch": "architecture",
}


def sfem_section(data: ThesisData) -> Section:
    section = Section("sfem", "Which strategy does the agent play? (SFEM)")
    if not data.episodes:
        section.blocks.append(Note(NO_GAMES))
        return section
    if not data.with_rounds:
        section.blocks.append(
            Note(
                "SFEM is not possible here: it needs the agent's round-by-round moves, and "
                "this experiment has per-game summaries only."
            )
        )
        return section
    if not data.sfem_fits:
        section.blocks.append(
            Note(
                "SFEM is not possible here: it is fitted on Prisoner's Dilemma games "
                "(payoffs T > R > P > S) played by an LLM agent, and this experiment has none."
            )
        )
        return section
    section.blocks.append(
        Paragraph(
            "For each architecture and model, all its Prisoner's Dilemma games are pooled and "
            "20 classic strategies are fitted to the agent's moves. The frequency φ is the "
            "estimated probability that the agent plays that strategy; β is how often it "
            "carries out the strategy's move without a slip; the match is the share of rounds "
            "in which its move equals the strategy's. A missing (invalid) move counts as not "
            "cooperating."
        )
    )
    overview = []
    for (arch, model), fit in sorted(data.sfem_fits.items()):
        same = [k for k in fit.equivalent if k != fit.top]
        overview.append(
            (
                arch_name(arch), model, data.sfem_games[(arch, model)], sum(fit.rounds),
                f"{fit.top_name}" + (f" (= {', '.join(same)})" if same else ""),
                fit.frequencies()[fit.top], fit.match_percentage, fit.beta,
            )
        )  # fmt: skip
    section.blocks.append(
        make_table(
            "Assigned strategies",
            "The most likely strategy of each architecture and model over its Prisoner's "
            "Dilemma games, with its estimated frequency and match percentage.",
            ("Architecture", "Model", "Games", "Rounds", "Assigned strategy", "φ", "Match",
             "β"),
            overview,
            legend=(
                "Strategies after “=” make exactly the same moves on these games, so the "
                "data cannot tell them apart."
                if any(len(fit.equivalent) > 1 for fit in data.sfem_fits.values())
                else ""
            ),
            fold=False,
        )
    )  # fmt: skip
    details = []
    for (arch, model), fit in sorted(data.sfem_fits.items()):
        names = dict(zip(fit.keys, fit.names, strict=True))
        top = [(k, p) for k, p in fit.ranking() if p > 1e-4][:TOP_STRATEGIES]
        details.append(
            make_table(
                f"{arch_name(arch)} / {model}: most frequent strategies",
                (
                    f"The {len(top)} strategies with the largest estimated frequency, out of 20."
                    if len(top) > 1
                    else "The only strategy with a non-zero estimated frequency, out of 20."
                ),
                ("Strategy", "Key", "Frequency φ", "Match"),
                [(names[k], k, p, fit.match_rate(k)) for k, p in top],
                fold=False,
            )
        )
    section.blocks.append(TableGrid(tuple(details)))
    return section


def importance_section(data: ThesisData) -> Section:
    section = Section("importance", "Which settings drive behaviour? (feature importance)")
    if not data.dataset:
        section.blocks.append(
            Note(data.dataset_note or "No per-game metrics for feature importance.")
        )
        return section
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in data.dataset:
        groups[(str(row["Arch"]), str(row["Model"]))].append(row)
    summary = []
    grids: list[Block] = []
    skipped = []
    flat: list[str] = []
    arch_order = list(dict.fromkeys(str(r["Arch"]) for r in data.dataset))
    ordered = sorted(
        groups.items(),
        key=lambda item: (arch_order.index(item[0][0]), plots.order_key(item[0][1])),
    )
    for (arch, model), rows in ordered:
        label = f"{arch_name(arch)} / {model}"
        cells: list[object] = [arch_name(arch), model]
        cr_result = None
        for metric in BEHAVIOUR_METRICS:
            usable = [r for r in rows if r.get(metric) is not None]
            if len(usable) < MIN_IMPORTANCE_GAMES:
                cells.append(None)
                continue
            try:
                result = feature_importance(usable, metric, label=label)
            except StratagemError:
                cells.append(None)
                continue
            setting, value = max(result.by_setting().items(), key=lambda item: item[1])
            # A metric that never changes leaves every SHAP value at zero: no setting wins.
            name = SETTING_NAMES.get(setting, setting) if value >= 0.005 else "none"
            cells.append(CellView(f"{name} {value:.2f}", "num"))
            if metric == "CR":
                cr_result = result
        if all(c is None for c in cells[2:]):
            skipped.append(label)
            continue
        summary.append(cells)
        if cr_result is not None and max(cr_result.mean_abs_shap().values()) >= 0.005:
            grids.append(Heading(label))
            grids.append(PlotGrid(_shap_plots(cr_result, label)))
        elif cr_result is not None:
            flat.append(label)
    if not summary:
        section.blocks.append(
            Note(
                "Feature importance skipped: it needs at least "
                f"{MIN_IMPORTANCE_GAMES} games per architecture and model whose settings "
                "(attitude, opponent, game, rounds) vary."
            )
        )
        return section
    section.blocks.append(
        Paragraph(
            "For each architecture and model, a random forest of 10 trees predicts each "
            "behaviour metric from the game's settings, encoded one-hot (one yes/no column "
            "per value), and SHAP values measure how much each setting moves the "
            "prediction. Settings that never vary within a group cannot explain anything "
            "and are left out."
        )
    )
    section.blocks.append(
        make_table(
            "The most influential setting per metric",
            "For each metric, the setting with the largest mean absolute SHAP value "
            "(summed over its values), and that value in the metric's units.",
            ("Architecture", "Model", *BEHAVIOUR_METRICS),
            summary,
            legend="CR cooperation rate · N niceness · TM troublemaking · Ret retaliation · "
            "For forgiveness · Em emulation. A dash: too few games, or nothing varies.",
            fold=False,
        )
    )
    section.blocks.append(
        Paragraph(
            "The plots explain the cooperation rate. Left: the mean absolute SHAP value of "
            "each setting value, the longer the bar the more it matters. Right: one dot per "
            "game; orange dots are games that have that value, and dots right of the zero "
            "line mean the setting raised the cooperation rate in that game."
        )
    )
    section.blocks.extend(grids)
    if flat:
        section.blocks.append(
            Note(
                f"No plots for {listing(flat)}: the cooperation rate hardly changes with the "
                "settings, so every SHAP value is close to zero."
            )
        )
    if skipped:
        section.blocks.append(
            Note(
                f"Skipped ({listing(skipped)}): fewer than {MIN_IMPORTANCE_GAMES} games, or "
                "no setting varies."
            )
        )
    return section


def _shap_plots(result: ImportanceResult, label: str) -> tuple[PlotView, ...]:
    bar = shap_bar_figure(result, title="Importance for the cooperation rate")
    violin = shap_violin_figure(result, title="SHAP values for the cooperation rate")
    for figure in (bar, violin):
        _, height = figure.get_size_inches()
        figure.set_size_inches(6.2, max(height, 3.2))
    for ax in violin.axes:
        # The legend goes under the plot, so the half-width panel keeps its plotting area.
        legend = ax.get_legend()
        if legend is not None:
            handles = [h for h in legend.legend_handles if h is not None]
            labels = [text.get_text() for text in legend.get_texts()]
            legend.remove()
            ax.legend(
                handles, labels, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2,
                frameon=False, fontsize=9,
            )  # fmt: skip
    return (
        plot_view(
            plots.figure_png(bar, dpi=130),
            f"{label}: importance for CR",
            f"Mean absolute SHAP value of each setting value for the cooperation rate "
            f"(in-sample R² of the forest: {result.r2:.2f}).",
        ),
        plot_view(
            plots.figure_png(violin, dpi=130),
            f"{label}: SHAP values for CR",
            "Per game, how much each setting value moved the predicted cooperation rate "
            "up (right) or down (left).",
        ),
    )
