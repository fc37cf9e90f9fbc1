"""Many matches in lockstep on arrays: the hot loop of tournaments and Moran processes.

`play_matches` returns, for each pair, what `play_match` returns when called on the pairs in order:
the same moves, the same float scores, every generator drawn in the same order (a generator shared
by several matches included). It is only faster.

How. Two machines (`Strategy.machine`) meeting make one joint machine whose state is the pair of
their states. Its input each turn is a symbol: which side of its player's thresholds each draw
fell, and whether noise flipped each move. A turn of every match at once is then one gather,
`next[state + symbol]`; moves and payoffs are read from the joint states afterwards, for all
turns in one operation, and each score is summed turn by turn as `play_match` sums it.

Draws. A match that draws (a machine with `thresholds` or `opening`, or noise) takes its numbers
from its generator before play, in `play_match`'s order: each turn the first player's draw, the
second's, then the noise draws of the first and the second. Turn 0 is drawn call by call (an
opening is a `randrange`), the later turns by one `getrandbits`, whose 32-bit words, lowest first,
are the ones `random()` takes two at a time: `((a >> 5) * 2**26 + (b >> 6)) / 2**53` in CPython.
Strategies without a machine, noise in games where a flip draws the new move (more than two
actions), matches too long to hold as arrays and batches too narrow to pay keep `play_match`.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Sequence

import numpy as np

from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.strategies.base import Strategy
from stratagem.strategies.machine import Machine
from stratagem.strategies.match import MatchResult, check_match, play_match

MIN_WIDTH = 16
"""Fewest matches worth a lockstep batch: with fewer, a turn's array calls and the tables' set-up
cost about as much as the Python moves they replace (measured at 20 to 2,000 turns)."""
CHUNK_ROUNDS = 1 << 20
"""Rounds (matches x turns) of one lockstep batch, which holds about 100 bytes for each."""
MAX_JOINT = 1 << 22
"""Entries of the joint machines' table (26 bytes each): machines so large that the pairs that
meet exceed it play in Python."""

_RES53 = 1.0 / 9007199254740992.0
"""2**-53: `random()`'s scale."""


def play_matches(
    pairs: Sequence[tuple[Strategy, Strategy]],
    stage: NormalFormGame,
    turns: int,
    rng: Callable[[int], random.Random],
    noise: float = 0.0,
) -> list[MatchResult]:
    """Each pair's match, equal to `play_match(first, second, stage, turns, rng(k), noise)` for
    the k-th pair in order. `rng(k)` is called in that order, only for matches that may draw."""
    check_match(stage, turns, noise)
    seats = (_Seat(stage, 0, [p[0] for p in pairs]), _Seat(stage, 1, [p[1] for p in pairs]))
    m0, m1 = seats[0].index, seats[1].index
    width = CHUNK_ROUNDS // turns
    lockstep = (m0 >= 0) & (m1 >= 0)
    if width < MIN_WIDTH or max(stage.sizes) > 256 or (noise and stage.sizes != (2, 2)):
        lockstep[:] = False
    meeting: dict[tuple[int, int], int] = {}
    """Each pair of machines that meet (a kind of match) -> its number."""
    kinds = np.zeros(len(pairs), dtype=np.intp)
    met = zip(m0[lockstep].tolist(), m1[lockstep].tolist(), strict=True)
    kinds[lockstep] = [meeting.setdefault(pair, len(meeting)) for pair in met]
    x, y = np.array(list(meeting), dtype=np.intp).reshape(-1, 2).T
    flips = 4 if noise else 1
    if lockstep.sum() < MIN_WIDTH or _entries(seats, x, y, flips) > MAX_JOINT:
        return [_play_one(pairs[k], stage, turns, rng(k), noise) for k in range(len(pairs))]
    joint = _Joint(seats, x, y, flips, stage)
    drawn = (noise > 0) | seats[0].draws[m0] | seats[1].draws[m1]

    results: list[MatchResult | None] = [None] * len(pairs)
    batch = _Batch(seats, turns, noise)
    plan = zip(lockstep.tolist(), drawn.tolist(), m0.tolist(), m1.tolist(), strict=True)
    for k, (locked, draws, a, b) in enumerate(plan):  # in order, for the draws
        if not locked:
            results[k] = _play_one(pairs[k], stage, turns, rng(k), noise)
            continue
        batch.add(k, rng(k) if draws else None, a, b)
        if len(batch.matches) == width:
            joint.play(results, batch, kinds)
            batch = _Batch(seats, turns, noise)
    joint.play(results, batch, kinds)
    done = [r for r in results if r is not None]
    assert len(done) == len(pairs)
    return done


def _play_one(
    pair: tuple[Strategy, Strategy],
    stage: NormalFormGame,
    turns: int,
    rng: random.Random,
    noise: float,
) -> MatchResult:
    """A match played in Python, `play_match`; a strategy meets a copy of itself."""
    first, second = pair
    return play_match(
        first, copy.deepcopy(first) if second is first else second, stage, turns, rng, noise
    )


class _Seat:
    """The machines of one seat's strategies side by side, their states numbered in a row."""

    def __init__(self, stage: NormalFormGame, seat: int, players: list[Strategy]) -> None:
        number: dict[int, int] = {}
        machines: list[Machine] = []
        for key, player in {id(p): p for p in players}.items():
            player.reset(stage, seat)
            machine = player.machine()
            number[key] = -1 if machine is None else len(machines)
            if machine is not None:
                machines.append(machine)
        self.index = np.array([number[id(p)] for p in players], dtype=np.intp)
        """Each match's machine in this seat; -1: its strategy has none."""
        self.machines = machines
        self.draws = np.array([m.draws for m in machines] or [False])
        by_side = [_by_side(m, stage.sizes[seat]) for m in machines]
        self.size = np.array([m.states for m in machines], dtype=np.intp)
        self.offset = np.concatenate(([0], np.cumsum(self.size)[:-1])).astype(np.intp)
        self.start = np.array([m.start for m in machines], dtype=np.intp)
        widest = max((len(cuts) for cuts, _ in by_side), default=0)
        self.sides = np.array([len(cuts) + 1 for cuts, _ in by_side], dtype=np.intp)
        """How many sides of its thresholds each machine's draw can fall on."""
        self.cuts = np.full((len(machines), widest), np.inf)
        self.act = np.zeros((int(self.size.sum()), widest + 1), dtype=np.intp)
        for i, (cuts, act) in enumerate(by_side):
            self.cuts[i, : len(cuts)] = cuts
            self.act[self.offset[i] : self.offset[i] + len(act), : act.shape[1]] = act
        nexts = [m.next + o for m, o in zip(machines, self.offset, strict=True)]
        self.next = np.concatenate(nexts) if nexts else np.zeros((0, 1, 1), dtype=np.intp)

    def side(self, machine: np.ndarray, draws: np.ndarray) -> np.ndarray:
        """(turns, matches): on which side of its machine's thresholds each draw fell."""
        if self.cuts.shape[1] == 0:
            return np.zeros(draws.shape, dtype=np.intp)
        below = self.cuts[machine][None, :, :] <= draws[:, :, None]
        sides: np.ndarray = below.sum(axis=2, dtype=np.intp)
        return sides


def _by_side(machine: Machine, n_actions: int) -> tuple[np.ndarray, np.ndarray]:
    """The machine's distinct thresholds, and the action of each state for each side of them.

    A state that plays action k without a draw has k thresholds at -inf and the rest at +inf, so
    one rule (the number of thresholds <= the draw) gives every state's action; an opening draws
    k from `randrange`, so its thresholds are 1 .. n-1."""
    if not machine.draws:
        return np.empty(0), machine.actions[:, None]
    if machine.thresholds is not None:
        thresholds = machine.thresholds
    else:
        fixed = np.arange(n_actions - 1)[None, :] < machine.actions[:, None]
        thresholds = np.where(fixed, -np.inf, np.inf)
        thresholds[machine.start] = np.arange(1, n_actions)
    cuts = np.unique(thresholds[np.isfinite(thresholds)])
    sides = np.concatenate(([-np.inf], cuts))
    act = (thresholds[:, None, :] <= sides[None, :, None]).sum(axis=2)
    return cuts, act


class _Batch:
    """Matches to play in lockstep, with their draws taken from their generators in
    `play_match`'s order."""

    def __init__(self, seats: tuple[_Seat, _Seat], turns: int, noise: float) -> None:
        self.seats = seats
        self.turns = turns
        self.noise = noise
        self.matches: list[int] = []
        self.first: list[list[float]] = []
        """Each match's turn-0 draws by role (first's, second's, first's noise, second's)."""
        self.later: dict[tuple[int, ...], tuple[list[int], list[bytes]]] = {}
        """Roles drawn every turn -> the batch columns that draw them, and their words."""
        self.draws = False

    def add(self, k: int, rng: random.Random | None, *machines: int) -> None:
        """Match k, between these machines; with `rng`, its draws."""
        column = len(self.matches)
        self.matches.append(k)
        first = [0.0] * 4
        self.first.append(first)
        if rng is None:
            return
        self.draws = True
        every: list[int] = []
        for role, (seat, m) in enumerate(zip(self.seats, machines, strict=True)):
            machine = seat.machines[m]
            if machine.opening:
                first[role] = float(rng.randrange(machine.next.shape[1]))
            elif machine.thresholds is not None:
                first[role] = rng.random()
                every.append(role)
        if self.noise:
            first[2], first[3] = rng.random(), rng.random()
            every += [2, 3]
        if every and self.turns > 1:
            words = 2 * len(every) * (self.turns - 1)
            columns, chunks = self.later.setdefault(tuple(every), ([], []))
            columns.append(column)
            chunks.append(rng.getrandbits(32 * words).to_bytes(4 * words, "little"))

    def array(self) -> np.ndarray:
        """(turns, 4 roles, matches): every draw, in place (0 where a role draws nothing)."""
        draws = np.zeros((self.turns, 4, len(self.matches)))
        draws[0] = np.array(self.first).T
        for roles, (columns, chunks) in self.later.items():
            words = np.frombuffer(b"".join(chunks), dtype="<u4").astype(np.float64)
            pairs = words.reshape(len(columns), self.turns - 1, len(roles), 2)
            values = np.floor(pairs[..., 0] / 32) * 67108864.0 + np.floor(pairs[..., 1] / 64)
            rows = np.array(roles)[:, None], np.array(columns)[None, :]
            draws[1:, rows[0], rows[1]] = (values * _RES53).transpose(1, 2, 0)
        return draws


class _Joint:
    """The joint machines of the pairs of machines that meet, in one table.

    Joint state j of a kind (machine x in seat 0 meeting y in seat 1) is base + x's state *
    y's states + y's state; symbol s is (side of x's thresholds, side of y's, x flipped, y flipped)
    in mixed radix. Entry j * stride + s holds both moves, both payoffs, and the next joint state
    times stride, so a turn of every match is `next[state + symbol]`."""

    def __init__(
        self,
        seats: tuple[_Seat, _Seat],
        x: np.ndarray,
        y: np.ndarray,
        flips: int,
        stage: NormalFormGame,
    ) -> None:
        """The kinds of match: machine x[i] of seat 0 meets y[i] of seat 1; `flips`: 4 with noise
        (either move may flip), else 1."""
        s0, s1 = seats
        self.seats = seats
        self.flips = flips
        size0, size1 = s0.size[x], s1.size[y]
        count = size0 * size1
        base = np.concatenate(([0], np.cumsum(count)[:-1])).astype(np.intp)
        self.stride = _stride(seats, x, y, flips)
        self.start = (base + s0.start[x] * size1 + s1.start[y]) * self.stride
        owner = np.repeat(np.arange(len(x)), count)
        local = (np.arange(int(count.sum())) - base[owner])[:, None]
        x, y, size1 = x[owner][:, None], y[owner][:, None], size1[owner][:, None]
        g0, g1 = s0.offset[x] + local // size1, s1.offset[y] + local % size1
        symbol = np.arange(self.stride)[None, :]
        per_side = s1.sides[y] * flips
        side0 = np.minimum(symbol // per_side, s0.sides[x] - 1)  # past a kind's symbols: unused
        side1, flip = np.divmod(symbol % per_side, flips)
        a = s0.act[g0, side0] ^ (flip >> 1)
        b = s1.act[g1, side1] ^ (flip & 1)
        after = (s0.next[g0, a, b] - s0.offset[x]) * size1 + s1.next[g1, b, a] - s1.offset[y]
        self.next = ((base[owner][:, None] + after) * self.stride).ravel()
        self.act0, self.act1 = a.ravel().astype(np.uint8), b.ravel().astype(np.uint8)
        table = np.array(stage.table, dtype=np.float64)
        self.pay0, self.pay1 = table[self.act0, self.act1, 0], table[self.act0, self.act1, 1]
        self.whole = float(np.abs(table).max()) if (table == np.round(table)).all() else np.inf
        """The largest payoff if all are whole numbers, else inf."""

    def play(self, results: list[MatchResult | None], batch: _Batch, kinds: np.ndarray) -> None:
        """Play the batch's matches (indices into `results` and `kinds`) in lockstep."""
        if not batch.matches:
            return
        turns, width = batch.turns, len(batch.matches)
        states = np.empty((turns, width), dtype=np.intp)
        states[0] = self.start[kinds[batch.matches]]
        if not batch.draws:  # one gather a turn
            for t in range(1, turns):
                self.next.take(states[t - 1], out=states[t])
        else:
            symbols = self._symbols(batch)
            at = np.empty(width, dtype=np.intp)
            for t in range(1, turns):
                np.add(states[t - 1], symbols[t - 1], out=at)
                self.next.take(at, out=states[t])
            states += symbols
        # One byte a move, a match's moves in a row: tuples of bytes are tuples of small ints.
        moves0, moves1 = self.act0[states].T.tobytes(), self.act1[states].T.tobytes()
        score0, score1 = self._totals(self.pay0[states]), self._totals(self.pay1[states])
        for i, k in enumerate(batch.matches):
            cut = slice(i * turns, (i + 1) * turns)
            actions = (tuple(moves0[cut]), tuple(moves1[cut]))
            results[k] = MatchResult(actions, (score0[i], score1[i]))

    def _totals(self, payoffs: np.ndarray) -> list[float]:
        """Each column's total as `play_match` adds it, turn by turn. Sums of whole numbers are
        exact in any order; others are added row by row (NumPy adds a lone column pairwise)."""
        if self.whole * len(payoffs) < 2**53:
            return payoffs.sum(axis=0).tolist()  # type: ignore[no-any-return]
        total = payoffs[0].copy()
        for row in payoffs[1:]:
            total += row
        return total.tolist()  # type: ignore[no-any-return]

    def _symbols(self, batch: _Batch) -> np.ndarray:
        """(turns, matches): each turn's symbol, from the draws."""
        s0, s1 = self.seats
        m0, m1 = s0.index[batch.matches], s1.index[batch.matches]
        values = batch.array()
        symbols: np.ndarray = s0.side(m0, values[:, 0]) * s1.sides[m1] + s1.side(m1, values[:, 1])
        if self.flips > 1:
            symbols *= self.flips
            symbols += 2 * (values[:, 2] < batch.noise) + (values[:, 3] < batch.noise)
        return symbols


def _stride(seats: tuple[_Seat, _Seat], x: np.ndarray, y: np.ndarray, flips: int) -> int:
    """The symbols of the kind of match (x[i] meeting y[i]) with the most."""
    return int((seats[0].sides[x] * seats[1].sides[y]).max()) * flips


def _entries(seats: tuple[_Seat, _Seat], x: np.ndarray, y: np.ndarray, flips: int) -> int:
    """The size of their joint machines' table: joint states times symbols."""
    return int((seats[0].size[x] * seats[1].size[y]).sum()) * _stride(seats, x, y, flips)
