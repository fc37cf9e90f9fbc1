"""The report's invalid-output table: per model and agent, every deciding seat counted.

Invalid is `analysis.invalid`'s one definition (a forfeited move, or an `invalid` event), so this
table, the headline and the per-setting table agree.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from typing import Any

from stratagem.analysis.invalid import INVALID_EVENT
from stratagem.analysis.report_data import ReportData
from stratagem.analysis.report_views import Block, CellView, Note, make_table


def _last_reply(data: Any) -> str:
    """The model's last reply in an invalid decision, shortened, for the invalid-output table."""
    texts = data.get("texts") if isinstance(data, Mapping) else None
    if not isinstance(texts, list) or not texts:
        return "(not stored)"
    text = " ".join(str(texts[-1]).split())
    if not text:
        return "(empty reply)"
    return f"“{text[:70]}…”" if len(text) > 70 else f"“{text}”"


def invalid_blocks(data: ReportData) -> list[Block]:
    if not data.episodes:
        return []
    if not any(e.has_moves for e in data.episodes):
        return [
            Note(
                "Invalid outputs: not available — the games were stored as per-game "
                "summaries without rounds, so invalid replies were not recorded."
            )
        ]
    groups: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    handling: dict[tuple[str, str], str] = {}
    replies: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for e in data.episodes:
        for p, seat in enumerate(e.seats):
            if seat.kind == "strategy":
                continue
            key = (
                e.model if p == 0 else seat.model or seat.name,
                e.agent_name if p == 0 else seat.agent,
            )
            decisions, invalid = e.decisions(p)
            if not decisions:
                continue
            groups[key][0] += decisions
            groups[key][1] += invalid
            groups[key][2] += sum(1 for r in e.rounds if r.actions[p] is None)
            handling.setdefault(key, str(e.agent.get("invalid") or "–") if p == 0 else "–")
            for ev in e.events:
                if ev.kind == INVALID_EVENT and ev.player == p:
                    replies[key][_last_reply(ev.data)] += 1
    if not groups:
        return [Note("Invalid outputs: no LLM or other deciding player in this experiment.")]
    rows = []
    for key in sorted(groups):
        decisions, invalid, missing = groups[key]
        rate = invalid / decisions if decisions else 0.0
        common = replies[key].most_common(1)
        example = common[0][0] if common else "–"
        rows.append(
            (
                *key,
                decisions,
                CellView(f"{invalid:,}", "num warn" if invalid else "num"),
                CellView(f"{rate:.2f}", "num warn" if invalid else "num"),
                missing,
                handling[key],
                example,
            )
        )
    return [
        make_table(
            "Invalid outputs per model and agent",
            "Decisions are the moves each LLM (or other deciding) seat made; a decision is "
            "invalid when no legal action could be read from the reply even after the allowed "
            "re-asks, whether the move was then forfeited or a default played (finished games "
            "only).",
            (
                "Model", "Agent", "Decisions", "Invalid", "Invalid rate", "Forfeited moves",
                "Handling", "Typical invalid reply",
            ),
            rows,
            legend="Forfeited moves: rounds in which the seat made no move at all (handling "
            "“forfeit”, or a reply an imported log records as no move); with "
            "“default:<action>” the default action was played instead.",
        )
    ]  # fmt: skip
