"""The six behaviour metrics of seed-001 §9: cooperation rate, niceness, troublemaking, retaliation,
forgiveness and emulation of one agent in one repeated 2-action game.

The thesis formulas (§9, after Fontana et al. "Nicer than humans" and Axelrod) leave the counting
rules open; the rules here are the exact algorithms of seed-001 §9 [CHECKED there against all 252
games of Appendix A]. They are pure functions of the two move sequences, so they can be recomputed
on any stored or imported episode.

Moves are given **by role, as booleans**: `True` (or 1) means the player took the cooperative
action, `False` (or 0) the other one. Labels differ between games (cooperate/defect,
cooperation/defection, stag/hare), so `cooperation_flags` turns labels into flags first. Index
conventions are deliberately avoided: in stratagem the cooperative action is label index 0, which
would read as "defect" under the spec's 1 = C notation.

Undefined ratios (no provocation, no opponent defection, a one-round game) are 0, not NaN: the
thesis averages them as 0 (§9), which changes the means.
"""

from __future__ import annotations

from collections.abc import Sequence

from stratagem.errors import StratagemError

Moves = Sequence[bool] | Sequence[int]
"""One player's moves, round by round: True/1 = cooperated, False/0 = did not."""

BEHAVIOUR_METRICS: tuple[str, ...] = ("CR", "N", "TM", "Ret", "For", "Em")
"""Column names of seed-001 §8.2, in the order of Appendix A."""


def cooperation_flags(actions: Sequence[str | None], cooperative: str) -> list[bool]:
    """Labels to role flags; a missing (invalid) move counts as not cooperating."""
    return [a == cooperative for a in actions]


def _flags(moves: Moves, who: str) -> list[bool]:
    out = []
    for i, m in enumerate(moves):
        if m not in (0, 1):  # True/False compare equal to 1/0
            raise StratagemError(f"{who} move {i}: expected a boolean or 0/1, got {m!r}")
        out.append(bool(m))
    return out


def _pair(agent: Moves, opponent: Moves) -> tuple[list[bool], list[bool]]:
    m, o = _flags(agent, "agent"), _flags(opponent, "opponent")
    if len(m) != len(o):
        raise StratagemError(
            f"the agent has {len(m)} moves but the opponent {len(o)}: they must be equal"
        )
    return m, o


def _ratio(num: int, den: int) -> float:
    # seed-001 §9: undefined ratios default to 0, not NaN.
    return num / den if den else 0.0


def cooperation_rate(agent: Moves) -> float:
    """CR = N_cooperate / N_rounds (seed-001 §9)."""
    m = _flags(agent, "agent")
    return _ratio(sum(m), len(m))


def niceness(agent: Moves, opponent: Moves) -> float:
    """N: 1 unless the agent defects first; a simultaneous first defection is NOT nice (§9)."""
    m, o = _pair(agent, opponent)
    for mi, oi in zip(m, o, strict=True):
        if not mi:
            return 0.0
        if not oi:
            return 1.0
    return 1.0


def troublemaking(agent: Moves, opponent: Moves) -> float:
    """TM = uncalled defections / occasions (§9).

    Round 1 is always an occasion; afterwards an occasion is a round that follows an opponent's
    cooperation, and the defection is uncalled if the agent defects in it.
    """
    m, o = _pair(agent, opponent)
    n = len(m)
    occasions = 1 + sum(1 for i in range(n - 1) if o[i])
    uncalled = int(n > 0 and not m[0])
    uncalled += sum(1 for i in range(n - 1) if o[i] and not m[i + 1])
    return _ratio(uncalled, occasions)


def retaliation(agent: Moves, opponent: Moves) -> float:
    """Ret = reactions / provocations (§9).

    A provocation is an opponent's defection (not in the last round) that the agent did not
    itself provoke: round 1, or the agent cooperated in the round before. The reaction is the
    agent's defection in the next round.
    """
    m, o = _pair(agent, opponent)
    provocations = reactions = 0
    for i in range(len(m) - 1):
        if not o[i] and (i == 0 or m[i - 1]):
            provocations += 1
            reactions += int(not m[i + 1])
    return _ratio(reactions, provocations)


def forgiveness(agent: Moves, opponent: Moves) -> float:
    """For = forgiven / (opponent defections + penalties) (§9).

    An opponent's defection opens a grudge; the agent forgives by cooperating while the grudge is
    open. A penalty is the opponent cooperating during a grudge (an attempt to be forgiven) and
    the agent still defecting in the next round. The order of the three checks in a round matters
    and follows the spec exactly.
    """
    m, o = _pair(agent, opponent)
    n = len(m)
    grudge = False
    forgiven = penalties = opp_def = 0
    for i in range(n):
        if m[i] and grudge:
            forgiven += 1
            grudge = False
        if i < n - 1 and o[i] and grudge and not m[i + 1]:
            penalties += 1
        if not o[i] and not grudge:
            opp_def += 1
            grudge = True
    return _ratio(forgiven, opp_def + penalties)


def emulation(agent: Moves, opponent: Moves) -> float:
    """Em = rounds where the agent copied the opponent's previous move / (N_rounds - 1) (§9)."""
    m, o = _pair(agent, opponent)
    n = len(m)
    return _ratio(sum(1 for i in range(n - 1) if m[i + 1] == o[i]), n - 1)


def behaviour_profile(agent: Moves, opponent: Moves) -> dict[str, float]:
    """All six metrics of one game, keyed by the Appendix-A column names (seed-001 §8.2)."""
    return {
        "CR": cooperation_rate(agent),
        "N": niceness(agent, opponent),
        "TM": troublemaking(agent, opponent),
        "Ret": retaliation(agent, opponent),
        "For": forgiveness(agent, opponent),
        "Em": emulation(agent, opponent),
    }
