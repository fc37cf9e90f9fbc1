"""The report section of seed-003's counterfactual study: its tables in the paper's layout, our
extra metrics, the paired counterfactual analysis and its plots.

It appears for experiments whose games form counterfactual families: seed-003's catalog games,
or any matrix game played together with variants of it (declared in the experiment file).
"""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure

from stratagem.analysis.episodes import EpisodeData
from stratagem.analysis.noise_floor import noise_floor
from stratagem.analysis.plots import figure_png
from stratagem.analysis.report_data import ReportData
from stratagem.analysis.report_views import (
    Block,
    CellView,
    Heading,
    Note,
    Paragraph,
    PlotGrid,
    Section,
    TableView,
    make_table,
    plot_view,
)
from stratagem.games.catalog import GAMES
from stratagem.studies.counterfactual import heat
from stratagem.studies.counterfactual import paired_analysis as pa
from stratagem.studies.counterfactual import plots as cplots
from stratagem.studies.counterfactual import tables as ct
from stratagem.studies.counterfactual.metrics import equilibria
from stratagem.studies.counterfactual.tidy import studied_families

SECTION_ID = "counterfactual"

MAX_MODEL_PLOTS = 3
"""Up to this many models get a plot each; more share one heat map per family or game, drawn as
a coloured table (dozens of images would be slow to draw and hard to read)."""
DPI = 100
"""Plot resolution: enough for these simple charts, and each PNG is smaller and faster."""

MAX_REASONS = 5
"""Distinct reasons for skipped episodes listed in the note, most frequent first."""

_METRIC_TEXT = {
    "points": (
        "Total points",
        "Player 0's total points over the game (an invalid round scores 0), mean ± sd over runs; "
        "bold: the highest mean of each column.",
    ),
    "m": (
        "Opponent comprehension round m",
        "The first round from which player 0 did at least as well as mirroring its opponent "
        "(PD family) or did not lose (RPS) in 90% of the remaining rounds; rounds + 1 when it "
        "never did. Lower is earlier; bold: the lowest mean of each column.",
    ),
    "cooperation": (
        "Cooperation rate",
        "The share of rounds in which player 0 played the first action (cooperation or stag); "
        "bold: the highest mean of each column.",
    ),
}

_OURS = (
    ("win_rate", "Win rate (ours)", "Share of rounds in which player 0 scored more than its "
     "opponent."),
    ("normalized_payoff", "Normalized payoff (ours)", "Total points rescaled to [0, 1] between "
     "the worst and the best total the payoffs allow over the game."),
    ("equilibrium_distance", "Distance to equilibrium (ours)", "Total-variation distance between "
     "player 0's action shares and the nearest symmetric Nash equilibrium of the stage game (0: "
     "it plays the equilibrium mix; lower is closer)."),
)  # fmt: skip


def _table(table: ct.StudyTable, keys: int, tag: str = "") -> TableView:
    """A study table as a view: the first `keys` columns are labels, the rest values."""
    rows = [
        [CellView(c.text) for c in row[:keys]]
        + [CellView(c.text, "num best" if c.best else "num") for c in row[keys:]]
        for row in table.rows
    ]
    if not tag and table.table_number is not None:
        tag = f"as Table {table.table_number} of the study"
    return make_table(table.title, table.caption, table.columns, rows, tag=tag, fold=False)


def _games_note(family: Sequence[str]) -> str:
    parts = []
    for name in family:
        entry = GAMES.get(name)
        if entry is None or not entry.source.startswith("seed-003"):
            continue
        text = f"{name} ({entry.description})"
        if entry.paper_caption and entry.paper_caption != entry.counterfactual:
            text += f", printed in the paper under the caption “{entry.paper_caption}”"
        parts.append(text)
    if not parts:
        return ""
    return (
        "Variants are named by what they change (seed-003's PD tables carry the wrong captions): "
        + "; ".join(parts)
        + "."
    )


def counterfactual_sections(report: ReportData, episodes: Sequence[EpisodeData]) -> list[Section]:
    """The section, or none when the experiment has no counterfactual family."""
    games, skipped = ct.study_games(episodes)
    studied = studied_families(games)
    if not studied:
        return []
    games = [g for g in games if g.default in studied]
    section = Section(SECTION_ID, "Counterfactual strategic reasoning (seed-003 tables)")
    section.blocks.append(
        Paragraph(
            "These tables follow the layout of the study “Evaluating Counterfactual Strategic "
            "Reasoning in Large Language Models”: one row per model and prompt of player 0, one "
            "column per opponent, mean ± sample sd over runs. A counterfactual variant changes a "
            "default game's action labels, its payoffs, or both; comparing a variant's cells "
            "with the default's shows whether a model reasons about the incentives or repeats a "
            "learned pattern."
        )
    )
    if skipped:
        section.blocks.append(Note(_skipped_text(skipped)))
    for default, family in studied.items():
        section.blocks.extend(_family_blocks(games, default, family, report))
    section.blocks.append(Heading("Validity"))
    section.blocks.append(_table(ct.validity_table(games, studied), 1, "as Tables 14 and 24"))
    return [section]


def _skipped_text(skipped: ct.Skipped) -> str:
    """Every reason an episode was left out, with an example episode: never a generic one."""
    ranked = sorted(skipped.reasons.items(), key=lambda item: -len(item[1]))
    parts = [
        f"{len(ids):,} × {reason} (e.g. episode '{ids[0]}')" for reason, ids in ranked[:MAX_REASONS]
    ]
    more = len(ranked) - MAX_REASONS
    tail = f"; and {more} other reason{'s' * (more != 1)}" if more > 0 else ""
    return f"{len(skipped):,} episode(s) are left out of these tables: " + "; ".join(parts) + tail


def _family_blocks(
    games: Sequence[ct.StudyGame], default: str, family: list[str], report: ReportData
) -> list[Block]:
    blocks: list[Block] = [Heading(f"The {default} family: {', '.join(family)}")]
    note = _games_note(family)
    if note:
        blocks.append(Note(note))
    two_actions = all(len(g.data.labels) == 2 for g in games if g.game in family)
    metrics = ("points", "m", "cooperation") if two_actions else ("points", "m")
    for metric in metrics:
        title, caption = _METRIC_TEXT[metric]
        for game in family:
            table = ct.opponent_table(games, game, metric, f"{title}: {game}", caption)
            blocks.append(_table(table, 2))
    blocks.append(
        _table(
            ct.game_table(
                games, family, "efficiency", "Efficiency",
                "Total points per thousand tokens of player 0's largest round (the study's "
                "definition), all opponents pooled; bold: the highest mean of each column.",
            ),
            2,
        )
    )  # fmt: skip
    blocks.append(Heading(f"The {default} family: metrics the study does not report (ours)"))
    for metric, title, caption in _OURS:
        blocks.append(_table(ct.game_table(games, family, metric, title, caption), 2))
    blocks.append(
        _table(
            ct.game_table(
                games, family, "efficiency_total", "Efficiency over the whole game (ours)",
                "Total points per thousand tokens of the whole game (all rounds' tokens).",
            ),
            2,
        )
    )  # fmt: skip
    exploit = ct.exploitability_table(games, family)
    if exploit.rows and len(exploit.columns) > 3:
        blocks.append(_table(exploit, 3))
    blocks.extend(_paired_blocks(games, default, family, report))
    if not two_actions:
        blocks.extend(_action_blocks(games, family))
    return blocks


_PAIRED_TEXT = {
    "points": ("total points", "Variant minus default total points"),
    "cooperation": ("cooperation rate", "Variant minus default cooperation rate"),
    "m": ("comprehension round m", "Variant minus default m (negative: the variant is understood "
          "earlier)"),
}  # fmt: skip


def _paired_blocks(
    games: Sequence[ct.StudyGame], default: str, family: list[str], report: ReportData
) -> list[Block]:
    if len(family) < 2:
        return []
    analysis = pa.paired_analysis(games, family)
    cells = analysis.cells
    blocks: list[Block] = [Heading(f"The {default} family: paired counterfactual analysis (ours)")]
    if not cells:
        blocks.append(Note("No cell was played in both the default game and a variant."))
        return blocks
    blocks.append(
        Paragraph(
            "For each model, prompt and opponent, each variant is compared with the default game "
            "run by run (runs paired by seed and repetition). Each cell shows Δ, the variant "
            "minus the default averaged over the paired runs, its 95% interval and p-value by "
            "the paired t-test (each run its own cluster; where a cell holds several seeds and "
            "a seed several runs, the runs of one seed form a cluster and the t is "
            "cluster-robust, CR1), in parentheses the p-value Holm-adjusted across the "
            "comparisons of its table (one table per metric, one family of tests, stated under "
            "it), and the number of pairs. Bold: the Holm-adjusted p-value is below 0.05. The "
            "paired percentile bootstrap gives intervals of the same differences too "
            "(docs/statistics.md). Persistence is how much of the default game's behaviour "
            "survives in the variant: 1 minus the total-variation distance between player 0's "
            "move distributions by strategic role, at the start and after each opponent move. "
            "High persistence under a label-only change is robustness; under a payoff change it "
            "is a canonical strategy carried over while the incentives moved."
        )
    )
    variants = list(dict.fromkeys(c.variant_game for c in cells))
    by_key = {(c.model, c.prompt, c.opponent, c.variant_game): c for c in cells}
    rows = list(dict.fromkeys((c.model, c.prompt, c.opponent) for c in cells))
    columns = ["model", "prompt", "opponent", *(f"{v} − {default}" for v in variants)]
    for metric in analysis.metrics:
        what, caption = _PAIRED_TEXT[metric]
        body = []
        for model, prompt, opponent in rows:
            row: list[object] = [model, prompt, opponent]
            for v in variants:
                c = by_key.get((model, prompt, opponent, v))
                d = c.differences.get(metric) if c is not None else None
                row.append(CellView("–" if d is None else d.text(pa.DECIMALS[metric]),
                                    "num best" if pa.claimed(d) else "num"))  # fmt: skip
            body.append(row)
        blocks.append(
            make_table(
                f"Paired differences: {what}",
                f"{caption}, per model, prompt and opponent: Δ [95% interval], p (Holm), pairs.",
                columns, body, note=_with_floor(analysis.statements.get(metric, ""), report,
                                                metric, family),
            )
        )  # fmt: skip
    persistence = []
    for model, prompt, opponent in rows:
        row = [model, prompt, opponent]
        for v in variants:
            c = by_key.get((model, prompt, opponent, v))
            score = c.persistence.score if c else None
            row.append(CellView("–" if score is None else f"{score:.2f}", "num"))
        persistence.append(row)
    blocks.append(
        make_table(
            "Canonical-strategy persistence, cell by cell",
            "1 = the default game's behaviour unchanged in the variant, 0 = none of it left.",
            ["model", "prompt", "opponent", *variants],
            persistence,
        )
    )
    return blocks + _paired_views(cells, default)


_FLOOR_METRICS = {"points": "score", "cooperation": "cooperation"}
"""The paired tables' metrics with a noise floor: player 0's per-episode score and cooperation."""


def _with_floor(note: str, report: ReportData, metric: str, family: list[str]) -> str:
    """The table's note, and under it the noise floor its differences must beat, where the
    experiment played replicate cells of the family's games (`replicates:`)."""
    if metric not in _FLOOR_METRICS:
        return note
    floor = noise_floor(report, _FLOOR_METRICS[metric], where=lambda key: key[2] in family)
    if floor is None:
        return note
    return f"{note} {floor.note(pa.DECIMALS[metric])}".strip()


def _png(figure: Figure) -> bytes:
    return figure_png(figure, dpi=DPI)


def _paired_views(cells: Sequence[pa.PairedCell], default: str) -> list[Block]:
    """A paired-difference plot per model when there are few models, one heat map of the family
    otherwise; one persistence heat map of the family either way (heat maps as tables)."""
    blocks: list[Block] = []
    models = list(dict.fromkeys(c.model for c in cells))
    if len(models) <= MAX_MODEL_PLOTS:
        plots = []
        for model in models:
            mine = [c for c in cells if c.model == model]
            if any(c.points is not None for c in mine):
                plots.append(
                    plot_view(
                        _png(cplots.paired_points_figure(mine, f"{model}: {default} family")),
                        f"Paired differences, {model}",
                        "Each variant minus the default game, per prompt and opponent; a bar "
                        "crossing 0 is no clear effect.",
                    )
                )
        if plots:
            blocks.append(PlotGrid(tuple(plots)))
    else:
        points = heat.paired_points_heat(
            cells,
            f"Paired differences, {default} family",
            "Each variant minus the default game in total points, per model and prompt, "
            "averaged over opponents (the table above has every cell and its interval).",
        )
        if points is not None:
            blocks.append(points)
    who = models[0] if len(models) == 1 else f"{default} family"
    persistence = heat.persistence_heat(
        cells,
        f"Canonical-strategy persistence, {who}",
        "Per prompt (and model) and variant, averaged over opponents: 1 = the default game's "
        "behaviour unchanged.",
    )
    if persistence is not None:
        blocks.append(persistence)
    return blocks


def _action_blocks(games: Sequence[ct.StudyGame], family: list[str]) -> list[Block]:
    plots = []
    tables: list[Block] = []
    for game in family:
        sample = next((g for g in games if g.game == game), None)
        if sample is None:
            continue
        shares = ct.action_shares(games, game)
        labels, sigma = sample.data.labels, equilibria(sample.data)
        models = list(dict.fromkeys(m for m, _ in shares))
        if len(models) > MAX_MODEL_PLOTS:
            rows = {heat.row_label(m, p, len(models)): s for (m, p), s in shares.items()}
            tables.append(
                heat.action_heat(
                    rows, labels, sigma,
                    f"Action distribution vs equilibrium: {game}",
                    "Player 0's share of each action per model and prompt (all opponents and "
                    "runs), under the stage game's Nash equilibria (top rows).",
                    "model · prompt",
                )
            )  # fmt: skip
            continue
        for model in models:
            mine = {p: s for (m, p), s in shares.items() if m == model}
            plots.append(
                plot_view(
                    _png(
                        cplots.action_distribution_figure(mine, labels, sigma, f"{model}: {game}")
                    ),
                    f"Action distribution vs equilibrium: {game}, {model}",
                    "Player 0's share of each action per prompt (all opponents and runs), and "
                    "the stage game's Nash equilibrium (black).",
                )
            )
    if not plots and not tables:
        return []
    blocks: list[Block] = [Heading("Action distribution against the equilibrium"), *tables]
    if plots:
        blocks.append(PlotGrid(tuple(plots)))
    return blocks
