"""The plan's comparisons section in words: what each comparison can detect (`analysis.plan_power`
computes it), printed by `stratagem run --dry-run` and `stratagem plan`."""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Sequence

from stratagem.analysis.plan_power import CLUSTER_BY, PILOT, CellPlan, ComparisonPlan
from stratagem.analysis.power import ALPHA, POWER
from stratagem.experiments.compare_entry import METRICS

CLUSTERED = (
    f"  clustered pairs: where a {CLUSTER_BY} holds several pairs they share its chance moves, "
    f"so the test is the cluster-robust t over the {CLUSTER_BY}s ({CLUSTER_BY}s - 1 degrees of "
    f"freedom) and the MDE rests on their number and on the sd of a {CLUSTER_BY}'s mean "
    "difference, sd² (1 + (m - 1) ICC) / m for m pairs per seed (the design effect; ICC the "
    "intra-cluster correlation)"
)


def plan_lines(
    plans: Sequence[ComparisonPlan],
    *,
    alpha: float = ALPHA,
    power: float = POWER,
    delta: float | None = None,
    each: bool = False,
) -> list[str]:
    """The plan's comparisons section: a heading, each metric's meaning, then per comparison
    one line per number of pairs (its cell pairs summarised), or with `each` one line per cell
    pair; no line without comparisons."""
    if not plans:
        return []
    out = [
        f"comparisons: B - A by a paired t at α = {alpha:g} (two-sided) with power {power:.0%}; "
        "MDE = the smallest difference it detects (docs/statistics.md)"
    ]
    metrics = dict.fromkeys(plan.comparison.entry.metric for plan in plans)
    out += [f"  {metric} = {METRICS[metric]}" for metric in metrics]
    if any(c.clusters for plan in plans for c in plan.cells):
        out.append(CLUSTERED)
    if plans[0].replicates:
        out.append(_noise_line(plans[0].replicates))
    for plan in plans:
        entry = plan.comparison.entry
        what = f"{entry.title()} ({entry.metric})"
        if not plan.cells:
            out.append(f"  {what}: no cells of this grid to compare")
            continue
        kept = _and(entry.kept()) or "nothing"
        out.append(f"  {what}: {_n(len(plan.cells), 'cell pair')} alike in {kept}, paired by "
                   f"{_and(plan.comparison.paired_by)}")  # fmt: skip
        if each:
            out += [f"    {c.cells.label()}: {_cell_line(c, delta)}" for c in plan.cells]
            continue
        groups: dict[tuple[int, int], list[CellPlan]] = {}
        for c in plan.cells:
            groups.setdefault((c.n, len(c.clusters)), []).append(c)
        for _, group in sorted(groups.items(), reverse=True):
            out.append(f"    {_n(len(group), 'cell pair')} of {_pairs(group[0])}: "
                       f"{_group_line(group, delta)}")  # fmt: skip
    return out


def _noise_line(replicates: int) -> str:
    """The line saying what the grid's replicate cells are for (`analysis.noise_floor`)."""
    copies = "a null copy" if replicates == 1 else f"{replicates} null copies"
    return (
        f"  noise floor: every cell also plays {copies} (replicates: {replicates}), so each "
        "comparison will be shown beside the difference between two identical cells"
    )


def _and(words: Sequence[str]) -> str:
    """'model, agent and rounds'."""
    return " and ".join(filter(None, [", ".join(words[:-1]), *words[-1:]]))


def _n(count: int, noun: str) -> str:
    return f"{count:,} {noun}" if count == 1 else f"{count:,} {noun}s"


def _pairs(c: CellPlan) -> str:
    """'6 pairs', '6 pairs in 3 seeds'."""
    clustered = f" in {_n(len(c.clusters), CLUSTER_BY)}" if c.clusters else ""
    return _n(c.n, "pair") + clustered


def _beyond(c: CellPlan) -> str:
    """A note when the MDE exceeds every difference the metric allows."""
    mde = c.detectable.mde if c.detectable is not None else None
    if mde is None or c.limit is None or mde <= c.limit:
        return ""
    return f" > {c.limit:g}, the largest possible difference"


def _sd_name(c: CellPlan) -> str:
    return f"{CLUSTER_BY}-mean sd" if c.clusters else "sd"


def _cell_line(c: CellPlan, delta: float | None) -> str:
    mde = c.detectable.mde if c.detectable is not None else None
    if c.n < 2:
        return f"{_n(c.n, 'pair')}: MDE undefined (at least 2 pairs per cell are needed)"
    if mde is None or c.sd is None:
        return f"{_pairs(c)}: MDE unknown ({c.why})"
    icc = f", {c.icc}" if c.icc else ""
    text = f"{_pairs(c)}: MDE {mde:.2f}{_beyond(c)} ({_sd_name(c)} {c.sd:.2f} {c.why}{icc})"
    if c.needed is not None and delta is not None:
        text += f"; a difference of {delta:g} needs {_needs(c)} per cell"
    return text


def _needs(c: CellPlan) -> str:
    """'395 pairs', '52 seeds (104 pairs)'."""
    assert c.needed is not None
    unit = CLUSTER_BY if c.clusters else "pair"
    if c.needed.n is None:
        return f"more than 10^9 {unit}s"
    text = _n(c.needed.n, unit)
    return f"{text} ({_n(c.pairs_needed() or 0, 'pair')})" if c.clusters else text


def _needed(c: CellPlan) -> float:
    """The units a difference needs, infinite past what `analysis.power` answers."""
    return math.inf if c.needed is None or c.needed.n is None else c.needed.n


def _span(values: Sequence[float]) -> str:
    low, high = min(values), max(values)
    if math.isclose(low, high, rel_tol=1e-9, abs_tol=1e-12):
        return f"{low:.2f}"
    return f"{low:.2f} to {high:.2f}, median {statistics.median(values):.2f}"


def _group_line(group: Sequence[CellPlan], delta: float | None) -> str:
    known = [c for c in group if c.detectable is not None and c.detectable.mde is not None]
    if group[0].n < 2:
        return "MDE undefined (at least 2 pairs per cell are needed)"
    if not known:
        return f"MDE unknown ({group[0].why})"
    mdes = [c.detectable.mde for c in known if c.detectable and c.detectable.mde is not None]
    sds = [c.sd for c in known if c.sd is not None]
    sources = Counter(c.source for c in known)
    name = _sd_name(known[0])
    if len(sources) == 1:
        source = next(iter(sources))
        why = f"from pilot: {sum(c.pilot_pairs for c in known)} pairs" if source == PILOT else (
            known[0].why
        )  # fmt: skip
        spread = _span(sds)
        where = f"{name} {spread}{',' if ' to ' in spread else ''} {why}"
    else:
        where = f"{name} {_span(sds)}; " + ", ".join(
            f"{count} cell pairs' {source}" for source, count in sources.most_common()
        )
    iccs = list(dict.fromkeys(c.icc for c in known if c.icc))
    if iccs:
        where += f", {iccs[0]}" if len(iccs) == 1 else ", ICC per cell pair (--each)"
    text = f"MDE {_span(mdes)}"
    if all(_beyond(c) for c in known):
        text += _beyond(known[0])
    text += f" ({where})"
    if len(known) < len(group):
        text += (
            f"; {len(group) - len(known)} unknown ({next(c.why for c in group if c not in known)})"
        )
    if delta is not None:
        needs = {_needed(c): c for c in known if c.needed is not None}
        most = needs[max(needs)]
        upto = "up to " if len(needs) > 1 else ""
        text += f"; a difference of {delta:g} needs {upto}{_needs(most)} per cell"
    return text


__all__ = ["plan_lines"]
