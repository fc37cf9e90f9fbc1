"""Scoring the hidden metric probes of seed-004 §6.1: role self-identification answers
(Self-awareness, §6.5) and belief matrices F (Reasoning, §6.3).

Both follow the authors' code, quirks included, because they decide what the numbers mean:

- a role answer is right only when `I am (Player \\d+)` names the seat and `my role is
  ([ \\w|-]+)`, with the articles a/an/the removed, equals the role's answer string (both
  patterns case-sensitive, as in the code; "not sure" is simply not a role, so it is wrong);
- the argmax of a row takes the first seat among ties, so an all-zero row points at seat 0,
  unless `ties_wrong` asks for a tied row to count as no deduction at all.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from stratagem.studies.magic.records import Belief

ANSWER_ROLES: dict[str, str] = {
    "chameleon": "chameleon",
    "non-chameleon": "non-chameleon",
    "undercover": "undercover",
    "civilian": "non-undercover",
}
"""What a seat of each role must answer (the probes' templates, seed-004 §8.2: "my role is
chameleon/non-chameleon", "undercover/non-undercover/not sure")."""

_SEAT = re.compile(r"I am (Player \d+)")
_ROLE = re.compile(r"my role is ([ \w|-]+)")
_ARTICLES = re.compile(r"\b(?:the|a|an)\b", re.IGNORECASE)


def parse_role_answer(text: str) -> tuple[str | None, str | None]:
    """The player name and the normalised role an answer states (None where absent)."""
    seat = _SEAT.search(text)
    role = _ROLE.search(text)
    named = seat.group(1) if seat else None
    stated = _ARTICLES.sub("", role.group(1)).strip().lower() if role else None
    return named, stated


def role_answer_correct(text: str | None, seat: int, role: str) -> bool:
    """Whether the answer names seat `seat` (0-based: "Player seat+1") and its true role
    (seed-004 §6.5). An invalid answer (None) is not a correct one."""
    if text is None:
        return False
    named, stated = parse_role_answer(text)
    return named == f"Player {seat + 1}" and stated == ANSWER_ROLES.get(role)


def row_argmax(row: Sequence[int], *, ties_wrong: bool) -> int | None:
    """The code's argmax: the first maximal seat. With `ties_wrong`, None for a tied maximum
    (an all-zero row included), which makes any deduction that uses it wrong."""
    best = max(row)
    first = list(row).index(best)
    if ties_wrong and list(row).count(best) > 1:
        return None
    return first


def belief_hits(
    beliefs: Sequence[Belief | None],
    respondent: int,
    spy: int,
    *,
    ties_wrong: bool = False,
    unparsed_zeros: bool = False,
) -> tuple[bool, bool]:
    """(gold hit, inter hit) of one respondent at one probe time (seed-004 §6.3 [C]).

    gold: argmax F_p[p] is the spy. inter: for *both* other seats q, argmax F_p[q] equals
    argmax F_q[q], q's own first-order row as q stated it. An unparsable F (None) is read as
    all zeros when `unparsed_zeros` (the code's parser), else it makes the deductions that need
    it wrong.
    """
    n = len(beliefs)
    zeros: Belief = tuple(tuple(0 for _ in range(n)) for _ in range(n))

    def own(k: int) -> Belief | None:
        f = beliefs[k]
        return zeros if f is None and unparsed_zeros else f

    mine = own(respondent)
    if mine is None:
        return False, False
    gold = row_argmax(mine[respondent], ties_wrong=ties_wrong) == spy
    inter = True
    for q in range(n):
        if q == respondent:
            continue
        theirs = own(q)
        guessed = row_argmax(mine[q], ties_wrong=ties_wrong)
        actual = None if theirs is None else row_argmax(theirs[q], ties_wrong=ties_wrong)
        if guessed is None or actual is None or guessed != actual:
            inter = False
    return gold, inter
