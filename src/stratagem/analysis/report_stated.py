"""The report's section of the comparisons an experiment file states (`analysis.compare`),
measured on its stored episodes as the plan planned them (`experiments.comparisons`).

For each stated entry, every two cells that differ only in the entry's axis (alike in the axes
it keeps apart) are compared on seat 0's per-episode metric (`analysis.plan_power.
metric_value`: cooperation rate, score or invalid-move rate), B minus A, over the episodes that
share the pooled axes' values, the seed and the repetition. The interval is `compare_paired`'s
paired t, or its cluster-robust t with a seed's pairs as one cluster where seeds hold several
pairs (`analysis.pair_clusters.shared_clusters`, as the plan's power assumes); p-values are
Holm-adjusted across the table, and where the file played replicates, the metric's
noise floor (`analysis.noise_floor`) is printed under it. No section without stated entries.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from stratagem.analysis.comparison_table import ComparedRow, comparison_table
from stratagem.analysis.comparisons import compare_paired
from stratagem.analysis.noise_floor import noise_floor, tallies_of, without_copies
from stratagem.analysis.pair_clusters import shared_clusters
from stratagem.analysis.plan_power import metric_value
from stratagem.analysis.report_data import ReportData
from stratagem.analysis.report_views import Note, Paragraph, Section
from stratagem.analysis.tallies import EpisodeTally
from stratagem.experiments.compare_entry import AXES, COMPARE, METRICS, CompareEntry

SECTION_ID = "stated-comparisons"
TITLE = "Stated comparisons"

Key = tuple[str, ...]
"""A pair's key: the pooled axes' values, then the seed and the repetition."""


def stated_entries(config: dict[str, Any] | None) -> list[CompareEntry]:
    """The stored file's `analysis.compare` entries (validated when the file was read)."""
    listed = ((config or {}).get("analysis") or {}).get(COMPARE) or []
    out = []
    for entry in listed if isinstance(listed, list) else []:
        try:
            out.append(CompareEntry.model_validate(entry))
        except ValidationError:
            continue  # a file of another version: the plan refused it there, if it was wrong
    return out


def stated_section(data: ReportData) -> list[Section]:
    """The section, or nothing when the file states no comparison."""
    entries = stated_entries(data.experiment.config)
    if not entries:
        return []
    tallies = tallies_of(without_copies(data).episodes)
    section = Section(SECTION_ID, TITLE)
    section.blocks.append(Paragraph(_INTRO))
    rows = [row for entry in entries for row in _rows(entry, tallies)]
    if not rows:
        section.blocks.append(Note("No two finished cells of a stated comparison pair up yet."))
        return [section]
    caption = "B − A per pair of cells (their axes but the compared one, A's and B's alike)."
    section.blocks.append(
        comparison_table("Stated comparisons", caption, ["Comparison", "Cells", "Paired by"], rows)
    )
    for metric in dict.fromkeys(entry.metric for entry in entries):
        floor = noise_floor(data, metric)
        if floor is not None:
            section.blocks.append(
                Note(
                    f"Noise floor of {METRICS[metric].split(' (')[0]}: {floor.floor:.2f} (two "
                    "identical cells differ by less 95% of the time; the noise-floor section)."
                )
            )
    return [section]


def _paired_by(entry: CompareEntry) -> list[str]:
    return [*entry.pooled(), "seed", "repetition"]


def _rows(entry: CompareEntry, tallies: Sequence[EpisodeTally]) -> list[ComparedRow]:
    """One row per pair of cells, in the order the cells first appear."""
    a, b = str(entry.a), str(entry.b)
    sides: dict[Key, tuple[dict[Key, float], dict[Key, float]]] = {}
    for t in tallies:
        axes = dict(zip(AXES, (str(v) for v in t.key), strict=True))
        value = metric_value(t, entry.metric)
        if axes[entry.axis] not in (a, b) or value is None:
            continue
        kept = tuple(axes[x] for x in entry.kept())
        side = sides.setdefault(kept, ({}, {}))[0 if axes[entry.axis] == a else 1]
        key = (*(axes[x] for x in entry.pooled()), str(t.seed), str(t.repetition))
        while key in side:  # two episodes alike in every axis: each still pairs once
            key = (*key, "+")
        side[key] = value
    seed_at = len(entry.pooled())
    title, paired = f"{entry.title()} ({entry.metric})", ", ".join(_paired_by(entry))
    rows = []
    for kept, (on_a, on_b) in sides.items():
        shared = [k for k in on_a if k in on_b]
        if not shared:
            continue
        clusters = shared_clusters(shared, {k: k[seed_at] for k in shared})
        comparison = compare_paired(
            on_a,
            on_b,
            paired_by=paired,
            clusters=clusters,
            cluster_by="seed" if clusters is not None else None,
        )
        rows.append(ComparedRow((title, " / ".join(kept) or "all cells", paired), comparison))
    return rows


_INTRO = (
    "The comparisons the experiment file states (its analysis.compare), as the plan planned "
    "them: for every two cells that differ only in the compared axis, seat 0's per-episode "
    "metric, B minus A, over the episodes that share a seed and a repetition (and the values of "
    "the axes the entry pools). Each difference comes with its 95% interval (the paired t, or "
    "the cluster-robust t with a seed's pairs as one cluster where a seed holds several) and "
    "its p-value, Holm-adjusted across the table."
)
