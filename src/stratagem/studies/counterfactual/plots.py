"""Plots of seed-003's counterfactual analysis for a few models: paired differences, and RPS play
against the equilibrium. matplotlib's object API only (see `plots`), PNG bytes out. Heat maps are
coloured tables (`counterfactual.heat`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from matplotlib.figure import Figure

from stratagem.analysis.plots import PALETTE, new_figure
from stratagem.errors import StratagemError
from stratagem.studies.counterfactual.paired_analysis import PairedCell


def paired_points_figure(cells: Sequence[PairedCell], title: str) -> Figure:
    """One row per (prompt, opponent): variant minus default total points, with the t interval
    the table prints (`paired_analysis`), one colour per variant; the zero line is "no effect of
    the counterfactual"."""
    shown = [c for c in cells if c.points is not None]
    if not shown:
        raise StratagemError("nothing to plot: no default and variant games were paired")
    rows = list(dict.fromkeys((c.prompt, c.opponent) for c in shown))
    variants = list(dict.fromkeys(c.variant_game for c in shown))
    figure = new_figure(7.0, 1.2 + 0.32 * len(rows))
    ax = figure.add_subplot()
    step = 0.7 / max(1, len(variants))
    for j, variant in enumerate(variants):
        mine = {(c.prompt, c.opponent): c.points for c in shown if c.variant_game == variant}
        ys, xs, lo, hi = [], [], [], []
        for i, row in enumerate(rows):
            d = mine.get(row)
            if d is None:
                continue
            ys.append(i - 0.35 + step * (j + 0.5))
            xs.append(d.estimate)
            lo.append(d.estimate - (d.ci_low if d.ci_low is not None else d.estimate))
            hi.append((d.ci_high if d.ci_high is not None else d.estimate) - d.estimate)
        ax.errorbar(
            xs, ys, xerr=[lo, hi], fmt="o", color=PALETTE[j % len(PALETTE)], label=variant,
            markersize=4, capsize=2, elinewidth=1,
        )  # fmt: skip
    ax.axvline(0, color="#333333", linewidth=0.8)
    ax.set_yticks(range(len(rows)), [f"{p} vs {o}" for p, o in rows])
    ax.invert_yaxis()
    ax.set_xlabel("variant − default total points (mean, 95% t interval)")
    ax.set_title(title)
    ax.grid(axis="x", alpha=0.3)
    ax.spines[["top", "right"]].set_visible(False)
    ax.legend(title="variant", frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return figure


def action_distribution_figure(
    shares: Mapping[str, Sequence[float]],
    labels: Sequence[str],
    equilibria: Sequence[Sequence[float]],
    title: str,
) -> Figure:
    """Player 0's action shares per prompt (bars) against the stage game's equilibrium (black
    marks): seed-003 §7.7's "equilibrium rigidity" shows as bars far from the marks."""
    if not shares:
        raise StratagemError("nothing to plot: no valid move")
    prompts = list(shares)
    figure = new_figure(7.0, 4.0)
    ax = figure.add_subplot()
    width = 0.8 / len(prompts)
    for j, prompt in enumerate(prompts):
        xs = [i - 0.4 + width * (j + 0.5) for i in range(len(labels))]
        ax.bar(xs, shares[prompt], width=width * 0.95, color=PALETTE[j % len(PALETTE)],
               label=prompt)  # fmt: skip
    for k, sigma in enumerate(equilibria):
        ax.hlines(
            sigma, [i - 0.45 for i in range(len(labels))], [i + 0.45 for i in range(len(labels))],
            colors="black", linewidth=2, linestyles="solid" if k == 0 else "dashed",
            label="equilibrium" if k == 0 else "_another equilibrium",
        )  # fmt: skip
    ax.set_xticks(range(len(labels)), labels)
    ax.set_ylim(0, 1)
    ax.set_ylabel("share of player 0's valid moves")
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    ax.spines[["top", "right"]].set_visible(False)
    ax.legend(frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return figure
