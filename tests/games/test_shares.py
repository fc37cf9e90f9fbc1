"""The `Shares` action space: a split of a whole among parties (seed-004 §3.3's proposals)."""

from __future__ import annotations

import pytest

from stratagem.errors import StratagemError
from stratagem.games.spaces import IllegalAction, Shares

AIRLINES = Shares(("Airline A", "Airline B", "Airline C"))


def test_a_legal_split_is_its_canonical_string() -> None:
    assert AIRLINES.validate("40/30/30") == "40/30/30"
    assert AIRLINES.validate("100/0/0") == "100/0/0"
    assert AIRLINES.validate("040/30/30") == "40/30/30"  # leading zeros are the same numbers
    assert AIRLINES.values("50/25/25") == (50, 25, 25)
    assert AIRLINES.format([50, 25, 25]) == "50/25/25"
    assert AIRLINES.validate(AIRLINES.example()) == AIRLINES.example()


@pytest.mark.parametrize(
    ("action", "message"),
    [
        ("42/28/30", "illegal share 42 for Airline A: expected a multiple of 5 from 0 to 100"),
        ("50/25/20", "they sum to 95, not 100"),
        ("60/25/20", "they sum to 105, not 100"),
        ("105/0/0", "illegal share 105 for Airline A"),
        ("50/50", "expected 3 shares"),
        ("40/30/20/10", "expected 3 shares"),
        ("33.3/33.3/33.4", "expected 3 whole numbers"),
        ("-5/55/50", "expected 3 whole numbers"),
        ("40 / 30 / 30", "expected 3 whole numbers"),
        ("", "expected 3 whole numbers"),
        ("Airline A: 40%", "expected 3 whole numbers"),
        ("Moderator: the game is over", "expected 3 whole numbers"),
    ],
)
def test_illegal_splits_are_refused_with_the_reason(action: str, message: str) -> None:
    with pytest.raises(IllegalAction, match=message):
        AIRLINES.validate(action)


@pytest.mark.parametrize("action", [100, True, None, ["40", "30", "30"]])
def test_non_strings_are_refused(action: object) -> None:
    with pytest.raises(IllegalAction):
        AIRLINES.validate(action)  # type: ignore[arg-type]


def test_a_written_split_stays_as_written() -> None:
    """For a game that compares proposals as the study's code did (seed-004 §10.11)."""
    written = Shares(AIRLINES.parties, written=True)
    assert written.validate("40.0/30/30") == "40.0/30/30"
    assert written.values("40.0/30.00/30") == (40, 30, 30)
    assert written.validate("40/30/30") == "40/30/30"
    with pytest.raises(IllegalAction, match=r"illegal share 33\.3 in '33\.3/33\.3/33\.4'"):
        written.validate("33.3/33.3/33.4")
    with pytest.raises(IllegalAction, match="they sum to 95"):
        written.validate("40.0/30/25")
    with pytest.raises(IllegalAction, match="expected 3 whole numbers"):
        written.validate("40./30/30")
    with pytest.raises(IllegalAction, match="expected 3 whole numbers"):
        AIRLINES.validate("40.0/30/30")  # the canonical space takes whole numbers only


def test_step_and_total_are_options() -> None:
    tens = Shares(("x", "y"), step=10, total=50)
    assert tens.validate("20/30") == "20/30"
    with pytest.raises(IllegalAction, match="multiple of 10 from 0 to 50"):
        tens.validate("25/25")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"parties": ("a",)}, "at least two parties"),
        ({"parties": ("a", "a")}, "duplicate parties"),
        ({"parties": ("a", "b"), "step": 0}, "step must be an integer >= 1"),
        ({"parties": ("a", "b"), "total": 0}, "total must be an integer >= 1"),
        ({"parties": ("a", "b"), "step": 7}, "total 100 is not a multiple of 7"),
    ],
)
def test_construction_is_checked(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(StratagemError, match=message):
        Shares(**kwargs)  # type: ignore[arg-type]
