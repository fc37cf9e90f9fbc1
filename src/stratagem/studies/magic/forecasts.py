"""MAgIC's stored beliefs as forecasts (`analysis.forecasts`) of who the spy was, for the report's
calibration section. An addition: seed-004 scores beliefs only by their argmax (§6.3).

The truth is the spy seat the outcome event records (the chameleon or the undercover). What
each stored belief becomes:

- **PGM belief M** (seed-004 §7.2, `agents/magic/pgm_pipeline.matrix_beliefs`): the owner's own
  row, stored after each analysis, is a probability vector over the seats: a forecast of who
  the spy is (kind `PGM_BELIEF`). w.ProPGM's matrix answer is stored the same way and scored
  the same. Not scored, each counted: the chameleon's own row (it is told it is the spy), a row
  stored after an unreadable analysis (M unchanged: a repeat of the previous forecast), the
  other rows (whom the owner thinks another seat suspects: nobody records what that seat
  believed as an event) and the factor rows F (changes of suspicion, which M integrates).
- **Belief probe** (§6.1, §6.3): F[a][b] in {-1, 0, +1} is no probability; the respondent's own
  row names its suspect when one seat is strictly the most suspicious, a point guess scored
  right or wrong (kind `PROBE_SPY`). Not scored, each counted: a tie for the most suspicious
  seat (§6.3's code takes the first seat; here a tie is no guess), an unreadable answer, the
  chameleon's answer (it knows), and the second-order rows (scored by the study's Reasoning
  "inter" deduction, against another seat's statement, not against an event).
- **Role probe** (§6.1, §6.5) in Undercover, where nobody is told its role: the role the seat
  states is a point guess of its own role (kind `ROLE`), without the seat name the study's
  Self-awareness also checks. "Not sure" and unreadable answers are counted, not scored; in
  Chameleon every seat is told its role, so its answers are a consistency check, not a belief.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from stratagem.analysis.episodes import EpisodeData
from stratagem.analysis.forecasts import Forecast, ForecastSet
from stratagem.analysis.report_data import ReportData
from stratagem.errors import StratagemError
from stratagem.experiments.records import AnswerRecord, BeliefRecord
from stratagem.studies.magic.entities import seat_entities
from stratagem.studies.magic.extract import PROBE, _belief, _role_answer, base_game
from stratagem.studies.magic.probes import ANSWER_ROLES, parse_role_answer
from stratagem.studies.magic.records import MAJORITY_ROLES, SPY_ROLES, split_entity

PGM_BELIEF = "PGM belief M: who is the spy"
PROBE_SPY = "belief probe: who is the spy (point guess)"
ROLE = "role probe: own role (point guess)"

NO_SPY = "episode without a recorded spy seat"
PGM_SPY_KNOWS = "PGM belief M of the chameleon: it is told it is the spy"
PGM_UNREAD = "PGM belief M after an unreadable analysis: unchanged, a repeat"
PGM_SECOND = "PGM belief M, rows of other seats: what another seat suspects is no event"
PGM_DAMAGED = "PGM belief M row not a probability vector over the seats (damaged)"
PGM_FACTOR = "PGM factor rows F: changes of suspicion, scored through M"
PROBE_SPY_KNOWS = "belief probe of the chameleon: it knows it is the spy"
PROBE_UNREAD = "belief probe answer unreadable"
PROBE_TIE = "belief probe: a tie for the most suspicious seat, no single guess"
PROBE_SECOND = "belief probe, rows of other seats: scored by Reasoning (inter), no event"
ROLE_TOLD = "role probe in Chameleon: every seat is told its role"
ROLE_UNREAD = "role probe answer unreadable"
ROLE_UNSURE = "role probe answered not sure: no guess"


def _spy(episode: EpisodeData, n: int) -> int | None:
    outcomes = [
        e.data for e in episode.events if e.kind == "outcome" and isinstance(e.data, Mapping)
    ]
    spy = outcomes[-1].get("spy") if outcomes else None
    if isinstance(spy, bool) or not isinstance(spy, int) or not 0 <= spy < n:
        return None
    return spy


def _pgm(
    out: ForecastSet, who: Sequence[tuple[str, str]], game: str, eid: str, spy: int,
    beliefs: Sequence[BeliefRecord],
) -> None:  # fmt: skip
    for b in beliefs:
        content: Any = b.content
        if not isinstance(content, Mapping) or content.get("kind") not in ("belief", "factor"):
            continue
        if content["kind"] == "factor":
            out.skip(PGM_FACTOR)
        elif content.get("perspective") != b.player:
            out.skip(PGM_SECOND)
        elif game == "chameleon" and b.player == spy:
            out.skip(PGM_SPY_KNOWS)
        elif content.get("valid") is False:
            out.skip(PGM_UNREAD)
        else:
            model, agent = who[b.player]
            try:
                row = tuple(float(x) for x in content.get("row") or ())
                if len(row) != len(who):
                    raise ValueError(row)
                when = str(content.get("analysis") or b.round)
                out.forecasts.append(
                    Forecast(eid, model, agent, game, PGM_BELIEF, spy, row, b.player, when)
                )
            except (StratagemError, TypeError, ValueError):
                out.skip(PGM_DAMAGED)


def _probe_spy(
    out: ForecastSet, who: Sequence[tuple[str, str]], game: str, eid: str, spy: int,
    answer: AnswerRecord, n: int,
) -> None:  # fmt: skip
    seat = answer.player
    if game == "chameleon" and seat == spy:
        out.skip(PROBE_SPY_KNOWS)
        return
    f = _belief(answer, n)
    if f is None:
        out.skip(PROBE_UNREAD)
        return
    out.skip(PROBE_SECOND, n - 1)
    row = f[seat]
    top = [k for k, x in enumerate(row) if x == max(row)]
    if len(top) > 1:
        out.skip(PROBE_TIE)
        return
    model, agent = who[seat]
    out.forecasts.append(
        Forecast.point(
            eid, model, agent, game, PROBE_SPY, top[0] == spy, seat=seat, when=answer.question_id
        )
    )


def _role(
    out: ForecastSet, who: Sequence[tuple[str, str]], game: str, eid: str, spy: int,
    answer: AnswerRecord,
) -> None:  # fmt: skip
    if game == "chameleon":
        out.skip(ROLE_TOLD)
        return
    text = _role_answer(answer)
    stated = parse_role_answer(text)[1] if text is not None else None
    if stated == "not sure":
        out.skip(ROLE_UNSURE)
        return
    if stated not in ANSWER_ROLES.values():
        out.skip(ROLE_UNREAD)
        return
    seat = answer.player
    role = SPY_ROLES[game] if seat == spy else MAJORITY_ROLES[game]
    model, agent = who[seat]
    out.forecasts.append(
        Forecast.point(
            eid,
            model,
            agent,
            game,
            ROLE,
            stated == ANSWER_ROLES[role],
            seat=seat,
            when=answer.question_id,
        )
    )


def magic_forecasts(report: ReportData, episodes: Sequence[EpisodeData]) -> ForecastSet:
    """The forecasts of every seat of every Chameleon and Undercover episode (module
    docstring), each under its seat's model and architecture (`entities.seat_entities`)."""
    out = ForecastSet()
    for e in episodes:
        game = base_game(e.record.game)
        if game not in SPY_ROLES:
            continue
        n = len(e.seats)
        eid = e.record.id
        beliefs = report.store.beliefs(eid)
        answers = [a for a in report.store.answers(eid) if 0 <= a.player < n]
        if not beliefs and not any(PROBE.match(a.question_id) for a in answers):
            continue
        spy = _spy(e, n)
        if spy is None:
            out.skip(NO_SPY)
            continue
        who = [split_entity(x) for x in seat_entities(e, report.config)]
        _pgm(out, who, game, eid, spy, beliefs)
        for a in answers:
            found = PROBE.match(a.question_id)
            if found is None:
                continue
            if found.group(1) == "belief":
                _probe_spy(out, who, game, eid, spy, a, n)
            else:
                _role(out, who, game, eid, spy, a)
    return out
