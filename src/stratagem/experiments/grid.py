"""Expand an experiment file into episode specs with stable ids.

An episode's id is the hash of everything that determines it, so the same file always produces the
same ids: that is how a re-run recognises finished work. Episodes of the `agents x opponents`
shorthand keep the key of the first release, so results directories made before line-ups existed
resume without playing (or paying for) anything again; so do episodes of no prompt variant or of
the `base` one (`prompt_entry`), and the cells' own episodes of a file with `replicates:`
(`experiments.replicates`).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from stratagem.agents.prompt_variants import check_variant
from stratagem.agents.prompts import Prompter
from stratagem.errors import StratagemError
from stratagem.experiments.config import AgentEntry, ExperimentConfig, VariantEntry
from stratagem.experiments.ids import stable_id
from stratagem.experiments.lineups import (
    AGENT_OPPONENT,
    Seat,
    SeatParser,
    check_seat,
    expand_lineup,
    model_settings,
)
from stratagem.experiments.model_entry import ModelEntry
from stratagem.experiments.prompt_entry import PromptEntry
from stratagem.experiments.provenance import KEY as PROVENANCE
from stratagem.experiments.provenance import names_of, provenance
from stratagem.experiments.replicates import KEY as REPLICATE
from stratagem.games import settings_data
from stratagem.games.base import Game
from stratagem.games.catalog import check_game_options, get_entry, get_game, split_setting
from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.games.matrix.repeated import RepeatedGame

T = TypeVar("T")

__all__ = ["AGENT_OPPONENT", "EpisodeSpec", "Grid", "Seat", "expand", "experiment_id"]


@dataclass(frozen=True)
class EpisodeSpec:
    """One episode to play: a game, its seats, and what makes it one repetition of its cell."""

    model: ModelEntry | None
    """The grid's model: the one that plays the LLM seats not pinned to a model (None when the
    line-up has none)."""
    game: str
    seats: tuple[Seat, ...]
    rounds: int | None
    """The round count of repeated games; None for games of a fixed length."""
    seed: int
    repetition: int
    variant: VariantEntry | None = None
    """The definition of `game` when it is a variant declared in the experiment file."""
    opponent: str | None = None
    """Set for episodes of the `agents x opponents` shorthand: the opponent as the file names it."""
    game_options: tuple[tuple[str, Any], ...] = ()
    """The game's rule options (the file's `game_options`) that differ from its defaults."""
    prompt: PromptEntry | None = None
    """The prompt variant its LLM seats play under (the file's `prompts`); None without one."""
    replicate: int = 0
    """0 for the cell's own episode, k for its k-th null copy (the file's `replicates`)."""

    @property
    def agent(self) -> AgentEntry:
        """The agent entry of seat 0 (the shorthand's agent)."""
        agent = self.seats[0].agent
        if agent is None:
            raise StratagemError(f"episode {self.id}: seat 0 is not an LLM agent")
        return agent

    @property
    def opponent_agent(self) -> AgentEntry | None:
        """The agent entry an `agent:<name>` opponent names (shorthand episodes)."""
        return self.seats[1].agent if self.opponent is not None else None

    def key(self) -> dict[str, Any]:
        """What determines the episode (so its id); connection details are not part of it."""
        if self.opponent is not None:
            return self._shorthand_key()
        key: dict[str, Any] = {
            "model": None if self.model is None else self.model.model,
            "game": self.game,
            "seats": [seat.key() for seat in self.seats],
            "rounds": self.rounds,
            "seed": self.seed,
            "repetition": self.repetition,
        }
        if self.variant is not None:
            key["variant"] = self.variant.model_dump()
        if self.game_options:  # only when set: episodes of the default rules keep their ids
            key["game_options"] = dict(self.game_options)
        key |= model_settings(self.model) | setting_key(self.game) | self._prompt_key()
        return key | self._replicate_key()

    def _shorthand_key(self) -> dict[str, Any]:
        """The key of the first release, unchanged (see the module docstring)."""
        assert self.model is not None
        key: dict[str, Any] = {
            "model": self.model.model,
            "agent": self.agent.key(),
            "game": self.game,
            "opponent": self.opponent,
            "rounds": self.rounds,
            "seed": self.seed,
            "repetition": self.repetition,
        }
        if self.opponent_agent is not None:
            key["opponent_agent"] = self.opponent_agent.key()
        if self.variant is not None:
            key["variant"] = self.variant.model_dump()
        if self.game_options:
            key["game_options"] = dict(self.game_options)
        return key | model_settings(self.model) | self._prompt_key() | self._replicate_key()

    def _prompt_key(self) -> dict[str, Any]:
        """The variant, except `base`: its episodes are those of a file without `prompts:`."""
        if self.prompt is None or self.prompt.is_base:
            return {}
        return {"prompt": self.prompt.key()}

    def _replicate_key(self) -> dict[str, Any]:
        """The replicate number, above 0 only: the cell's own episodes keep their ids."""
        return {REPLICATE: self.replicate} if self.replicate else {}

    def stored(self) -> dict[str, Any]:
        """The spec as the store keeps it: `key()`, plus what names the episode's rows without
        being part of its identity (the model entry's `id`, so that two entries of one model
        string, such as a thinking variant, are told apart in every table), and the plugins
        that supplied its game and seats (`experiments.provenance`)."""
        stored = self.key()
        if self.model is not None and self.model.id is not None:
            stored |= {"model_id": self.model.id}
        model = None if self.model is None else self.model.model
        records = provenance(names_of(self.game, self.seats, model))
        return stored | {PROVENANCE: records} if records else stored

    def build_game(self) -> Game:
        """The game to play: a catalog game or a declared variant, repeated when it is a matrix
        game, with this episode's round count when the game takes one."""
        return build_game(self.game, self.variant, self.rounds, dict(self.game_options))

    @functools.cached_property
    def id(self) -> str:
        """The hash of `key()`, computed once (the runner asks for it at every write)."""
        return stable_id(self.key())

    def players(self) -> list[dict[str, Any]]:
        return [seat.descriptor() for seat in self.seats]


def setting_key(game: str) -> dict[str, Any]:
    """A setting's content, for a game named by its setting (`chameleon/3`): part of the
    episode's id, so that regenerated settings never mix with episodes of the old ones."""
    base, index = split_setting(game)
    if index is None:
        return {}
    return {"setting": settings_data.setting(get_entry(base).settings or "", index)}


def build_game(
    name: str,
    variant: VariantEntry | None,
    rounds: int | None,
    options: Mapping[str, Any] | None = None,
) -> Game:
    """The game an episode plays: a catalog game with its rule `options`, or a declared variant,
    repeated when it is a matrix game, with `rounds` when the game takes a round count."""
    options = dict(options or {})
    game: Game = get_game(name, **options) if variant is None else variant.build()
    if isinstance(game, NormalFormGame):
        assert rounds is not None
        return RepeatedGame(game, rounds)
    if rounds is not None and "rounds" in get_entry(name).options():
        return get_game(name, rounds=rounds, **options)
    return game


def game_options(config: ExperimentConfig, game: str) -> tuple[tuple[str, Any], ...]:
    """The rule options a game of the grid is played with that differ from its defaults
    (`game_options` is keyed by catalog name, so `undercover` covers `undercover/3`)."""
    base = split_setting(game)[0]
    options = config.game_options.get(base)
    if not options:
        return ()
    return tuple(sorted(check_game_options(base, options).items()))


def experiment_id(config: ExperimentConfig) -> str:
    """An experiment is its name: growing the grid (another seed, another model) adds episodes to
    the same experiment, and the episodes already finished are not played again."""
    return config.name


def expand(config: ExperimentConfig, *, humans: bool = False) -> list[EpisodeSpec]:
    """Every episode of the grid, as a list (see `Grid` for the order and the checks)."""
    specs = list(Grid(config, humans=humans).specs())
    ids = [s.id for s in specs]
    if len(set(ids)) != len(ids):
        raise StratagemError("the grid lists the same episode twice (duplicate values in a list?)")
    return specs


class Grid:
    """The episodes of an experiment file, checked before anything runs and listed lazily.

    Order, outermost loop first: model, agent, game, opponent, prompt variant, rounds, seed,
    repetition for the shorthand; then model, game, line-up, prompt variant, rounds, seed,
    repetition; each episode is followed by its replicates (so a run stopped early has played
    both sides of the pairs it has). Every axis is checked for repeated values up front, so no
    episode is listed twice and listing needs no memory of what was listed; `size()` counts the
    episodes without listing them. `humans`: line-ups may have a human seat.
    """

    def __init__(self, config: ExperimentConfig, *, humans: bool = False) -> None:
        self.config = config
        agents = [a.name for a in config.agents]
        if len(set(agents)) != len(agents):
            raise StratagemError(f"agents: names must be unique, got {agents}")
        names = [m.name for m in config.models]
        if len(set(names)) != len(names):
            raise StratagemError(f"models: ids must be unique, got {names}")
        self.parser = SeatParser(config.agents, config.models, humans=humans)
        self.variants = _variants(config)
        self.options = {g: game_options(config, g) for g in config.games}
        self.games: dict[str, Game] = {}
        for i, name in enumerate(config.games):
            self.games[name] = _field(f"games.{i}", self._sample_game, name)
        for j, agent in enumerate(config.agents):
            if any(g.matrix() is not None for g in self.games.values()):
                _field(f"agents.{j}", _prompter, agent)
        _unique("games", config.games)
        _unique("seeds", config.seeds)
        _unique("opponents", config.opponents)
        self.rounds = {g: self.round_counts(g, self.variants.get(g)) for g in config.games}
        for game, counts in self.rounds.items():
            _unique(f"rounds (of '{game}')", counts)
        self.expanded = {
            game: [
                lineup
                for i, entry in enumerate(config.lineups)
                for lineup in expand_lineup(entry, sample, f"lineups.{i}")
            ]
            for game, sample in self.games.items()
        }
        for game, lineups in self.expanded.items():
            _unique(f"lineups (in '{game}')", [tuple(lineup) for lineup in lineups])
        self._check_seats()
        self.prompts: list[PromptEntry | None] = list(config.prompts) or [None]
        self._check_prompts()

    def _check_seats(self) -> None:
        """Every seat of every line-up can play its seat of every game (before anything runs)."""
        config = self.config
        for j, opponent in enumerate(config.opponents):
            for game, sample in self.games.items():
                if sample.n_players != 2:
                    raise StratagemError(
                        f"games: '{game}' has {sample.n_players} seats; `opponents` fill 2-seat "
                        "games, use `lineups` for it"
                    )
                seat = self.parser.parse(opponent, config.models[0], f"opponents.{j}")
                check_seat(seat, sample, game, 1, f"opponents.{j}")
        for i, agent in enumerate(config.agents if config.opponents else ()):
            for game, sample in self.games.items():
                seat = Seat(agent.name, agent, config.models[0])
                check_seat(seat, sample, game, 0, f"agents.{i}")
        for game, sample in self.games.items():
            for i, entry in enumerate(config.lineups):
                for texts in expand_lineup(entry, sample, f"lineups.{i}"):
                    for p, text in enumerate(texts):
                        seat = self.parser.parse(text, config.models[0], f"lineups.{i}")
                        check_seat(seat, sample, game, p, f"lineups.{i}")

    def _check_prompts(self) -> None:
        """Every LLM seat can play every variant, and each variant changes its prompts."""
        for i, prompt in enumerate(self.config.prompts):
            prompts = prompt.prompt_set()
            if prompts.changes_nothing:
                continue
            if prompts.templates is not None and not prompts.templates.is_dir():
                raise StratagemError(f"prompts.{i}.templates: no folder {prompts.templates}")
            for game, sample in self.games.items():
                for agent in self._seated(game):
                    try:
                        check_variant(prompts, agent, sample, game)
                    except StratagemError as exc:
                        raise StratagemError(f"prompts.{i}.{exc}") from None

    def _seated(self, game: str) -> list[AgentEntry]:
        """The agent entries with a seat in `game`'s episodes."""
        config = self.config
        seated = {a.name: a for a in config.agents} if config.opponents else {}
        texts = [*config.opponents, *(t for lineup in self.expanded[game] for t in lineup)]
        for text in texts:
            seat = self.parser.parse(text, config.models[0], "lineups")
            if seat.agent is not None:
                seated.setdefault(seat.agent.name, seat.agent)
        return list(seated.values())

    def specs(self) -> Iterator[EpisodeSpec]:
        copies = range(1, self.config.replicates + 1)
        for spec in itertools.chain(self.shorthand(), self.lineups()):
            yield spec
            for k in copies:
                yield dataclasses.replace(spec, replicate=k)

    def size(self) -> int:
        """How many episodes `specs()` lists, counted without listing them."""
        config = self.config
        seeds = len(config.seeds)
        per_game = sum(len(self.rounds[g]) for g in config.games)
        reps = sum(a.repetitions or config.repetitions for a in config.agents)
        total = len(config.models) * reps * per_game * len(config.opponents) * seeds
        for game in config.games:
            for lineup in self.expanded[game]:
                models = len(config.models) if self.parser.uses_grid_model(lineup) else 1
                total += models * len(self.rounds[game]) * seeds * config.repetitions
        return total * len(self.prompts) * (1 + self.config.replicates)

    def _sample_game(self, name: str) -> Game:
        """The game at its first round count, to check seats against."""
        variant = self.variants.get(name)
        rounds = self.round_counts(name, variant)[0]
        return build_game(name, variant, rounds, dict(self.options[name]))

    def round_counts(self, game: str, variant: VariantEntry | None) -> list[int | None]:
        """The rounds axis for one game: "study" resolved; [None] for fixed-length games."""
        base = variant.base if variant is not None else game
        entry = get_entry(base)
        matrix = variant is not None or isinstance(get_game(base), NormalFormGame)
        if not matrix and "rounds" not in entry.options():
            return [None]
        out: list[int | None] = []
        for rounds in self.config.rounds:
            if isinstance(rounds, int):
                out.append(rounds)
            elif matrix and entry.rounds:
                out.append(entry.rounds[0])
            elif not matrix:
                out.append(inspect.signature(entry.factory).parameters["rounds"].default)
            else:
                raise StratagemError(
                    f"rounds: '{game}' comes from no repeated-game study, so 'study' has no "
                    "value for it; give a number"
                )
        return out

    def shorthand(self) -> Iterator[EpisodeSpec]:
        """`agents x opponents`: the agent in seat 0, the opponent in seat 1."""
        config = self.config
        for model in config.models:
            for agent in config.agents:
                for game in config.games:
                    variant = self.variants.get(game)
                    for opponent in config.opponents:
                        other = self.parser.parse(opponent, model, "opponents")
                        if other.agent is not None:
                            other = Seat(other.label, other.agent, other.model, questions=False)
                        plain = (Seat(agent.name, agent, model), other)
                        for prompt in self.prompts:
                            seats = _prompted(plain, prompt)
                            for rounds in self.rounds[game]:
                                for seed in config.seeds:
                                    for rep in range(agent.repetitions or config.repetitions):
                                        yield EpisodeSpec(
                                            model, game, seats, rounds, seed, rep, variant,
                                            opponent, self.options[game], prompt,
                                        )  # fmt: skip

    def lineups(self) -> Iterator[EpisodeSpec]:
        config = self.config
        for model in config.models:
            for game in self.games:
                variant = self.variants.get(game)
                for texts in self.expanded[game]:
                    grid_model = self.parser.uses_grid_model(texts)
                    if not grid_model and model is not config.models[0]:
                        continue  # no seat plays the grid's model: once is enough
                    plain = tuple(self.parser.parse(text, model, "lineups") for text in texts)
                    for prompt in self.prompts:
                        seats = _prompted(plain, prompt)
                        for rounds in self.rounds[game]:
                            for seed in config.seeds:
                                for rep in range(config.repetitions):
                                    yield EpisodeSpec(
                                        model if grid_model else None, game, seats, rounds,
                                        seed, rep, variant, game_options=self.options[game],
                                        prompt=prompt,
                                    )  # fmt: skip


def _prompted(seats: Sequence[Seat], prompt: PromptEntry | None) -> tuple[Seat, ...]:
    """The seats with every LLM seat playing under `prompt`."""
    prompts = None if prompt is None else prompt.prompt_set()
    if prompts is None or prompts.changes_nothing:
        return tuple(seats)
    return tuple(
        seat if seat.agent is None
        else dataclasses.replace(seat, agent=seat.agent.with_prompts(prompts))
        for seat in seats
    )  # fmt: skip


def _unique(what: str, values: list[Any]) -> None:
    seen: set[Any] = set()
    for value in values:
        if value in seen:
            shown = list(value) if isinstance(value, tuple) else value
            raise StratagemError(f"{what}: {shown!r} is listed twice")
        seen.add(value)


def _prompter(agent: AgentEntry) -> Prompter:
    return Prompter(agent.framing, agent.output, agent.history, prompting=agent.prompting)


def _variants(config: ExperimentConfig) -> dict[str, VariantEntry]:
    """The declared variants by name, each built (and so checked) once."""
    out: dict[str, VariantEntry] = {}
    for i, v in enumerate(config.variants):
        if v.name in out:
            raise StratagemError(f"variants.{i}: the name '{v.name}' is declared twice")
        _field(f"variants.{i}", VariantEntry.build, v)
        out[v.name] = v
    return out


def _field(where: str, check: Callable[[Any], T], value: Any) -> T:
    """Run a check, prefixing its error with the config field it is about."""
    try:
        return check(value)
    except StratagemError as exc:
        raise StratagemError(f"{where}: {exc}") from None
