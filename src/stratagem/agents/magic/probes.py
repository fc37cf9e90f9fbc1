"""The hidden metric probes of seed-004 §6.1: when they are asked, their texts, and their parsers.

Two probes go to all three players (only challenger seats are scored, by the study's metrics):

- role self-identification ("consistency"), scored for Self-awareness (§6.5);
- belief ("belief"): who the respondent suspects and what it thinks each other player suspects,
  parsed to F (`analysis_parse`) and scored for Reasoning (§6.3).

Timing (§6.1 [C]), by clue index (0-based, counting every clue of the game in speaking order):
Chameleon asks consistency before each of its 3 clues and belief after each; Undercover asks
consistency then belief after each full round (after clues 2 and 5). Each probe goes to every
seat, in seat order, before the next probe starts (as the code steps through its phases).

The parsers here are the canonical ones: `studies/magic` imports them, so agents and metrics read
an answer the same way. Answers are hidden (`is_show=False`): no player sees another's answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from stratagem.agents.magic.analysis_parse import (
    LineStart,
    ParsedFactor,
    parse_chameleon_analysis,
    parse_undercover_analysis,
)
from stratagem.agents.magic.texts import render, text
from stratagem.games.magic.social_deduction import N_SEATS, SEATS

SocialGame = Literal["chameleon", "undercover"]
ProbeKind = Literal["consistency", "belief"]
Moment = Literal["before_clue", "after_clue"]

ROLES: dict[SocialGame, tuple[str, str]] = {
    "chameleon": ("chameleon", "non-chameleon"),
    "undercover": ("undercover", "non-undercover"),
}
"""(spy role, majority role) as the probes' templates and the code's metric name them."""


def probes_due(
    game: SocialGame, moment: Moment, clue_index: int, n_players: int = N_SEATS
) -> tuple[ProbeKind, ...]:
    """The probes asked, in order, just before or just after clue `clue_index` (seed-004 §6.1)."""
    if isinstance(clue_index, bool) or not isinstance(clue_index, int) or clue_index < 0:
        raise ValueError(f"clue_index must be an integer >= 0, got {clue_index!r}")
    if game == "chameleon":
        return ("consistency",) if moment == "before_clue" else ("belief",)
    if game == "undercover":
        round_over = moment == "after_clue" and clue_index % n_players == n_players - 1
        return ("consistency", "belief") if round_over else ()
    raise ValueError(f"unknown social game {game!r}")


def probe_text(
    game: SocialGame,
    kind: ProbeKind,
    seat: int,
    role: str | None = None,
    players: Sequence[str] = SEATS,
) -> str:
    """The probe's request text for `seat` (seed-004 §8.2 [C]).

    `role` is needed only for the Chameleon belief probe, whose text differs for the chameleon.
    """
    player = players[seat]
    if game == "chameleon":
        if kind == "consistency":
            return text("chameleon_probe_consistency")
        spy, majority = ROLES["chameleon"]
        if role not in (spy, majority):
            raise ValueError(f"the Chameleon belief probe needs role {spy!r} or {majority!r}")
        name = "chameleon_probe_belief_" + ("chameleon" if role == spy else "non_chameleon")
        return render(name, player=player)
    if game != "undercover":
        raise ValueError(f"unknown social game {game!r}")
    request = text("undercover_probe_preamble")
    if kind == "consistency":
        return request + text("undercover_probe_consistency")
    request += render("undercover_probe_belief_self", idx=1)
    others = [name for i, name in enumerate(players) if i != seat]
    for idx, other in enumerate(others, start=2):
        request += render("undercover_probe_belief_other", idx=idx, other_player=other)
    return request


# -- role self-identification: seed-004 §6.5 [C] ---------------------------------------------------

_I_AM = re.compile(r"I am (Player \d+)")
_MY_ROLE = re.compile(r"my role is ([ \w|-]+)")
_ARTICLES = re.compile(r"\b(?:the|a|an)\b", re.IGNORECASE)


@dataclass(frozen=True)
class SelfIdentification:
    """What a consistency answer says: the player ("Player 2") and the role, as parsed.

    `role` is the text after "my role is", up to the first character outside letters, digits,
    "_", "|", "-" and spaces, with articles removed, stripped and lower-cased ("not sure" stays
    "not sure", which matches no role). None where the template phrase is absent.
    """

    player: str | None
    role: str | None

    def seat(self, players: Sequence[str] = SEATS) -> int | None:
        return players.index(self.player) if self.player in players else None

    def correct(self, seat: int, role: str, players: Sequence[str] = SEATS) -> bool:
        """Both matches of §6.5: the right seat and the true role."""
        return self.player == players[seat] and self.role == role


def parse_self_identification(answer: str) -> SelfIdentification:
    """Reads "I am Player xx, my role is ..." exactly as the study's metric does (§6.5):
    `I am (Player \\d+)` and `my role is ([ \\w|-]+)`, both case-sensitive, first match each."""
    player = _I_AM.search(answer)
    role = _MY_ROLE.search(answer)
    parsed_role = None
    if role is not None:
        parsed_role = _ARTICLES.sub("", role.group(1)).strip().lower()
    return SelfIdentification(player.group(1) if player else None, parsed_role)


# -- belief answers --------------------------------------------------------------------------------


def parse_belief_answer(
    game: SocialGame,
    answer: str,
    respondent: int,
    players: Sequence[str] = SEATS,
    line_start: LineStart = "exact",
    code_compat: bool = False,
) -> ParsedFactor:
    """A belief-probe answer as F (seed-004 §6.3): Chameleon answers line by line
    (`line_start`), Undercover answers by their "I think ..." statements (`code_compat`)."""
    if game == "chameleon":
        return parse_chameleon_analysis(answer, respondent, players, line_start)
    if game == "undercover":
        return parse_undercover_analysis(answer, respondent, players, code_compat)
    raise ValueError(f"unknown social game {game!r}")
