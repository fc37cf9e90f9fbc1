"""Per-cell summary of an experiment: score, cooperation and invalid rates of one seat.

A cell is one combination of the grid (model, agent, game, opponent, rounds); its episodes (seeds,
repetitions) are averaged. An episode of a line-up (the spec's `seats`, any game) is described by
its seats: seat 0's model (or its name, for a scripted or rule-based seat), its agent (or kind),
the other seats, and "-" for rounds when the game has none. Invalid moves are shown, never
hidden: the cooperation rate is over the seat's valid moves and the invalid rate over all its
moves (`analysis.invalid` defines invalid). The cooperative action is the first action of the
episode's resolved stage game (`analysis.games`), so an imported episode that names its game only
is read like any other. Episodes of a prompt variant other than `base` (the file's `prompts:`)
are cells of their own: their agent reads `<agent> [<variant>]`, in every table that shows cells;
so are a cell's replicates (the file's `replicates:`), `<agent> [replicate 1]`, so that a null
copy never enters its cell's means (`analysis.noise_floor` compares the two).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import mean

from stratagem.analysis.episodes import EpisodeData, load_episodes
from stratagem.experiments.prompt_entry import BASE, variant_of
from stratagem.experiments.replicates import replicate_of, replicated
from stratagem.experiments.store import ResultStore

LLM_KIND = "llm"
"""The kind of a seat an LLM plays (a player descriptor's `kind`)."""
NO_ROUNDS = "-"
"""The rounds of a cell whose game is not played in rounds (an Ultimatum offer and its answer)."""

CellKey = tuple[str, str, str, str, int | str]
"""(model, agent, game, opponent, rounds): what makes two episodes the same setting."""


@dataclass(frozen=True)
class Cell:
    model: str
    agent: str
    game: str
    opponent: str
    rounds: int | str
    """The number of rounds, or `NO_ROUNDS`."""
    episodes: int
    score: float
    """Mean total payoff of the seat per episode."""
    opponent_score: float
    cooperation: float | None
    """Share of the seat's valid moves that were the first (cooperative) action; None if it made
    no valid move or the game is not a resolved matrix game."""
    invalid_rate: float
    """Share of the seat's moves that were invalid."""
    llm_invalid_rate: float | None = None
    """Share of the moves of every LLM seat (any seat, not only `player`) that were invalid;
    None when no seat of the cell is an LLM: what `stratagem status` shows, so a rule-based
    seat 0 never hides its LLM opponent's invalid replies."""
    prompt: str = BASE
    """The prompt variant its LLM seats played under (`variant_of`)."""
    replicate: int = 0
    """0 for a cell's own episodes, k for its k-th null copy (`replicate_of`)."""

    @property
    def key(self) -> CellKey:
        return (self.model, self.agent, self.game, self.opponent, self.rounds)


def cell_table(store: ResultStore, experiment_id: str, player: int = 0) -> list[Cell]:
    """One row per grid cell, over the finished episodes of an experiment."""
    return cells_of(
        load_episodes(store, experiment_id, event_kinds=("invalid", "decision")), player
    )


def seat_totals(e: EpisodeData) -> list[float]:
    """Every seat's total: summed from the rounds, or the stored payoffs."""
    n = len(e.seats)
    totals = [0.0] * n
    if e.rounds:
        for r in e.rounds:
            if r.payoffs is not None:
                for i, p in enumerate(r.payoffs[:n]):
                    totals[i] += p
    elif e.record.payoffs is not None:
        totals = [float(p) for p in e.record.payoffs[:n]]
    return totals


def _totals(e: EpisodeData, player: int) -> tuple[float, float]:
    """The seat's and its opponents' totals."""
    totals = seat_totals(e)
    others = [t for i, t in enumerate(totals) if i != player]
    return totals[player], mean(others) if others else 0.0


def _opponent(e: EpisodeData, player: int) -> str:
    spec_opponent = e.spec.get("opponent")
    if spec_opponent is not None:
        return str(spec_opponent)
    others = [s.name for i, s in enumerate(e.seats) if i != player]
    return ", ".join(others)


KEY_FIELDS = ("rounds", "seats", "opponent", "model_id", "model", "agent", "prompt", "replicate")
"""The spec's fields that `cell_key` reads, besides the seats, the game and the rounds played:
episodes alike in all of them are in one cell (`analysis.tallies` works each key out once).
Reading another field of the spec in `cell_key` means adding it here."""


def prompted(agent: str, prompt: str, replicate: int = 0) -> str:
    """An agent's name in a cell key: with the variant, other than `base`, in brackets, and the
    replicate number, other than 0 (`zs [terse] [replicate 1]`)."""
    return replicated(agent if prompt == BASE else f"{agent} [{prompt}]", replicate)


def cell_key(e: EpisodeData, player: int = 0, rounds_played: int | None = None) -> CellKey:
    """The setting an episode belongs to, as the seat `player` sees it (`rounds_played`: its
    number of rounds, where `e` was read without them: `analysis.tallies`)."""
    spec = e.spec
    prompt, copy = variant_of(spec), replicate_of(spec)
    seat = e.seats[player]
    count = len(e.rounds) if rounds_played is None else rounds_played
    rounds = spec.get("rounds")
    if isinstance(rounds, int | float):
        played: int | str = int(rounds)
    else:
        played = count if count or "seats" not in spec else NO_ROUNDS
    if "seats" in spec:  # a line-up: every seat described by its own descriptor
        return (
            seat.model or seat.name,
            prompted(seat.agent or seat.kind, prompt, copy),
            e.record.game,
            _opponent(e, player),
            played,
        )
    return (
        str(spec.get("model_id") or spec.get("model") or seat.model or seat.name)
        if player == 0
        else seat.name,
        prompted(e.agent_name if player == 0 else seat.agent, prompt, copy),
        e.record.game,
        _opponent(e, player),
        played,
    )


def order_key(key: CellKey) -> tuple[str, str, str, str, bool, int | str]:
    """Cells sorted by their key, settings without rounds after those with."""
    model, agent, game, opponent, rounds = key
    return (model, agent, game, opponent, isinstance(rounds, str), rounds)


def episode_tally(e: EpisodeData, player: int = 0) -> tuple[float, float, int, int, int]:
    """One episode's part of its cell: the seat's total, its opponents' mean total, its
    cooperative moves (-1 when the game has no cooperative action), valid and invalid moves."""
    own, opp = _totals(e, player)
    return own, opp, *move_tally(e, player)


def move_tally(e: EpisodeData, player: int = 0) -> tuple[int, int, int]:
    """The seat's cooperative moves (-1 when the game has no cooperative action), valid and
    invalid moves: `episode_tally` without the totals."""
    stage = e.stage
    first = stage.labels[player][0] if stage is not None and e.rounds else None
    failed = e.invalid_rounds(player)
    decisions, invalid = e.decisions(player)
    cooperative = 0
    for r in e.rounds:
        move = r.actions[player]
        if move is not None and r.round not in failed and move == first:
            cooperative += 1
    return cooperative if first is not None else -1, decisions - invalid, invalid


def pooled_rates(tallies: Sequence[tuple[int, int, int]]) -> tuple[float | None, float]:
    """A cell's cooperation and invalid rate from its episodes' `move_tally`s: the seat's
    moves pooled over the cell (cooperation None where no valid move or no cooperative
    action)."""
    valid = sum(t[1] for t in tallies)
    invalid = sum(t[2] for t in tallies)
    moves = valid + invalid
    known = all(t[0] >= 0 for t in tallies)
    cooperation = sum(t[0] for t in tallies) / valid if valid and known else None
    return cooperation, invalid / moves if moves else 0.0


def cells_of(episodes: Iterable[EpisodeData], player: int = 0) -> list[Cell]:
    """`cell_table` over episodes already loaded (the report shares one load)."""
    groups: dict[CellKey, list[tuple[float, float, int, int, int]]] = defaultdict(list)
    llm_moves: dict[CellKey, list[tuple[int, int]]] = defaultdict(list)
    prompts: dict[CellKey, tuple[str, int]] = {}
    for e in episodes:
        if player >= len(e.seats):
            continue
        key = cell_key(e, player)
        prompts[key] = variant_of(e.spec), replicate_of(e.spec)
        groups[key].append(episode_tally(e, player))
        llm_moves[key] += [e.decisions(k) for k in llm_seats(e)]
    table = []
    for (model, agent, game, opponent, rounds), rows in sorted(
        groups.items(), key=lambda item: order_key(item[0])
    ):
        key = (model, agent, game, opponent, rounds)
        cooperation, invalid_rate = pooled_rates([r[2:] for r in rows])
        table.append(
            Cell(
                model, agent, game, opponent, rounds, len(rows),
                score=mean(r[0] for r in rows),
                opponent_score=mean(r[1] for r in rows),
                cooperation=cooperation,
                invalid_rate=invalid_rate,
                llm_invalid_rate=share_invalid(llm_moves[key]),
                prompt=prompts[key][0],
                replicate=prompts[key][1],
            )
        )  # fmt: skip
    return table


def llm_seats(e: EpisodeData) -> tuple[int, ...]:
    """The seats of an episode that an LLM plays, whose moves `llm_invalid_rate` counts."""
    return tuple(k for k, s in enumerate(e.seats) if s.kind == LLM_KIND)


def share_invalid(moves: Sequence[tuple[int, int]]) -> float | None:
    """Invalid moves over moves, from (decisions, invalid) pairs; None without any pair: the
    `llm_invalid_rate` of a cell from its LLM seats' pairs (the viewer's cells count alike)."""
    if not moves:
        return None
    total = sum(d for d, _ in moves)
    return sum(i for _, i in moves) / total if total else 0.0
