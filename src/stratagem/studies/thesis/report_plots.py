"""The thesis' plots in the report (seed-001 §10.1): cooperation by opponent, attitude and model
per architecture, and the architectures compared on comprehension and behaviour."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from stratagem.analysis import plots
from stratagem.analysis.report_data import ordered
from stratagem.analysis.report_views import (
    Heading,
    Note,
    PlotGrid,
    PlotView,
    Section,
    plot_view,
)
from stratagem.studies.thesis.behaviour import BEHAVIOUR_METRICS
from stratagem.studies.thesis.importer import NO_ATTITUDE
from stratagem.studies.thesis.report_data import ThesisData, arch_name
from stratagem.studies.thesis.tables import ARCH_TITLES

QUESTION_COLUMNS: tuple[tuple[str, str], ...] = (
    ("CR1", "Q1\nnext move"),
    ("CR2", "Q2\nrounds"),
    ("CR3M", "Q3\nmax"),
    ("CR3m", "Q3\nmin"),
    ("CR4", "Q4\ntotal"),
)


def plots_section(data: ThesisData) -> Section:
    section = Section("plots", "Plots")
    if not data.dataset:
        section.blocks.append(Note(data.dataset_note or "No per-game metrics to plot."))
        return section
    rows = data.dataset
    archs = list(dict.fromkeys(str(r["Arch"]) for r in rows))
    games = ordered(r["Game"] for r in rows)
    for arch in archs:
        mine = [r for r in rows if r["Arch"] == arch and r.get("CR") is not None]
        if not mine:
            continue
        name = arch_name(arch)
        grid: list[PlotView] = []
        grid.append(
            _bars(
                mine, "OppStr", "CR", "Game",
                title="Cooperation by opponent and game", context=name,
                xlabel="opponent strategy", ylabel="cooperation rate (mean ± sd)",
                hue_order=games, legend="game",
                caption=f"Mean cooperation rate of the {name} agent against each opponent, "
                "one bar per game; error bars show the standard deviation over games.",
            )
        )  # fmt: skip
        attitudes = {r["Att"] for r in mine} - {NO_ATTITUDE}
        if len(attitudes) > 1:
            grid.append(
                _bars(
                    [r for r in mine if r["Att"] != NO_ATTITUDE], "Att", "CR", "Game",
                    title="Cooperation by attitude and game", context=name,
                    xlabel="attitude suggested to the agent",
                    ylabel="cooperation rate (mean ± sd)", hue_order=games, legend="game",
                    caption=f"Mean cooperation rate of the {name} agent for each suggested "
                    "attitude, one bar per game: how far the suggestion steers its play.",
                )
            )  # fmt: skip
        models = {r["Model"] for r in mine}
        if len(models) > 1:
            grid.append(
                _bars(
                    mine, "Model", "CR", "OppStr",
                    title="Cooperation by model and opponent", context=name,
                    xlabel="model", ylabel="cooperation rate (mean ± sd)", legend="opponent",
                    caption=f"Mean cooperation rate of the {name} agent per model, one bar "
                    "per opponent strategy.",
                )
            )  # fmt: skip
        section.blocks.append(Heading(ARCH_TITLES.get(arch, f"{arch} agent")))
        section.blocks.append(PlotGrid(tuple(grid)))
    comparison: list[PlotView] = []
    arch_order = [arch_name(a) for a in archs]
    long_q = [
        {"Question": label, "Architecture": arch_name(str(r["Arch"])), "Correct": r[column]}
        for r in rows
        for column, label in QUESTION_COLUMNS
        if r.get(column) is not None
    ]
    if long_q:
        comparison.append(
            _bars(
                long_q, "Question", "Correct", "Architecture",
                title="Comprehension: correct answers per question",
                xlabel="question", ylabel="correct rate (mean ± sd)",
                x_order=[label for _, label in QUESTION_COLUMNS], hue_order=arch_order,
                legend="architecture",
                caption="Mean share of rounds in which each architecture answered each "
                "comprehension question correctly (Q1 the opponent's next move, Q2 the rounds "
                "played, Q3 the most and fewest years one round can bring, Q4 the total "
                "years so far).",
            )
        )  # fmt: skip
    long_b = [
        {"Metric": m, "Architecture": arch_name(str(r["Arch"])), "Value": r[m]}
        for r in rows
        for m in BEHAVIOUR_METRICS
        if r.get(m) is not None
    ]
    if long_b:
        comparison.append(
            _bars(
                long_b, "Metric", "Value", "Architecture",
                title="Behaviour metrics per architecture",
                xlabel="metric", ylabel="value (mean ± sd)",
                x_order=list(BEHAVIOUR_METRICS), hue_order=arch_order,
                legend="architecture",
                caption="The six behaviour metrics side by side for each architecture "
                "(CR cooperation, N niceness, TM troublemaking, Ret retaliation, For "
                "forgiveness, Em emulation).",
            )
        )  # fmt: skip
    if comparison:
        section.blocks.append(Heading("Architectures compared"))
        section.blocks.append(PlotGrid(tuple(comparison)))
    if not long_q:
        section.blocks.append(
            Note("No comprehension answers are stored, so there is no comprehension plot.")
        )
    return section


def _bars(
    rows: Sequence[Mapping[str, Any]],
    x: str,
    y: str,
    hue: str,
    *,
    title: str,
    caption: str,
    xlabel: str,
    ylabel: str,
    legend: str,
    context: str = "",
    x_order: Sequence[str] | None = None,
    hue_order: Sequence[str] | None = None,
) -> PlotView:
    figure = plots.grouped_bar_figure(
        rows, x, y, hue, title=title, xlabel=xlabel, ylabel=ylabel, x_order=x_order,
        hue_order=hue_order, ylim=(0.0, 1.08), size=(6.4, 3.9),
    )  # fmt: skip
    for ax in figure.axes:
        handle = ax.get_legend()
        if handle is not None:
            handle.set_title(legend)
    shown = f"{context}: {title[0].lower()}{title[1:]}" if context else title
    return plot_view(plots.figure_png(figure, dpi=130), shown, caption)
