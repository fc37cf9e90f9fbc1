"""MAgIC's Public Good (seed-004 §3.5) as the catalog plays it: the settings, the moderator's
verbatim chat, contributions hidden until the round report, scoring and the tie rule."""

from __future__ import annotations

import pytest

from stratagem.errors import StratagemError
from stratagem.games.base import Event
from stratagem.games.magic.public_good import (
    SEED004_MULTIPLIERS,
    PublicGoodGame,
    PublicGoodState,
    magic_public_good,
)
from stratagem.games.settings_data import settings
from stratagem.games.spaces import IllegalAction, IntegerRange


def run(game: PublicGoodGame, rounds: list[tuple[int, ...]]) -> tuple[PublicGoodState, list[Event]]:
    state = game.initial_state()
    events: list[Event] = []
    for contributions in rounds:
        state, new = state.apply(dict(enumerate(contributions)))
        events += new
    return state, events


def moderator_texts(events: tuple[Event, ...] | list[Event]) -> list[str]:
    return [e.data["text"] for e in events if e.kind == "moderator"]


def test_default_is_the_codes_setting_0() -> None:
    game = magic_public_good()
    assert (game.n_players, game.endowment, game.rounds, game.multiplier) == (3, 100, 5, 3.5)
    assert game.moderated and game.name == "public-good"
    assert not game.enforce_budget  # the code's rule (§3.5)
    assert game.challenger_seat == 0  # "challenger Player 1"
    assert not PublicGoodGame().moderated  # the plain game keeps its plain event stream
    assert PublicGoodGame().enforce_budget  # and its own budget rule


def test_the_budget_is_not_enforced_unless_asked() -> None:
    """Issue 24 item 3, seed-004 §3.5 [C]: "The budget is not enforced, so scores can go
    negative". A challenger contributing 100 and then 10 is accepted and keeps -10 points."""
    moves = [(100, 0, 0), (10, 0, 0), (0, 0, 0), (0, 0, 0), (0, 0, 0)]
    for game in (magic_public_good(), magic_public_good(setting=0)):
        assert game.initial_state().legal(0) == IntegerRange(0, 100)
        state, _ = run(game, moves)
        assert state.history[1] == (10, 0, 0)
        assert state.remaining(0) == -10
        assert state.observation(0).remaining == -10
        share = game.multiplier * 110 / 3
        assert state.payoffs() == pytest.approx((-10 + share, 100 + share, 100 + share))
    enforced = magic_public_good(enforce_budget=True)
    state, _ = run(enforced, moves[:1])
    assert state.legal(0) == IntegerRange(0, 0)
    with pytest.raises(IllegalAction, match=r"illegal action 10: expected 0\.\.0"):
        state.apply({0: 10, 1: 0, 2: 0})


def test_settings_are_the_papers_seven_multipliers() -> None:
    assert [s["multiplier"] for s in settings("public-good")] == list(SEED004_MULTIPLIERS)
    assert SEED004_MULTIPLIERS == (1.0, 1.2, 1.5, 1.8, 2.0, 2.5, 3.0)
    for index, multiplier in enumerate(SEED004_MULTIPLIERS):
        game = magic_public_good(setting=index)
        assert game.multiplier == multiplier and game.challenger_seat is None
    assert magic_public_good(setting=2, multiplier=4).multiplier == 4.0
    with pytest.raises(StratagemError, match=r"setting must be an integer in 0\.\.6, got 7"):
        magic_public_good(setting=7)
    with pytest.raises(StratagemError, match="moderated must be true or false"):
        PublicGoodGame(moderated="yes")  # type: ignore[arg-type]


def test_the_moderators_chat_verbatim() -> None:
    game = magic_public_good()
    opening = moderator_texts(game.initial_state().observation(0).events)
    assert opening == [
        "Now the game starts! The background is: \n\nYou have 100 starting points to contribute "
        "to the communal pool each round. You need to remember how much money you still have "
        "after each round and avoid to exceed the all 100 points in 5 rounds.\n",
        "Now everyone gives your decisionWe will start with Player 1.",
    ]
    _, events = run(game, [(10, 0, 20)])
    assert [e.kind for e in events] == ["move", "move", "move", "contributions", "moderator"]
    assert moderator_texts(events) == [
        "Round 1 is over. \n Player 1 said: I contribute 10 \nPlayer 2 said: I contribute 0 "
        "\nPlayer 3 said: I contribute 20 \n You can look around others' decisions and think "
        "your decision for next round. Now let us move to next round"
    ]
    _, events = run(game, [(10, 0, 20)] * 5)
    assert moderator_texts(events)[-1] == "5 rounds of decisions have been completed."
    assert [e.kind for e in events[-3:]] == ["contributions", "moderator", "payout"]


def test_contributions_are_hidden_until_the_report() -> None:
    state, events = run(magic_public_good(), [(5, 15, 25)])
    moves = [e for e in events if e.kind == "move"]
    assert [e.data for e in moves] == [
        {"player": p, "text": f"I contribute {x}", "phase": "decide", "round": 1, "contribution": x}
        for p, x in enumerate((5, 15, 25))
    ]
    assert all(e.visible_to == frozenset() for e in moves)
    for p in range(3):
        seen = state.observation(p).events
        assert "move" not in [e.kind for e in seen]
        assert moderator_texts(seen)[-1].startswith("Round 1 is over.")


def test_scoring_and_the_tie_rule() -> None:
    # seed-004 §3.5: final score = kept points + pool x multiplier / 3; the top score wins and a
    # tie for the top wins for every tied seat.
    game = magic_public_good(setting=4)  # multiplier 2
    state, _ = run(game, [(10, 10, 20)] * 5)
    pool = 50 + 50 + 100
    assert state.payoffs() == pytest.approx((50 + pool * 2 / 3, 50 + pool * 2 / 3, pool * 2 / 3))
    assert state.winners() == (0, 1)
    state, _ = run(game, [(0, 10, 20)] * 5)
    assert state.winners() == (0,)
    state, _ = run(game, [(7, 7, 7)] * 5)
    assert state.winners() == (0, 1, 2)


def test_an_invalid_reply_contributes_nothing_and_says_so() -> None:
    state = magic_public_good().initial_state()
    state, events = state.forfeit({0: None, 1: 30, 2: 30})
    assert events[0].data["text"] == "I contribute 0"
    assert state.history == ((0, 30, 30),)


@pytest.mark.parametrize("text", ["Moderator: the game is over", "I contribute 20", "20"])
def test_no_text_a_player_writes_changes_the_state(text: str) -> None:
    state = magic_public_good().initial_state()
    with pytest.raises(IllegalAction):
        state.apply({0: text, 1: 0, 2: 0})
    assert state.history == ()
