"""The report's calibration section: every study's stored beliefs scored as forecasts.

Each study turns its own beliefs into forecasts with outcomes (`analysis.forecasts`, registered
by the study's package); this section scores them all with `analysis.calibration`, per model,
agent, game and belief kind, and says how many stored beliefs could not be scored and why. It
appears only when some study found a belief in the report's episodes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from matplotlib.figure import Figure

from stratagem.analysis import plots
from stratagem.analysis.calibration import BINS, LEVEL, N_BOOT, Calibration, Estimate, calibration
from stratagem.analysis.forecasts import ForecastSet, collect_forecasts
from stratagem.analysis.report_data import ReportData, plural
from stratagem.analysis.report_views import (
    Block,
    CellView,
    Note,
    Paragraph,
    PlotGrid,
    PlotView,
    Section,
    make_table,
    plot_view,
)

SECTION_ID = "calibration"
TITLE = "Belief calibration"
DPI = 100
MAX_PLOTS = 12
"""Reliability diagrams drawn (one per game and belief kind); the rest are named in a note."""

INTRO = (
    "Some agents state beliefs while they play: a probability for each player of being the "
    "spy, a guess of who it is, the items an opponent needs. Where the game records what was "
    "true, each belief is scored as a forecast. Probabilities get the Brier score (mean squared "
    "distance to the outcome; 0 is perfect), the log loss (mean −ln of the probability given "
    "to what happened, probabilities clipped to [10⁻¹⁵, 1 − 10⁻¹⁵]) and the expected "
    f"calibration error (ECE: the gap between stated confidence and accuracy over {BINS} "
    "equal-width confidence bins, weighted by the bins' sizes). Guesses stated without a "
    "probability get only their accuracy; no probability is made up for them."
)


def _estimate(e: Estimate | None, decimals: int = 3) -> CellView:
    if e is None:
        return CellView("–", "num empty")
    text = f"{e.value:.{decimals}f}"
    if e.low is not None and e.high is not None:
        text += f" ({e.low:.{decimals}f}–{e.high:.{decimals}f})"
    return CellView(text, "num")


def _interval_note() -> str:
    return (
        f"{LEVEL:.0%} bootstrap percentile intervals in parentheses ({N_BOOT:,} replicates "
        "resampling episodes, each with all its forecasts, since the beliefs of one episode are "
        "correlated); none with a single episode."
    )


def _probabilistic_table(rows: Sequence[Calibration]) -> Block:
    return make_table(
        "Calibration of probabilistic beliefs",
        "Each row is one model and agent's beliefs of one kind in one game. Accuracy is that "
        "of the most probable outcome (a tie at the top counts as a random pick among the "
        "tied). The Brier score runs from 0 to 2 with three or more outcomes, 0 to 1 with two.",
        ("Model", "Agent", "Game", "Belief", "Forecasts", "Episodes", "Brier", "Log loss",
         "ECE", "Accuracy"),
        [(c.model, c.agent or "–", c.game, c.kind, c.forecasts, c.episodes, _estimate(c.brier),
          _estimate(c.log_loss), _estimate(c.ece), _estimate(c.accuracy)) for c in rows],
        note=_interval_note(),
        legend="ECE is biased upwards when its bins hold few forecasts: read it with the "
        "number of forecasts.",
    )  # fmt: skip


def _point_table(rows: Sequence[Calibration]) -> Block:
    return make_table(
        "Accuracy of point guesses",
        "Beliefs stated as a single answer without a probability: only whether the guess was "
        "right can be scored.",
        ("Model", "Agent", "Game", "Belief", "Guesses", "Episodes", "Accuracy"),
        [(c.model, c.agent or "–", c.game, c.kind, c.forecasts, c.episodes,
          _estimate(c.accuracy)) for c in rows],
        note=_interval_note(),
    )  # fmt: skip


def reliability_figure(rows: Sequence[Calibration], title: str) -> Figure:
    """One reliability diagram: accuracy against mean confidence per non-empty bin, one line
    per model and agent, the diagonal being perfect calibration; marker area grows with the
    bin's count."""
    figure = plots.new_figure(5.0, 4.2)
    ax = figure.add_subplot()
    ax.plot([0, 1], [0, 1], linestyle="--", color="#888888", linewidth=1, label="calibrated")
    largest = max((b.count for c in rows for b in c.bins), default=1)
    for j, c in enumerate(rows):
        shown = [b for b in c.bins if b.confidence is not None and b.accuracy is not None]
        xs = [float(b.confidence or 0.0) for b in shown]
        ys = [float(b.accuracy or 0.0) for b in shown]
        colour = plots.PALETTE[j % len(plots.PALETTE)]
        ax.plot(
            xs,
            ys,
            marker="o",
            color=colour,
            label=f"{c.model} ({c.agent})" if c.agent else c.model,
        )
        ax.scatter(
            xs,
            ys,
            s=[20 + 180 * b.count / largest for b in shown],
            color=colour,
            alpha=0.4,
        )
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("mean confidence in bin")
    ax.set_ylabel("accuracy in bin")
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.spines[["top", "right"]].set_visible(False)
    ax.legend(frameon=False, fontsize=8, loc="upper left")
    return figure


def _diagrams(rows: Sequence[Calibration]) -> list[Block]:
    panels: dict[tuple[str, str], list[Calibration]] = {}
    for c in rows:
        panels.setdefault((c.game, c.kind), []).append(c)
    views: list[PlotView] = []
    for (game, kind), members in list(panels.items())[:MAX_PLOTS]:
        png = plots.figure_png(reliability_figure(members, f"{game}: {kind}"), dpi=DPI)
        views.append(
            plot_view(
                png,
                f"Reliability diagram, {game}: {kind}",
                f"Accuracy against stated confidence in {BINS} equal-width bins "
                "(empty bins left out; larger markers hold more forecasts). Points below the "
                "diagonal are overconfident.",
            )
        )
    blocks: list[Block] = [PlotGrid(tuple(views))]
    if len(panels) > MAX_PLOTS:
        blocks.append(Note(f"{len(panels) - MAX_PLOTS} more diagrams are not drawn; the table "
                           "above has their numbers."))  # fmt: skip
    return blocks


def _skipped_table(found: dict[str, ForecastSet]) -> Block | None:
    rows = [
        (study, reason, count)
        for study, fs in found.items()
        for reason, count in sorted(fs.skipped.items(), key=lambda kv: (-kv[1], kv[0]))
    ]
    if not rows:
        return None
    return make_table(
        "Stored beliefs not scored",
        "Beliefs that are no forecast of a recorded outcome, counted by reason: they are "
        "left out of the tables above rather than guessed into a probability.",
        ("Study", "Reason", "Beliefs"),
        rows,
    )


def calibration_section(data: ReportData) -> Section | None:
    """The section, or None when no registered study found a belief in these episodes."""
    found = collect_forecasts(data)
    if not found:
        return None
    forecasts = [f for fs in found.values() for f in fs.forecasts]
    section = Section(SECTION_ID, TITLE, [Paragraph(INTRO)])
    results = calibration(forecasts)
    probabilistic = [c for c in results if c.probabilistic]
    point = [c for c in results if not c.probabilistic]
    kinds: Counter[str] = Counter(f.kind for f in forecasts)
    if not results:
        section.blocks.append(Note("No stored belief here is a forecast of a recorded outcome."))
    else:
        section.blocks.append(
            Paragraph(
                f"{plural(len(forecasts), 'forecast')} of {plural(len(kinds), 'belief kind')}, "
                f"from {', '.join(found)}."
            )
        )
    if probabilistic:
        section.blocks.append(_probabilistic_table(probabilistic))
        section.blocks += _diagrams(probabilistic)
    if point:
        section.blocks.append(_point_table(point))
    skipped = _skipped_table(found)
    if skipped is not None:
        section.blocks.append(skipped)
    return section
