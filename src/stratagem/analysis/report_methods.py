"""The report's methods section, for any game: what was played, by whom, how, and what failed.

Seats are described from the episodes' player descriptors (an LLM, a rule-based strategy, a
scripted or human player), never assumed to be "an LLM against a rule-based opponent"; matrix
games get their payoff cards, other games their catalog description.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from stratagem.analysis.report_data import KIND_NAMES, ReportData, listing, ordered
from stratagem.analysis.report_invalid import invalid_blocks
from stratagem.analysis.report_views import (
    Block,
    CellView,
    Definitions,
    GameCards,
    GameView,
    Heading,
    Paragraph,
    Section,
    TableView,
    is_number,
    make_table,
)
from stratagem.errors import StratagemError
from stratagem.games.catalog import GAMES, split_setting
from stratagem.llm.pricing import CacheUse

ARCHITECTURE_NAMES: dict[str, str] = {
    "plain": "Plain LLM",
    "tool": "Tool-based",
    "debate": "Debate-based",
}
"""Readable names of stratagem's agent architectures."""

UNUSED_SETTINGS: dict[str, set[str]] = {
    "plain": {"max_tool_calls", "max_turns", "memory"},
    "tool": {"max_turns"},
    "debate": {"max_tool_calls"},
}
"""Agent settings an architecture ignores, left out of the agents table."""
FRAMED = frozenset({"plain", "tool", "debate"})
"""The architectures that take a framing, an output format and a history mode (the thesis' and
seed-003's prompts); the others' rows show a dash there."""
FRAMING_SETTINGS = frozenset({"framing", "output", "history"})
UNFRAMED_UNUSED = frozenset({"max_tool_calls", "max_turns", "memory", "prompting", "questions"})

GLOSSARY: tuple[tuple[str, str], ...] = (
    (
        "Invalid output",
        "A reply from which no legal action could be read, even after the allowed re-asks. The "
        "move is then forfeited (recorded as no move) or a default move is played, as the "
        "agent's settings say, and it is always counted as invalid.",
    ),
    (
        "Score",
        "A seat's total payoff over the game (the sum of its payoffs per round in a repeated "
        "game), as the game's rules define payoffs.",
    ),
)
"""The general metrics in words; each study adds its own in its section."""


def methods_section(data: ReportData) -> Section:
    section = Section("methods", "Methods")
    section.blocks.append(Paragraph(_how_played(data)))
    section.blocks.append(Definitions(tuple(settings(data)), compact=True))
    seats = seats_table(data)
    if seats is not None:
        section.blocks.append(seats)
    agents = agents_table(data)
    if agents is not None:
        section.blocks.append(agents)
    cards = game_cards(data)
    if cards is not None:
        section.blocks.append(Heading("Games"))
        if any(view.matrix is not None for view in cards.games):
            section.blocks.append(
                Paragraph(
                    "Each matrix game's payoffs per round: seat 0 chooses a row, seat 1 a column, "
                    "and the cell gives (seat 0's payoff, seat 1's payoff). A higher payoff is "
                    "better."
                )
            )
        section.blocks.append(cards)
    section.blocks.extend(counts_tables(data))
    section.blocks.extend(invalid_blocks(data))
    section.blocks.extend(failures(data))
    section.blocks.append(Heading("What the general metrics mean"))
    section.blocks.append(Definitions(GLOSSARY))
    return section


def _how_played(data: ReportData) -> str:
    matrix = [e for e in data.episodes if e.rounds and e.stage is not None]
    other = len(data.episodes) - len(matrix)
    parts = []
    if matrix or not data.episodes:
        two = all(len(e.seats) == 2 for e in matrix)
        who = "both players" if two else "the players"
        parts.append(
            f"A repeated matrix game is played round by round: {who} choose their actions at the "
            "same time every round, and every seat sees the history of earlier rounds."
        )
    if other:
        parts.append(
            "The other games are played as their rules say: whoever the game names acts "
            "(several seats at once, or in turn), and each seat sees only what the game shows "
            "it; their moves are stored as events."
        )
    parts.append(
        "The settings below come from the stored experiment; every number in this report is "
        "computed from the stored games."
    )
    return " ".join(parts)


def settings(data: ReportData) -> list[tuple[str, str]]:
    config = data.config
    seeds = config.get("seeds")
    if not isinstance(seeds, list):
        seeds = ordered(e.record.seed for e in data.episodes if e.record.seed is not None)
    repetitions = config.get("repetitions")
    if not is_number(repetitions):
        reps = [e.spec.get("repetition") for e in data.episodes]
        known = [int(r) for r in reps if isinstance(r, int | float)]
        repetitions = max(known) + 1 if known else 1
    models = data.models()
    items = [
        ("Source", data.source()),
        ("Models", listing(models) if models else "none (no LLM seat)"),
        ("Games", listing(data.games())),
    ]
    counts = data.seat_counts()
    if counts and counts != [2]:
        items.append(("Seats per game", listing(counts)))
    if data.opponents():
        items.append(("Opponents (seat 1)", opponents_text(data)))
    items += [
        ("Rounds per game", listing(data.rounds())),
        ("Seeds", listing(seeds) if seeds else "none recorded (each setting was played once)"),
        ("Repetitions per seed", str(repetitions)),
    ]
    budget = config.get("budget")
    if isinstance(budget, Mapping) and any(v is not None for v in budget.values()):
        caps = [f"{k.replace('_', ' ')} {v}" for k, v in budget.items() if v is not None]
        items.append(("Budget", listing(caps)))
    return items


def opponents_text(data: ReportData) -> str:
    from stratagem.strategies.registry import get_strategy

    parts = []
    for name, kind in data.opponents().items():
        if kind != "strategy":
            parts.append(f"{name} ({KIND_NAMES.get(kind, kind)} player)")
            continue
        try:
            doc = (type(get_strategy(name)).__doc__ or "").strip().splitlines()[0]
        except (StratagemError, IndexError):
            doc = ""
        doc = re.sub(r"\s*\((?:seed|axelrod)[^)]*\)", "", doc).rstrip(". ")
        parts.append(f"{name} ({doc.lower()})" if doc else name)
    return "; ".join(parts) if parts else "–"


def seats_table(data: ReportData) -> TableView | None:
    """Who sat where, per game: the kinds and players of each seat."""
    players: dict[tuple[str, int], dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for e in data.episodes:
        for p, seat in enumerate(e.seats):
            names = players[(e.record.game, p)][seat.kind]
            label = seat.model or seat.name if seat.kind == "llm" else seat.name
            if label not in names:
                names.append(label)
    if not players:
        return None
    rows = []
    for (game, p), kinds in players.items():
        for kind, names in kinds.items():
            shown = names if len(names) <= 8 else [*names[:8], f"and {len(names) - 8} more"]
            rows.append((game, p, KIND_NAMES.get(kind, kind), listing(shown)))
    return make_table(
        "Seats",
        "Who sat in each seat of each game, by kind (an LLM seat by its model, any other by its "
        "name), as the episodes' player records say.",
        ("Game", "Seat", "Kind", "Players"),
        rows,
    )


def agents_table(data: ReportData) -> TableView | None:
    groups: dict[str, dict[str, Any]] = {}
    attitudes: dict[str, list[str]] = defaultdict(list)
    for e in data.episodes:
        if not e.llm_first or not (e.agent or e.agent_name):
            continue
        agent = dict(e.agent) or {"name": e.agent_name, "kind": None}
        attitude = agent.pop("attitude", None)
        key = repr(sorted(agent.items()))
        groups.setdefault(key, agent)
        if attitude not in (None, "") and str(attitude) not in attitudes[key]:
            attitudes[key].append(str(attitude))
    if not groups:
        return None
    shown = ("name", "kind", "framing", "output", "history", "invalid", "max_reasks")
    rows = []
    for key, agent in groups.items():
        recorded = "kind" not in agent or agent["kind"] is not None
        kind = str(agent.get("kind") or "plain")
        invalid = agent.get("invalid")
        unused = UNUSED_SETTINGS.get(kind, set())
        others = {
            k: v for k, v in agent.items() if k not in shown and k not in unused and v is not None
        }
        if kind in ("tool", "debate"):  # they always answer in the thesis' JSON (runner)
            agent = {**agent, "output": "json", "history": "prompt"}
        if kind not in FRAMED:  # the studies' own architectures bring their own prompts
            agent = {k: v for k, v in agent.items() if k not in FRAMING_SETTINGS}
            others = {k: v for k, v in others.items() if k not in UNFRAMED_UNUSED}
        arch = ARCHITECTURE_NAMES.get(kind)
        rows.append(
            (
                str(agent.get("name") or kind),
                (f"{kind} ({arch})" if arch else kind) if recorded else "not recorded",
                agent.get("framing") or "–",
                agent.get("output") or "–",
                agent.get("history") or "–",
                listing(attitudes[key]) if attitudes[key] else "none",
                (
                    f"{invalid}, up to {agent['max_reasks']} re-asks"
                    if invalid and is_number(agent.get("max_reasks"))
                    else invalid or "–"
                ),
                ", ".join(f"{k}={v}" for k, v in sorted(others.items())) or "–",
            )
        )
    return make_table(
        "Agents",
        "Each LLM agent configuration of seat 0: its architecture, how the game is framed in "
        "the prompt, the output format it must answer in, how the history is given, the "
        "attitude suggested to it, and what happens to an invalid reply (imported episodes "
        "record the agent's name only).",
        (
            "Agent", "Architecture", "Framing", "Output format", "History", "Attitude",
            "Invalid replies", "Other settings",
        ),
        rows,
        fold=False,
    )  # fmt: skip


def _short(value: Any) -> str:
    return f"{float(value):g}"


def game_cards(data: ReportData) -> GameCards | None:
    views = []
    seen: set[str] = set()
    for e in data.episodes:
        name = e.record.game
        if name in seen:
            continue
        seen.add(name)
        entry = GAMES.get(name) or GAMES.get(split_setting(name)[0])  # `tradecraft/3`: its game
        stage = e.stage
        description = entry.description if entry is not None else ""
        if not description and stage is not None:
            description = stage.description()
        matrix = None
        if stage is not None and stage.n_players == 2:
            labels, table = stage.labels, stage.table
            rows = [
                (
                    a,
                    *(
                        f"{_short(table[i][j][0])}, {_short(table[i][j][1])}"
                        for j in range(len(labels[1]))
                    ),
                )
                for i, a in enumerate(labels[0])
            ]
            matrix = make_table("", "", ("seat 0 \\ seat 1", *labels[1]), rows, fold=False)
        views.append(GameView(name, description, matrix))
    if not views:
        return None
    return GameCards(tuple(views))


def counts_tables(data: ReportData) -> list[Block]:
    counts = data.status_counts
    calls = data.call_totals
    episodes = make_table(
        "Episodes",
        "How many games finished, failed, or were still running or waiting when the report "
        "was made; only finished games enter the results.",
        ("", "Finished", "Failed", "Running", "Pending"),
        [("Episodes", *(counts.get(s, 0) for s in ("finished", "failed", "running", "pending")))],
        fold=False,
    )
    calls_table = make_table(
        "Model calls",
        "Every request sent to a model, re-asks after invalid replies and comprehension "
        "questions included; calls from cache were answered by the response cache (a resumed "
        "run replays them for free), failed calls got no usable response.",
        ("", "Calls", "From cache", "Failed", "Tokens", "Cost (USD)"),
        [
            (
                "Model calls",
                int(calls["calls"]),
                int(calls["cached"]),
                int(calls["errors"]),
                int(calls["tokens"]),
                CellView(f"${float(calls['cost_usd']):.4f}", "num"),
            )
        ],
        note=_cache_note(calls) or ("" if calls["calls"] else NO_CALLS),
        fold=False,
    )
    return [episodes, calls_table]


NO_CALLS = "No model calls are stored for this experiment."


def _cache_note(calls: Mapping[str, Any]) -> str:
    """What the provider's prompt cache did for the paid calls, when it did anything: the cost
    above is what was billed, each part of the input at its own rate (`llm.pricing`)."""
    cache = CacheUse.from_totals(calls)
    if not cache.summary():
        return ""
    written = (
        f" and wrote {cache.written_tokens / cache.input_tokens:.0%} of it (billed above the "
        "input rate)"
        if cache.written_tokens and cache.input_tokens
        else ""
    )
    effect = (
        f"saved ${cache.saved_usd:.4f}"
        if cache.saved_usd >= 0
        else f"cost ${-cache.saved_usd:.4f} more"
    )
    return (
        f"The provider's prompt cache read {cache.share:.0%} of the {cache.input_tokens:,} input "
        f"tokens paid for (billed at the cached-input rate){written}; against every input token "
        f"at the full rate, it {effect}. The cost is what was billed."
    )


def failures(data: ReportData) -> list[Block]:
    if not data.status_counts.get("failed"):
        return []
    failed = data.store.episodes(data.experiment.id, status="failed")
    reasons: dict[str, int] = defaultdict(int)
    for e in failed:
        reasons[str(e.error or "no reason stored")] += 1
    rows = sorted(reasons.items(), key=lambda item: -item[1])[:8]
    return [
        make_table(
            "Failed episodes",
            "Episodes that stopped with an error; they are left out of every table and "
            "plot below, and a re-run of the experiment retries them.",
            ("Reason", "Episodes"),
            rows,
            fold=False,
        )
    ]
