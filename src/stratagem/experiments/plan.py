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
  `INPUT_SHARE` of the tokens as input.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass

from stratagem.agents.registry import get_architecture
from stratagem.agents.self_consistency import SEED003_SAMPLES
from stratagem.experiments.config import ConfirmConfig, ModelEntry
from stratagem.experiments.grid import EpisodeSpec
from stratagem.experiments.lineups import Seat
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


def estimate(
    specs: Iterable[EpisodeSpec],
    remaining: int,
    finished: int,
    models: Iterable[ModelEntry],
    tokens_per_call: float | None,
) -> Plan:
    """The plan of the `remaining` episodes `specs` lists (those a run will play), from about
    `SAMPLE` of them taken at an even stride (every model, agent and game has its share)."""
    stride = max(1, remaining // SAMPLE)
    sample = list(itertools.islice(specs, 0, None, stride))
    calls_of: dict[str, float] = {}  # by model entry: two entries may share a model string
    tokens_of: dict[str, float] = {}
    for spec in sample:
        for seat, calls, expected in _seat_calls(spec):
            assert seat.model is not None
            name = seat.model.name
            per_call = tokens_per_call or expected or DEFAULT_TOKENS_PER_CALL
            calls_of[name] = calls_of.get(name, 0.0) + calls
            tokens_of[name] = tokens_of.get(name, 0.0) + calls * per_call
    scale = remaining / len(sample) if sample else 0.0
    entries = {m.name: m for m in models}
    usd = 0.0
    unpriced: list[str] = []
    for name, tokens in tokens_of.items():
        entry = entries[name]
        price = _prices(entry).price(entry.model)
        if price is None:
            unpriced.append(entry.model)
            continue
        usd += tokens * scale * (INPUT_SHARE * price.input + (1 - INPUT_SHARE) * price.output) / 1e6
    return Plan(
        remaining,
        finished,
        round(sum(calls_of.values()) * scale),
        round(sum(tokens_of.values()) * scale),
        None if unpriced else usd,
        tuple(sorted(unpriced)),
    )


def _prices(model: ModelEntry) -> Prices:
    prices = Prices()
    if model.price is not None:
        prices = prices.with_overrides({model.model: (model.price.input, model.price.output)})
    return prices


def _seat_calls(spec: EpisodeSpec) -> list[tuple[Seat, float, float | None]]:
    """(seat, model calls, tokens a call is expected to cost or None) for each LLM seat."""
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
        out.append((seat, calls, architecture.tokens(agent, game)))
    return out


_DECISIONS: dict[tuple[object, ...], tuple[int, ...]] = {}
"""Decisions per seat by (game, rounds, variant, rule options): a grid has few distinct games."""


def _decisions(spec: EpisodeSpec) -> tuple[int, ...]:
    variant = None if spec.variant is None else spec.variant.model_dump_json()
    key = (spec.game, spec.rounds, variant, spec.game_options)
    if key not in _DECISIONS:
        _DECISIONS[key] = _play_counting(spec.build_game())
    return _DECISIONS[key]


def _play_counting(game: Game) -> tuple[int, ...]:
    """Each seat's decisions in one play of the game with stand-in moves (the length of games
    whose length depends on play is estimated by that one play)."""
    counts = [0] * game.n_players
    state = game.initial_state(0)
    while not state.is_terminal():
        actions: dict[int, Action] = {}
        for p in state.to_act():
            counts[p] += 1
            actions[p] = _stand_in(state.legal(p), p)
        try:
            state, _ = state.apply(actions)
        except IllegalAction:  # no stand-in found: the game's rule for a missing move
            state, _ = state.forfeit(dict.fromkeys(actions))
    return tuple(counts)


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
