"""The report's headline and its results for any game: per-setting scores of seat 0 in matrix
games, and every seat's payoffs and invalid moves in any game."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from datetime import UTC, datetime
from statistics import fmean
from typing import Any

from stratagem.analysis import cells as cells_module
from stratagem.analysis.report_data import (
    KIND_NAMES,
    NO_GAMES,
    ReportData,
    listing,
    plural,
)
from stratagem.analysis.report_views import CellView, Note, Section, Stat, make_table
from stratagem.llm.pricing import CacheUse

LONG_RESULTS = 150
"""The per-setting results table, the report's main table, folds only above this many rows."""


def _date(stamp: str | None) -> str:
    if not stamp:
        return "–"
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return stamp
    return moment.strftime("%Y-%m-%d %H:%M UTC") if moment.tzinfo else moment.isoformat()


def header(data: ReportData) -> dict[str, Any]:
    counts = data.status_counts
    calls = data.call_totals
    decisions, invalid = data.invalid_totals()
    stats = [
        Stat("episodes finished", f"{counts.get('finished', 0):,}"),
        Stat("episodes failed", f"{counts.get('failed', 0):,}", counts.get("failed", 0) > 0),
        Stat("rounds recorded", f"{sum(len(e.rounds) for e in data.episodes):,}"),
        Stat("model calls", f"{calls['calls']:,}"),
        Stat(
            "invalid outputs",
            f"{invalid:,} of {decisions:,}" if decisions else "not recorded",
            invalid > 0,
        ),
        Stat("cost", f"${float(calls['cost_usd']):.4f}"),
    ]
    cache = CacheUse.from_totals(calls).summary()
    if cache:
        stats.append(Stat("prompt cache", cache))
    return {
        "title": data.experiment.name or data.experiment.id,
        "experiment_id": data.experiment.id,
        "created": _date(data.experiment.created_at),
        "generated": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "source": data.source(),
        "summary": summary_sentence(data),
        "stats": stats,
    }


def summary_sentence(data: ReportData) -> str:
    if not data.episodes:
        return "This experiment has no finished episodes yet, so there is nothing to report."
    models, games, rounds = data.models(), data.games(), data.rounds()
    agents = data.agents()
    who = (
        f"LLM agents ({plural(len(models), 'model')}: {listing(models)}; "
        f"{plural(len(agents), 'agent configuration')})"
        if models
        else "Players without a model"
    )
    what = (
        f"played {plural(len(data.episodes), 'finished game')} of {len(games)} game"
        f"{'s' * (len(games) != 1)} ({listing(games)})"
    )
    by_kind: dict[str, list[str]] = defaultdict(list)
    for name, kind in data.opponents().items():
        by_kind[kind].append(name)
    if by_kind:
        parts = [
            f"{KIND_NAMES.get(kind, kind)}: {listing(names)}" for kind, names in by_kind.items()
        ]
        n = sum(len(v) for v in by_kind.values())
        what += f" against {plural(n, 'opponent')} ({'; '.join(parts)})"
    counts = [n for n in data.seat_counts() if n != 2]
    if counts:
        what += f", in games of {listing(counts)} seats"
    sentence = f"{who} {what}, for {listing(rounds)} rounds."
    if not any(e.has_moves for e in data.episodes):
        sentence += (
            " The results were imported as per-game summaries (no round-by-round data), so "
            "only the analyses that need per-game metrics are possible."
        )
    return sentence


def results_section(
    data: ReportData, links: Mapping[cells_module.CellKey, tuple[str, ...]] | None = None
) -> Section:
    """The per-setting and per-seat tables; `links`: each setting's transcript anchors."""
    section = Section("cells", "Results per setting")
    if not data.episodes:
        section.blocks.append(Note(NO_GAMES))
        return section
    if data.with_rounds:
        section.blocks.append(_cells_table(data, links or {}))
    seats = _seat_table(data)
    if seats is not None:
        section.blocks.append(seats)
    if not section.blocks:
        section.blocks.append(
            Note(
                "No round-by-round data and no final payoffs, so scores and per-setting "
                "cooperation cannot be computed; the per-game metrics below come from the "
                "imported summaries."
            )
        )
    return section


def _transcript_cell(anchors: tuple[str, ...]) -> CellView | None:
    if not anchors:
        return None
    numbers = tuple(a.rsplit("-", 1)[-1] for a in anchors)
    return CellView(" ".join(numbers), links=tuple(zip(numbers, anchors, strict=True)))


def _cells_table(data: ReportData, links: Mapping[cells_module.CellKey, tuple[str, ...]]) -> Any:
    table = cells_module.cells_of(data.with_rounds)
    rows = [
        (
            c.model, c.agent, c.game, c.opponent, c.rounds, c.episodes, c.score,
            c.opponent_score,
            # No valid move at all: the cooperation rate is undefined, not 0.
            c.cooperation,
            _invalid_cell(c.llm_invalid_rate),
            _transcript_cell(links.get(c.key, ())),
        )
        for c in table
    ]  # fmt: skip
    return make_table(
        "Score, cooperation and invalid outputs per setting",
        "One row per combination of model, agent, game, opponent and number of rounds, "
        "averaged over its episodes (seeds and repetitions).",
        (
            "Model", "Agent", "Game", "Opponent", "Rounds", "Episodes", "Score",
            "Opp. score", "Cooperation", "LLM invalid rate", "Transcripts",
        ),
        rows,
        legend="Score: seat 0's total payoff per game (its opponents' mean in Opp. score). "
        "Cooperation: share of seat 0's valid moves that were the game's first "
        "(cooperative) action, a dash when it made none. LLM invalid rate: share of the "
        "moves of every LLM seat (in any seat, not only seat 0) that were invalid, a dash "
        "when no seat is an LLM. Transcripts: sampled episodes of the setting, in the "
        "Transcripts section.",
        fold=len(rows) > LONG_RESULTS,
    )  # fmt: skip


def _invalid_cell(rate: float | None) -> CellView:
    """A cell's `llm_invalid_rate`, flagged when above 0; a dash without an LLM seat."""
    if rate is None:
        return CellView("-", "num")
    return CellView(f"{rate:.2f}", "num warn" if rate > 0 else "num")


def _seat_table(data: ReportData) -> Any:
    """Every seat's mean final payoff and invalid rate, per game: defined for any game. Shown
    where the per-setting table does not cover the episodes (no rounds, or more than 2 seats)."""
    shown = [
        e
        for e in data.episodes
        if e.record.payoffs is not None and (not e.rounds or len(e.seats) != 2)
    ]
    if not shown:
        return None
    groups: dict[tuple[str, int, str, str], list[tuple[float, int, int]]] = defaultdict(list)
    for e in shown:
        payoffs = e.record.payoffs or ()
        for p, seat in enumerate(e.seats):
            who = seat.model or seat.name if seat.kind == "llm" else seat.name
            decisions, invalid = e.decisions(p)
            value = float(payoffs[p]) if p < len(payoffs) else float("nan")
            groups[(e.record.game, p, seat.kind, who)].append((value, decisions, invalid))
    rows = []
    for (game, p, kind, who), values in groups.items():
        decisions = sum(v[1] for v in values)
        invalid = sum(v[2] for v in values)
        rate = invalid / decisions if decisions else None
        rows.append(
            (
                game, p, KIND_NAMES.get(kind, kind), who, len(values),
                fmean(v[0] for v in values), decisions,
                None if rate is None else CellView(f"{rate:.2f}", "num warn" if rate else "num"),
            )
        )  # fmt: skip
    return make_table(
        "Payoff and invalid moves per seat",
        "For every game and seat: who sat there, over how many episodes, the seat's mean final "
        "payoff, how many decisions it made and the share of them that were invalid.",
        ("Game", "Seat", "Kind", "Player", "Episodes", "Mean payoff", "Decisions", "Invalid rate"),
        rows,
        fold=len(rows) > LONG_RESULTS,
    )
