"""The thesis' comparisons: is an architecture's or an attitude's cooperation rate different from
the plain agent's, and the debate agent's from the tool agent's, by more than chance? Beyond the
thesis, whose Tables 3.2, 3.4 and 3.7 print the means side by side without a test (seed-001
§12); those tables stay as they are and this one goes beside them.

**What is compared.** Each agent configuration (architecture and attitude) with the plain
agent, and, per attitude, each later architecture with each earlier one (the debate agent with
the tool agent), on the cooperation rate CR (seed-001 §9).

**Pairs.** Two games are a pair when they share the model, the opponent, the number of rounds,
the game, the seed and the repetition: the same setting against the same rule-based opponent,
so the difference is the configuration's. The thesis' grid plays each setting once (its
Appendix A: 36 pairs per comparison), so each pair is its own cluster and the test is the
paired t (Student 1908); a grid with several seeds or repetitions of a setting clusters the
pairs by setting (model, opponent, rounds and game) and uses the cluster-robust t.
`analysis.cell_comparison.compare_cells` chooses (McNemar's test should every rate be 0 or 1,
Welch's unpaired t where the two share no setting). Games of one configuration with one key (an
imported row has no seed) are averaged. The p-values are Holm-adjusted across the table.

**Noise floor.** Where the experiment played replicate copies of these cells (`replicates:`),
the note under the table gives the CR's noise floor (`analysis.noise_floor`): each copy's CR,
computed as the tables compute it, against its cell's, paired by seed and repetition.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections import defaultdict
from collections.abc import Hashable, Mapping, Sequence
from functools import partial
from typing import Any

from stratagem.analysis.cell_comparison import compare_cells
from stratagem.analysis.comparison_table import ComparedRow, compared_row, comparison_table
from stratagem.analysis.noise_floor import NoiseFloor, noise_floor, own_cell
from stratagem.analysis.report_views import Block, Heading, Note
from stratagem.studies.thesis.importer import NO_ATTITUDE, SUMMARY_EVENT
from stratagem.studies.thesis.report_data import ThesisData, arch_name
from stratagem.studies.thesis.tables import ARCH_TITLES

BASELINE = "Plain_LLM"
METRIC = "CR"
METRIC_NAME = "cooperation rate (CR)"
SETTING: tuple[str, ...] = ("Model", "OppStr", "NR", "Game")
PAIRED_BY = "model, opponent, rounds, game, seed and repetition"
CLUSTER_BY = "setting"
LEVEL = 0.95

Cell = tuple[str, str]
"""(Arch, Att): one agent configuration."""
Key = tuple[Hashable, ...]
"""The setting, then the seed and the repetition."""


def cell_name(cell: Cell) -> str:
    arch, att = cell
    name = arch_name(arch)
    return name if att == NO_ATTITUDE else f"{name} ({att})"


def runs(data: ThesisData) -> list[tuple[Hashable, Hashable]] | None:
    """(seed, repetition) of each dataset row, in the dataset's order; None when the rows do
    not line up with the episodes (then games are paired by setting alone)."""
    measured = [e for e in data.episodes if e.rounds or e.has_event(SUMMARY_EVENT)]
    if len(measured) != len(data.dataset):
        return None
    return [(e.record.seed, e.spec.get("repetition", 0)) for e in measured]


def cell_values(
    rows: Sequence[Mapping[str, Any]], run_of: Sequence[tuple[Hashable, Hashable]] | None = None
) -> dict[Cell, dict[Key, float]]:
    """Each configuration's CR by pairing key (games with one key averaged)."""
    found: dict[Cell, dict[Key, list[float]]] = defaultdict(lambda: defaultdict(list))
    for i, row in enumerate(rows):
        if row.get(METRIC) is None:
            continue
        run = run_of[i] if run_of is not None else (None, None)
        key = (*(row[c] for c in SETTING), *run)
        found[(str(row["Arch"]), str(row["Att"]))][key].append(float(row[METRIC]))
    return {c: {k: sum(v) / len(v) for k, v in keys.items()} for c, keys in found.items()}


def compared_cells(cells: Sequence[Cell]) -> list[tuple[Cell, Cell]]:
    """(A, B): each configuration against the plain agent, then per attitude each later
    architecture against each earlier one (the thesis' order: tool, then debate)."""
    order = {a: i for i, a in enumerate(ARCH_TITLES)}
    ranked = sorted(cells, key=lambda c: (order.get(c[0], len(order)), c[0], c[1]))
    base = [c for c in ranked if c[0] == BASELINE]
    others = [c for c in ranked if c[0] != BASELINE]
    out = [(a, b) for a in base for b in others]
    for a, b in itertools.combinations(others, 2):
        if a[1] == b[1] and a[0] != b[0]:
            out.append((a, b))
    return out


def comparison_rows(
    rows: Sequence[Mapping[str, Any]],
    run_of: Sequence[tuple[Hashable, Hashable]] | None = None,
    level: float = LEVEL,
) -> list[ComparedRow]:
    """Every compared pair of configurations (unadjusted)."""
    values = cell_values(rows, run_of)
    out: list[ComparedRow] = []
    for a, b in compared_cells(list(values)):
        clusters = {k: k[: len(SETTING)] for k in (*values[a], *values[b])}
        labels = (cell_name(b), cell_name(a))
        compare = partial(
            compare_cells, values[a], values[b], paired_by=PAIRED_BY, clusters=clusters,
            cluster_by=CLUSTER_BY, level=level,
        )  # fmt: skip
        out.append(compared_row(labels, compare))
    return out


def cr_by_episode(data: ThesisData) -> dict[str, float]:
    """Each game's CR by episode id; none where the dataset's rows do not line up with the
    episodes."""
    measured = [e for e in data.episodes if e.rounds or e.has_event(SUMMARY_EVENT)]
    if len(measured) != len(data.dataset):
        return {}
    return {
        e.record.id: float(row[METRIC])
        for e, row in zip(measured, data.dataset, strict=True)
        if row.get(METRIC) is not None
    }


def cr_noise_floor(data: ThesisData) -> NoiseFloor | None:
    """The CR's noise floor over the replicate copies of the thesis' cells; None without any."""
    if not data.report.replicates:  # also where the games are imported rows, without seats
        return None
    cells = {own_cell(e) for e in data.episodes}
    copies = [e for e in data.report.replicates if own_cell(e) in cells]
    if not copies:
        return None
    values = cr_by_episode(data) | cr_by_episode(ThesisData.with_dataset(data.report, copies))
    return noise_floor(data.report, METRIC_NAME, values=values, level=LEVEL)


def comparison_blocks(data: ThesisData) -> list[Block]:
    """The comparisons table of the study tables section (or why there is none)."""
    blocks: list[Block] = [Heading("Comparisons")]
    found = comparison_rows(data.dataset, runs(data))
    if not found:
        return [
            *blocks,
            Note(
                "Fewer than two agent configurations to compare here (each is compared with "
                "the plain agent, and the debate agent with the tool agent of the same attitude)."
            ),
        ]
    caption = (
        "The cooperation rate (CR) of each agent configuration against the plain agent's, and "
        "the debate agent's against the tool agent's of the same attitude: B − A over pairs of "
        f"games that share the {PAIRED_BY}. Paired t (one pair per setting), cluster-robust t "
        "by setting (several seeds or repetitions of a setting), Welch's unpaired t where the "
        f"two share no setting; {LEVEL:.0%} intervals. The means in A and B are over the paired "
        "games, so they can differ from the tables above, which average all games."
    )
    table = comparison_table(
        "Cooperation rate compared",
        caption,
        ["B", "A"],
        found,
        decimals=2,
        unit="game",
        level=LEVEL,
        tag="beyond the study",
    )
    floor = cr_noise_floor(data)
    if floor is not None:
        table = dataclasses.replace(table, note=f"{table.note} {floor.note()}".strip())
    return [*blocks, table]
