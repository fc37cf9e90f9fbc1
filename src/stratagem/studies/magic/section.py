"""The report section of seed-004's MAgIC study: the leaderboard of challengers, their radar
chart, the game-theory detail table, the PGM gains, the comparisons of challengers with intervals
and Holm-adjusted p-values (`comparison_section`), and the ratings of every entity
(`rating_section`: Bradley-Terry, deviation ratings, ratings by role, the capability profile).

It appears whenever a report holds episodes of MAgIC's five games (§3). The numbers come from
`extract` (stored episodes -> `records.MagicGame`, the challenger and the defender of each game)
and the study's metric modules; this module only lays them out. Every number a reader might take
for the paper's says how it was computed: the metric options in force (`MetricOptions`), the
number of games, the interval's level and replicates. Invalid replies are counted next to the
numbers they could have changed (§10.10), never left out silently.

All text goes through the report template, which escapes it: model names and replies are never
read as markup. The radar chart is the only image.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from functools import partial

from stratagem.analysis.episodes import EpisodeData
from stratagem.analysis.leaderboards import Leaderboard, LeaderboardRow, table_view, viewer_link
from stratagem.analysis.noise_floor import NoiseFloor, noise_floor
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
from stratagem.errors import StratagemError
from stratagem.studies.magic.comparison_section import comparison_blocks, win_share_values
from stratagem.studies.magic.explain import explanations
from stratagem.studies.magic.extract import MagicData, magic_data
from stratagem.studies.magic.leaderboard import EntityMetrics, Estimate, leaderboard
from stratagem.studies.magic.options import MagicAnalysis, MetricOptions
from stratagem.studies.magic.pgm_gain import PgmComparison, pgm_comparisons
from stratagem.studies.magic.plots import radar_figure
from stratagem.studies.magic.radar import radar_values
from stratagem.studies.magic.rating_section import rating_blocks
from stratagem.studies.magic.records import MagicGame

SECTION_ID = "magic"
TITLE = "MAgIC (seed-004)"
LEADERBOARD = "magic/leaderboard"
"""The challengers' leaderboard's id (`analysis.leaderboards`)."""
LINKS_NOTE = (
    "Each entity in the leaderboard and rating tables links to the games behind its row in "
    "the viewer: the links work when this report is opened from `stratagem view` (or its "
    "export), which lists the report on the experiment's page."
)

N_BOOT = 2000
"""Bootstrap replicates of the leaderboard and the PGM gains (vectorised: cheap)."""
RATING_BOOT = 300
"""Bootstrap replicates of the rating: each one refits the model."""
LEVEL = 0.95
SEED = 0
VANILLA_ARCH, PGM_ARCH = "magic", "pgm"
"""The architectures compared for the PGM gains (seed-004 §7, §9.2)."""
MAX_REASONS = 5
DPI = 100

LABELS: dict[str, str] = {
    "win_rate": "W",
    "judgment": "Judgement",
    "reasoning": "Reasoning",
    "deception": "Deception",
    "self_awareness": "Self-awareness",
    "cooperation": "Cooperation",
    "coordination": "Coordination",
    "rationality": "Rationality",
}
"""Column names, in the order of the paper's leaderboard (seed-004 §9.4)."""

DETAIL: tuple[tuple[str, str, float], ...] = (
    ("w_cost", "CS WR", 100.0),
    ("cost", "Cost", 1.0),
    ("w_pd", "PD WR", 100.0),
    ("score", "Score", 1.0),
    ("w_pg", "PG WR", 100.0),
    ("payback", "Payback", 1.0),
    ("w_chameleon", "Chameleon", 100.0),
    ("w_non_chameleon", "Non-chameleon", 100.0),
    ("w_undercover", "Undercover", 100.0),
    ("w_civilian", "Civilian", 100.0),
)
"""§9.3's columns (rates in %; Cost in % of the fee; Score and Payback in points), then the four
social role win rates: with CS/PD/PG WR, the seven rates W averages (§5)."""


# -- formatting ----------------------------------------------------------------------------------


def estimate_cell(e: Estimate | None, scale: float = 100.0, decimals: int = 1) -> CellView:
    """The value and its interval, scaled (100: a fraction shown in %): "57.2 (45.0–66.1)"."""
    if e is None or e.value is None:
        return CellView("–", "num empty")
    text = f"{e.value * scale:.{decimals}f}"
    if e.ci_low is not None and e.ci_high is not None:
        text += f" ({e.ci_low * scale:.{decimals}f}–{e.ci_high * scale:.{decimals}f})"
    return CellView(text, "num")


def money_cell(value: float | None) -> CellView:
    return CellView("–", "num empty") if value is None else CellView(f"${value:.4f}", "num")


def _pct(part: int, whole: int) -> str:
    return f"{part / whole:.1%}" if whole else "–"


def _interval_text(n_boot: int) -> str:
    return (
        f"{LEVEL:.0%} bootstrap percentile intervals in parentheses ({n_boot:,} replicates of the "
        "games, resampled within each of the seven competitions)"
    )


# -- the blocks ----------------------------------------------------------------------------------


def challenger_costs(data: MagicData) -> dict[str, float | None]:
    """Dollars per game spent on the challenger's seats, by challenger (None: no calls stored)."""
    totals: dict[str, float] = defaultdict(float)
    games: dict[str, int] = defaultdict(int)
    for g in data.games:
        seats = data.costs.get(g.episode_id, {})
        totals[g.challenger] += sum(seats.get(s, 0.0) for s in g.challenger_seats)
        games[g.challenger] += 1
    return {e: (totals[e] / games[e] if data.costs else None) for e in games}


def challenger_board(
    rows: Sequence[EntityMetrics],
    games: Sequence[MagicGame],
    costs: dict[str, float | None],
    options: MetricOptions,
) -> Leaderboard:
    """The paper's leaderboard (seed-004 §9.4), each challenger's row with its games' ids."""
    defenders = listing(sorted({g.defender for g in games}))
    return Leaderboard(
        LEADERBOARD,
        "MAgIC leaderboard",
        f"Challengers (model|architecture) against {defenders}, best W first; values in %, "
        f"{_interval_text(N_BOOT)}. Metric options: {options.describe()}. "
        f"{plural(len(games), 'game')} in all; Invalid is the share of the challenger's "
        "decisions and probe answers that stayed invalid; Cost is per game, the challenger's "
        "seats only.",
        ("Challenger", *LABELS.values(), "Games", "Invalid", "Cost / game"),
        tuple(
            LeaderboardRow(
                r.entity,
                (
                    *(estimate_cell(r.metrics.get(m)).text for m in LABELS),
                    f"{r.games:,}",
                    f"{_pct(r.invalid.invalid, r.invalid.decisions)} "
                    f"({r.invalid.invalid}/{r.invalid.decisions})",
                    money_cell(costs.get(r.entity)).text,
                ),
                r.episodes,
            )
            for r in rows
        ),
        numeric=(False, *(True,) * (len(LABELS) + 3)),
    )


def leaderboard_blocks(
    rows: Sequence[EntityMetrics],
    games: Sequence[MagicGame],
    costs: dict[str, float | None],
    options: MetricOptions,
    link: Callable[[str], str] | None = None,
) -> list[Block]:
    board = challenger_board(rows, games, costs, options)
    return [Heading("Leaderboard"), table_view(board, link, tag="as seed-004 §9.4")]


def radar_blocks(rows: Sequence[EntityMetrics]) -> list[Block]:
    polygons = []
    for r in rows:
        values = radar_values({m: e.value for m, e in r.metrics.items()})
        if values is not None:
            polygons.append((r.entity, values))
    blocks: list[Block] = [Heading("Abilities radar")]
    if not polygons:
        blocks.append(
            Note(
                "No challenger has all seven abilities defined (each needs games of its "
                "competitions: the social games, Cost Sharing with an agreement, PD or Public "
                "Good), so there is no radar to draw."
            )
        )
    else:
        png = figure_png(radar_figure(polygons), dpi=DPI)
        blocks.append(
            PlotGrid(
                (
                    plot_view(
                        png,
                        "Abilities radar",
                        "The seven abilities in %, clockwise from the top in the paper's order "
                        "(§9.2), one polygon per challenger with all seven defined.",
                    ),
                ),
                columns=1,
            )
        )
    blocks.append(
        make_table(
            "Radar area",
            "½·sin(2π/7)·Σ r_i·r_(i+1) over the seven abilities in % in the radar's order "
            f"(§9.2), in thousands as the paper's bar chart shows it; {_interval_text(N_BOOT)}.",
            ["Challenger", "Area (×1k)", "Games"],
            [[r.entity, estimate_cell(r.radar_area, 0.001, 2), r.games] for r in rows],
            fold=False,
        )
    )
    return blocks


def variants_table(games: Sequence[MagicGame], options: MagicAnalysis) -> Block:
    """The leaderboard under the paper's readings and under the code's, row beside row
    (`variants=both`): what `code_compat` changes, challenger by challenger."""
    boards = {
        name: {r.entity: r for r in leaderboard(games, options.variant(code), n_boot=N_BOOT,
                                                level=LEVEL, seed=SEED)}
        for name, code in (("paper", False), ("code", True))
    }  # fmt: skip
    lines = [
        [entity, name, *(estimate_cell(board[entity].metrics.get(m)) for m in LABELS)]
        for entity in boards["paper"]
        for name, board in boards.items()
    ]
    return make_table(
        "MAgIC leaderboard: paper and code-compatible",
        "Each challenger under the paper's readings (code_compat false: "
        f"{options.variant(False).describe()}) and under the authors' code's (code_compat true: "
        f"{options.variant(True).describe()}); values in %, {_interval_text(N_BOOT)}.",
        ["Challenger", "Variant", *LABELS.values()],
        lines,
        fold=False,
    )


def detail_blocks(rows: Sequence[EntityMetrics], options: MetricOptions) -> list[Block]:
    return [
        Heading("Per-game detail"),
        make_table(
            "Game-theory detail and role win rates",
            "§9.3's columns: the win rates in Cost Sharing (agreements), the Prisoner's Dilemma "
            "and Public Good (top score, ties included), in %; Cost is the challenger's % of the "
            "agreed fee, Score its final PD score and Payback what the Public Good pool paid it "
            f"(option payback={options.payback!r}), in points; then the four social role win "
            f"rates in %. {_interval_text(N_BOOT)}.",
            ["Challenger", *(label for _, label, _ in DETAIL)],
            [
                [r.entity, *(estimate_cell(r.metrics.get(m), scale) for m, _, scale in DETAIL)]
                for r in rows
            ],
            tag="as seed-004 §9.3",
            fold=False,
        ),
    ]


def pgm_blocks(games: Sequence[MagicGame], options: MetricOptions) -> list[Block]:
    blocks: list[Block] = [Heading("PGM gains")]
    metrics = tuple(LABELS)
    try:
        found = pgm_comparisons(
            games,
            options,
            vanilla_arch=VANILLA_ARCH,
            pgm_arch=PGM_ARCH,
            metrics=metrics,
            n_boot=N_BOOT,
            level=LEVEL,
            seed=SEED,
        )
    except StratagemError as exc:
        return [*blocks, Note(f"The PGM comparison cannot be made: {exc}.")]
    if not found:
        return [
            *blocks,
            Note(
                f"No model was played as a challenger with both the '{VANILLA_ARCH}' and the "
                f"'{PGM_ARCH}' architecture, so there is no PGM gain to show (§9.2)."
            ),
        ]
    for c in found:
        blocks.append(pgm_table(c, options))
    return blocks


def pgm_table(c: PgmComparison, options: MetricOptions) -> Block:
    rows: list[list[object]] = []
    for m, label in LABELS.items():
        p = c.metrics[m]
        diff = Estimate(p.diff, p.ci_low, p.ci_high, p.units)
        rows.append(
            [
                label,
                estimate_cell(Estimate(p.vanilla, None, None, 0)),
                estimate_cell(Estimate(p.pgm, None, None, 0)),
                estimate_cell(diff),
                CellView("–" if p.p_value is None else f"{p.p_value:.3g}", "num"),
                p.units,
            ]
        )
    gain = c.area_gain
    rows.append(
        [
            "Radar area (×1k; Δ as relative change, %)",
            estimate_cell(Estimate(c.area_vanilla, None, None, 0), 0.001, 2),
            estimate_cell(Estimate(c.area_pgm, None, None, 0), 0.001, 2),
            estimate_cell(gain),
            CellView("–", "num"),
            gain.n,
        ]
    )
    unmatched = c.vanilla_only + c.pgm_only
    return make_table(
        f"PGM vs vanilla: {c.model}",
        f"{c.pgm} against {c.vanilla} over {plural(c.matched, 'matched game')} (same game, "
        "setting, seats, seed and repetition"
        + (f"; {unmatched} without a twin left out" if unmatched else "")
        + "). Values in %; Δ = PGM - vanilla in points with its paired bootstrap interval "
        f"({N_BOOT:,} replicates); p: paired t-test over games (n = the games both twins "
        "contribute to); the radar-area Δ is area(PGM) / area(vanilla) - 1 (§9.2). "
        f"Metric options: {options.describe()}.",
        ["Metric", "Vanilla", "PGM", "Δ", "p", "n"],
        rows,
        tag="as seed-004 §9.2",
        fold=False,
    )


def invalid_blocks(
    data: MagicData, rows: Sequence[EntityMetrics], options: MetricOptions
) -> list[Block]:
    """seed-004 §10.10: every seat's invalid replies in the competition games, and for the
    challengers the unreadable answers each metric counted (as wrong, or as the options say)."""
    decisions: dict[str, int] = defaultdict(int)
    invalid: dict[str, int] = defaultdict(int)
    sides: dict[str, set[str]] = defaultdict(set)
    for g in data.games:
        sides[g.challenger].add("challenger")
        sides[g.defender].add("defender")
        entities = data.entities[g.episode_id]
        for k, entity in enumerate(entities):
            decisions[entity] += g.decisions[k]
            invalid[entity] += g.invalid[k]
    by_entity = {r.entity: r.invalid for r in rows}
    lines = []
    for entity in sorted(decisions, key=lambda x: (x not in by_entity, x)):
        counts = by_entity.get(entity)
        detail: list[object] = (
            [None] * 5
            if counts is None
            else [counts.votes, counts.role_answers, counts.beliefs, counts.moves, counts.shares]
        )
        role = " and ".join(sorted(sides[entity]))
        share = CellView(_pct(invalid[entity], decisions[entity]), "num")
        lines.append([entity, role, decisions[entity], invalid[entity], share, *detail])
    return [
        Heading("Invalid replies"),
        make_table(
            "Invalid replies in the competition games",
            "Decisions and probe answers of every seat that stayed invalid after the re-asks "
            "(§10.10: counted, never silently scored). For the challengers, what the metrics "
            "read and could not: votes (counted, never correct), role answers (never right), "
            "belief answers (option unparsed_belief="
            f"{options.unparsed_belief!r}), PD/PG moves (option invalid_decisions="
            f"{options.invalid_decisions!r}) and agreed shares (option unparsed_share="
            f"{options.unparsed_share!r}).",
            ["Entity", "Side", "Decisions", "Invalid", "Share", "Votes", "Role answers",
             "Beliefs", "Moves", "Shares"],
            lines,
            fold=False,
        ),
    ]  # fmt: skip


def _skipped_note(data: MagicData) -> Note | None:
    if not data.skipped:
        return None
    ranked = sorted(data.skipped.items(), key=lambda item: -len(item[1]))
    parts = [
        f"{len(ids):,} × {reason} (e.g. episode '{ids[0]}')" for reason, ids in ranked[:MAX_REASONS]
    ]
    more = len(ranked) - MAX_REASONS
    tail = f"; and {more} other reasons" if more > 0 else ""
    total = sum(len(ids) for ids in data.skipped.values())
    return Note(
        f"{plural(total, 'MAgIC episode')} {'is' if total == 1 else 'are'} not in the "
        "leaderboard: "
        + "; ".join(parts)
        + tail
        + ". A game is a competition only between exactly two entities (§4)."
    )


def _competition_text(games: Sequence[MagicGame]) -> str:
    defenders = sorted({g.defender for g in games})
    challengers: dict[str, int] = defaultdict(int)
    for g in games:
        challengers[g.challenger] += 1
    who = listing(f"{c} ({plural(n, 'game')})" for c, n in sorted(challengers.items()))
    return (
        f"Defender{'s' * (len(defenders) > 1)}: {listing(defenders)}. Challengers: {who}. In a "
        "game between two entities (model|architecture: the model entry and the agent entry's "
        "kind), the defender is the one the experiment file names in a rotation's defenders, "
        "else the one in more of the experiment's games, else the one holding more seats; the "
        "other is the challenger (§4)."
    )


def _noise_floor(
    report: ReportData, games: Sequence[MagicGame], options: MetricOptions
) -> NoiseFloor | None:
    """The noise floor of the comparisons' win rates (in %), where the experiment played
    replicate cells (`replicates:`): each copy's game against its cell's game."""
    if not report.replicates:
        return None
    copies = magic_data(report.store, report.config, report.replicates).games
    values = win_share_values([*games, *copies], options)
    return noise_floor(report, "win share", values={k: 100 * v for k, v in values.items()})


def magic_sections(report: ReportData, episodes: Sequence[EpisodeData]) -> list[Section]:
    """The section, shown whenever the report holds MAgIC episodes."""
    data = magic_data(report.store, report.config, episodes)
    options = report.study_options(SECTION_ID, MagicAnalysis)
    section = Section(SECTION_ID, TITLE)
    section.blocks += [
        Paragraph(
            "MAgIC (Xu et al., seed-004) measures LLM agents in five three-player games: the "
            "social deduction games Chameleon and Undercover, and the game-theory games Cost "
            "Sharing, a three-player iterated Prisoner's Dilemma and Public Good. A challenger "
            "plays against fixed defenders (GPT-4 in the paper): each side of the social games "
            "and each seat of the others, so seven competitions (§4). Its results become a win "
            "rate and seven abilities, each a share of the right decisions of one kind:"
        ),
        Definitions(explanations(options), compact=True),
    ]
    link = partial(viewer_link, report.experiment.id)
    section.blocks.append(Note(LINKS_NOTE))
    skipped = _skipped_note(data)
    if data.games:
        section.blocks.append(Note(_competition_text(data.games)))
    if skipped is not None:
        section.blocks.append(skipped)
    if data.games:
        rows = leaderboard(data.games, options, n_boot=N_BOOT, level=LEVEL, seed=SEED)
        costs = challenger_costs(data)
        section.blocks += leaderboard_blocks(rows, data.games, costs, options, link)
        if options.variants == "both":
            section.blocks.append(variants_table(data.games, options))
        section.blocks += radar_blocks(rows)
        section.blocks += detail_blocks(rows, options)
        section.blocks += pgm_blocks(data.games, options)
        section.blocks += comparison_blocks(
            data.games, rows, options, vanilla=VANILLA_ARCH, pgm=PGM_ARCH
        )
        floor = _noise_floor(report, data.games, options)
        if floor is not None:
            section.blocks.append(Note(floor.note(1)))
    else:
        rows = ()
        section.blocks.append(
            Note(
                "No MAgIC game here is a competition between a challenger and a defender "
                "(two entities), so there is no leaderboard, radar or PGM gain to show."
            )
        )
    section.blocks += rating_blocks(
        data, rows, n_boot=RATING_BOOT, level=LEVEL, seed=SEED, link=link
    )
    if data.games:
        section.blocks += invalid_blocks(data, rows, options)
    return [section]
