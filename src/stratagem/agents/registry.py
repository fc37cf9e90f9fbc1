"""Architectures by name: how the runner turns an agent entry of the experiment file into an
agent.

Each architecture module registers itself (`register`) with a builder; the runner looks the name
up and never switches on it. The registry imports stratagem's own architecture modules on first
use (`BUILTIN_MODULES`); a plugin's architectures register through the same `register`, reached as
`stratagem.register.architecture`, under `<namespace>:<name>`. What every architecture shares is
applied here, once:
self-consistency (`samples`, seed-003 §3.5) wraps any architecture that can fork, and
comprehension questions (`questions`, seed-001 §7) switch on any that can answer them.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from stratagem.agents.base import Agent, LLMClient
from stratagem.agents.self_consistency import SEED003_SAMPLES, Forkable, SelfConsistentAgent
from stratagem.errors import StratagemError, unknown_name
from stratagem.games.base import Game
from stratagem.games.matrix.repeated import RepeatedGame
from stratagem.plugins import Registry, unavailable

Builder = Callable[[Any, LLMClient, Game], Agent]
"""(agent settings, model client, game) -> agent. The settings are the experiment file's agent
entry (`stratagem.experiments.config.AgentEntry`): any object with its attributes."""

SHARED_SETTINGS = frozenset(
    {"name", "kind", "repetitions", "options", "max_reasks", "invalid", "temperature",
     "max_tokens", "constrain"}
)  # fmt: skip
"""The agent-entry fields every architecture honours: the entry's identity and repetitions, its
own `options`, and what `plain.common_settings` hands every LLM agent."""


@dataclass(frozen=True)
class Architecture:
    """An LLM agent architecture: what `kind:` in an experiment's agent entry names. Registered
    with `stratagem.register.architecture` (or, for stratagem's own, `register` here)."""

    name: str
    """The `kind` agent entries name it by (`<namespace>:<name>` for a plugin's)."""
    description: str
    """One line for `stratagem architectures`."""
    build: Builder
    """Builds the agent of one seat from the entry's settings, the seat's model and the game."""
    plays: Callable[[Game], str | None]
    """Why this architecture cannot play a game (a sentence), or None when it can."""
    calls: Callable[[Any, Game], float] = lambda settings, game: 1.0
    """Model calls it makes per decision in a game, at most and re-asks aside, given the entry's
    settings (for a run's plan of what it will spend)."""
    tokens: Callable[[Any, Game], float | None] = lambda settings, game: None
    """Tokens one call is expected to cost (prompt and reply) in a game, for a plan made before
    the results directory has paid calls to average; None: the plan's default. Architectures
    whose conversation grows with the game say how much."""
    options: type[BaseModel] | None = None
    """The model of the entry's `options` (its own settings), validated when the file is read;
    None: it takes none."""
    templates: frozenset[str] = frozenset()
    """Templates it renders from the entry's framing folder besides the general player's
    (`debate_decision.j2`): a framing without them is refused when the file loads, not met
    in the middle of a run."""
    settings: frozenset[str] = frozenset()
    """The agent-entry fields it honours besides `SHARED_SETTINGS` (a framing, an attitude...).
    An entry that sets any other is refused when the file loads: the setting would mean
    nothing, and the person who wrote it would believe it did."""

    def check_settings(self, given: Iterable[str]) -> None:
        """Refuse an entry that sets a field this architecture ignores, naming the first."""
        for field in sorted(given):
            if field in SHARED_SETTINGS or field in self.settings:
                continue
            others = sorted(a.name for a in ARCHITECTURES.values() if field in a.settings)
            only = f" (only {', '.join(others)} agents do)" if others else ""
            raise StratagemError(f"{field}: {self.name} agents take no {field}{only}")

    def canonical_options(self, options: dict[str, Any]) -> dict[str, Any]:
        """`options` with each value as its declared type reads it (`"yes"` -> True, `"5"` -> 5),
        since the values enter episode ids: `code_compat: "yes"` and `true` must be one play.
        A value already of its type stays as written, a whole number for a float included, so
        stored episodes keep their ids; options that do not validate are returned unchanged,
        for `check_options` to refuse."""
        if self.options is None:
            return options
        try:
            checked = self.options.model_validate(options)
        except ValidationError:
            return options
        return {name: _canonical(value, getattr(checked, name)) for name, value in options.items()}

    def check_options(self, options: dict[str, Any]) -> None:
        """Refuse options this architecture does not take, naming the first problem."""
        if self.options is None:
            if options:
                raise StratagemError(f"options: a {self.name} agent takes none")
            return
        try:
            checked = self.options.model_validate(options)
        except ValidationError as exc:
            error = exc.errors()[0]
            where = ".".join(str(p) for p in error["loc"])
            raise StratagemError(f"options.{where}: {error['msg']}") from None
        for name, value in checked:  # "1e309" reads as inf, and no setting means infinity
            if isinstance(value, float) and not math.isfinite(value):
                raise StratagemError(f"options.{name}: must be a finite number, not {value}")


def _canonical(given: Any, read: Any) -> Any:
    """The value an option enters an id with: `given` where it is already what its type read
    (a number for a float: JSON writes 1 and 1.0 differently), else the value read."""
    if type(given) is type(read) and given == read:
        return given
    if type(given) is int and type(read) is float and given == read:
        return given
    return read


BUILTIN_MODULES = (
    "stratagem.agents.plain",
    "stratagem.agents.debate_agent",
    "stratagem.agents.magic.player",
    "stratagem.agents.magic.pgm_player",
    "stratagem.agents.tom.player",
    "stratagem.agents.tool_agent",
)
"""The modules of stratagem's own architectures, in listing order: each registers its own."""

ARCHITECTURES: Registry[Architecture] = Registry("architecture", BUILTIN_MODULES)
"""Every architecture by name: the built-in ones, then plugins' names as they load."""


def register(architecture: Architecture) -> Architecture:
    """Register an architecture; while a plugin loads, its name becomes `<namespace>:<name>`.
    Returns the architecture as registered (with its full name), whose name an agent entry's
    `kind` gives."""
    name = ARCHITECTURES.add(architecture.name, architecture)
    if name == architecture.name:
        return architecture
    full = dataclasses.replace(architecture, name=name)
    if ARCHITECTURES.get(name) is architecture:  # not when the name was taken: the first stays
        ARCHITECTURES.replace(name, full)
    return full


def get_architecture(name: str) -> Architecture:
    """The architecture `name` (`plain`, `mypkg:cautious`); a plugin's is loaded with it."""
    found = ARCHITECTURES.get(name)
    if found is None:
        raise unavailable("architecture", name) or unknown_name("architecture", name, ARCHITECTURES)
    return found


def check_plays(settings: Any, game: Game, title: str | None = None) -> None:
    """Refuse, before anything runs, an agent entry that cannot play `game` (called `title`)."""
    title = title or game.name
    reason = get_architecture(settings.kind).plays(game)
    if reason is not None:
        raise StratagemError(f"a {settings.kind} agent cannot play '{title}': {reason}")
    if settings.questions and not _repeated_two_player(game):
        raise StratagemError(
            f"questions: seed-001's comprehension questions are about 2-player repeated matrix "
            f"games, not '{title}'"
        )


def build_agent(
    settings: Any, client: LLMClient, game: Game, *, questions: bool | None = None
) -> Agent:
    """The agent an entry describes, with the options every architecture shares applied;
    `questions` overrides the entry's setting."""
    check_plays(settings, game)
    agent = get_architecture(settings.kind).build(settings, client, game)
    agent.questions = settings.questions if questions is None else questions
    samples = settings.samples
    if samples == "study":
        stage = game.matrix()
        samples = SEED003_SAMPLES.get(stage.sizes[0], 1) if stage is not None else 1
    if samples == 1:
        return agent
    if not isinstance(agent, Forkable):
        raise StratagemError(f"samples: a {settings.kind} agent cannot be sampled several times")
    return SelfConsistentAgent(agent, samples)


def repeated_matrix_only(game: Game) -> str | None:
    """The `plays` rule of the thesis architectures: 2-player repeated matrix games."""
    return None if _repeated_two_player(game) else "it plays 2-player repeated matrix games"


def _repeated_two_player(game: Game) -> bool:
    return type(game) is RepeatedGame and game.n_players == 2
