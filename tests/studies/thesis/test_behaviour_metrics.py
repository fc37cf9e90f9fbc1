"""The six behaviour metrics of seed-001 §9 on hand-made games, and against Appendix A."""

from __future__ import annotations

import csv
import itertools
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from stratagem.errors import StratagemError
from stratagem.studies.thesis.behaviour import (
    BEHAVIOUR_METRICS,
    behaviour_profile,
    cooperation_flags,
    cooperation_rate,
    emulation,
    forgiveness,
    niceness,
    retaliation,
    troublemaking,
)


def moves(text: str) -> list[bool]:
    """'CDC' -> [True, False, True]: the spec's notation, C = cooperate."""
    return [c == "C" for c in text.replace(" ", "")]


def profile(agent: str, opponent: str) -> dict[str, float]:
    return {k: round(v, 2) for k, v in behaviour_profile(moves(agent), moves(opponent)).items()}


# -- the spec's worked example and edge cases --------------------------------------------------


def test_worked_row_6_of_appendix_a() -> None:
    # seed-001 §9 worked check: gpt-4o-mini, Plain, AD, 10 rounds, Dilemma.
    got = behaviour_profile(moves("C D C C D D D D D D"), moves("D" * 10))
    assert got["CR"] == pytest.approx(0.30)
    assert got["N"] == 1.0
    assert got["TM"] == 0.0
    assert got["Ret"] == pytest.approx(3 / 4)
    assert got["For"] == pytest.approx(2 / 3)
    assert got["Em"] == pytest.approx(7 / 9)
    assert list(got) == list(BEHAVIOUR_METRICS)


@pytest.mark.parametrize(
    ("agent", "opponent", "expected"),
    [
        # Mutual cooperation: nothing to retaliate or forgive (undefined ratios are 0).
        ("C" * 10, "C" * 10, {"CR": 1, "N": 1, "TM": 0, "Ret": 0, "For": 0, "Em": 1}),
        # Mutual defection: the agent defects first (simultaneously) and on the one occasion;
        # the only provocation is round 1's, answered; it never forgives its one grudge.
        ("D" * 10, "D" * 10, {"CR": 0, "N": 0, "TM": 1, "Ret": 1, "For": 0, "Em": 1}),
        # All-C against all-D: 9 provocations never answered; forgives 9 of 10 defections.
        ("C" * 10, "D" * 10, {"CR": 1, "N": 1, "TM": 0, "Ret": 0, "For": 0.9, "Em": 0}),
        # All-D against all-C: every round is an occasion and an uncalled defection.
        ("D" * 10, "C" * 10, {"CR": 0, "N": 0, "TM": 1, "Ret": 0, "For": 0, "Em": 0}),
    ],
)
def test_constant_games(agent: str, opponent: str, expected: dict[str, float]) -> None:
    assert profile(agent, opponent) == pytest.approx(expected)


def test_simultaneous_first_defection_is_not_nice() -> None:
    # seed-001 §9: the scan stops at the agent's defection before looking at the opponent's.
    assert niceness(moves("CDCC"), moves("CDCC")) == 0.0
    assert niceness(moves("D"), moves("D")) == 0.0
    # The opponent defecting first (the agent still cooperating that round) is nice.
    assert niceness(moves("CCDD"), moves("CDDD")) == 1.0
    # Nobody ever defects: nice.
    assert niceness(moves("CCC"), moves("CCC")) == 1.0


def test_troublemaking_counts_round_one_and_rounds_after_opponent_cooperation() -> None:
    # occasions = 1 + 2 (o[0], o[1] are C); uncalled: m[2] = D after o[1] = C.
    assert troublemaking(moves("CCD"), moves("CCC")) == pytest.approx(1 / 3)
    # Defecting in round 1 is uncalled; the D after the opponent's D is no occasion.
    assert troublemaking(moves("DCD"), moves("CDC")) == pytest.approx(1 / 2)


def test_retaliation_only_counts_unprovoked_defections() -> None:
    # o[1] = D follows the agent's own D (m[0]): not a provocation. o[2] = D follows m[1] = C:
    # a provocation, answered by m[3] = D. The last round's defection has no next round.
    assert retaliation(moves("DCDD"), moves("CDDC")) == 1.0
    assert retaliation(moves("CCCC"), moves("CDCD")) == 0.0  # 1 provocation, not answered
    assert retaliation(moves("CCCC"), moves("CCCD")) == 0.0  # none: undefined -> 0


def test_forgiveness_counts_penalties() -> None:
    # o[0] = D opens a grudge; o[1] = C while the grudge holds and m[2] = D: a penalty; m[3] = C
    # forgives. For = 1 / (1 defection + 1 penalty).
    assert forgiveness(moves("CDDC"), moves("DCCC")) == pytest.approx(0.5)
    # Forgiving at once: For = 1.
    assert forgiveness(moves("CC"), moves("DC")) == 1.0


def test_emulation_compares_with_the_opponents_previous_move() -> None:
    assert emulation(moves("CCDC"), moves("CDCC")) == 1.0
    assert emulation(moves("DDCD"), moves("CDCC")) == 0.0
    assert emulation(moves("C"), moves("D")) == 0.0  # one round: undefined -> 0


def test_empty_and_one_round_games_have_defined_values() -> None:
    assert behaviour_profile([], []) == {
        "CR": 0.0, "N": 1.0, "TM": 0.0, "Ret": 0.0, "For": 0.0, "Em": 0.0,
    }  # fmt: skip
    assert profile("D", "C") == {"CR": 0, "N": 0, "TM": 1, "Ret": 0, "For": 0, "Em": 0}


def test_zero_one_integers_are_the_same_as_booleans() -> None:
    m, o = moves("CDCCDDDDDD"), moves("DDDDDDDDDD")
    assert behaviour_profile([int(x) for x in m], [int(x) for x in o]) == behaviour_profile(m, o)


def test_labels_become_flags_by_role() -> None:
    assert cooperation_flags(["stag", "hare", None, "stag"], "stag") == [True, False, False, True]
    assert cooperation_rate(cooperation_flags(["cooperation", "defection"], "cooperation")) == 0.5


def test_bad_inputs_are_user_errors() -> None:
    with pytest.raises(StratagemError, match="agent has 2 moves but the opponent 3"):
        niceness([True, True], [True, True, False])
    with pytest.raises(StratagemError, match="opponent move 1: expected a boolean or 0/1"):
        emulation([1, 0], [1, 2])


# -- against the data: seed-001 §9 [CHECKED] ---------------------------------------------------

Metric = Callable[[Sequence[bool], Sequence[bool]], float]
# Cheapest and most selective first: a candidate fails fast.
_CHECKS: tuple[tuple[str, Metric], ...] = (
    ("N", niceness),
    ("TM", troublemaking),
    ("Em", emulation),
    ("Ret", retaliation),
    ("For", forgiveness),
)


def _compositions(total: int, parts: int) -> Iterator[tuple[int, ...]]:
    if parts == 0:
        if total == 0:
            yield ()
        return
    for cuts in itertools.combinations(range(1, total), parts - 1):
        bounds = (0, *cuts, total)
        yield tuple(bounds[i + 1] - bounds[i] for i in range(parts))


def _by_runs(n: int, k: int) -> Iterator[list[bool]]:
    """Every sequence of n moves with k cooperations, fewest runs first (agents switch rarely)."""
    for runs in range(1, n + 1):
        for first in (True, False):
            odd, even = (runs + 1) // 2, runs // 2
            ones, zeros = (odd, even) if first else (even, odd)
            for cs in _compositions(k, ones):
                for ds in _compositions(n - k, zeros):
                    seq: list[bool] = []
                    c, d = iter(cs), iter(ds)
                    for j in range(runs):
                        coop = (j % 2 == 0) == first
                        seq += [coop] * next(c if coop else d)
                    yield seq


def _opponent(strategy: str, agent: list[bool]) -> list[bool]:
    if strategy == "AlwaysCooperate":
        return [True] * len(agent)
    if strategy == "AlwaysDefect":
        return [False] * len(agent)
    return [True, *agent[:-1]]  # TitForTat: C, then the agent's previous move


def test_every_appendix_game_has_a_sequence_reproducing_its_metrics(appendix_a: Path) -> None:
    # seed-001 §9 [CHECKED]: for each of the 252 games, some agent sequence with the reported
    # number of cooperations gives N, TM, Ret, For and Em to 2 decimals (Python's rounding, half
    # to even: 0.125 prints 0.12). This pins the counting rules down.
    with appendix_a.open(newline="") as stream:
        rows = list(csv.DictReader(stream))
    assert len(rows) == 252
    missing = []
    for row in rows:
        n = int(row["NR"])
        k = round(float(row["CR"]) * n)
        target = {name: float(row[name]) for name, _ in _CHECKS}
        for agent in _by_runs(n, k):
            opponent = _opponent(row["OppStr"], agent)
            if all(round(f(agent, opponent), 2) == target[name] for name, f in _CHECKS):
                assert round(cooperation_rate(agent), 2) == float(row["CR"])
                break
        else:
            missing.append(row["idx"])
    assert missing == []
