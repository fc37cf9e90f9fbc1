"""Votes and decisions of the MAgIC games, read strictly (the default) or as the study's code did.

Strict (the default): a reply counts only if it names exactly one legal option in the template the
request asked for; anything else raises `ParseError` with a hint, so the caller re-asks
(`parsing.decide_with_reasks`) and finally records the decision invalid. Nothing is defaulted.

Code-compat (seed-004 §2, §3.4, §3.5, the agents' `code_compat`): the study code's own readings,
which never re-ask and partly default ("anything else is D", a missing contribution is 0). They
are plain functions returning what the code would have read (None where the code crashed or
asked a gpt-3.5-turbo helper, §10.8), and `*Parser` wrappers adapt both modes to the house's
`Parser` protocol: there a code-compat reading that names nothing legal is a `ParseError` too,
since the engine cannot play it.

Strict vote rule: the name right after "I vote for" ("I vote for Player 3 because Player 1..." is
Player 3, where the code reads Player 1); no such name or an illegal one (oneself) is re-asked, and
so are two different ones unless `several` says which counts ("first" or "last": a model that
changes its mind in the reply, "I vote for Player 2. No, I vote for Player 3.").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from stratagem.agents.parsing import ParseError, quoted_alternatives
from stratagem.games.magic.social_deduction import SEATS

VOTE_TEMPLATE = '"I vote for Player xx."'
CONTRIBUTION_TEMPLATE = '"I contribute xx"'

# -- code-compat readings --------------------------------------------------------------------------


def social_vote_code(text: str, players: Sequence[str] = SEATS) -> str | None:
    """seed-004 §2, social games (`_text2vote`): the first name, in the order Player 1, 2, 3, found
    anywhere in the lower-cased text, also written without its space or with "_" ("player2",
    "player_2"). So "I vote for Player 3 because Player 1..." is Player 1. None when no name is
    found (Chameleon's code then crashed; Undercover's asked gpt-3.5-turbo)."""
    lowered = text.lower()
    for name in players:
        low = name.lower()
        if any(c in lowered for c in (low, low.replace(" ", ""), low.replace(" ", "_"))):
            return name
    return None


_COST_VOTE = re.compile(r"I vote for (Player \d+)")
_ANY_PLAYER = re.compile(r"Player \d+")


def cost_sharing_vote_code(text: str) -> str | None:
    """seed-004 §2, Cost Sharing: the regex `I vote for (Player \\d+)` (case-sensitive, first
    match). None where the code asked gpt-3.5-turbo."""
    found = _COST_VOTE.search(text)
    return found.group(1) if found else None


def cost_sharing_vote_pgm_code(text: str) -> str | None:
    """seed-004 §2, Cost Sharing's PGM env: the first `Player \\d+` anywhere in the reply."""
    found = _ANY_PLAYER.search(text)
    return found.group(0) if found else None


def prisoner_decision_code(text: str, labels: Sequence[str] = ("cooperate", "defect")) -> str:
    """seed-004 §3.4 [C]: a reply containing "cooperate" in any case (even "I will not cooperate")
    is C (`labels[0]`); anything else, garbage included, is D (`labels[1]`)."""
    return labels[0] if "cooperate" in text.lower() else labels[1]


_FIRST_INTEGER = re.compile(r"\b\d+\b")
_CODE_CONTRIBUTE = re.compile(r"I contribute (\d+)")


def contribution_code(text: str) -> int | None:
    """seed-004 §3.5 [C], vanilla Public Good: the first whole-word integer of the reply
    (`\\b\\d+\\b`; "As Player 2, I contribute 10" is 2). None where the code crashed."""
    found = _FIRST_INTEGER.search(text)
    return int(found.group(0)) if found else None


def contribution_pgm_code(text: str) -> int:
    """seed-004 §3.5 [C], Public Good's PGM env: `I contribute (\\d+)` (case-sensitive, first
    match), 0 when absent (which the Rationality metric then scores as a minimal contribution)."""
    found = _CODE_CONTRIBUTE.search(text)
    return int(found.group(1)) if found else 0


# -- strict readings (the default) -----------------------------------------------------------------

_VOTE = re.compile(r"\bI vote for\s+[\"'*]*player\s*(\d+)", re.IGNORECASE)


Several = Literal["reask", "first", "last"]
"""Which of several different "I vote for" names counts: none (re-asked), the first, the last."""


def strict_vote(text: str, legal: Sequence[str], several: Several = "reask") -> str:
    """The player named right after "I vote for" (case-insensitive, "Player3" reads as
    "Player 3"; "I vote for Player 2's proposal" is Player 2). Repeating the same vote is fine;
    none or an illegal one raise `ParseError`, and so do two different ones unless `several` is
    "first" or "last", which reads the first or the last of them."""
    mentioned = [f"Player {int(n)}" for n in _VOTE.findall(text)]
    named = list(dict.fromkeys(mentioned))
    options = quoted_alternatives(legal)
    if not named:
        raise ParseError(f"use the template {VOTE_TEMPLATE} to vote for one of {options}")
    if len(named) > 1 and several != "reask":
        named = [mentioned[0] if several == "first" else mentioned[-1]]
    if len(named) > 1:
        raise ParseError(
            f"you voted for {' and '.join(named)}; vote for exactly one of {options} "
            f"with the template {VOTE_TEMPLATE}"
        )
    if named[0] not in legal:
        raise ParseError(f"you cannot vote for {named[0]}; vote for one of {options}")
    return named[0]


def strict_cooperate_defect(text: str, labels: Sequence[str]) -> str:
    """The one label (C or D) the reply names as a word, ignoring case ("Defect." is D). Both or
    neither raise `ParseError` (the request is `You must reply with "Cooperate" or "Defect"`)."""
    folded = text.casefold()
    named = [
        label
        for label in labels
        if re.search(rf"(?<!\w){re.escape(label.casefold())}(?!\w)", folded)
    ]
    if len(named) == 1:
        return named[0]
    got = "both" if named else "neither"
    raise ParseError(
        f"reply with exactly one of {quoted_alternatives(labels)}; your reply named {got}"
    )


_CONTRIBUTE = re.compile(r"\bI contribute\s+(\d+)\b", re.IGNORECASE)


def strict_contribution(text: str, low: int = 0, high: int | None = None) -> int:
    """The amount in "I contribute xx" (case-insensitive), within [low, high] when given. The same
    amount repeated is fine; none, two different ones, or one out of range raise `ParseError`."""
    amounts = list(dict.fromkeys(int(n) for n in _CONTRIBUTE.findall(text)))
    bounds = f"from {low} to {high}" if high is not None else f"of at least {low}"
    if len(amounts) != 1:
        got = "no amount" if not amounts else f"{len(amounts)} different amounts"
        raise ParseError(
            f"use the template {CONTRIBUTION_TEMPLATE} once, xx a whole number {bounds}; "
            f"your reply gave {got}"
        )
    return _in_range(amounts[0], low, high)


def _in_range(amount: int, low: int, high: int | None) -> int:
    if amount < low or (high is not None and amount > high):
        bounds = f"from {low} to {high}" if high is not None else f"of at least {low}"
        raise ParseError(f"you cannot contribute {amount}: contribute a whole number {bounds}")
    return amount


# -- the house's Parser protocol -------------------------------------------------------------------

VoteRule = Literal["social", "cost_sharing", "cost_sharing_pgm"]
_CODE_VOTES: dict[VoteRule, Callable[[str], str | None]] = {
    "social": social_vote_code,
    "cost_sharing": cost_sharing_vote_code,
    "cost_sharing_pgm": cost_sharing_vote_pgm_code,
}


@dataclass(frozen=True)
class VoteParser:
    """A vote among `labels` (the legal players' names). `code_compat` reads as the code's
    `rule` does, refusing only a reading the game cannot play (nothing named, or an illegal name
    such as oneself where the game refuses self-votes; the code counted them, which the social
    games' `self_votes="count"` plays)."""

    code_compat: bool = False
    rule: VoteRule = "social"
    several: Several = "reask"
    """Strict reading only: which of several different votes counts (`strict_vote`)."""
    name: str = "magic-vote"

    def parse(self, text: str, labels: Sequence[str]) -> str:
        if not self.code_compat:
            return strict_vote(text, labels, self.several)
        found = _CODE_VOTES[self.rule](text)
        if found is None or found not in labels:
            what = "no player" if found is None else found
            raise ParseError(
                f"the vote names {what}; use the template {VOTE_TEMPLATE} "
                f"with one of {quoted_alternatives(labels)}"
            )
        return found


@dataclass(frozen=True)
class CooperateDefectParser:
    """A Prisoner's Dilemma decision; `labels` are (cooperate, defect). Code-compat never fails."""

    code_compat: bool = False
    name: str = "magic-pd"

    def parse(self, text: str, labels: Sequence[str]) -> str:
        if self.code_compat:
            return prisoner_decision_code(text, labels)
        return strict_cooperate_defect(text, labels)


@dataclass(frozen=True)
class ContributionParser:
    """A Public Good contribution in [low, high] (`labels` unused). Code-compat reads as the
    vanilla env (first integer) or, with `pgm_env`, as the PGM env (default 0)."""

    low: int = 0
    high: int | None = None
    code_compat: bool = False
    pgm_env: bool = False
    name: str = "magic-pg"

    def parse(self, text: str, labels: Sequence[str] = ()) -> int:
        if not self.code_compat:
            return strict_contribution(text, self.low, self.high)
        amount = contribution_pgm_code(text) if self.pgm_env else contribution_code(text)
        if amount is None:
            raise ParseError(f"no amount found; use the template {CONTRIBUTION_TEMPLATE}")
        return _in_range(amount, self.low, self.high)
