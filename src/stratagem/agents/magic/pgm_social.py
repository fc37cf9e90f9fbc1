"""The PGM pipelines of the social deduction games (seed-004 §7.2, §7.3): Chameleon and Undercover.

Both keep a belief M (row r: who player r thinks is the spy, as this seat models it) and update
it from each analysis's factor F (`belief.update`, `factor_scale`).

Chameleon (§7.3): after every clue, each PGM seat answers the view prompt of its role, with the
view demo appended to the global prompt; the answer is read line by line into F (the code's
reading, `analysis_parse.parse_chameleon_analysis`). Only its latest analysis goes back into its
later calls (its clue and the §6.1 probes; not its vote, as in the code). At its clue it gets
the clue prompt naming the target of `belief.chameleon_clue_target`, with the clue demo. Its
vote is the argmax of its own row (`belief.chameleon_vote`) over the seats the game lets it vote
for: only the chameleon skips itself (§7.2), and a non-chameleon may vote for itself where the
game counts self-votes (`self_votes="count"`, the code's tally), not where it refuses them.

Undercover (§7.3): an analysis is two calls with `single_history=True` (one user message with
the clues embedded, no system prompt, no history): the is_undercover question, then the
follow-ups its self-diagnosis calls for. It runs before a PGM seat's clue, unless the seat
speaks first in the round, and for every PGM seat at the end of each round. The study asked a
gpt-3.5-turbo helper to read the self-diagnosis; here it is read deterministically
(`analysis_parse.parse_self_diagnosis`, §10.8), and an answer it cannot read is taken as
"not sure" (the helper's own default), stored as unreadable and counted in the run's summary.
The follow-ups are read into F. The last two analysis messages (the two answers) go back into
the seat's clue and probe calls. Its clue prompt follows
its self-diagnosis (`undercover_clue`); votes stay text.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from stratagem.agents.base import Belief, Decision
from stratagem.agents.magic import texts
from stratagem.agents.magic.analysis_parse import (
    parse_chameleon_analysis,
    parse_self_diagnosis,
    parse_undercover_analysis,
)
from stratagem.agents.magic.belief import (
    Matrix,
    Verdict,
    chameleon_clue_target,
    chameleon_vote,
    init_chameleon,
    init_undercover,
    undercover_clue_target_code,
    undercover_diagnosis,
    update,
)
from stratagem.agents.magic.chat import seat_name, system_message
from stratagem.agents.magic.pgm_pipeline import (
    PGM_MAX_TOKENS,
    PURPOSE,
    QUESTION_PREFIX,
    FactorParser,
    MatrixParser,
    Pipeline,
    analysis_answer,
    matrix_beliefs,
    register,
    reply_text,
)
from stratagem.agents.magic.pgm_requests import (
    chameleon_clue_request,
    chameleon_view_request,
    undercover_clue_request,
    undercover_diagnosis_request,
    undercover_followup_request,
)
from stratagem.agents.magic.profiles import Turn
from stratagem.agents.parsing import Parser
from stratagem.agents.questions import Answer
from stratagem.games.base import Observation
from stratagem.games.magic.chameleon import ChameleonGame, ChameleonObservation
from stratagem.games.magic.social_deduction import CLUE, N_SEATS, VOTE, seat_of
from stratagem.games.magic.undercover import UndercoverGame, UndercoverObservation
from stratagem.games.spaces import Choice

VOTE_NOTE = "pgm-vote"
"""The hidden event that records a PGM Chameleon vote's belief and text choices (`_vote`)."""

MATRIX_REQUEST = (
    "\nInstead of the format above, answer with a 3x3 matrix of probabilities, such as "
    "[[0.3,0.2,0.5],[0.1,0.4,0.5],[0.3,0.3,0.4]]: row j is what Player j thinks, and each "
    "element of a row is the probability that the player of its column (Player 1, 2, 3) is "
    "the chameleon."
)
"""w.ProPGM (seed-004 §7.1) has no prompt in the study (§10.13 [I]: "Reuse the view prompt,
asking for a 3x3 matrix, row j = player j's probabilities"): this sentence, ours, is appended
to the view prompt; its example is §7.1's (with its "0.2.0.5" typo mended)."""

CHAMELEON_HINT = (
    'follow the format: under "As Player x," and "I think now Player y thinks:", one line per '
    'player starting "Player z is ..." with "more suspicious", "less suspicious" or "no change"'
)
UNDERCOVER_HINT = (
    'answer each question with the template "I think Player xx is undercover, because..." or '
    '"I think Player xx thinks Player xx is undercover, because..."'
)


def _reinjected(purpose: str, phase: str) -> bool:
    """The code re-injects analyses in the clue and probe phases (§7.3), not into votes, the
    guess or analyses."""
    return purpose.startswith("probe:") or (purpose == "decision" and phase == CLUE)


# -- Chameleon -----------------------------------------------------------------------------------


class ChameleonPipeline(Pipeline):
    def reset(self) -> None:
        self.belief: Matrix | None = None
        self.latest: str | None = None
        self.analysed: set[int] = set()

    def matrix(self, obs: ChameleonObservation) -> Matrix:
        """M, initialised from the seat's role at first use (§7.2)."""
        if self.belief is None:
            self.belief = init_chameleon(obs.player, obs.is_chameleon)
        return self.belief

    def injected(self, observation: Observation, purpose: str) -> tuple[str, ...]:
        obs = _chameleon(observation)
        if self.latest is None or not _reinjected(purpose, obs.phase):
            return ()
        return (self.latest,)

    async def debrief(self, observation: Observation) -> list[Answer]:
        """The view analysis after the latest clue, once (a vote step asks nothing)."""
        obs = _chameleon(observation)
        said = len(obs.clues)
        if said == 0 or said - 1 in self.analysed:
            return []
        self.analysed.add(said - 1)
        return [await self._view(obs, f"after_clue:{said - 1}")]

    async def _view(self, obs: ChameleonObservation, when: str) -> Answer:
        player, options = self.player, self.player.options
        seat, me = obs.player, seat_name(obs.player)
        role = "chameleon" if obs.is_chameleon else "non_chameleon"
        system = system_message(
            texts.text("chameleon_global") + texts.text(f"chameleon_view_demo_{role}"),
            me,
            texts.render("chameleon_role_desc", player=me),
        )
        request = chameleon_view_request(seat, obs.is_chameleon)
        parser: Parser
        if options.analysis == "matrix":
            request += MATRIX_REQUEST
            parser = MatrixParser()
        else:
            parser = FactorParser(
                lambda text: parse_chameleon_analysis(text, seat),
                strict=not options.code_compat,
                hint=CHAMELEON_HINT,
            )
        decision = await player.ask(obs, Turn(system, request, PGM_MAX_TOKENS, parser), (), PURPOSE)
        self.latest = reply_text(decision, seat) or self.latest  # an empty reply is no message
        question_id = QUESTION_PREFIX + when
        m = self.matrix(obs)
        beliefs: tuple[Belief, ...] = ()
        if decision.valid:
            read = np.array(json.loads(str(decision.action)), dtype=np.float64)
            if options.analysis == "matrix":
                m = read  # §7.1: the normalised matrix is the belief
            else:
                beliefs = matrix_beliefs("factor", read, seat, question_id)
                m = update(m, read, options.factor_scale)
            self.belief = m
        beliefs += matrix_beliefs("belief", m, seat, question_id, decision.valid)
        parsed = str(decision.action) if decision.valid else None
        return analysis_answer(question_id, request, decision, parsed, beliefs=beliefs)

    async def act(self, observation: Observation) -> Decision | None:
        obs = _chameleon(observation)
        if obs.phase == CLUE:
            return await self._clue(obs)
        if obs.phase == VOTE and self.player.options.vote_by_belief:
            return await self._vote(obs)
        return None  # the guess, or the text vote: as the magic player

    async def _clue(self, obs: ChameleonObservation) -> Decision:
        player, seat = self.player, obs.player
        target = chameleon_clue_target(
            self.matrix(obs), seat, obs.is_chameleon, player.options.tie_rule
        )
        request = chameleon_clue_request(seat, target, obs.is_chameleon)
        turn = replace(player.turn(obs), request=request)
        decision = await player.ask(obs, turn, (), "decision")
        extra = {**decision.extra, "pgm_target": seat_name(target)}
        return player.invalid.apply(replace(decision, extra=extra), ())

    async def _vote(self, obs: ChameleonObservation) -> Decision:
        """The belief argmax (§7.2, §10.7), with the text vote asked when `text_vote` (the code
        asks it, then overrides it). Both are kept for the record as a hidden `VOTE_NOTE` event
        {"belief": seat, "text": seat or None (not asked, or never read), "row": own row of M},
        so Judgment can score either (§6.2)."""
        player, seat = self.player, obs.player
        m = self.matrix(obs)
        space = obs.legal
        labels = space.labels if isinstance(space, Choice) else ()
        allowed = [seat_of(label) for label in labels]
        choice = chameleon_vote(m, seat, obs.is_chameleon, player.options.tie_rule, allowed)
        label = seat_name(choice)
        note: dict[str, Any] = {"belief": choice, "text": None, "row": [float(x) for x in m[seat]]}
        if not player.options.text_vote:
            return Decision(label, notes={VOTE_NOTE: note})
        said = await player.ask(obs, player.turn(obs), labels, "decision")
        if said.valid and isinstance(said.action, str):
            note["text"] = seat_of(said.action)
        return replace(said, action=label, valid=True, error=None, notes={VOTE_NOTE: note})


def _chameleon(observation: Observation) -> ChameleonObservation:
    assert isinstance(observation, ChameleonObservation)
    return observation


# -- Undercover ----------------------------------------------------------------------------------


class DiagnosisParser:
    """The is_undercover answer's self-diagnosis, or "" when it cannot be read: never a parse
    error, since an unreadable one is taken as "not sure" (§10.8), not re-asked."""

    name = "pgm-diagnosis"

    def parse(self, text: str, labels: Sequence[str] = ()) -> str:
        return parse_self_diagnosis(text) or ""


class UndercoverPipeline(Pipeline):
    def reset(self) -> None:
        self.belief: Matrix = init_undercover()
        self.verdict: Verdict = "not sure"
        """The latest text self-diagnosis (the code's `_undercover_self_diagnoses`)."""
        self.latest: tuple[str, ...] = ()
        """The two answers of the latest analysis: "the last 2 PGM messages" (§7.3)."""
        self.analysed: set[str] = set()

    def injected(self, observation: Observation, purpose: str) -> tuple[str, ...]:
        obs = _undercover(observation)
        if not self.latest or not _reinjected(purpose, obs.phase):
            return ()
        return self.latest

    async def debrief(self, observation: Observation) -> list[Answer]:
        """The analysis at the end of each round (every PGM seat), once."""
        obs = _undercover(observation)
        said = len(obs.clues)
        when = f"after_clue:{said - 1}"
        if said == 0 or said % N_SEATS or when in self.analysed:
            return []
        self.analysed.add(when)
        answers, _ = await self._analyse(obs, when)
        return answers

    async def act(self, observation: Observation) -> Decision | None:
        obs = _undercover(observation)
        if obs.phase != CLUE:
            return None  # the vote: text, as the magic player (§7.2)
        player, said = self.player, len(obs.clues)
        beliefs: tuple[Belief, ...] = ()
        when = f"before_clue:{said}"
        if said % N_SEATS and when not in self.analysed:  # not the first speaker of the round
            self.analysed.add(when)
            answers, beliefs = await self._analyse(obs, when)
            # Its beliefs are stored with the clue's step; the answers at the next debrief.
            player.hold([replace(answer, beliefs=()) for answer in answers])
        request, verdict, target = self._clue_request(obs)
        decision = await player.ask(obs, replace(player.turn(obs), request=request), (), "decision")
        extra = {**decision.extra, "pgm_diagnosis": verdict}
        if target is not None:
            extra["pgm_target"] = seat_name(target)
        return player.invalid.apply(replace(decision, extra=extra, beliefs=beliefs), ())

    def _clue_request(self, obs: UndercoverObservation) -> tuple[str, Verdict, int | None]:
        """The clue prompt of the self-diagnosis (`undercover_clue`), its verdict and target."""
        seat, ties = obs.player, self.player.options.tie_rule
        if self.player.options.undercover_clue == "belief":
            found = undercover_diagnosis(self.belief, seat, ties=ties)
            verdict, target = found.verdict, found.target
        else:
            verdict = self.verdict
            target = (
                undercover_clue_target_code(self.belief, seat, ties) if verdict == "no" else None
            )
        return undercover_clue_request(seat, verdict, target), verdict, target

    async def _analyse(
        self, obs: UndercoverObservation, when: str
    ) -> tuple[list[Answer], tuple[Belief, ...]]:
        """The two calls of one analysis; its answers, and F and M as beliefs."""
        player, options = self.player, self.player.options
        seat, clues = obs.player, [clue.text for clue in obs.clues]
        question_id = QUESTION_PREFIX + when
        first = undercover_diagnosis_request(clues, seat, obs.word)
        asked = await player.ask_alone(obs, first, DiagnosisParser())
        said = reply_text(asked, seat)
        verdict: Verdict | None = parse_self_diagnosis(said) if asked.valid else None
        error = None
        if verdict is None:
            # Stored with the answer as unreadable; the run's summary counts such answers.
            error = 'the self-diagnosis could not be read: taken as "not sure"'
        self.verdict = verdict or "not sure"
        diagnosis = analysis_answer(question_id + "/diagnosis", first, asked, verdict, error=error)
        second = undercover_followup_request(clues, seat, obs.word, self.verdict)
        parser = FactorParser(
            lambda text: parse_undercover_analysis(text, seat, code_compat=options.code_compat),
            strict=not options.code_compat,
            hint=UNDERCOVER_HINT,
        )
        followed = await player.ask_alone(obs, second, parser)
        self.latest = tuple(text for text in (said, reply_text(followed, seat)) if text)
        beliefs: tuple[Belief, ...] = ()
        if followed.valid:
            factor = np.array(json.loads(str(followed.action)), dtype=np.float64)
            beliefs = matrix_beliefs("factor", factor, seat, question_id)
            self.belief = update(self.belief, factor, options.factor_scale)
        beliefs += matrix_beliefs("belief", self.belief, seat, question_id, followed.valid)
        parsed = str(followed.action) if followed.valid else None
        analysis = analysis_answer(question_id, second, followed, parsed, beliefs=beliefs)
        return [diagnosis, analysis], beliefs


def _undercover(observation: Observation) -> UndercoverObservation:
    assert isinstance(observation, UndercoverObservation)
    return observation


register(ChameleonGame, ChameleonPipeline)
register(UndercoverGame, UndercoverPipeline)
