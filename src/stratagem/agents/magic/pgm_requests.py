"""The request texts of the social games' PGM pipeline (seed-004 §7.3), filled in for one seat.

The pipeline itself (when to ask, which history to send) belongs to the agent architecture; this
module only composes the texts the study's code composed, so the rules that are easy to get
wrong (question numbering, which follow-ups a self-diagnosis gets, the clue-round headers) are in
one tested place. Seats are 0-based; `players` are the seat names ("Player 1".."Player 3").
"""

from __future__ import annotations

from collections.abc import Sequence

from stratagem.agents.magic.belief import Verdict
from stratagem.agents.magic.texts import render
from stratagem.games.magic.social_deduction import SEATS


def _others(seat: int, players: Sequence[str]) -> list[str]:
    return [name for i, name in enumerate(players) if i != seat]


# -- Chameleon -----------------------------------------------------------------------------------


def chameleon_view_request(seat: int, is_chameleon: bool, players: Sequence[str] = SEATS) -> str:
    """The view prompt a Chameleon PGM player answers after every clue (§7.3); its system prompt
    is then the global prompt + the view demo of its role (`chameleon_view_demo_*`)."""
    one, two = _others(seat, players)[:2]
    name = "chameleon_view_chameleon" if is_chameleon else "chameleon_view_non_chameleon"
    return render(name, player=players[seat], other_player_1=one, other_player_2=two)


def chameleon_clue_request(
    seat: int, target: int, is_chameleon: bool, players: Sequence[str] = SEATS
) -> str:
    """The clue prompt naming the belief's target (`belief.chameleon_clue_target`); the system
    prompt is then the global prompt + the clue demo of the role (`chameleon_clue_demo_*`)."""
    name = "chameleon_clue_chameleon" if is_chameleon else "chameleon_clue_non_chameleon"
    return render(name, player=players[seat], target_player=players[target])


# -- Undercover ----------------------------------------------------------------------------------


def undercover_clues_text(clues: Sequence[str], players: Sequence[str] = SEATS) -> str:
    """The `{clues}` of the analysis header: the public clues so far, in speaking order, as
    "Player k: <clue>" lines, each round opened by "Round r" (0-based, as the code counts)."""
    lines: list[str] = []
    for i, clue in enumerate(clues):
        if i % len(players) == 0:
            lines.append(f"Round {i // len(players)}")
        lines.append(f"{players[i % len(players)]}: {clue}")
    return "\n".join(lines)


def undercover_diagnosis_request(
    clues: Sequence[str], seat: int, word: str, players: Sequence[str] = SEATS
) -> str:
    """Call 1 of an Undercover analysis (§7.3): the header and the is_undercover question, sent
    as a single user message with no system prompt and no history."""
    one, two = _others(seat, players)[:2]
    question = render(
        "undercover_pgm_is_undercover",
        player=players[seat],
        code=word,
        other_player_1=one,
        other_player_2=two,
    )
    return render("undercover_pgm_header", clues=undercover_clues_text(clues, players)) + question


def undercover_followup_request(
    clues: Sequence[str], seat: int, word: str, verdict: Verdict, players: Sequence[str] = SEATS
) -> str:
    """Call 2 of an Undercover analysis: the header and the follow-ups of the self-diagnosis
    (§8.2), numbered from 2. "yes": other_pgm_under for each other player, then under_plan;
    "no" / "not sure": self_pgm_non_under, then other_pgm_non_under for each other player, and
    for "no" non_under_plan."""
    player = players[seat]
    request = render("undercover_pgm_header", clues=undercover_clues_text(clues, players))
    idx = 2
    if verdict == "yes":
        for other in _others(seat, players):
            request += render(
                "undercover_pgm_other_under", idx=idx, player=player, code=word, other_player=other
            )
            idx += 1
        return request + render("undercover_pgm_under_plan", idx=idx)
    request += render("undercover_pgm_self_non_under", idx=idx, player=player, code=word)
    for other in _others(seat, players):
        idx += 1
        request += render(
            "undercover_pgm_other_non_under", idx=idx, player=player, code=word, other_player=other
        )
    if verdict == "no":
        request += render("undercover_pgm_non_under_plan", idx=idx + 1)
    return request


def undercover_clue_request(
    seat: int, verdict: Verdict, target: int | None = None, players: Sequence[str] = SEATS
) -> str:
    """The clue prompt of the self-diagnosis (§7.2); "no" needs the target it names."""
    if verdict == "not sure":
        return render("undercover_clue_not_sure", player=players[seat])
    if verdict == "yes":
        return render("undercover_clue_yes", player=players[seat])
    if target is None:
        raise ValueError('the "no" clue prompt names a target player')
    return render("undercover_clue_no", player=players[seat], target_player=players[target])
