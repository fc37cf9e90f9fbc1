"""The report section of seed-002's ToM study: belief accuracy (§4), proposals (§5), decisions
(§6, Table 1), and the additions the paper does not report: outcomes (§7), the groups compared
with intervals and Holm-adjusted p-values (`section_comparisons`), and calibration.

It appears whenever a report holds TradeCraft games played by the ToM-reporting agent. The
numbers come from `extract` (stored episodes -> `records.TomGame`) and the study's metric
modules; this module and `section_blocks` only lay them out. Every table says how many games,
turns, proposals or decisions it rests on and what was left out; a result that cannot be
computed (too few games for the folds, no V1 reports) shows why instead of failing.

All text goes through the report template, which escapes it: model names and messages are never
read as markup.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from stratagem.analysis.episodes import EpisodeData
from stratagem.analysis.plots import figure_png
from stratagem.analysis.report_data import ReportData, listing, plural
from stratagem.analysis.report_views import (
    Block,
    CellView,
    Definitions,
    Heading,
    Note,
    Paragraph,
    PlotGrid,
    Section,
    make_table,
    plot_view,
)
from stratagem.studies.tom.belief_accuracy import (
    epsilon_sensitivity,
    kl_by_turn,
    kl_overall,
    kl_points,
    revealed_kl,
)
from stratagem.studies.tom.extract import TomData, tom_data, unfinished
from stratagem.studies.tom.options import DEFAULTS, TomOptions
from stratagem.studies.tom.plots import kl_turn_figure, mr_figure, scatter_figure
from stratagem.studies.tom.proposals import MRSummary, mr_map, proposal_points
from stratagem.studies.tom.records import TomGame
from stratagem.studies.tom.section_blocks import (
    calibration_blocks,
    decision_blocks,
    outcome_blocks,
)
from stratagem.studies.tom.section_comparisons import comparison_blocks

SECTION_ID = "tom"
TITLE = "Theory of mind (seed-002)"
OPTIONS = DEFAULTS
"""The defaults (`options`: each choice of §3.2–§7 is an option, named in captions)."""
DPI = 100
MAX_REASONS = 5
EXAMPLES = 3
"""Repairs and duplicate rows named as examples in the reading note (all are counted)."""

INTRO = (
    "TradeCraft (seed-002) is a two-player game of trade and crafting with Minecraft items: each "
    "player holds a public hand and a private target item, and each turn one player proposes a "
    "trade (items offered for items requested), the other accepts or rejects, and both craft. "
    "The first to craft its target wins. Both seats play the same model. While proposing or "
    "deciding, each agent also reports how useful it thinks every item in the hands is, on a "
    "0–10 scale. The game never reads these reports: they are a measurement of the agent's "
    "theory of mind, and the metrics below compare them with each other and with what the "
    "agent did."
)
REPORTS: tuple[tuple[str, str], ...] = (
    ("V0 (zero order)", "How useful each item is for the agent's own target."),
    ("V1 (first order)", "How useful the agent thinks each item is for the opponent's target: "
     "its estimate of the opponent's V0."),
    ("V2 (second order)", "How useful the agent thinks the opponent believes each item is for "
     "the agent: its estimate of the opponent's V1."),
    ("Groups", "The focal agent reports V0 only (V0 group), V0 and V1 (V1 group), or V0, V1 "
     "and V2 (V2 group); its opponent is always a same-model agent reporting V0 only (§3.3)."),
)  # fmt: skip


def _key_rows(keys: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    return sorted(keys, key=lambda k: (k[0], k[1]))


def _ci(value: float | None, ci: tuple[float, float] | None, decimals: int = 2) -> CellView:
    if value is None:
        return CellView("–", "num empty")
    text = f"{value:.{decimals}f}"
    if ci is not None:
        text += f" ({ci[0]:.{decimals}f}–{ci[1]:.{decimals}f})"
    return CellView(text, "num")


# -- §4 belief accuracy --------------------------------------------------------------------------


def belief_blocks(games: Sequence[TomGame], options: TomOptions = OPTIONS) -> list[Block]:
    blocks: list[Block] = [Heading("Belief accuracy (§4)")]
    points = kl_points(games, options)
    if not points:
        groups = listing(sorted({g.group for g in games}))
        return [
            *blocks,
            Note(
                f"No turn has both a focal V1 report and the opponent's V0 (groups here: "
                f"{groups}; only the V1 and V2 groups report V1), so there is no KL to show."
            ),
        ]
    overall = kl_overall(points)
    games_of: Counter[tuple[str, str]] = Counter((g.model, g.group) for g in games)
    episodes = {k: len({p.episode_id for p in points if (p.model, p.group) == k}) for k in overall}
    blocks.append(
        make_table(
            "Belief accuracy: KL(V0 opponent ‖ V1 focal)",
            "How far the focal agent's V1 (its guess of the opponent's item values) is from the "
            "opponent's own V0 at the same turn, as a KL divergence of the two reports "
            f"normalised to distributions over the items in the hands (ε = {options.epsilon:g}); "
            "lower is closer. Mean over every turn with both reports; n counts those turns. "
            "Turns whose V1 or V0 could not be read are left out.",
            ["Model", "Group", "Mean KL", "Turns (n)", "Games with a pair", "Games"],
            [
                [m, g, overall[(m, g)][0], overall[(m, g)][1], episodes[(m, g)], games_of[(m, g)]]
                for m, g in _key_rows(list(overall))
            ],
            tag="seed-002 §4, Figure 4",
            fold=False,
        )
    )
    png = figure_png(kl_turn_figure(kl_by_turn(points)), dpi=DPI)
    blocks.append(
        PlotGrid(
            (
                plot_view(
                    png,
                    "KL per turn",
                    "Mean KL(V0 opponent ‖ V1 focal) over games at each turn, per model and group "
                    "(the paper reports it decreasing over turns).",
                ),
            ),
            columns=1,
        )
    )
    sensitivity = epsilon_sensitivity(games, options)
    eps = list(options.epsilons)
    blocks.append(
        make_table(
            "KL sensitivity to ε",
            "The overall mean KL under each smoothing ε the spec asks about (§4 [A]: the paper "
            "gives no smoothing); same turns as above.",
            ["Model", "Group", *(f"ε = {e:g}" for e in eps)],
            [
                [m, g, *(sensitivity[(m, g)].get(e) for e in eps)]
                for m, g in _key_rows(list(sensitivity))
            ],
            decimals=3,
            fold=False,
        )
    )
    blocks += _revealed_blocks(games, options)
    return blocks


def _revealed_blocks(games: Sequence[TomGame], options: TomOptions) -> list[Block]:
    points = revealed_kl(games, options)
    if not points:
        return [Note("No V2 group game has both a focal V0 and V2 report, so the V2 proxy below "
                     "is not shown.")]  # fmt: skip
    overall = kl_overall(points)
    return [
        make_table(
            "V2 proxy: KL(V0 focal ‖ V2 focal) — not in the paper",
            "A proxy only, not an accuracy (§4 [A]): V2 has no ground truth because the "
            "opponent never reports V1. It measures how far the agent thinks the opponent's "
            "picture of its needs is from its needs (low: it believes it has revealed them).",
            ["Model", "Group", "Mean KL", "Turns (n)"],
            [[m, g, overall[(m, g)][0], overall[(m, g)][1]] for m, g in _key_rows(list(overall))],
            tag="beyond the paper",
            fold=False,
        )
    ]


# -- §5 proposals --------------------------------------------------------------------------------


def reading(s: MRSummary) -> str:
    """§5: m ≈ 1 fair, m < 1 selfish, m > 1 concessive (≈: the interval holds 1)."""
    if s.m is None:
        return "–"
    if s.m_ci is not None and s.m_ci[0] <= 1.0 <= s.m_ci[1]:
        return "fair (m ≈ 1)"
    return "selfish (m < 1)" if s.m < 1 else "concessive (m > 1)"


def _no_v0(game: TomGame, turn: int, seat: int) -> bool:
    report = game.report(turn, seat)
    return report is None or report.v0 is None


def proposal_blocks(games: Sequence[TomGame], options: TomOptions = OPTIONS) -> list[Block]:
    blocks: list[Block] = [Heading("Proposals (§5)")]
    points = proposal_points(games, options)
    mine = [(g, p) for g in games for p in g.proposals if p.proposer == g.focal]
    empty = sum(1 for _, p in mine if p.empty)
    invalid = sum(g.counts[g.focal].invalid_decisions for g in games)
    unread = sum(
        1 for g, p in mine if not (p.empty and options.skip_empty) and _no_v0(g, p.turn, p.proposer)
    )
    empties = "left out: option skip_empty" if options.skip_empty else "kept, as §5 keeps all"
    excluded = (
        f"Of the focal agents' {plural(len(mine), 'delivered proposal')} ({empty} empty, "
        f"{empties}), {unread} without a readable V0 at that turn are left out; moves that "
        f"stayed invalid after the re-asks ({invalid} in all, proposals, decisions and crafts) "
        "are never scored."
    )
    if not points:
        return [*blocks, Note("No focal proposal can be valued. " + excluded)]
    by_key: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for p in points:
        by_key.setdefault((p.model, p.group), []).append((p.request, p.offer))
    summaries = mr_map(games, options)
    rows = [
        [m, g, _ci(s.m, s.m_ci), _ci(s.r, s.r_ci), s.n, s.episodes, reading(s)]
        for (m, g), s in sorted(summaries.items())
    ]
    blocks.append(
        make_table(
            "Proposal consistency: slope m and correlation r",
            "Each focal proposal valued in the proposer's own V0 at that turn: request = Σ "
            "count × V0 over what it asks for, offer = the same over what it gives. m is the "
            "OLS slope of offer on request (with intercept), r their Pearson correlation; "
            f"{options.level:.0%} percentile intervals from {options.bootstrap:,} bootstrap "
            "resamples of the group's games (all of them, with a proposal or not; Games "
            "counts them). Reading: m ≈ 1 fair, m < 1 selfish (asks more than it "
            "gives), m > 1 concessive. " + excluded,
            ["Model", "Group", "m", "r", "Proposals (n)", "Games", "Reading"],
            rows,
            tag="seed-002 §5, Figure 5",
            fold=False,
        )
    )
    plots = [
        plot_view(
            figure_png(scatter_figure(dict(sorted(by_key.items()))), dpi=DPI),
            "Request vs offer",
            "Each focal proposal as (request, offer) in its own V0; the dotted line is a fair "
            "trade (offer = request).",
        )
    ]
    drawable = {
        k: (s.m, s.r, s.m_ci, s.r_ci)
        for k, s in sorted(summaries.items())
        if s.m is not None and s.r is not None
    }
    if drawable:
        plots.append(
            plot_view(
                figure_png(mr_figure(drawable), dpi=DPI),
                "m–r consistency map",
                f"One point per model and group with its {options.level:.0%} intervals; arrows "
                "join V0 → V1 → V2 of a model; the dotted line is m = 1.",
            )
        )
    blocks.append(PlotGrid(tuple(plots), columns=2))
    undefined = [f"{m} · {g}" for (m, g), s in sorted(summaries.items()) if s.m is None]
    if undefined:
        blocks.append(
            Note(
                f"m and r are undefined for {listing(undefined)}: fewer than two proposals, or "
                "all with the same request value."
            )
        )
    return blocks


# -- the section ---------------------------------------------------------------------------------


def _excluded_note(data: TomData, pending: dict[str, int], games: Sequence[TomGame]) -> Note:
    parts = [f"{plural(len(games), 'game')} in the study"]
    for reason, ids in sorted(data.skipped.items(), key=lambda item: -len(item[1])):
        parts.append(f"{len(ids):,} left out: {reason} (e.g. episode '{ids[0]}')")
    for status, n in sorted(pending.items()):
        parts.append(f"{n:,} {status} (not finished: never scored)")
    default = sum(1 for g in games if g.baseline_focal)
    if default:
        parts.append(
            f"{default:,} V0-vs-V0 {'game' if default == 1 else 'games'} with no seat marked "
            "baseline: seat 0 taken as focal"
        )
    groups = Counter((g.model, g.group) for g in games)
    cells = listing(f"{m} · {g}: {n}" for (m, g), n in sorted(groups.items()))
    return Note("; ".join(parts) + f". Games per model and group: {cells}.")


def _examples(games: Sequence[TomGame], attr: str) -> tuple[int, int, str]:
    """(how many, in how many games, the first few named with their episode)."""
    found = [(g.episode_id, x) for g in games for x in getattr(g, attr)]
    named = "; ".join(f"episode '{e}' {x}" for e, x in found[:EXAMPLES])
    return len(found), len({e for e, _ in found}), named


def reading_notes(games: Sequence[TomGame], options: TomOptions) -> list[Block]:
    """The §3.2 repairs the stored reports needed, and the duplicate belief rows ignored:
    counted and shown, never silent (none: no note)."""
    notes: list[Block] = []
    n, where, named = _examples(games, "repairs")
    if n:
        notes.append(
            Note(
                f"{plural(n, 'score')} in {plural(where, 'game')} needed §3.2's repairs when "
                "read, as the ToM agent repairs a reply (out of range clipped, a missing item "
                "0, an item in nobody's hand dropped, a fraction made whole "
                f"({options.score_rounding}), a number written as text "
                f"{'read' if options.string_scores else 'unreadable, 0'}), e.g. {named}."
            )
        )
    n, where, named = _examples(games, "duplicates")
    if n:
        notes.append(
            Note(
                f"{plural(n, 'duplicate belief row')} in {plural(where, 'game')} (a turn, "
                "seat, phase and order reported twice) ignored: the first stored row is "
                f"used. E.g. {named}."
            )
        )
    return notes


def tom_sections(
    report: ReportData, episodes: Sequence[EpisodeData], options: TomOptions = DEFAULTS
) -> list[Section]:
    """The section, shown whenever the report holds ToM TradeCraft games."""
    data = tom_data(episodes, report.store.beliefs, options)
    games = data.games
    section = Section(SECTION_ID, TITLE)
    section.blocks += [Paragraph(INTRO), Definitions(REPORTS, compact=True)]
    section.blocks.append(
        _excluded_note(data, unfinished(report.store, report.experiment.id), games)
    )
    section.blocks += reading_notes(games, options)
    if not games:
        section.blocks.append(
            Note(
                "No game here has a focal ToM agent (every ToM game found has two V0 baselines), "
                "so there is nothing to score."
            )
        )
        return [section]
    section.blocks += belief_blocks(games, options)
    section.blocks += proposal_blocks(games, options)
    section.blocks += decision_blocks(games, options, DPI)
    section.blocks += outcome_blocks(games, options)
    section.blocks += comparison_blocks(games, options, report)
    section.blocks += calibration_blocks(games, options)
    return [section]
