"""What a run is about to do, said before it starts: episodes, model calls, tokens and dollars.

Users pay per token, so a run prints its plan first (`stratagem run --dry-run` prints only that),
and above the file's `confirm` bounds it asks before starting. The numbers are estimates:
- episodes to play are the grid's episodes that are not stored as finished (exactly those a run
  plays: an episode whose spec changed under the same name is new);
- model calls per episode come from playing each sampled episode's game with a stand-in policy
  (the first legal action) to count each LLM seat's decisions, times what its architecture spends
  per decision (`Architecture.calls`), its self-consistency samples and its questions;
- tokens per call are the mean of the calls this directory already paid for; before any, what
  the seat's architecture expects in its game (`Architecture.tokens`: a conversation that grows
  with the turns costs more per call), else `DEFAULT_TOKENS_PER_CALL`;
- dollars use the listed prices (the built-in table and the file's `price` overrides), with
  `INPUT_SHARE` of the tokens as input;
- a model with a pool of servers shows each server's share of the episodes (`plan_spread`), and
  the wall time is estimated from the concurrency and each model's latency (`plan_time`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from stratagem.agents.registry import get_architecture
from stratagem.agents.self_consistency import SEED003_SAMPLES
from stratagem.experiments.config import ConfirmConfig
from stratagem.experiments.grid import EpisodeSpec
from stratagem.experiments.lineups import Seat
from stratagem.experiments.model_entry import ModelEntry
from stratagem.experiments.plan_spread import PoolSpread
from stratagem.experiments.plan_time import Latency, ModelLoad, WallTime, duration, wall_time
from stratagem.games.base import Game
from stratagem.games.spaces import (
    Action,
    ActionSpace,
    Choice,
    FreeText,
    IllegalAction,
    IntegerRange,
    Shares,
)
from stratagem.llm.pricing import Prices
from stratagem.llm.providers.local import calls_at_once

DEFAULT_TOKENS_PER_CALL = 600
"""A decision prompt with a short history and its reply, before this directory has paid calls."""
INPUT_SHARE = 0.85
"""Prompts dominate: most tokens of a game turn are input."""
SAMPLE = 200
"""About this many episodes, spread over the grid, have their calls estimated one by one; the
rest are taken to be like them."""
QUESTIONS = 4
"""seed-001's comprehension questions asked after every round (§7)."""


@dataclass(frozen=True)
class Plan:
    episodes: int
    """Episodes still to play."""
    finished: int
    calls: int
    tokens: int
    usd: float | None
    """None when some model has no listed price."""
    unpriced: tuple[str, ...] = ()
    pools: tuple[PoolSpread, ...] = ()
    """The spread over each pool of servers."""
    wall: WallTime | None = None
    """None when some model of the plan has no latency, measured or stated."""
    loads: tuple[ModelLoad, ...] = ()
    """What each model has to answer, when the wall time is estimated."""
    lacking: tuple[str, ...] = ()
    """The models without a latency when some others have one."""

    def text(self) -> str:
        cost = (
            f"about ${self.usd:,.2f} at the listed prices"
            if self.usd is not None
            else f"cost unknown (no listed price for {', '.join(self.unpriced)}; give `price:`)"
        )
        return (
            f"{_count(self.episodes, 'episode')} to play ({self.finished:,} already finished), "
            f"about {_count(self.calls, 'model call')}, about {self.tokens:,} tokens, {cost}"
        )

    def details(self) -> list[str]:
        """The lines under the plan's first: each pool's spread, then the wall time."""
        out = [line for pool in self.pools for line in pool.lines()]
        if self.wall is not None:
            wall = f"  wall time: about {duration(self.wall.seconds)}, set by {self.wall.bound}:"
            width = max(len(load.name) for load in self.loads)
            out += [wall] + [load.line(width) for load in self.loads]
        elif self.lacking:
            who = ", ".join(self.lacking)
            out.append(f"  wall time: unknown: no latency for {who} (give `latency_s:`)")
        return out

    def above(self, confirm: ConfirmConfig) -> str | None:
        """Why this run needs a confirmation, or None. An unknown cost (a model without a listed
        price, such as a self-hosted server) asks nothing: the plan says it is unknown, and a
        `budget` bounds what the run may spend."""
        if self.episodes > confirm.episodes:
            return f"more than {confirm.episodes:,} episodes (confirm.episodes)"
        if self.usd is not None and self.usd > confirm.usd:
            return f"more than ${confirm.usd:,.2f} (confirm.usd)"
        if self.calls > confirm.calls:
            return f"more than {confirm.calls:,} model calls (confirm.calls)"
        return None


_LlmSeats = list[tuple[int, tuple[Seat, float, float | None]]]
"""(index, (seat, model calls, tokens a call is expected to cost or None)) of each LLM seat."""


def estimate(
    specs: Iterable[EpisodeSpec],
    remaining: int,
    finished: int,
    models: Iterable[ModelEntry],
    tokens_per_call: float | None,
    *,
    latencies: Mapping[str, Latency] | None = None,
    concurrency: int = 1,
) -> Plan:
    """The plan of the `remaining` episodes `specs` lists (those a run will play), from about
    `SAMPLE` of them taken at an even stride (every model, agent and game has its share);
    each pool's spread counts every episode. `latencies` are the measured ones by model string;
    `concurrency` is the episodes played at once."""
    stride = max(1, remaining // SAMPLE)
    entries = {m.name: m for m in models}
    pools = {name: pool for name, e in entries.items() if (pool := PoolSpread.of(e)) is not None}
    sample: list[EpisodeSpec] = []
    for i, spec in enumerate(specs):
        if i % stride == 0:
            sample.append(spec)
        if pools:
            for name in {s.model.name for s in spec.seats if s.agent and s.model} & pools.keys():
                pools[name].add(spec.id)
    calls_of: dict[str, float] = {}  # by model entry: two entries may share a model string
    tokens_of: dict[str, float] = {}
    episodes_of: dict[str, int] = {}
    seats_of = [_llm_seats(spec) for spec in sample]
    for seats in seats_of:
        for name in {seat.model.name for _, (seat, _, _) in seats if seat.model}:
            episodes_of[name] = episodes_of.get(name, 0) + 1
        for _, (seat, calls, expected) in seats:
            assert seat.model is not None
            name = seat.model.name
            per_call = tokens_per_call or expected or DEFAULT_TOKENS_PER_CALL
            calls_of[name] = calls_of.get(name, 0.0) + calls
            tokens_of[name] = tokens_of.get(name, 0.0) + calls * per_call
    scale = remaining / len(sample) if sample else 0.0
    for name, pool in pools.items():
        per_episode = calls_of.get(name, 0.0) / episodes_of[name] if name in episodes_of else 0.0
        pool.calls = {url: n * per_episode for url, n in pool.episodes.items()}
    usd = 0.0
    unpriced: list[str] = []
    for name, tokens in tokens_of.items():
        entry = entries[name]
        price = _prices(entry).price(entry.model)
        if price is None:
            unpriced.append(entry.model)
            continue
        usd += tokens * scale * (INPUT_SHARE * price.input + (1 - INPUT_SHARE) * price.output) / 1e6
    used = [entries[name] for name in calls_of]
    latency = {m.name: _latency(m, latencies or {}) for m in used}
    wall, loads = None, []
    lacking = [name for name, known in latency.items() if known is None]
    if used and not lacking:
        known = {name: lat for name, lat in latency.items() if lat is not None}
        loads = [
            ModelLoad(
                m.name,
                calls_of[m.name] * scale,
                known[m.name].seconds,
                pools[m.name].at_once() if m.name in pools else _calls_at_once(m),
                _quota_s(m, calls_of[m.name] * scale, tokens_of[m.name] * scale),
                known[m.name].source(),
            )
            for m in used
        ]
        at_once = min(concurrency, remaining) * max(_at_once(spec) for spec in sample)
        paths = zip(sample, seats_of, strict=True)
        longest = max(_path_s(spec, seats, known) for spec, seats in paths)
        wall = wall_time(loads, at_once, longest)
    return Plan(
        remaining,
        finished,
        round(sum(calls_of.values()) * scale),
        round(sum(tokens_of.values()) * scale),
        None if unpriced else usd,
        tuple(sorted(unpriced)),
        tuple(p for p in pools.values() if not p.urls or any(p.episodes.values())),
        wall,
        tuple(loads),
        tuple(lacking) if len(lacking) < len(latency) else (),
    )


def _calls_at_once(entry: ModelEntry) -> float:
    """Its `max_concurrency`; a local model's calls beyond its `batch` wait for the model."""
    if entry.model.startswith("local/"):
        return float(min(entry.max_concurrency, calls_at_once(entry.params)))
    return float(entry.max_concurrency)


def _latency(entry: ModelEntry, measured: Mapping[str, Latency]) -> Latency | None:
    """Measured when this directory has paid calls of the model, else the stated `latency_s`."""
    if entry.model in measured:
        return measured[entry.model]
    return None if entry.latency_s is None else Latency(entry.latency_s)


_PER = {"minute": 60.0, "hour": 3600.0, "day": 86400.0}


def _quota_s(entry: ModelEntry, calls: float, tokens: float) -> float:
    """The least seconds the model's rate limits allow its calls and tokens in."""
    seconds = 0.0
    for key, limit in entry.limits.model_dump().items():
        what, _, per = key.partition("_per_")
        if limit and per in _PER:
            seconds = max(seconds, (calls if what == "requests" else tokens) / limit * _PER[per])
    return seconds


def _at_once(spec: EpisodeSpec) -> int:
    """The most LLM seats of the episode that act at once (1 at least)."""
    llm = {p for p, seat in enumerate(spec.seats) if seat.agent is not None}
    return max((len(llm.intersection(step)) for step in _steps(spec)), default=1) or 1


def _path_s(spec: EpisodeSpec, seats: _LlmSeats, latency: Mapping[str, Latency]) -> float:
    """Seconds the episode takes at least: its steps one after another, each as long as its
    slowest acting seat's calls for a decision."""
    per_decision: dict[int, float] = {}
    decisions = _decisions(spec)
    for p, (seat, calls, _) in seats:
        assert seat.model is not None
        if decisions[p]:
            per_decision[p] = calls / decisions[p] * latency[seat.model.name].seconds
    return sum(max((per_decision.get(p, 0.0) for p in step), default=0.0) for step in _steps(spec))


def _prices(model: ModelEntry) -> Prices:
    prices = Prices()
    if model.price is not None:
        prices = prices.with_overrides({model.model: (model.price.input, model.price.output)})
    return prices


def _llm_seats(spec: EpisodeSpec) -> _LlmSeats:
    decisions = _decisions(spec)
    out = []
    for p, seat in enumerate(spec.seats):
        if seat.agent is None:
            continue
        agent = seat.agent
        game = spec.build_game()
        architecture = get_architecture(agent.kind)
        per_decision = architecture.calls(agent, game)
        samples = agent.samples
        if samples == "study":
            stage = game.matrix()
            samples = SEED003_SAMPLES.get(stage.sizes[0], 1) if stage is not None else 1
        asked = QUESTIONS * per_decision if agent.questions and seat.questions else 0.0
        calls = decisions[p] * (per_decision * samples + asked)
        out.append((p, (seat, calls, architecture.tokens(agent, game))))
    return out


_STEPS: dict[tuple[object, ...], tuple[tuple[int, ...], ...]] = {}
"""The seats acting at each step, by (game, rounds, variant, rule options): a grid has few
distinct games."""


def _steps(spec: EpisodeSpec) -> tuple[tuple[int, ...], ...]:
    variant = None if spec.variant is None else spec.variant.model_dump_json()
    key = (spec.game, spec.rounds, variant, spec.game_options)
    if key not in _STEPS:
        _STEPS[key] = _play_steps(spec.build_game())
    return _STEPS[key]


def _decisions(spec: EpisodeSpec) -> tuple[int, ...]:
    """Each seat's decisions in the episode."""
    return _counted(_steps(spec), len(spec.seats))


def _play_counting(game: Game) -> tuple[int, ...]:
    """Each seat's decisions in one play of the game with stand-in moves."""
    return _counted(_play_steps(game), game.n_players)


def _counted(steps: tuple[tuple[int, ...], ...], seats: int) -> tuple[int, ...]:
    counts = [0] * seats
    for step in steps:
        for p in step:
            counts[p] += 1
    return tuple(counts)


def _play_steps(game: Game) -> tuple[tuple[int, ...], ...]:
    """The seats acting at each step of one play of the game with stand-in moves (the length of
    games whose length depends on play is estimated by that one play)."""
    steps = []
    state = game.initial_state(0)
    while not state.is_terminal():
        acting = tuple(state.to_act())
        steps.append(acting)
        actions: dict[int, Action] = {p: _stand_in(state.legal(p), p) for p in acting}
        try:
            state, _ = state.apply(actions)
        except IllegalAction:  # no stand-in found: the game's rule for a missing move
            state, _ = state.forfeit(dict.fromkeys(actions))
    return tuple(steps)


def _stand_in(space: ActionSpace, player: int) -> Action:
    """A legal move that differs from seat to seat where it can: seats that never agree play a
    negotiation to its last round (seed-004's Cost Sharing), so a plan errs on the costly side."""
    if isinstance(space, Choice):
        return space.labels[player % len(space.labels)]
    if isinstance(space, IntegerRange):
        return space.low
    if isinstance(space, Shares):
        whole = [0] * len(space.parties)
        whole[player % len(whole)] = space.total
        return space.format(whole)
    return space.example() if isinstance(space, FreeText) else ""


def _count(n: int, noun: str) -> str:
    """The count with its noun: "1 episode", "3 episodes"."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"
