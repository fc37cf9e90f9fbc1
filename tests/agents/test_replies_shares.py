"""The reply format of a `Shares` decision (seed-004 §3.3's cost-sharing proposal): the template
`Airline A: xx%` read from a reply, a JSON schema the provider can enforce, and the space's own
validation at the end."""

from __future__ import annotations

import pytest

from stratagem.agents.parsing import ParseError
from stratagem.agents.replies import reply_format
from stratagem.games.spaces import Shares

SPACE = Shares(("Airline A", "Airline B", "Airline C"))
FORMAT = reply_format(SPACE, "proposal")


@pytest.mark.parametrize(
    ("reply", "action"),
    [
        (
            "As Player 3, representing Airline C, I propose the following cost distribution:\n"
            "Airline A: 50%\nAirline B: 25%\nAirline C: 25%",
            "50/25/25",
        ),
        (
            "Airline A flies the most (90 flights/month, 1.75 hours), so it should pay more.\n"
            "As Player 1, representing Airline A, I propose the following cost distribution:\n"
            "Airline A: 40%\nAirline B: 30%\nAirline C: 30%\nI hope we can agree on this.",
            "40/30/30",
        ),
        ("**Airline A:** 45%\n**Airline B**: 30 %\n- Airline C: 25%", "45/30/25"),
        ("Airline A: 40%, Airline B: 30%, Airline C: 30%.", "40/30/30"),
        ("airline a: 40 percent\nairline b: 30 percent\nairline c: 30 percent", "40/30/30"),
        # The percent sign is not needed when the number stands alone.
        ("Airline A: 40\nAirline B: 30\nAirline C: 30", "40/30/30"),
        # A first draft, then the final proposal: the last one counts.
        (
            "Player 1 proposed Airline A: 40%, Airline B: 30%, Airline C: 30%.\n"
            "My proposal:\nAirline A: 50%\nAirline B: 25%\nAirline C: 25%",
            "50/25/25",
        ),
        ('{"Airline A": 40, "Airline B": 30, "Airline C": 30}', "40/30/30"),
        ("Here: {'Airline A': '50%', 'Airline B': '25', 'Airline C': 25}", "50/25/25"),
        # A whole number written with a decimal point is that number.
        ("Airline A: 40.0%\nAirline B: 30.00%\nAirline C: 30%", "40/30/30"),
        ('{"Airline A": 40.0, "Airline B": 30, "Airline C": "30.0%"}', "40/30/30"),
    ],
)
def test_good_replies(reply: str, action: str) -> None:
    assert FORMAT.parse(reply) == action


@pytest.mark.parametrize(
    ("reply", "action"),
    [
        ("Airline A: 40.0%\nAirline B: 30.00%\nAirline C: 30%", "40.0/30.00/30"),
        ("Airline A: 40%\nAirline B: 30%\nAirline C: 30%", "40/30/30"),
        ('{"Airline A": 40.0, "Airline B": 30, "Airline C": "30.0%"}', "40.0/30/30.0"),
    ],
)
def test_a_written_space_gets_the_shares_as_written(reply: str, action: str) -> None:
    """seed-004 §10.11: the code compares the strings, so "40" and "40.0" must reach it."""
    space = Shares(SPACE.parties, written=True)
    assert reply_format(space, "proposal").parse(reply) == action


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ("Airline A: 50%\nAirline B: 25%", "no share found for Airline C"),
        ("Airline A: 50%\nAirline B: 25%\nAirline C: 20%", "they sum to 95, not 100"),
        ("Airline A: 42%\nAirline B: 28%\nAirline C: 30%", "expected a multiple of 5"),
        ("Airline A: 33.3%\nAirline B: 33.3%\nAirline C: 33.4%", "not a whole number"),
        ("I vote for Player 1's proposal", "no share found for Airline A, Airline B, Airline C"),
        ("Moderator: the game is over", "no share found for Airline A"),
        ("", "no share found"),
        # A recital of the setting is not a proposal.
        (
            "Airline A: 90 flights/month\nAirline B: 50 flights\nAirline C: 1.75 hours",
            "no share found for Airline A, Airline B, Airline C",
        ),
        ("Airline A: $400,000\nAirline B: $300,000\nAirline C: $300,000", "no share found"),
        ('{"Airline A": 40.5, "Airline B": 29.5, "Airline C": 30}', "not a whole number"),
    ],
)
def test_bad_replies_say_why(reply: str, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        FORMAT.parse(reply)


def test_the_instruction_and_the_constraint() -> None:
    assert "Airline A: xx%\nAirline B: xx%\nAirline C: xx%" in FORMAT.instruction
    assert "multiple of 5 from 0 to 100" in FORMAT.instruction
    # 231 legal splits (3 airlines, 5% steps): the constraint lists them in the template, so a
    # grammar enforces the sum too, which a JSON schema cannot.
    choices = FORMAT.constraint["choices"]
    assert len(choices) == len(set(choices)) == 231
    assert "Airline A: 40%\nAirline B: 30%\nAirline C: 30%" in choices
    assert all(FORMAT.parse(c) for c in choices)  # what the constraint makes a provider write
    # Beyond 1,000 splits, a JSON schema of multiples of the step.
    many = reply_format(Shares(tuple("ABCDEF"), step=1), "proposal")
    schema = many.constraint["json_schema"]
    assert schema["required"] == list("ABCDEF") and schema["additionalProperties"] is False
    share = schema["properties"]["B"]
    assert share["type"] == "integer" and (share["minimum"], share["maximum"]) == (0, 100)
    assert share["enum"] == list(range(101))
    assert FORMAT.parse('{"Airline A": 100, "Airline B": 0, "Airline C": 0}') == "100/0/0"
