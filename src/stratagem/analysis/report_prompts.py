"""The report's prompt-variant section: each model's metrics under each variant of the prompts.

A model's number under one wording is not its number (issue 35): where an experiment played
several prompt variants (`prompts:`), the section shows, per metric, a two-way table variant x
model with an interval in every cell, and beside each model's headline number (its value under
the `base` variant, or the first variant played) the spread of that metric across the
variants: the range and the standard deviation of the variants' values. The spread is shown
beside the headline, never averaged into it.

What is measured: seat 0, where an LLM plays it, in episodes with rounds. Score is its total
payoff per episode (mean over episodes); cooperation its share of valid moves that were the
game's first action, pooled over the episodes' moves (as `analysis.cells`). A model's value
pools its settings (agent, game, opponent, rounds); the interval is a percentile bootstrap
over episodes, resampled within each setting so that every resample keeps the design
(`analysis.bootstrap`; 2,000 replicates, seed 0, 95%).
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from stratagem.analysis.bootstrap import percentile_interval, resampled_sums
from stratagem.analysis.cells import episode_tally
from stratagem.analysis.episodes import EpisodeData
from stratagem.analysis.report_data import ReportData, plural
from stratagem.analysis.report_views import (
    CellView,
    Note,
    Paragraph,
    Section,
    TableView,
    make_table,
)
from stratagem.experiments.prompt_entry import BASE, variant_of

N_BOOT = 2000
LEVEL = 0.95
SEED = 0

METRICS = (("score", "Score"), ("cooperation", "Cooperation"))
"""(metric, its column name): what the section reports."""


@dataclass(frozen=True)
class Estimate:
    """A metric of one model under one variant, with its bootstrap interval."""

    value: float | None
    low: float | None
    high: float | None
    episodes: int


def prompts_section(data: ReportData) -> list[Section]:
    """The section, or nothing when the episodes were played under fewer than two variants."""
    episodes = [e for e in data.with_rounds if e.seats and e.llm_first]
    variants = _variant_order(data, {variant_of(e.spec) for e in episodes})
    if len(variants) < 2:
        return []
    entities = _entities(episodes)
    groups: dict[tuple[str, str], list[EpisodeData]] = defaultdict(list)
    for e in episodes:
        groups[(variant_of(e.spec), entities[e.record.id])].append(e)
    who = list(dict.fromkeys(entities[e.record.id] for e in episodes))
    estimates = {key: estimate(group) for key, group in groups.items()}
    section = Section("prompts", "Prompt variants")
    section.blocks.append(
        Paragraph(
            f"These episodes were played under {plural(len(variants), 'prompt variant')} "
            f"({', '.join(variants)}); every LLM seat of an episode played under its variant. "
            "Each table shows a metric of seat 0 per variant and model, with a 95% bootstrap "
            "interval over episodes (resampled within each setting: agent, game, opponent, "
            "rounds), so the model x variant interaction can be read off it."
        )
    )
    for metric, title in METRICS:
        rows = [
            (variant, *(_cell(estimates.get((variant, w)), metric) for w in who))
            for variant in variants
        ]
        section.blocks.append(
            make_table(
                f"{title} by prompt variant and model",
                f"{title} of seat 0 under each prompt variant (rows) for each model (columns), "
                "with its 95% interval.",
                ("Variant", *who),
                rows,
                legend=_LEGEND[metric],
            )
        )
    section.blocks.append(_spread_table(variants, who, estimates))
    unequal = _unequal(variants, who, groups)
    if unequal:
        section.blocks.append(Note(unequal))
    return [section]


_LEGEND = {
    "score": "Score: seat 0's total payoff per episode, mean over episodes [95% interval].",
    "cooperation": "Cooperation: share of seat 0's valid moves that were the game's first "
    "(cooperative) action, pooled over the episodes' moves [95% interval]; a dash where the "
    "game has no cooperative action or no valid move was made.",
}


def estimate(episodes: Sequence[EpisodeData]) -> dict[str, Estimate]:
    """Score and cooperation of seat 0 over `episodes`, each with its stratified bootstrap
    interval (strata: the episodes' settings), both from the same resamples."""
    tallies = np.array(
        [
            (own, max(cooperative, 0), valid if cooperative >= 0 else 0)
            for own, _opp, cooperative, valid, _invalid in (episode_tally(e) for e in episodes)
        ],
        dtype=np.float64,
    )
    strata = [_setting(e) for e in episodes]
    n = len(episodes)
    sums = resampled_sums(tallies, strata, N_BOOT, SEED)
    with np.errstate(invalid="ignore", divide="ignore"):
        cooperation = np.where(sums[:, 2] > 0, sums[:, 1] / sums[:, 2], np.nan)
    valid = float(tallies[:, 2].sum())
    score = percentile_interval(sums[:, 0] / n, LEVEL)
    rate = percentile_interval(cooperation, LEVEL) if valid else (None, None)
    return {
        "score": Estimate(float(tallies[:, 0].mean()), *score, n),
        "cooperation": Estimate(float(tallies[:, 1].sum()) / valid if valid else None, *rate, n),
    }


def _setting(e: EpisodeData) -> tuple[str, str, str, object]:
    return (e.agent_name, e.record.game, e.opponent(), e.spec.get("rounds", len(e.rounds)))


def _entities(episodes: Sequence[EpisodeData]) -> dict[str, str]:
    """Each episode's model, with its agent where the episodes have several agents."""
    agents = {e.agent_name for e in episodes}
    if len(agents) < 2:
        return {e.record.id: e.model for e in episodes}
    return {e.record.id: f"{e.model} / {e.agent_name}" for e in episodes}


def _variant_order(data: ReportData, played: set[str]) -> list[str]:
    """`base` first, then the file's order; variants of an earlier file alphabetically last."""
    named = [p.get("name") for p in data.config.get("prompts") or [] if isinstance(p, dict)]
    order = [BASE, *(str(n) for n in named if n)]
    known = [v for v in dict.fromkeys(order) if v in played]
    return known + sorted(played - set(known))


def _cell(found: dict[str, Estimate] | None, metric: str) -> CellView | None:
    if found is None or found[metric].value is None:
        return None
    e = found[metric]
    interval = f" [{e.low:.2f}, {e.high:.2f}]" if e.low is not None and e.high is not None else ""
    return CellView(f"{e.value:.2f}{interval}", "num")


def _spread_table(
    variants: list[str], who: list[str], estimates: dict[tuple[str, str], dict[str, Estimate]]
) -> TableView:
    rows = []
    for w in who:
        for metric, title in METRICS:
            values = {
                v: value
                for v in variants
                if (found := estimates.get((v, w))) is not None
                and (value := found[metric].value) is not None
            }
            if not values:
                continue
            headline = next(iter(values))
            numbers = list(values.values())
            sd = statistics.stdev(numbers) if len(numbers) > 1 else None
            rows.append(
                (
                    w, title, _cell(estimates[(headline, w)], metric), headline, len(values),
                    min(numbers), max(numbers), max(numbers) - min(numbers), sd,
                )
            )  # fmt: skip
    return make_table(
        "Each model's headline number and its spread across prompt variants",
        "The headline is the model's value under the base prompts (or the first variant it "
        "played); beside it, not in it, how far the variants move it.",
        ("Model", "Metric", "Headline", "Under", "Variants", "Min", "Max", "Range", "SD"),
        rows,
        legend="Min, Max: the lowest and highest value over the variants the model played; "
        "Range: Max - Min; SD: the standard deviation of the variants' values (n - 1).",
    )


def _unequal(
    variants: list[str], who: list[str], groups: dict[tuple[str, str], list[EpisodeData]]
) -> str:
    """A warning where the variants of a model were not played the same number of times."""
    uneven = [w for w in who if len({len(groups.get((v, w), ())) for v in variants}) > 1]
    if not uneven:
        return ""
    return (
        f"Not every variant was played as often by {', '.join(uneven)} (an unfinished run?): "
        "their values pool different sets of settings, so compare them with care."
    )
