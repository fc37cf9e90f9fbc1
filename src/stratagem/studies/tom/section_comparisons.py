"""The ToM section's comparisons between groups, with intervals and Holm-adjusted p-values: the
paper compares the groups by eye (seed-002 §11.2: "the V_2 group tends to show slightly improved
first-order accuracy compared to the V_1 group"), from one game per model, group and instance.

**What is compared**, per model:

- belief accuracy, the V2 group against the V1 group (the two that report V1): each game's mean
  KL(V0 opponent ‖ V1 focal) over its turns with both reports (`belief_accuracy`, same ε);
- the focal agent's wins (it alone crafted its target, §7), the V1 and the V2 group each against
  the V0 group: does asking for ToM reports change how games end?

**Pairs.** A game of one group and a game of another are a pair when they share the task
instance and the seed: the same hands and targets, and the same draws. Several seeds of one
instance are a cluster (they share the instance's deal); games of one group with one key are
averaged. `analysis.cell_comparison.compare_cells` chooses the test: the cluster-robust t by
instance when an instance holds several pairs, McNemar's test for wins with one pair per
instance, the paired t otherwise, and Welch's unpaired t for groups played on different
instances or seeds.

**Noise floor.** Where the experiment played replicate copies of the ToM games' cells
(`replicates:`), the note under the table gives each measure's noise floor
(`analysis.noise_floor`): each copy's game against its cell's, paired by seed and repetition.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Hashable, Sequence
from functools import partial

from stratagem.analysis.cell_comparison import compare_cells
from stratagem.analysis.comparison_table import ComparedRow, compared_row, comparison_table
from stratagem.analysis.noise_floor import NoiseFloor, noise_floor
from stratagem.analysis.report_data import ReportData
from stratagem.analysis.report_views import Block, Heading, Note
from stratagem.studies.tom.belief_accuracy import kl_points
from stratagem.studies.tom.extract import tom_data
from stratagem.studies.tom.options import TomOptions
from stratagem.studies.tom.records import Group, TomGame

PAIRED_BY = "task instance and seed"
CLUSTER_BY = "instance"
KL = "KL(V0 opponent ‖ V1 focal), per game"
WIN = "focal win"
COMPARED: tuple[tuple[str, Group, Group], ...] = (
    (KL, "V1", "V2"),
    (WIN, "V0", "V1"),
    (WIN, "V0", "V2"),
)
"""(measure, A, B): B − A."""
FLOOR_NAMES = {KL: "mean KL of a game", WIN: "focal win rate"}
"""Each measure as the noise floor's sentence names it."""

Key = tuple[str, Hashable]
"""(instance, seed)."""
Values = dict[tuple[str, str, Group], dict[Key, float]]
"""(measure, model, group) -> pairing key -> value (games of one key averaged)."""


def measures(games: Sequence[TomGame], options: TomOptions) -> dict[str, dict[str, float]]:
    """Each game's mean KL (games with a pair of reports) and focal win, by measure and
    episode id."""
    per_game: dict[str, list[float]] = defaultdict(list)
    for p in kl_points(games, options):
        per_game[p.episode_id].append(p.kl)
    out: dict[str, dict[str, float]] = {KL: {}, WIN: {}}
    for g in games:
        won = g.outcome == "win" and g.winners == (g.focal,)
        out[WIN][g.episode_id] = 1.0 if won else 0.0
        kls = per_game.get(g.episode_id)
        if kls:
            out[KL][g.episode_id] = sum(kls) / len(kls)
    return out


def game_values(games: Sequence[TomGame], options: TomOptions) -> Values:
    """Each game's measures by cell and key (games of one cell and key averaged)."""
    by_id = measures(games, options)
    found: dict[tuple[str, str, Group], dict[Key, list[float]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for g in games:
        key: Key = (g.instance, g.seed)
        for measure, values in by_id.items():
            if g.episode_id in values:
                found[(measure, g.model, g.group)][key].append(values[g.episode_id])
    return {cell: {k: sum(v) / len(v) for k, v in keys.items()} for cell, keys in found.items()}


def noise_floors(
    report: ReportData | None, games: Sequence[TomGame], options: TomOptions
) -> list[NoiseFloor]:
    """Each measure's noise floor over the replicate copies of the games' cells (the copies
    read as the games are); none without copies."""
    if report is None or not report.replicates:
        return []
    copies = tom_data(report.replicates, report.store.beliefs, options).games
    if not copies:
        return []
    values = measures([*games, *copies], options)
    found = (
        noise_floor(report, FLOOR_NAMES[m], values=values[m], level=options.level)
        for m in (KL, WIN)
    )
    return [f for f in found if f is not None]


def comparison_rows(games: Sequence[TomGame], options: TomOptions) -> list[ComparedRow]:
    """Every comparison both of whose cells have games (unadjusted), by model, at the
    options' interval level (the study's 90%, as its bootstrap intervals)."""
    values = game_values(games, options)
    out: list[ComparedRow] = []
    for model in sorted({g.model for g in games}):
        for measure, a, b in COMPARED:
            va, vb = values.get((measure, model, a)), values.get((measure, model, b))
            if not va or not vb:
                continue
            labels = (model, measure, f"{b} group", f"{a} group")
            clusters = {k: k[0] for k in (*va, *vb)}
            compare = partial(
                compare_cells, va, vb, paired_by=PAIRED_BY, clusters=clusters,
                cluster_by=CLUSTER_BY, level=options.level,
            )  # fmt: skip
            out.append(compared_row(labels, compare))
    return out


def comparison_blocks(
    games: Sequence[TomGame], options: TomOptions, report: ReportData | None = None
) -> list[Block]:
    """The comparisons heading and table (or why there is none); under it, the noise floor of
    the `report`'s replicate copies, where it has some."""
    blocks: list[Block] = [Heading("Comparisons between groups (beyond the paper)")]
    found = comparison_rows(games, options)
    if not found:
        return [
            *blocks,
            Note(
                "No model was played in two groups that can be compared here (V2 against V1 "
                "for belief accuracy, V1 and V2 against V0 for the focal agent's wins)."
            ),
        ]
    caption = (
        "Per model, B − A between groups: the mean KL of a game (over its turns with a focal "
        f"V1 and the opponent's V0, ε = {options.epsilon:g}; lower is closer), V2 group "
        "against V1 group; and the focal agent's wins (1 when it alone crafted its target), "
        f"V1 and V2 group against V0 group. Games paired by {PAIRED_BY} (games of one group "
        "with both alike averaged); cluster-robust t by instance where an instance holds "
        "several pairs, McNemar's test for wins with one pair per instance, the paired t "
        "otherwise, Welch's unpaired t where the groups share no instance and seed; "
        f"{options.level:.0%} intervals. A and B are means over the games compared."
    )
    table = comparison_table(
        "Groups compared",
        caption,
        ["Model", "Measure", "B", "A"],
        found,
        decimals=3,
        unit="game",
        level=options.level,
        tag="seed-002 §11.2, beyond the paper",
    )
    floors = " ".join(f.note(3) for f in noise_floors(report, games, options))
    if floors:
        table = dataclasses.replace(table, note=f"{table.note} {floors}".strip())
    return [*blocks, table]
