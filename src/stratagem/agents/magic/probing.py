"""Asking the hidden probes of seed-004 §6.1 at their moments, through a player's own chat.

The episode loop calls `Agent.debrief` before the first step and after every step; a prober
works out from the seat's observation how many clues have been given, and asks what is due
(`probes.probes_due`): in Chameleon the role probe before each clue and the belief probe after
it, in Undercover both after each full round. A probe is one more call with the seat's chat and
the probe as the request; nobody else sees it (answers are stored hidden). An answer that does
not follow the probe's template is re-asked like a decision and, if it never does, stored as not
relevant, which the metrics count as wrong (§10.10), never guessed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from stratagem.agents.magic.probes import (
    ROLES,
    ProbeKind,
    SocialGame,
    parse_belief_answer,
    parse_self_identification,
    probe_text,
    probes_due,
)
from stratagem.agents.parsing import ParseError
from stratagem.agents.questions import Answer
from stratagem.games.base import Game, Observation
from stratagem.games.magic.social_deduction import SEATS

if TYPE_CHECKING:
    from stratagem.agents.magic.player import MagicPlayer

CLUE_KIND = "clue"
PROBE_PREFIX = "magic-"


@dataclass(frozen=True)
class ProbeParser:
    """Accepts an answer that follows its probe's template; the value is what metrics read."""

    game: SocialGame
    kind: ProbeKind
    seat: int
    name: str = "magic-probe"

    def parse(self, text: str, labels: Sequence[str] = ()) -> str:
        if self.kind == "consistency":
            found = parse_self_identification(text)
            if found.player is None or found.role is None:
                raise ParseError('answer with the template "I am Player xx, my role is ..."')
            return f"{found.player}|{found.role}"
        factor = parse_belief_answer(self.game, text, self.seat)
        if not factor.parsed:
            raise ParseError("answer in the format asked, one line per player")
        return json.dumps([list(row) for row in factor.factor])


class Prober:
    def __init__(self, player: MagicPlayer, game: Game) -> None:
        self.player = player
        name = getattr(game, "name", "")
        self.game: SocialGame | None = (
            "chameleon" if name == "chameleon" else "undercover" if name == "undercover" else None
        )
        self._done: set[tuple[str | None, int, str]] = set()

    async def due(self, observation: Observation) -> Sequence[Answer]:
        if self.game is None:
            return ()
        clues = sum(1 for e in observation.events if e.kind == CLUE_KIND)
        kinds: list[tuple[str, ProbeKind]] = []
        if clues > 0:
            kinds += [("after_clue", k) for k in probes_due(self.game, "after_clue", clues - 1)]
        if clues < self._clue_count():
            kinds += [("before_clue", k) for k in probes_due(self.game, "before_clue", clues)]
        answers = []
        episode = self.player._episode_id
        for moment, kind in kinds:
            key = (episode, clues, f"{moment}:{kind}")
            if key in self._done:  # a step without a clue (a vote) asks nothing again
                continue
            self._done.add(key)
            index = clues - 1 if moment == "after_clue" else clues
            answers.append(await self._ask(observation, kind, f"{moment}:{index}"))
        return answers

    def _clue_count(self) -> int:
        game: Any = self.player.game
        rounds = int(getattr(game, "rounds", 1)) if self.game == "undercover" else 1
        return rounds * int(game.n_players)

    async def _ask(self, observation: Observation, kind: ProbeKind, when: str) -> Answer:
        """One probe; its id says when it was asked ("magic-belief@after_clue:2": after the
        third clue), which the metrics read as the probe's time."""
        seat = observation.player
        role = None
        if self.game == "chameleon":
            role = "chameleon" if getattr(observation, "is_chameleon", False) else "non-chameleon"
        assert self.game is not None
        question = probe_text(self.game, kind, seat, role)
        constraint = {}
        if kind == "consistency":  # the template's answers (the reasoning after it is optional)
            roles = (*ROLES[self.game], *(("not sure",) if self.game == "undercover" else ()))
            constraint["choices"] = tuple(
                f"I am {name}, my role is {r}" for name in SEATS for r in roles
            )
        parser = ProbeParser(self.game, kind, seat)
        turn = self.player.turn_for_probe(observation, question, parser, constraint)
        decision = await self.player.ask(observation, turn, (), f"probe:{kind}")
        return Answer(
            question_id=f"{PROBE_PREFIX}{kind}@{when}",
            question=question,
            raw=decision.raw[-1] if decision.raw else "",
            parsed=decision.action if isinstance(decision.action, str) else None,
            relevant=decision.valid,
            error=decision.error,
            attempts=decision.attempts,
            tokens=decision.tokens,
            messages=decision.messages,
        )
