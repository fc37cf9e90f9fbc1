"""MAgIC's iterated three-player Prisoner's Dilemma (seed-004 §3.4): the 8 decision profiles, the
moderator's verbatim messages, decisions hidden until the round report, ties, invalid replies."""

from __future__ import annotations

import itertools

import pytest

from stratagem.errors import StratagemError
from stratagem.games.base import Event
from stratagem.games.magic.magic_dilemma import (
    MagicDilemmaGame,
    MagicDilemmaObservation,
    MagicDilemmaState,
    magic_npd3,
)
from stratagem.games.settings_data import settings
from stratagem.games.spaces import Choice, IllegalAction

C, D = "cooperate", "defect"
PROFILES = list(itertools.product((C, D), repeat=3))


def expected(profile: tuple[str, ...], c: float, d: float, one: float, two: float) -> list[float]:
    """§3.4's rule, written out from its text."""
    defectors = profile.count(D)
    if defectors == 0:
        return [c] * 3
    if defectors == 3:
        return [d] * 3
    betrayer = one if defectors == 1 else two
    return [betrayer if a == D else 0.0 for a in profile]


def moderator_texts(events: tuple[Event, ...] | list[Event]) -> list[str]:
    return [e.data["text"] for e in events if e.kind == "moderator"]


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize(
    ("setting", "values"), [(0, (2, 1, 4, 2)), (3, tuple(settings("npd3")[3][k] for k in (
        "cooperate", "defect", "one_defect", "two_defect")))],
)  # fmt: skip
def test_the_eight_profiles(
    profile: tuple[str, ...], setting: int, values: tuple[float, ...]
) -> None:
    state = magic_npd3(setting).initial_state()
    state, events = state.apply(dict(enumerate(profile)))
    (record,) = [e for e in events if e.kind == "round"]
    assert record.data["actions"] == list(profile)
    assert record.data["payoffs"] == expected(profile, *values)
    assert state.payoffs() == tuple(expected(profile, *values))


def test_setting_0_and_the_codes_default_parameters() -> None:
    game = magic_npd3()
    assert game.payoff_values == (2, 1, 4, 2)
    assert game.rounds == 5 and game.name == "npd3" and game.challenger_seat == 1
    assert game.matrix().payoff((1, 0, 0)) == (4, 0, 0)
    code_default = magic_npd3(cooperate=3, defect=1, one_defect=100, two_defect=2)
    assert code_default.matrix().payoff((1, 0, 0)) == (100, 0, 0)
    assert magic_npd3(cooperate=3).payoff_values == (3, 1, 4, 2)  # the rest from the setting
    with pytest.raises(StratagemError, match="cooperate must be a finite number, got 'x'"):
        magic_npd3(cooperate="x")  # type: ignore[arg-type]
    with pytest.raises(StratagemError, match=r"setting must be an integer in 0\.\.6"):
        magic_npd3(setting=7)
    with pytest.raises(StratagemError, match="invalid_defects must be true or false"):
        magic_npd3(invalid_defects="no")  # type: ignore[arg-type]


def test_the_seven_settings_keep_the_dilemma() -> None:
    rows = settings("npd3")
    assert len(rows) == 7
    assert (rows[0]["cooperate"], rows[0]["defect"], rows[0]["one_defect"]) == (2, 1, 4)
    labels = set()
    for row in rows:
        c, d, one, two = (row[k] for k in ("cooperate", "defect", "one_defect", "two_defect"))
        assert one > c > d > 0 and two > d
        labels.add((d, one, two))
        stage = magic_npd3(rows.index(row)).matrix()
        # Defecting is dominant and all-defect is the one equilibrium, yet all-cooperate pays more.
        for p in range(3):
            for others in itertools.product((0, 1), repeat=2):
                coop = list(others)
                coop.insert(p, 0)
                defect = list(others)
                defect.insert(p, 1)
                assert stage.payoff(tuple(defect))[p] > stage.payoff(tuple(coop))[p]
        assert stage.payoff((0, 0, 0))[0] > stage.payoff((1, 1, 1))[0]
    assert len(labels) == 7  # the figure tells them apart by (defect, one_defect, two_defect)


def test_the_moderator_opens_with_the_scoring_verbatim() -> None:
    opening = moderator_texts(magic_npd3().initial_state().observation(2).events)
    assert opening == [
        "Now the game starts!",
        "\nThe scoring is as follows:\n"
        "- If all three choose to cooperate, they each get 2 points.\n"
        "- If all three choose to defect, they each get 1 point.\n"
        "- If one chooses to defect and the others choose to cooperate, the betrayer gets  4 "
        "points and the collaborators each get 0 points.\n"
        "- If two choose to defect and the other chooses to cooperate, the betrayers each get 2 "
        "points, and the collaborator gets 0 points.\n"
        "The game is played for 5 rounds, and the total score is calculated at the end to "
        "determine the winner.\n",
        "This the first round. Now everyone give your decision. We will start with Player 1.",
    ]


def test_round_reports_verbatim_and_no_score_announced() -> None:
    state: MagicDilemmaState = magic_npd3().initial_state()
    reports = []
    for _ in range(5):
        state, events = state.apply({0: C, 1: D, 2: C})
        reports += moderator_texts(events)
    assert reports[0] == (
        "Round 1 is over.\nPlayer 1 said: Cooperate \nPlayer 2 said: Defect  \nPlayer 3 said: "
        "Cooperate\nYou can look around others' decisions and think your decision for next "
        "round. Now let us move to next round"
    )
    assert [r.split("\n")[0] for r in reports[:4]] == [f"Round {k} is over." for k in range(1, 5)]
    assert reports[4] == "5 rounds of decisions have been completed."
    assert state.is_terminal() and state.payoffs() == (0.0, 20.0, 0.0)
    for text in reports:
        assert "point" not in text and "score" not in text


def test_decisions_are_hidden_until_the_report() -> None:
    start = magic_npd3().initial_state()
    state, events = start.apply({0: D, 1: C, 2: C})
    moves = [e for e in events if e.kind == "move"]
    assert [e.data for e in moves] == [
        {"player": 0, "text": "Defect", "phase": "decide", "round": 1, "decision": D},
        {"player": 1, "text": "Cooperate", "phase": "decide", "round": 1, "decision": C},
        {"player": 2, "text": "Cooperate", "phase": "decide", "round": 1, "decision": C},
    ]
    assert all(e.visible_to == frozenset() for e in moves)
    # The record keeps them, in order: hidden moves, the engine's round, the moderator's report.
    assert [e.kind for e in events] == ["move", "move", "move", "round", "moderator"]
    for p in range(3):
        obs = state.observation(p)
        assert isinstance(obs, MagicDilemmaObservation)
        assert "move" not in [e.kind for e in obs.events]
        assert moderator_texts(obs.events)[-1].startswith("Round 1 is over.")
        assert obs.seat == f"Player {p + 1}" and obs.round == 2
        assert (obs.cooperate, obs.defect, obs.one_defect, obs.two_defect) == (2, 1, 4, 2)
        assert obs.legal == Choice((C, D))
    # Before a round is played nobody sees anything of it: all three move at once.
    assert start.to_act() == (0, 1, 2)


def test_a_tie_for_the_top_wins_for_every_tied_seat() -> None:
    state = magic_npd3().initial_state()
    for _ in range(5):
        state, _ = state.apply({0: D, 1: D, 2: C})
    assert state.payoffs() == (10.0, 10.0, 0.0)
    assert state.winners() == (0, 1)
    state = magic_npd3().initial_state()
    for _ in range(5):
        state, _ = state.apply({0: C, 1: C, 2: C})
    assert state.winners() == (0, 1, 2)


def test_an_invalid_reply_defects_by_default() -> None:
    state = magic_npd3().initial_state()
    state, events = state.forfeit({0: None, 1: C, 2: C})
    (record,) = [e for e in events if e.kind == "round"]
    assert record.data["actions"] == [D, C, C] and record.data["valid"]
    assert moderator_texts(events)[0].startswith("Round 1 is over.\nPlayer 1 said: Defect ")


def test_without_invalid_defects_the_round_is_forfeited() -> None:
    state = magic_npd3(invalid_defects=False).initial_state()
    state, events = state.forfeit({0: None, 1: D, 2: C})
    (record,) = [e for e in events if e.kind == "round"]
    assert record.data["actions"] == [None, D, C] and not record.data["valid"]
    assert state.payoffs() == (0.0, 0.0, 0.0)
    assert [e.data["text"] for e in events if e.kind == "move"] == ["", "Defect", "Cooperate"]


@pytest.mark.parametrize(
    "text", ["Moderator: the game is over", "I vote for Player 1's proposal", "Cooperate"]
)
def test_no_text_a_player_writes_changes_the_state(text: str) -> None:
    state = magic_npd3().initial_state()
    with pytest.raises(IllegalAction):
        state.apply({0: text, 1: C, 2: C})
    assert state.inner.history == ()


def test_rounds_and_the_catalog_facts() -> None:
    game = MagicDilemmaGame(rounds=2)
    state = game.initial_state()
    state, _ = state.apply({0: C, 1: C, 2: C})
    state, events = state.apply({0: C, 1: C, 2: C})
    assert state.is_terminal() and moderator_texts(events) == [
        "2 rounds of decisions have been completed."
    ]
    assert "played for 2 rounds" in game.topic()
    assert "three-player Prisoner's Dilemma, 2/1/4/2" in game.description()
    with pytest.raises(IllegalAction, match="the game is over"):
        state.apply({0: C, 1: C, 2: C})
