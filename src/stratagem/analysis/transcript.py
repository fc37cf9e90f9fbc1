"""One episode as a readable transcript: round by round, who acted, what each seat saw and said,
what the engine made of it, and what was hidden from whom.

Built from the store alone (the episode, its rounds, events, model calls and answers), so it works
for any game and for imported episodes. Each line says who it is about and who could see it:
hidden information (a seat's private move, a vote, the record's own notes) is marked as such, so a
reader can tell what a seat knew when it acted. Each model call is shown under what it was for
and where it was made among the events (`transcript_calls`): a reader must never take a probe's
re-ask for the move's, nor read a move's prompt after the outcome it led to. The text is plain
data; the terminal and the HTML report each escape it their own way (`clean` for terminals).
"""

from __future__ import annotations

import unicodedata
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from stratagem.analysis.transcript_calls import PlacedCall, block_end, gaps, place_calls
from stratagem.experiments.episode import DECISION_EVENT
from stratagem.experiments.store import (
    BeliefRecord,
    EpisodeRecord,
    EventRecord,
    ResultStore,
    RoundRecord,
)

PROMPT_LINES = 12
"""Last lines of a prompt shown by default (`full=True` shows them all)."""


@dataclass(frozen=True)
class Line:
    """One thing that happened, as one line of text (with an optional indented body)."""

    kind: str
    """"prompt", "reply", "reask", "error", "event", "said", "decision", "invalid", "round",
    "answer", "belief"."""
    seat: int | None
    text: str
    body: str = ""
    """A prompt or a reply, shown indented under the line."""
    seen_by: str | None = None
    """Who could see it, when not every seat: "no seat (record only)", "seat 1 only"."""


@dataclass(frozen=True)
class Section:
    """Everything of one round (or one step of a game without rounds; None: before any)."""

    round: int | None
    lines: tuple[Line, ...]


@dataclass(frozen=True)
class Transcript:
    episode: EpisodeRecord
    seats: tuple[str, ...]
    """"seat 0 (plain:local/gemma-3-270m, llm)" and so on."""
    sections: tuple[Section, ...]

    def text(self, *, full: bool = False) -> str:
        """The transcript as plain text (not yet cleaned for a terminal)."""
        ep = self.episode
        out = [f"episode {ep.id}: {ep.game}, {ep.status}, seed {ep.seed}"]
        out += [f"  {seat}" for seat in self.seats]
        for section in self.sections:
            out.append("")
            out.append("before the game" if section.round is None else f"round {section.round}")
            for line in section.lines:
                who = "" if line.seat is None else f"seat {line.seat} "
                seen = f" [seen by {line.seen_by}]" if line.seen_by else ""
                out.append(f"  {who}{line.text}{seen}")
                if line.body:
                    out += ["      " + b for b in _shorten(line.body, full).splitlines()]
        payoffs = "unfinished" if ep.payoffs is None else ", ".join(f"{x:g}" for x in ep.payoffs)
        out += ["", f"payoffs: {payoffs}"]
        if ep.error:
            out.append(f"error: {ep.error}")
        return "\n".join(out)


def build_transcript(store: ResultStore, episode: EpisodeRecord) -> Transcript:
    all_events = store.events(episode.id)
    calls: dict[int | None, list[PlacedCall]] = defaultdict(list)
    seqs = [e.seq for e in all_events]
    for call in place_calls(store.llm_calls(episode.id), all_events):
        calls[call.section(all_events, seqs)].append(call)
    rows: dict[int | None, RoundRecord] = {row.round: row for row in store.rounds(episode.id)}
    events: dict[int | None, list[EventRecord]] = defaultdict(list)
    for event in all_events:
        events[event.round].append(event)
    answers: dict[int | None, list[Line]] = defaultdict(list)
    for answer in store.answers(episode.id):
        answers[answer.round].append(
            Line("answer", answer.player, f"answered {answer.question_id}", answer.answer or "")
        )
    with_move: dict[int | None, dict[int, list[Line]]] = defaultdict(lambda: defaultdict(list))
    for belief in store.beliefs(episode.id):
        if _formed_in_move(belief):  # listed under the move it came with (seed-002's reports)
            with_move[belief.round][belief.player].append(_belief_line(belief))
        else:
            answers[belief.round].append(_belief_line(belief))
    rounds = sorted({*calls, *rows, *events, *answers}, key=lambda r: -1 if r is None else r)
    seats = tuple(
        f"seat {p}: {d.get('name', '?')} ({d.get('kind', '?')})"
        for p, d in enumerate(episode.players)
    )
    sections = tuple(
        Section(r, tuple(_round_lines(calls[r], rows.get(r), events[r], with_move[r]) + answers[r]))
        for r in rounds
    )
    return Transcript(episode, seats, sections)


def _round_lines(
    calls: list[PlacedCall],
    row: RoundRecord | None,
    events: list[EventRecord],
    with_move: Mapping[int, list[Line]],
) -> list[Line]:
    """One round in the order things happened: each call where it was made among the events
    (`transcript_calls`), a step's calls grouped by seat right before that seat's decision,
    the beliefs a seat reported with its move right under its first move of the round, and
    the round's result after its last step."""
    decisions = [i for i, e in enumerate(events) if e.kind == DECISION_EVENT]
    if row is not None and not decisions:  # recorded before decision events were kept
        return _undecided_round(calls, row, events, with_move)
    unplaced = dict(with_move)
    before, after = gaps(calls, events)
    out: list[Line] = []
    i = 0
    while i < len(events):
        event = events[i]
        if event.kind != DECISION_EVENT:
            out += _calls_lines(before[i])
            out.append(_event_line(event))
            i += 1
            continue
        end = block_end(events, i, lambda k: bool(before[k]))
        step = events[i:end]
        lead, by_seat = _by_seat(before[i], {e.player for e in step if e.kind == DECISION_EVENT})
        out += _calls_lines(lead)
        for e in step:
            if e.kind == DECISION_EVENT:
                out += _calls_lines(by_seat.pop(e.player, []))
            out.append(_event_line(e, _stand_in(events, end, e.player, row)))
            if e.kind == DECISION_EVENT and e.player in unplaced:
                out += unplaced.pop(e.player)
        if row is not None and i <= decisions[-1] < end:
            out.append(_round_line(row))
        i = end
    out += _calls_lines(after)
    for lines in unplaced.values():  # a seat with reports but no recorded move
        out += lines
    return out


def _by_seat(
    calls: list[PlacedCall], seats: set[int | None]
) -> tuple[list[PlacedCall], dict[int | None, list[PlacedCall]]]:
    """The calls made before a step: those before its first move's call (the questions and
    probes that followed the step before), then each deciding seat's own, for its move."""
    first = next(
        (k for k, c in enumerate(calls) if c.call.player in seats and not c.aside), len(calls)
    )
    lead = calls[:first]
    by_seat: dict[int | None, list[PlacedCall]] = defaultdict(list)
    for call in calls[first:]:
        if call.call.player in seats:
            by_seat[call.call.player].append(call)
        else:
            lead.append(call)
    return lead, by_seat


def _stand_in(
    events: list[EventRecord], start: int, seat: int | None, row: RoundRecord | None
) -> Any:
    """The move the game made for `seat` in the step whose game events start at `start`, for
    a decision that held none (OpenSpiel draws one, a game may play a default): the seat's move
    among those events (up to the next decision), else its move in the round's row; None when
    none is recorded (a forfeited round, a skipped turn, a default the game does not name)."""
    for e in events[start:]:
        if e.kind == DECISION_EVENT:
            break
        data = e.data
        if isinstance(data, dict) and data.get("player") == seat and "move" in data:
            return data["move"]
    if row is not None and seat is not None and seat < len(row.actions):
        return row.actions[seat]
    return None


def _undecided_round(
    calls: list[PlacedCall],
    row: RoundRecord,
    events: list[EventRecord],
    with_move: Mapping[int, list[Line]],
) -> list[Line]:
    """A round stored without decision events: each seat's calls, the round's result, its
    events, then the calls beside the moves."""
    moves = [c for c in calls if not c.aside]
    out = _calls_lines(sorted(moves, key=lambda c: -1 if c.call.player is None else c.call.player))
    out.append(_round_line(row))
    out += [_event_line(e) for e in events]
    for lines in with_move.values():
        out += lines
    return out + _calls_lines([c for c in calls if c.aside])


def find_episode(store: ResultStore, prefix: str) -> EpisodeRecord:
    """The episode whose id starts with `prefix` (a unique prefix is enough)."""
    from stratagem.errors import StratagemError

    exact = store.episode(prefix)
    if exact is not None:
        return exact
    matches = [e for e in store.episodes() if e.id.startswith(prefix)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise StratagemError(f"no episode id starts with '{prefix}'")
    raise StratagemError(f"'{prefix}' is the start of {len(matches)} episode ids; give more of it")


def clean(text: str) -> str:
    """Text for a terminal: control characters (escape sequences that could restyle or move the
    cursor) shown as their code instead; newlines and tabs kept."""
    return "".join(
        c if c in "\n\t" or unicodedata.category(c) != "Cc" else f"\\x{ord(c):02x}" for c in text
    )


def _calls_lines(calls: list[PlacedCall]) -> list[Line]:
    return [line for call in calls for line in _call_lines(call)]


def _call_lines(placed: PlacedCall) -> list[Line]:
    """A call under what it was for: its prompt (a re-ask's is the correction), its reply."""
    call, purpose = placed.call, placed.purpose
    request: dict[str, Any] = call.request if isinstance(call.request, dict) else {}
    out = []
    if not placed.reask:
        prompt = _last_user(request)
        if prompt:
            out.append(Line("prompt", call.player, f"was asked ({purpose})", prompt))
    again = " after a re-ask" if placed.reask else ""
    if call.error:
        out.append(Line("error", call.player, f"call failed{again} ({purpose}): {call.error}"))
    else:
        kind = "reask" if placed.reask else "reply"
        said = f"replied after a re-ask ({purpose})" if placed.reask else "replied"
        cached = " (from the cache)" if call.cached else ""
        out.append(Line(kind, call.player, f"{said}{cached}", call.text or "(empty)"))
    return out


def _last_user(request: dict[str, Any]) -> str:
    messages = request.get("messages") or []
    users = [
        m.get("content", "") for m in messages if isinstance(m, dict) and m.get("role") == "user"
    ]
    return str(users[-1]) if users else ""


def _round_line(row: RoundRecord) -> Line:
    played = ", ".join(f"seat {p}: {a if a is not None else '(no valid move)'}"
                       for p, a in enumerate(row.actions))  # fmt: skip
    scored = "" if row.payoffs is None else "; scored " + ", ".join(f"{x:g}" for x in row.payoffs)
    invalid = "" if row.valid else " (invalid)"
    return Line("round", None, f"moves: {played}{scored}{invalid}")


def _event_line(event: EventRecord, stand_in: Any = None) -> Line:
    """An event as one line; `stand_in`: the move the game made for a seat whose decision held
    none (`_stand_in`), so an invalid reply and the move played in its place read as one story."""
    seen = None
    if event.visible_to is not None:
        seats = list(event.visible_to)
        seen = (
            "no seat (record only)"
            if not seats
            else ("seat " if len(seats) == 1 else "seats ") + ", ".join(map(str, seats)) + " only"
        )
    data = event.data if isinstance(event.data, dict) else {"value": event.data}
    if event.kind == DECISION_EVENT:
        status = "valid" if data.get("valid") else "invalid"
        action = data.get("action")
        missing = action is None and not data.get("valid")
        did = "made no valid move" if missing else f"played {_value(action)}"
        text = (
            f"{did} ({status}, {data.get('attempts', 0)} attempt(s), "
            f"{data.get('tokens', 0)} tokens)"
        )
        return Line("decision", event.player, text, seen_by=seen)
    if event.kind == "invalid":
        played = data.get("played")
        if played is not None:
            instead = f"played {_value(played)}"
        elif stand_in is not None:
            instead = f"the game played {_value(stand_in)} in its place"
        else:
            instead = "the game's rule for a missing move applied"
        return Line(
            "invalid", event.player, f"invalid: {data.get('error')}; {instead}", seen_by=seen
        )
    if event.kind == "moderator" and isinstance(data.get("text"), str):
        return Line("event", None, "moderator: " + data["text"], seen_by=seen)
    if isinstance(data.get("player"), int) and isinstance(data.get("text"), str):
        # A chat game's utterance (seed-004's clues, votes, proposals): what the chat showed.
        return Line("said", data["player"], f"said ({event.kind}): {data['text']}", seen_by=seen)
    if isinstance(data.get("board"), str):
        # A board as its game prints it (OpenSpiel's games): its own lines, under the event.
        seat = data.get("player") if isinstance(data.get("player"), int) else None
        return Line("event", seat, event.kind, body=data["board"], seen_by=seen)
    hands = data.get("hands")
    if event.kind == "hands" and isinstance(hands, list) and all(map(_is_counts, hands)):
        # Public holdings after a move (TradeCraft): one short list per seat.
        held = "; ".join(f"seat {p}: {_counts(h) or 'nothing'}" for p, h in enumerate(hands))
        return Line("event", event.player, f"hands: {held}", seen_by=seen)
    # A field named like its event ("messages" of a "messages" event) is not named twice.
    fields = ", ".join(
        _value(v) if k == event.kind else f"{k}: {_value(v)}"
        for k, v in data.items()
        if k != "round"
    )
    return Line("event", event.player, f"{event.kind}: {fields}", seen_by=seen)


def _formed_in_move(belief: BeliefRecord) -> bool:
    """A belief that says which phase of the game it was reported in came with a move."""
    content = belief.content
    return isinstance(content, Mapping) and "phase" in content and "values" in content


def _belief_line(belief: BeliefRecord) -> Line:
    """A belief a seat reported or held (a PGM agent's belief rows, seed-004 §7), never seen by
    the other seats."""
    about = "" if belief.about_player is None else f" about seat {belief.about_player}"
    score = "" if belief.score is None else f", score {belief.score:g}"
    content = belief.content
    if isinstance(content, dict) and _is_counts(content.get("values")):
        # Item-wise scores (seed-002's V0/V1/V2 reports): "V1 about seat 1 (turn 2, ...): coal 8".
        when = ", ".join(
            f"{k} {content[k]}" if k == "turn" else str(content[k])
            for k in ("turn", "phase")
            if k in content
        )
        when = f" ({when})" if when else ""
        text = f"reported V{belief.order}{about}{when}: {_counts(content['values']) or 'nothing'}"
    else:
        text = f"believed (order {belief.order}{about}{score}): {_value(belief.content)}"
    return Line("belief", belief.player, text, seen_by="no seat (record only)")


def _is_counts(value: Any) -> bool:
    """A mapping of names to numbers (a hand, or item-wise scores)."""
    return isinstance(value, dict) and all(
        isinstance(k, str) and isinstance(v, int | float) and not isinstance(v, bool)
        for k, v in value.items()
    )


def _counts(value: dict[str, Any]) -> str:
    """Scores or counts as "coal 8, raw_iron 2": names without their namespace."""
    return ", ".join(f"{k.rpartition(':')[2] or k} {_value(v)}" for k, v in value.items())


def excerpt(text: str, max_lines: int = PROMPT_LINES, max_chars: int = 1_500) -> str:
    """The end of a long text for a page that cannot unfold it (the HTML report): its last
    `max_lines` lines and `max_chars` characters, where a prompt asks for the decision, after a
    line saying how much is left out."""
    lines = text.splitlines() or [""]
    kept = lines[-max_lines:]
    body = "\n".join(kept)
    cut = len(body) - max_chars
    if cut > 0:
        body = body[cut:]
    if len(kept) == len(lines) and cut <= 0:
        return body
    dropped = len(lines) - len(kept)
    shown = f"{dropped} earlier lines" if dropped else ""
    if cut > 0:
        shown += (" and " if shown else "") + f"{cut} characters"
    return f"... ({shown} not shown)\n{body}"


def _value(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _shorten(text: str, full: bool) -> str:
    """The end of a long text: where a prompt asks for the decision (after the history)."""
    lines = text.splitlines() or [""]
    if full or len(lines) <= PROMPT_LINES:
        return "\n".join(lines)
    hidden = len(lines) - PROMPT_LINES
    return "\n".join([f"... ({hidden} earlier lines; --full shows them)", *lines[-PROMPT_LINES:]])
