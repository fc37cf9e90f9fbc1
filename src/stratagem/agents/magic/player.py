"""The MAgIC player (seed-004 §2): a seat of a MAgIC game played through the study's chat, as its
code plays it. Registered as the `magic` architecture.

Each call sends the seat's chat so far (`chat.assemble`), the game's prompts and the phase's
request (`profiles`), at temperature 0 with the game's token limit. The reply is stripped as the
code strips it and read by the phase's parser: strictly by default, re-asked when it does not
follow the template and recorded invalid when it never does (§10.10); with `code_compat` read as
the study's code read it (the first name found, "anything not cooperate is D", ...).

Options (the agent entry's `options`):

- `code_compat` (false): the code's lenient parsers instead of strict ones with re-asks;
- `wording` ("paper"): the game-theory prompts in the paper's wording or the code's (§8.1);
- `replay` (false): a "fixed" defender (§2): replays the setting's recorded clues and first
  proposals while the game follows the recording, then plays live;
- `probes` (true): answer the hidden role and belief probes of §6.1 in the social games;
- `several_votes` ("reask"): a strict vote reply naming different players after "I vote for" is
  re-asked; "first" or "last" reads the first or the last of them instead (no effect with
  `code_compat`, which reads the first name found anywhere).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

import stratagem.agents.magic.theory_profiles  # noqa: F401  (registers the game-theory profiles)
from stratagem.agents.base import Decision, LLMClient
from stratagem.agents.llm_agent import LLMAgent
from stratagem.agents.magic.chat import assemble, seat_name, strip_reply
from stratagem.agents.magic.probing import Prober
from stratagem.agents.magic.profiles import Turn, profile_for
from stratagem.agents.magic.texts import Wording
from stratagem.agents.magic.vote_parse import Several, VoteParser
from stratagem.agents.parsing import Parser, decide_with_reasks, plain_reask
from stratagem.agents.questions import Answer
from stratagem.agents.registry import Architecture, register
from stratagem.errors import StratagemError
from stratagem.games.base import Game, Observation
from stratagem.games.spaces import Choice
from stratagem.llm.pipeline import CallContext

PROBE_MAX_TOKENS = 256
"""seed-004 §2: the social games' max_tokens, which their probes share."""
MAGIC_STOP = ("<|endoftext|>", "<EOS>")
"""seed-004 §2: the stop tokens of every call."""
MAGIC_TEMPERATURE = 0.0
"""seed-004 §2: temperature 0 everywhere (an entry's own temperature overrides it)."""


class MagicOptions(BaseModel):
    """The `options` a `magic` agent entry takes (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")

    code_compat: bool = False
    wording: Literal["paper", "code"] = "paper"
    replay: bool = False
    probes: bool = True
    several_votes: Several = "reask"


class StrippedParser:
    """seed-004 §2: the reply is stripped of a leading name tag and anything from <EOS> on
    before it is read."""

    def __init__(self, inner: Parser, agent_name: str) -> None:
        self.inner = inner
        self.agent_name = agent_name
        self.name = getattr(inner, "name", "magic")

    def parse(self, text: str, labels: Sequence[str]) -> Any:
        return self.inner.parse(strip_reply(text, self.agent_name), labels)


class MagicPlayer(LLMAgent):
    def __init__(
        self,
        client: LLMClient,
        game: Game,
        options: MagicOptions | None = None,
        *,
        name: str | None = None,
        **settings: Any,
    ) -> None:
        profile = profile_for(game)
        if profile is None:
            raise StratagemError(f"the magic player has no prompts for '{game.name}'")
        if settings.get("temperature") is None:
            settings["temperature"] = MAGIC_TEMPERATURE
        super().__init__(client, name=name or f"magic:{client.model}", **settings)
        self.game = game
        self.profile = profile
        self.options = options or MagicOptions()
        self.prober = Prober(self, game) if self.options.probes else None

    @property
    def wording(self) -> Wording:
        return self.options.wording

    async def act(self, observation: Observation) -> Decision:
        space = observation.legal
        if space is None:
            raise StratagemError(f"agent '{self.name}' was asked to act with no move to make")
        replayed = self._replay(observation)
        if replayed is not None:
            return Decision(replayed, extra={"replayed": True})
        turn = self.turn(observation)
        labels = space.labels if isinstance(space, Choice) else ()
        decision = await self.ask(observation, turn, labels, "decision")
        return self.invalid.apply(decision, labels)

    def turn(self, observation: Observation) -> Turn:
        turn = self.profile.turn(self.game, observation, self.wording, self.options.code_compat)
        several = self.options.several_votes
        if isinstance(turn.parser, VoteParser) and several != turn.parser.several:
            return replace(turn, parser=replace(turn.parser, several=several))
        return turn

    def turn_for_probe(
        self,
        observation: Observation,
        request: str,
        parser: Parser,
        constraint: dict[str, Any] | None = None,
    ) -> Turn:
        """A hidden question in this seat's chat (a probe): the seat's system prompt, the
        question as the request, the social games' reply length."""
        system = self.profile.system(self.game, observation, self.wording)
        return Turn(system, request, PROBE_MAX_TOKENS, parser, constraint or {})

    async def ask(
        self, observation: Observation, turn: Turn, labels: Sequence[str], purpose: str
    ) -> Decision:
        """One call (and its re-asks) with this seat's chat, `turn`'s prompts and parser."""
        me = observation.player
        messages = assemble(turn.system, observation.events, me, turn.request)
        max_tokens = self.max_tokens if self.max_tokens is not None else turn.max_tokens
        kwargs: dict[str, Any] = {"temperature": self.temperature, "max_tokens": max_tokens,
                                  "seed": self.request_seed(), "stop": MAGIC_STOP}  # fmt: skip
        if self.constrain:
            kwargs.update(turn.constraint)
        return await decide_with_reasks(
            self.client,
            messages,
            kwargs,
            StrippedParser(turn.parser, seat_name(me)),
            labels,
            self.max_reasks,
            CallContext(self._episode_id, me, observation.moment(), purpose),
            plain_reask,
        )

    async def debrief(self, observation: Observation) -> Sequence[Answer]:
        """The hidden probes of seed-004 §6.1 due at this moment (social games only)."""
        if self.prober is None:
            return ()
        return await self.prober.due(observation)

    def _replay(self, observation: Observation) -> Any:
        """A fixed defender's recorded clue or first proposal, while the game follows the
        recording (the game offers it only then)."""
        if not self.options.replay:
            return None
        for field in ("recorded_clue", "recorded_proposal"):
            value = getattr(observation, field, None)
            if value is not None:
                return value
        return None


def _build(settings: Any, client: LLMClient, game: Game) -> MagicPlayer:
    from stratagem.agents.plain import common_settings

    options = MagicOptions.model_validate(settings.options)
    return MagicPlayer(client, game, options, **common_settings(settings))


def _calls(settings: Any, game: Game) -> float:
    """A decision's call, and the §6.1 probes per decision in the social games: Chameleon, 6
    probes over 2 decisions (clue, vote); Undercover, 4 over 3 (2 clues, vote)."""
    if not MagicOptions.model_validate(settings.options).probes:
        return 1.0
    return {"chameleon": 1 + 6 / 2, "undercover": 1 + 4 / 3}.get(game.name, 1.0)


def _plays(game: Game) -> str | None:
    if profile_for(game) is not None:
        return None
    return "it plays seed-004's games (chameleon, undercover, cost-sharing, npd3, public-good)"


register(
    Architecture(
        "magic",
        "a seat of seed-004's chat games as the study's code plays it (§2): the chat so far, "
        "the study's prompts, temperature 0; strict parsing with re-asks",
        _build,
        _plays,
        calls=_calls,
        options=MagicOptions,
    )
)
