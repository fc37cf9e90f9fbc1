"""The old-vs-new report of a rescore: what flipped, and each metric's difference with an interval.

A rescored episode is paired with the episode it comes from, so each metric's difference is
paired by episode: d_i = new_i - old_i over the episodes stored whole in both (unchanged, played
on, or copied), its mean with the paired t interval of `analysis.comparisons` (each episode its
own cluster), and the p-values Holm-adjusted across the table (`analysis.multiple`). Episodes cut
at a changed move have no new value and are left out, and the report says how many. An unchanged
episode's difference is 0 by construction: the differences of a rescore of the replies come from
the episodes played on (`--fork`), those of a rescore of the metrics from the options.

The metrics are every seat's payoff and share of invalid moves (any game), and every per-episode
column of a study's table (`Study.table`), which the caller reads (`studies.rescore_metrics`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from stratagem.analysis.comparisons import Comparison, compare_paired
from stratagem.analysis.episodes import EpisodeData
from stratagem.analysis.multiple import adjust_comparisons
from stratagem.experiments.rescore import RescoreResult

Metrics = dict[str, dict[str, float]]
"""Metric name -> episode id -> value."""

PAIRED_BY = "source episode"


@dataclass(frozen=True)
class MetricDiff:
    name: str
    comparison: Comparison | None
    """None when fewer than one pair has the metric."""
    pairs: int

    @property
    def unchanged(self) -> bool:
        """The same value in every pair: a difference of 0 without spread."""
        c = self.comparison
        return c is not None and c.estimate == 0 and not c.se


def episode_metrics(episodes: Sequence[EpisodeData]) -> Metrics:
    """Each seat's payoff and share of invalid moves, by episode."""
    out: Metrics = {}
    for episode in episodes:
        payoffs = episode.record.payoffs or ()
        for seat, value in enumerate(payoffs):
            out.setdefault(f"payoff, seat {seat}", {})[episode.record.id] = float(value)
        for seat in range(len(episode.seats)):
            decisions, invalid = episode.decisions(seat)
            if decisions:
                name = f"invalid share, seat {seat}"
                out.setdefault(name, {})[episode.record.id] = invalid / decisions
    return out


def compare_metrics(
    old: Mapping[str, Mapping[str, float]],
    new: Mapping[str, Mapping[str, float]],
    pairs: Mapping[str, str],
    level: float = 0.95,
) -> tuple[list[MetricDiff], str]:
    """Each metric's new-minus-old difference over `pairs` (new episode id -> source episode
    id), Holm-adjusted across the metrics; and the sentence for under the table. A metric that
    is 0 in every episode of both is left out (a game that has none of it)."""
    diffs: list[MetricDiff] = []
    for name in sorted(set(old) | set(new)):
        a = {source: old[name][source] for source in pairs.values() if source in old.get(name, {})}
        b = {source: new[name][ep] for ep, source in pairs.items() if ep in new.get(name, {})}
        if not any(a.values()) and not any(b.values()):
            continue
        shared = len(set(a) & set(b))
        comparison = None
        if shared:
            comparison = compare_paired(a, b, paired_by=PAIRED_BY, level=level)
        diffs.append(MetricDiff(name, comparison, shared))
    compared = [d.comparison for d in diffs if d.comparison is not None]
    adjusted, statement = adjust_comparisons(compared)
    out, k = [], 0
    for d in diffs:
        if d.comparison is None:
            out.append(d)
        else:
            out.append(MetricDiff(d.name, adjusted[k], d.pairs))
            k += 1
    return out, statement


def summary_lines(result: RescoreResult) -> list[str]:
    """What the rescore found, in a few lines (the command prints them)."""
    lines = [
        f"rescore of '{result.source}' as '{result.experiment}': {'; '.join(result.change.lines())}"
    ]
    items = result.items
    counts = {
        s: sum(i.status == s for i in items)
        for s in ("unchanged", "changed", "forked", "copied", "failed")
    }
    if result.change.metric:
        lines.append(f"episodes: {counts['copied']} scored under the new options")
    else:
        moves, flipped = result.moves, result.flipped
        share = f" ({flipped / moves:.1%})" if moves else ""
        unread = sum(r.unread for r in result.readings())
        lines.append(
            f"moves: {moves} LLM moves read again, {flipped} flipped{share}"
            + (f", {unread} not comparable (asked what the record never asked)" if unread else "")
        )
        changed = result.changed
        where = sorted(
            {i.reading.changed_at for i in changed if i.reading and i.reading.changed_at}
        )
        lines.append(
            f"episodes: {len(items)} read, {counts['unchanged']} unchanged, {len(changed)} changed"
            + (f" (at move {', '.join(str(t) for t in where)})" if where else "")
            + f": {counts['changed']} stored cut, {counts['forked']} played on"
            + (f", {counts['failed']} failed to play on" if counts["failed"] else "")
        )
    if result.fork is not None:
        f = result.fork
        paid = f.calls - f.cached_calls - f.failed_calls
        lines.append(
            f"fork: {f.finished} episodes played on, {f.calls} model calls ({f.cached_calls} "
            f"from the record or the cache, {paid} paid, {f.failed_calls} failed), "
            f"{f.tokens:,} tokens, ${f.cost_usd:.4f}"
        )
        if f.stopped:
            lines.append(f"stopped: {f.stopped}")
    for reason, ids in result.skipped.items():
        lines.append(f"left out: {len(ids)} episodes: {reason}")
    return lines


def metric_lines(diffs: Sequence[MetricDiff], statement: str, cut: int) -> list[str]:
    """The metric table as text lines."""
    if not diffs:
        return ["metrics: none to compare"]
    head = "metrics (new minus old, paired by source episode"
    head += f"; {cut} changed episodes not played on left out):" if cut else "):"
    shown = [d for d in diffs if not d.unchanged]
    width = max((len(d.name) for d in shown), default=0)
    lines = [head]
    for d in shown:
        text = "no pair" if d.comparison is None else _text(d.comparison)
        lines.append(f"  {d.name:<{width}}  {text}")
    if statement:
        lines.append(f"  {statement}")
    same = [d.name for d in diffs if d.unchanged]
    if same:
        lines.append(f"  the same in every pair ({len(same)}): {', '.join(same)}")
    return lines


def _text(c: Comparison) -> str:
    return f"{_mean(c.mean_a)} -> {_mean(c.mean_b)}: {c.text(3)}"


def _mean(value: float | None) -> str:
    return "-" if value is None else f"{value:.3g}"


def markdown(result: RescoreResult, diffs: Sequence[MetricDiff], statement: str, cut: int) -> str:
    """The report as a Markdown file: the summary, every flip, the metric table."""
    out = [f"# Rescore of `{result.source}`", ""]
    out += [f"- {_cell(line)}" for line in summary_lines(result)]
    flips = [
        (item, flip)
        for item in result.items
        if item.reading is not None
        for flip in item.reading.flips
    ]
    if flips:
        out += ["", "## Moves read differently", ""]
        out += [f"- `{i.source.id}` ({_cell(i.source.game)}): {_cell(f.text())}" for i, f in flips]
    out += ["", "## Metrics", ""]
    if not diffs:
        out.append("No metric to compare.")
    else:
        out += [
            "New minus old, paired by source episode (paired t interval, 95%)"
            + (f"; {cut} episodes cut at a changed move are left out." if cut else "."),
            "",
            "| metric | old | new | difference [95% CI] | p | pairs |",
            "|---|---|---|---|---|---|",
        ]
        for d in diffs:
            if d.unchanged:
                continue
            c = d.comparison
            if c is None:
                out.append(f"| {_cell(d.name)} | - | - | no pair | - | 0 |")
                continue
            ci = "" if c.ci_low is None else f" [{c.ci_low:.3g}, {c.ci_high:.3g}]"
            p = "-" if c.p is None else f"{c.p:.2g}"
            if c.p_adjusted is not None:
                p += f" ({c.adjustment} {c.p_adjusted:.2g})"
            means = f"{_mean(c.mean_a)} | {_mean(c.mean_b)}"
            out.append(f"| {_cell(d.name)} | {means} | {c.estimate:+.3g}{ci} | {p} | {c.n} |")
        if statement:
            out += ["", statement]
        same = [_cell(d.name) for d in diffs if d.unchanged]
        if same:
            out += ["", f"The same in every pair ({len(same)}): {', '.join(same)}."]
    return "\n".join(out) + "\n"


def _cell(text: str) -> str:
    """Text in a Markdown table cell or list item: no markup, no table break."""
    escaped = text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")
    for ch in "`*_[]<":
        escaped = escaped.replace(ch, "\\" + ch)
    return escaped
