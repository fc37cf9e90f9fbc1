"""The PGM-aware MAgIC player (seed-004 §7), registered as the architecture `pgm`.

A `magic` player (§2: the same chat, prompts, parsing and probes) that also keeps the study's
probabilistic graphical model of the other players: before it speaks it analyses the game "from
its own perspective and when it stands in other agents' shoes" (the two-hop mechanism of §7.1),
turns each analysis into a factor F, updates its belief M <- softmax_row(M * (1 + 0.1 F)) (§7.2),
and lets M and the analysis shape its moves, as the study's code does per game (§7.3; the
pipelines are in `pgm_social` and `pgm_theory`):

- Chameleon: a view analysis after every clue; its clue prompt names the target M picks; its
  vote is the argmax of its own row of M (`vote_by_belief`, §10.7);
- Undercover: a two-call analysis without system prompt or history before its clue (unless it
  speaks first) and at the end of each round; the self-diagnosis picks its clue prompt; votes
  stay text;
- Cost Sharing, PD, Public Good: an analysis at the end of every round but the last, re-injected
  into its next decision, which is asked with the PGM Decision Prompt.

Every call of a PGM seat gets 256 tokens (§2) and goes through the same pipeline as a decision
(cached, counted, costed; purpose "pgm-analysis" for analyses). Analyses are stored as hidden
answers ("pgm-analysis@<when>"), F and M as beliefs (`pgm_pipeline.matrix_beliefs`).

Options (the agent entry's `options`): those of `magic` (`code_compat`, `wording`, `replay`,
`probes`), and

- `factor_scale` (0.1, §7.2): the scale of F in the update;
- `vote_by_belief` (true, §7.2 `use_text_vote=False`, §10.7): the Chameleon vote is the belief
  argmax; false plays the text vote;
- `text_vote` (true): with `vote_by_belief`, still ask the text vote, as the code does (its call
  is the vote's; both choices are kept in a hidden "pgm-vote" event), or false to save the call;
- `analysis` ("text"): "text" is w.PGM, the study's analysis; "matrix" is w.ProPGM (§7.1), for
  which the study has no prompt (§10.13): the Chameleon view prompt is sent with a request for
  a 3x3 matrix, row j = player j's probabilities, and the normalised matrix becomes M (§7.1's
  case figure: M is "normalized into scale of 0 to 1"). It changes the Chameleon analysis only,
  the one the study compared the two styles on; the other games keep their text analyses;
- `ties` (none): how M's ties are broken (`belief`): "lowest" (the first index, as §7.2's
  "argmax" reads in numpy), "code" (the code's `argsort()[-1]`: the last index of a tied
  largest value), or none: "lowest" in the paper variant, "code" with `code_compat`;
- `undercover_clue` ("belief"): what picks the Undercover clue prompt: "belief" the self-
  diagnosis of M (§7.2, template and target), "text" the code's own rule (the template from
  the text self-diagnosis, the target from M: `belief.undercover_clue_target_code`);
- `code_quirks` (false): the game-theory quirks of the code (§7.3): seats 2 and 3 already get
  the PGM Decision Prompt in round 1 (PD, PG), only seat 1 gets it in Cost Sharing, and the PD
  PGM role description says "Player 1" to every seat. False is the clean version: every PGM
  seat gets the PGM Decision Prompt from round 2 on, and its own name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Literal

from pydantic import Field

import stratagem.agents.magic.pgm_social
import stratagem.agents.magic.pgm_theory  # noqa: F401  (registers the game-theory pipelines)
from stratagem.agents.base import Decision, LLMClient
from stratagem.agents.magic.belief import FACTOR_SCALE, Ties
from stratagem.agents.magic.chat import seat_name
from stratagem.agents.magic.pgm_pipeline import (
    PGM_MAX_TOKENS,
    PURPOSE,
    Pipeline,
    pipeline_for,
)
from stratagem.agents.magic.player import MAGIC_STOP, MagicOptions, MagicPlayer, StrippedParser
from stratagem.agents.magic.profiles import Turn
from stratagem.agents.parsing import Parser, decide_with_reasks, plain_reask
from stratagem.agents.questions import Answer
from stratagem.agents.registry import Architecture, register
from stratagem.errors import StratagemError
from stratagem.games.base import Event, Game, Observation
from stratagem.llm.pipeline import CallContext
from stratagem.llm.types import Message

INJECTED_KIND = "pgm-analysis"
"""The kind of the hidden own messages a call's chat gets back (never stored as events)."""


class PgmOptions(MagicOptions):
    """The `options` a `pgm` agent entry takes (see the module docstring)."""

    factor_scale: float = Field(default=FACTOR_SCALE, ge=0.0)
    vote_by_belief: bool = True
    text_vote: bool = True
    analysis: Literal["text", "matrix"] = "text"
    ties: Ties | None = None
    undercover_clue: Literal["belief", "text"] = "belief"
    code_quirks: bool = False

    @property
    def tie_rule(self) -> Ties:
        """`ties`, or the variant's rule when unset: seed-004 §7.2's argmax (the first index) in
        the paper variant, the code's `argsort()[-1]` (the last) with `code_compat`."""
        if self.ties is not None:
            return self.ties
        return "code" if self.code_compat else "lowest"


class PgmPlayer(MagicPlayer):
    options: PgmOptions

    def __init__(
        self,
        client: LLMClient,
        game: Game,
        options: PgmOptions | None = None,
        *,
        name: str | None = None,
        **settings: Any,
    ) -> None:
        chosen = options or PgmOptions()
        super().__init__(client, game, chosen, name=name or f"pgm:{client.model}", **settings)
        self.options = chosen
        factory = pipeline_for(game)
        if factory is None:
            raise StratagemError(f"the pgm player has no pipeline for '{game.name}'")
        self.pipeline: Pipeline = factory(self)
        self._held: list[Answer] = []

    def reset(self, seed: int = 0, episode_id: str | None = None) -> None:
        super().reset(seed, episode_id)
        self.pipeline.reset()
        self._held = []

    async def act(self, observation: Observation) -> Decision:
        if self._replay(observation) is None:
            decision = await self.pipeline.act(observation)
            if decision is not None:
                return decision
        return await super().act(observation)

    async def debrief(self, observation: Observation) -> Sequence[Answer]:
        """Analyses made while acting (stored now, with the step), the analyses due after this
        step, then the §6.1 probes: in the code a probe comes after the analyses of its moment,
        and sees the latest one."""
        answers: list[Answer] = [*self._held]
        self._held = []
        answers += await self.pipeline.debrief(observation)
        answers += await super().debrief(observation)
        return answers

    def hold(self, answers: Sequence[Answer]) -> None:
        """Keep answers of analyses made inside `act` for the next `debrief` (the episode loop
        stores answers only from there; it calls it right after the step)."""
        self._held.extend(answers)

    async def ask(
        self, observation: Observation, turn: Turn, labels: Sequence[str], purpose: str
    ) -> Decision:
        """A call with the seat's chat, plus the hidden analyses the pipeline re-injects (§7.3)
        as the seat's own last messages, as the code appends them."""
        mine = self.pipeline.injected(observation, purpose)
        if mine:
            observation = with_own_messages(observation, mine)
        return await super().ask(observation, turn, labels, purpose)

    async def ask_alone(
        self, observation: Observation, request: str, parser: Parser, purpose: str = PURPOSE
    ) -> Decision:
        """A call with `single_history=True` (§7.3, Undercover): one user message, no system
        prompt and no history; re-asked like any call."""
        me = observation.player
        max_tokens = self.max_tokens if self.max_tokens is not None else PGM_MAX_TOKENS
        kwargs = {"temperature": self.temperature, "max_tokens": max_tokens,
                  "seed": self.request_seed(), "stop": MAGIC_STOP}  # fmt: skip
        return await decide_with_reasks(
            self.client,
            [Message("user", request)],
            kwargs,
            StrippedParser(parser, seat_name(me)),
            (),
            self.max_reasks,
            CallContext(self._episode_id, me, observation.moment(), purpose),
            plain_reask,
        )


def with_own_messages(observation: Observation, texts: Sequence[str]) -> Observation:
    """The observation with `texts` appended as the seat's own messages, seen by it alone."""
    me = observation.player
    extra = tuple(
        Event(INJECTED_KIND, {"player": me, "text": text}, frozenset({me})) for text in texts
    )
    return replace(observation, events=(*observation.events, *extra))


# -- calls per decision, for a run's plan ---------------------------------------------------------

CHAMELEON_PROBES = 6
"""§6.1: a role probe before and a belief probe after each of the 3 clues."""
UNDERCOVER_PROBES = 4
"""§6.1: both probes after each of the 2 rounds."""


def calls_per_decision(options: PgmOptions, game: str | None = None) -> float:
    """The most model calls a PGM seat makes per decision in `game` (None: the most over the
    games), re-asks aside, probes included when on:

    - Chameleon (2 decisions: clue, vote): 3 view analyses + the clue + the text vote (if
      asked) [+ 6 probes]: 2.5, or 5.5 with probes (2.0 / 5.0 without the text vote);
    - Undercover, seats 2 and 3 (3 decisions: 2 clues, the vote): 2 rounds x (2 calls before
      the clue + 2 at the end of the round) + 3 [+ 4 probes]: 11/3 (5.0 with probes);
    - PD, PG (5 decisions): 4 analyses + 5: 1.8; Cost Sharing (2 decisions a round): 1.4.
    """
    text_vote = 1 if options.vote_by_belief and options.text_vote else 0
    vote = 1 if not options.vote_by_belief else text_vote
    probes = options.probes
    per_game = {
        "chameleon": (3 + 1 + vote + (CHAMELEON_PROBES if probes else 0)) / 2,
        "undercover": (8 + 3 + (UNDERCOVER_PROBES if probes else 0)) / 3,
        "npd3": 1.8,
        "public-good": 1.8,
        "cost-sharing": 1.4,
    }
    return per_game.get(game or "", max(per_game.values()))


def _build(settings: Any, client: LLMClient, game: Game) -> PgmPlayer:
    from stratagem.agents.plain import common_settings

    options = PgmOptions.model_validate(settings.options)
    return PgmPlayer(client, game, options, **common_settings(settings))


def _plays(game: Game) -> str | None:
    if pipeline_for(game) is not None:
        return None
    return "it plays seed-004's games (chameleon, undercover, cost-sharing, npd3, public-good)"


def _calls(settings: Any, game: Game) -> float:
    options = PgmOptions.model_validate(getattr(settings, "options", {}) or {})
    return calls_per_decision(options, game.name)


register(
    Architecture(
        "pgm",
        "seed-004's PGM-aware agent (§7): a magic seat that analyses the others' views before "
        "it moves, keeps a belief matrix over who is the spy, and lets it pick its clues and "
        "Chameleon votes; the PGM prompts in the game-theory games",
        _build,
        _plays,
        calls=_calls,
        options=PgmOptions,
    )
)
