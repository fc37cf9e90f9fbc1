"""What every game's PGM pipeline shares (seed-004 §7.3): the pipeline interface and registry,
the analysis parsers, and how analyses become stored answers and beliefs.

A pipeline is one seat's PGM state in one game (its belief M, its latest analyses) and the
game's §7.3 procedure around it. The player (`pgm_player.PgmPlayer`) calls it where the episode
loop gives it a chance:

- `debrief(observation)` after every step: the analyses due then ("after every clue" in
  Chameleon, "end of each round" in the other games);
- `act(observation)` when the seat must move: an analysis due just before its own move (the
  Undercover clue), then the move as the pipeline changes it (a clue prompt naming the belief's
  target, the belief vote, the PGM Decision Prompt); None plays the move as the magic player;
- `injected(observation, purpose)`: the seat's own hidden analyses that go back into a call's
  chat, as its own last messages (the code appends them after the visible messages, §2).

One pipeline per game type, in a registry, so the player has no switch on games.

Every analysis is an ordinary call of the seat (cached, counted and costed like any), with the
purpose `PURPOSE`. It is stored as an answer (question id "pgm-analysis@<when>", "when" as the
metric probes name their moments: "after_clue:2" is after the third clue) and its matrices as
beliefs (`matrix_beliefs`). An analysis that does not follow its template is re-asked like a
decision; one that never does is recorded invalid (F = None, M unchanged), never read as zeros
(§10.10). With `code_compat` the study's readings apply instead: nothing is re-asked and what
the code's parser reads (possibly nothing) updates M, as the code updates it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from stratagem.agents.base import Belief, Decision
from stratagem.agents.magic.analysis_parse import (
    ParsedFactor,
    parse_probability_matrix,
    row_stochastic,
)
from stratagem.agents.magic.chat import seat_name, strip_reply
from stratagem.agents.parsing import ParseError
from stratagem.agents.questions import Answer
from stratagem.games.base import Game, Observation

if TYPE_CHECKING:
    from stratagem.agents.magic.pgm_player import PgmPlayer

PURPOSE = "pgm-analysis"
"""The purpose of every PGM analysis call (the store's llm_calls.purpose; its re-asks are
"pgm-analysis:reask", `parsing.reask_purpose`)."""
QUESTION_PREFIX = "pgm-analysis@"
PGM_MAX_TOKENS = 256
"""seed-004 §2: "PGM players always get 256" (every call of a PGM seat)."""


class Pipeline:
    """One seat's PGM pipeline in one game (see the module docstring); the defaults do
    nothing, so a game's pipeline overrides what its §7.3 procedure needs."""

    def __init__(self, player: PgmPlayer) -> None:
        self.player = player
        self.reset()

    def reset(self) -> None:
        """Forget the previous episode."""
        return None

    async def act(self, observation: Observation) -> Decision | None:
        return None

    async def debrief(self, observation: Observation) -> list[Answer]:
        return []

    def injected(self, observation: Observation, purpose: str) -> tuple[str, ...]:
        return ()


PipelineFactory = Callable[["PgmPlayer"], Pipeline]
PIPELINES: dict[type[Game], PipelineFactory] = {}


def register(game_type: type[Game], factory: PipelineFactory) -> None:
    PIPELINES[game_type] = factory


def pipeline_for(game: Game) -> PipelineFactory | None:
    return PIPELINES.get(type(game))


# -- parsers ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FactorParser:
    """A text analysis read into F (`analysis_parse`), returned as JSON (a parser returns text).

    `strict`: an answer with no readable entry is a parse error, so it is re-asked and, if it
    never reads, recorded invalid; otherwise (`code_compat`) whatever was read is F.
    """

    read: Callable[[str], ParsedFactor]
    strict: bool
    hint: str
    name: str = "pgm-analysis"

    def parse(self, text: str, labels: Sequence[str] = ()) -> str:
        found = self.read(text)
        if self.strict and not found.parsed:
            raise ParseError(self.hint)
        return json.dumps([list(row) for row in found.factor])


@dataclass(frozen=True)
class MatrixParser:
    """A w.ProPGM answer (seed-004 §7.1, §10.13): exactly one n x n probability matrix, returned
    row-normalised as JSON; anything else is a parse error (re-asked, then invalid)."""

    n: int = 3
    name: str = "pgm-matrix"

    def parse(self, text: str, labels: Sequence[str] = ()) -> str:
        found = parse_probability_matrix(text, self.n)
        if found is None:
            raise ParseError(
                f"answer with one {self.n}x{self.n} matrix of probabilities such as "
                "[[0.3,0.2,0.5],[0.1,0.4,0.5],[0.3,0.3,0.4]], one row per player"
            )
        return json.dumps(row_stochastic(found).tolist())


@dataclass(frozen=True)
class NonEmptyParser:
    """A free-text analysis (the game-theory PGM prompts have nothing numeric to read): any
    reply that says something; an empty one is re-asked when `strict`."""

    strict: bool = True
    name: str = "pgm-text"

    def parse(self, text: str, labels: Sequence[str] = ()) -> str:
        if self.strict and not text.strip():
            raise ParseError("the reply is empty; answer with the template")
        return text


# -- what is stored --------------------------------------------------------------------------------


def matrix_beliefs(
    kind: str, matrix: ArrayLike, owner: int, question_id: str, valid: bool = True
) -> tuple[Belief, ...]:
    """One belief per row of a 3x3 matrix (F, or M after an analysis).

    Row r is player r's perspective as the owner models it (§7.2): the owner's own row is a
    first-order belief (order 1), another player's row a second-order belief about that player
    (order 2, `about_player` = r). `content` is {"kind": "factor" | "belief", "perspective": r,
    "row": [... one value per seat ...], "analysis": question id, "valid": whether the analysis
    was read}; an invalid analysis stores its (unchanged) M rows with "valid": false and no F.
    """
    rows = np.asarray(matrix, dtype=np.float64)
    out = []
    for r, row in enumerate(rows):
        content: dict[str, Any] = {
            "kind": kind,
            "perspective": r,
            "row": [float(x) for x in row],
            "analysis": question_id,
            "valid": valid,
        }
        out.append(Belief(1 if r == owner else 2, content, None if r == owner else r))
    return tuple(out)


def reply_text(decision: Decision, seat: int) -> str:
    """The last reply as the chat keeps it (stripped as §2 strips replies); "" if none."""
    return strip_reply(decision.raw[-1], seat_name(seat)) if decision.raw else ""


def analysis_answer(
    question_id: str,
    question: str,
    decision: Decision,
    parsed: str | None,
    *,
    error: str | None = None,
    beliefs: tuple[Belief, ...] = (),
) -> Answer:
    """An analysis call as a stored answer: hidden, re-readable, relevant when it was read."""
    return Answer(
        question_id=question_id,
        question=question,
        raw=decision.raw[-1] if decision.raw else "",
        parsed=parsed,
        relevant=parsed is not None,
        error=error if error is not None else decision.error,
        attempts=decision.attempts,
        tokens=decision.tokens,
        messages=decision.messages,
        beliefs=beliefs,
    )
