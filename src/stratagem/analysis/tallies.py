"""Each finished episode's part of its cell, read with three queries instead of every round.

The viewer's cells and diff (issue 25 item 9: an experiment page of 10,000 episodes in well under
a second) need, per episode, its setting, every seat's total, seat 0's cooperative, valid and
invalid moves, and each LLM seat's moves and invalid moves. `load_episodes` makes a record of
every round for that (200,000 in seed-003); here SQL counts each episode's rounds by their
(actions, payoffs) texts instead, and each distinct text is decoded once. The answers are
`analysis.cells`' own, computed by its functions (`cell_key`, `seat_totals`, `move_tally`,
`decisions`) wherever grouping could change one: an episode with an invalid or not-valid
decision event of seat 0 or of an LLM seat in a round, a payoff that is not a whole number
(summed in another order, a float sum can differ in its last bit), or a round without actions
is read whole and counted by them, as before.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from stratagem.analysis.cells import (
    KEY_FIELDS,
    CellKey,
    cell_key,
    llm_seats,
    move_tally,
    seat_totals,
)
from stratagem.analysis.episodes import EpisodeData, read_rounds
from stratagem.analysis.invalid import DECISION_EVENT, INVALID_EVENT, invalid_rounds
from stratagem.experiments.records import EpisodeRecord, EventRecord
from stratagem.experiments.replicates import replicate_of
from stratagem.experiments.store import ResultStore

_WHOLE = 2**32
"""Payoffs that are whole numbers below this in size, over fewer than `_ROUNDS` rounds, sum to
the same float in any order and grouping (every partial sum is a whole number below 2**52)."""
_ROUNDS = 2**20

_ROUND, _PAIR = chr(31), chr(30)
"""Between an episode's rounds, and between a round's actions and payoffs: JSON text holds no
raw control character."""

_FINISHED = "SELECT id FROM episodes WHERE experiment_id = ? AND status = 'finished'"


class EpisodeTally(NamedTuple):
    """One finished episode with seats, as `analysis.cells` counts it for seat 0: plain values
    in a tuple, which the garbage collector stops tracking (10,000 kept cost it no work)."""

    id: str
    seed: int | str | None
    repetition: Any
    """The spec's `repetition` (None where it has none)."""
    key: CellKey
    """`cell_key(e, 0)`."""
    lineup: tuple[str, ...]
    """Each seat's name."""
    totals: tuple[float, ...]
    """`seat_totals(e)`."""
    cooperative: int
    """`move_tally(e, 0)`: cooperative moves (-1 when the game has no cooperative action), valid
    and invalid moves."""
    valid: int
    invalid: int
    llm: tuple[tuple[int, int], ...] = ()
    """(decisions, invalid) of each LLM seat (`llm_seats`, `EpisodeData.decisions`): what
    `Cell.llm_invalid_rate` pools (`share_invalid`)."""
    replicate: int = 0
    """The spec's replicate number (`experiments.replicates.replicate_of`)."""


def episode_tallies(store: ResultStore, experiment_id: str) -> list[EpisodeTally]:
    """The finished episodes of an experiment that have seats, in store order."""
    rows = _rows(store, experiment_id)
    events = _events(store, experiment_id)
    records = _Records(experiment_id)
    llms: dict[str, tuple[int, ...]] = {}  # each line-up's LLM seats, by its players text
    firsts: dict[_Stage, str | None] = {}
    countable: dict[str, tuple[int, str | None]] = {}
    for row in rows:
        if row.players not in llms:
            llms[row.players] = llm_seats(EpisodeData(records(row), (), ()))
        seats = {0, *llms[row.players]}
        if any(invalid_rounds((), events.get(row.id, ()), k) for k in seats):
            continue  # which rounds were invalid decides what was cooperative, and how many
        stage = (row.game, row.labels, row.tensor)
        if stage not in firsts:
            resolved = EpisodeData(records(row), (), ()).stage
            firsts[stage] = resolved.labels[0][0] if resolved is not None else None
        countable[row.id] = (row.seats, firsts[stage])
    counted = _counted(store, experiment_id, countable)
    settings: dict[tuple[str, str, str, int], tuple[CellKey, tuple[str, ...]]] = {}
    tallies: dict[str, EpisodeTally] = {}
    whole: list[_Row] = []
    for row in rows:
        rounds, grouped = counted.get(row.id, (0, None))
        setting = (row.players, row.game, row.fields, rounds)
        if setting not in settings:  # `cell_key` reads only what `setting` holds
            e = EpisodeData(records(row), (), ())
            settings[setting] = cell_key(e, 0, rounds), tuple(s.name for s in e.seats)
        key, lineup = settings[setting]
        if not rounds:
            e = EpisodeData(records(row), (), events.get(row.id, ()))
            tallies[row.id] = _tally(row, key, lineup, _whole_episode(e))
        elif grouped is None:
            whole.append(row)
        else:
            totals, moves, nulls = grouped
            llm = tuple((rounds, nulls.get(k, 0)) for k in llms[row.players])
            tallies[row.id] = _tally(row, key, lineup, (totals, moves, llm))
    read = read_rounds(store, [row.id for row in whole])
    for row in whole:
        e = EpisodeData(records(row), tuple(read.get(row.id, ())), events.get(row.id, ()))
        lineup = tuple(s.name for s in e.seats)
        tallies[row.id] = _tally(row, cell_key(e, 0), lineup, _whole_episode(e))
    return [tallies[row.id] for row in rows]


def _whole_episode(e: EpisodeData) -> _Counted:
    """An episode's tally counted by `analysis.cells`' functions on its records."""
    return seat_totals(e), move_tally(e, 0), tuple(e.decisions(k) for k in llm_seats(e))


_Counted = tuple[Sequence[float], tuple[int, int, int], tuple[tuple[int, int], ...]]
"""`seat_totals`, `move_tally` of seat 0 and each LLM seat's `decisions` of an episode."""


def _tally(row: _Row, key: CellKey, lineup: tuple[str, ...], counted: _Counted) -> EpisodeTally:
    totals, (cooperative, valid, invalid), llm = counted
    return EpisodeTally(
        row.id, row.seed, row.repetition, key, lineup, tuple(totals), cooperative, valid, invalid,
        llm, row.replicate,
    )  # fmt: skip


_Round = tuple[Any, tuple[int | None, ...] | None, tuple[int, ...]]
"""Seat 0's move in a round, each payoff as a whole number (None where not one), and the seats
that recorded no move (forfeits)."""


class _Played:
    """Rounds counted by their actions and payoffs texts, each distinct pair decoded once as
    `load_episodes` decodes it: seat 0's move, and each payoff as a whole number (None where
    it is not one: the sum must then be taken in order)."""

    def __init__(self) -> None:
        self._seen: dict[str, _Round | None] = {}

    def _decode(self, played: str) -> _Round | None:
        texts = played.split(_PAIR)
        if len(texts) != 2:
            return None  # a text holding the separator: not JSON
        moves = json.loads(texts[0])
        paid = json.loads(texts[1])
        if not moves:
            return None  # no move of seat 0: `move_tally` on the rounds decides
        nulls = tuple(k for k, m in enumerate(moves) if m is None)
        return next(iter(moves)), None if paid is None else tuple(map(_whole, paid)), nulls

    def tally(self, counted: Counter[str], seats: int, first: str | None) -> _Grouped | None:
        """`seat_totals`, `move_tally` and each seat's forfeited rounds of an episode without
        invalid events from its rounds counted, or None where only the rounds in order give
        the same answer."""
        sums = [0] * seats
        nulls: Counter[int] = Counter()
        rounds = cooperative = invalid = 0
        for played, count in counted.items():
            if played not in self._seen:
                self._seen[played] = self._decode(played)
            decoded = self._seen[played]
            if decoded is None:
                return None
            move, paid, forfeits = decoded
            for k in forfeits:
                nulls[k] += count
            if move is None:
                invalid += count
            elif move == first:
                cooperative += count
            rounds += count
            for i, p in enumerate(() if paid is None else paid[:seats]):
                if p is None:
                    return None
                sums[i] += p * count
        moves = (cooperative if first is not None else -1, rounds - invalid, invalid)
        return tuple(float(s) for s in sums), moves, nulls


def _whole(p: Any) -> int | None:
    """A payoff as a whole number below `_WHOLE` in size, or None."""
    if type(p) is float and p.is_integer():
        p = int(p)
    return p if type(p) is int and -_WHOLE < p < _WHOLE else None


_Stage = tuple[str, str | None, str | None]
"""An episode's game, labels and payoff tensor as stored: all `try_resolve` reads."""


class _Row(NamedTuple):
    """A finished episode with seats as stored (texts), and what its spec says that the
    cells read."""

    id: str
    game: str
    players: str
    seats: int
    seed: int | str | None
    spec: str
    repetition: Any
    fields: str
    """The spec's `KEY_FIELDS` as JSON."""
    labels: str | None
    tensor: str | None
    payoffs: str | None
    replicate: int


def _rows(store: ResultStore, experiment_id: str) -> list[_Row]:
    seats = _Texts(len)
    out = []
    for eid, game, players, seed, text, labels, tensor, payoffs in store._rows(
        "SELECT id, game, players, seed, spec, labels, game_payoffs, payoffs FROM episodes "
        "WHERE experiment_id = ? AND status = 'finished' ORDER BY rowid",
        (experiment_id,),
    ):
        n = seats(players)
        if n:
            spec = json.loads(text) or {}  # as `EpisodeData.spec` reads it
            fields = json.dumps([spec.get(k) for k in KEY_FIELDS] + ["seats" in spec])
            out.append(_Row(eid, game, players, n, seed, text, spec.get("repetition"), fields,
                            labels, tensor, payoffs, replicate_of(spec)))  # fmt: skip
    return out


class _Records:
    """Episode records made from rows where a function of `analysis` needs one, as the store
    makes them (`episode_from_row`), each text many episodes share decoded once."""

    def __init__(self, experiment_id: str) -> None:
        self._experiment = experiment_id
        self._players = _Texts(tuple)
        self._labels = _Texts(lambda v: None if v is None else tuple(tuple(ls) for ls in v))
        self._tensors = _Texts(lambda v: v)

    def __call__(self, row: _Row) -> EpisodeRecord:
        payoffs = None if row.payoffs is None else json.loads(row.payoffs)
        return EpisodeRecord(
            id=row.id, experiment_id=self._experiment, game=row.game,
            players=self._players(row.players), seed=row.seed, status="finished",
            spec=json.loads(row.spec), labels=self._labels(row.labels),
            game_payoffs=self._tensors(row.tensor),
            payoffs=None if payoffs is None else tuple(payoffs),
        )  # fmt: skip


_Grouped = tuple[Sequence[float], tuple[int, int, int], Counter[int]]
"""`seat_totals` and `move_tally` of an episode, and the rounds each seat forfeited."""


def _counted(
    store: ResultStore, experiment_id: str, countable: dict[str, tuple[int, str | None]]
) -> dict[str, tuple[int, _Grouped | None]]:
    """Each finished episode's number of rounds, and for those `countable` (with their seats
    and cooperative action) what its rounds add up to, counted by their actions and payoffs
    texts (joined by `_PAIR`; a NULL payoff as JSON null, which decodes alike). None where the
    rounds in order decide (see `_Played.tally`; a text holding a separator is not JSON)."""
    played = _Played()
    out: dict[str, tuple[int, _Grouped | None]] = {}
    for eid, rounds, texts in store._rows(
        "SELECT episode_id, COUNT(*), group_concat(actions || char(30) || "
        "COALESCE(payoffs, 'null'), char(31)) FROM rounds "
        f"WHERE episode_id IN ({_FINISHED}) GROUP BY episode_id",
        (experiment_id,),
    ):
        pairs = texts.split(_ROUND)
        seats, first = countable.get(eid, (0, None))
        grouped = None
        if eid in countable and len(pairs) == rounds < _ROUNDS:
            grouped = played.tally(Counter(pairs), seats, first)
        out[eid] = (rounds, grouped)
    return out


def _events(store: ResultStore, experiment_id: str) -> dict[str, tuple[EventRecord, ...]]:
    """Every seat's `invalid` and `decision` events of each finished episode, the only events
    its tally reads (seat 0's and its LLM seats')."""
    found: dict[str, list[EventRecord]] = defaultdict(list)
    for eid, seq, number, kind, player, data in store._rows(
        "SELECT episode_id, seq, round, kind, player, data FROM events "
        f"WHERE episode_id IN ({_FINISHED}) AND kind IN (?, ?) "
        "ORDER BY episode_id, seq",
        (experiment_id, INVALID_EVENT, DECISION_EVENT),
    ):
        loaded = json.loads(data) if data is not None else None
        found[eid].append(EventRecord(eid, seq, kind, loaded, number, player))
    return {eid: tuple(events) for eid, events in found.items()}


class _Texts:
    """JSON texts decoded once each and converted by `convert` (None stays None)."""

    def __init__(self, convert: Callable[[Any], Any]) -> None:
        self._convert = convert
        self._seen: dict[str, Any] = {}

    def __call__(self, text: str | None) -> Any:
        if text is None:
            return None
        if text not in self._seen:
            self._seen[text] = self._convert(json.loads(text))
        return self._seen[text]
