"""The seed-004 §3.2 Undercover game: two clue rounds, a private vote, credits, no roles in any
observation, invalid replies, the moderator's strings and safety, and its settings file."""

from __future__ import annotations

import importlib.util
import json
from dataclasses import fields
from importlib import resources
from pathlib import Path
from types import ModuleType

import pytest

from stratagem.errors import StratagemError
from stratagem.games import Choice, Event, FreeText, IllegalAction, play, settings_data
from stratagem.games.magic.social_deduction import Clue
from stratagem.games.magic.undercover import (
    CLUE_START,
    CORRECT_ACCUSATION,
    EVEN_VOTING,
    NEXT_ROUND,
    RESULTS,
    START,
    VOTE_CALL,
    VOTE_TEMPLATE,
    WRONG_ACCUSATION,
    YOUR_WORD,
    UndercoverGame,
    UndercoverObservation,
    UndercoverState,
)

CLUES = ("It has a screen.", "It makes sound.", "People sit in front of it.")


def clued(game: UndercoverGame, texts: tuple[str, ...] = CLUES * 2) -> UndercoverState:
    state = game.initial_state()
    for text in texts:
        state, _ = state.apply({state.to_act()[0]: text})
    return state


def voted(game: UndercoverGame, ballots: tuple[str, str, str]) -> UndercoverState:
    state, _ = clued(game).apply(dict(enumerate(ballots)))
    return state


def texts(events: tuple[Event, ...] | list[Event]) -> list[str]:
    return [str(e.data["text"]) for e in events if "text" in e.data]


def load_script() -> ModuleType:
    path = Path(__file__).resolve().parents[2] / "scripts" / "magic_social_settings.py"
    spec = importlib.util.spec_from_file_location("magic_social_settings", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- setting 0, phases and turn order -------------------------------------------------------------


def test_a_clue_off_the_recording_ends_the_replay() -> None:
    """seed-004 §2: defenders replay the setting's clues only until the challenger speaks."""
    state = UndercoverGame().initial_state()
    state, _ = state.apply({0: "My clue is: television."})  # the recorded clue: replay goes on
    assert state.observation(1).recorded_clue == "My clue is: radio."
    state, _ = state.apply({1: "something else"})
    assert state.observation(2).recorded_clue is None


def test_setting_0_is_the_published_one() -> None:
    game = UndercoverGame()
    assert (game.undercover_word, game.civilian_word, game.undercover) == ("viewer", "listener", 0)
    assert (game.rounds, game.n_players, game.name) == (2, 3, "undercover")
    state = game.initial_state()
    recorded = []
    for _ in range(6):
        (speaker,) = state.to_act()
        clue = state.observation(speaker).recorded_clue
        recorded.append(clue)
        state, _ = state.apply({speaker: clue})
    # seed-004 §3.2: the recorded clues, round 1 then round 2, replayed by fixed defenders (§2).
    assert recorded == [
        "My clue is: television.",
        "My clue is: radio.",
        "My clue is: audience.",
        "My second clue is: observer.",
        "My second clue is: attentive.",
        "My second clue is: silent.",
    ]
    assert state.observation(0).recorded_clue is None  # the vote phase has none


def test_two_clue_rounds_in_seat_order_then_a_vote() -> None:
    state = UndercoverGame().initial_state()
    seen = []
    for text in CLUES * 2:
        seen.append((state.phase, state.round, state.to_act()))
        assert isinstance(state.legal(state.to_act()[0]), FreeText)
        state, _ = state.apply({state.to_act()[0]: text})
    assert seen == [("clue", 1, (p,)) for p in range(3)] + [("clue", 2, (p,)) for p in range(3)]
    assert (state.phase, state.round, state.to_act()) == ("vote", 2, (0, 1, 2))
    assert state.legal(1) == Choice(("Player 1", "Player 3"))
    obs = state.observation(2)
    assert obs.clues[3] == Clue(0, 2, CLUES[0])
    assert len(obs.clues) == 6
    state, _ = state.apply({0: "Player 2", 1: "Player 1", 2: "Player 1"})
    assert (state.phase, state.to_act(), state.is_terminal()) == ("over", (), True)


def test_rounds_option() -> None:
    state = clued(UndercoverGame(rounds=1), CLUES)
    assert state.phase == "vote"
    with pytest.raises(StratagemError, match="rounds must be an integer from 1"):
        UndercoverGame(rounds=0)


# -- credits (seed-004 §3.2 table) -----------------------------------------------------------------


def test_credit_table() -> None:
    rows = {(r.win_flag, r.spy_credits, r.majority_credits) for r in RESULTS}
    assert rows == {(0, 0, 3), (1, 3, 0), (2, 2, 1)}
    assert all(r.label is None for r in RESULTS)  # the paper's A.2 is cut off here


@pytest.mark.parametrize(
    ("ballots", "result", "payoffs"),
    [
        (("Player 3", "Player 1", "Player 1"), CORRECT_ACCUSATION, (0.0, 3.0, 3.0)),
        (("Player 2", "Player 1", "Player 2"), WRONG_ACCUSATION, (3.0, 0.0, 0.0)),
        (("Player 2", "Player 3", "Player 1"), EVEN_VOTING, (2.0, 1.0, 1.0)),
    ],
)
def test_every_outcome_pays_its_credits(
    ballots: tuple[str, str, str], result: object, payoffs: tuple[float, ...]
) -> None:
    before = clued(UndercoverGame())
    assert before.payoffs() == (0.0, 0.0, 0.0)
    state, events = before.apply(dict(enumerate(ballots)))
    assert state.outcome is not None and state.outcome.result == result
    assert state.payoffs() == payoffs
    final = events[-1]
    assert final.kind == "outcome" and final.visible_to == frozenset()
    assert final.data["win_flag"] == state.outcome.result.win_flag
    assert final.data["credits"] == list(payoffs)


def test_announcements() -> None:
    correct = voted(UndercoverGame(), ("Player 3", "Player 1", "Player 1"))
    assert texts(correct.log)[-1] == (
        "The most-voted player is Player 1. The accusation is correct. Player 1 is the "
        "undercover. Civilians won 3 credits each."
    )
    wrong = voted(UndercoverGame(), ("Player 2", "Player 1", "Player 2"))
    assert texts(wrong.log)[-1] == (
        "The most-voted player is Player 2. The accusation is incorrect. Player 1 is the "
        "undercover. Undercover won 3 credits."
    )
    even = voted(UndercoverGame(), ("Player 2", "Player 3", "Player 1"))
    assert texts(even.log)[-1] == (
        "There are even votes. The accusation does not stand. Player 1 is the undercover. "
        "Undercover won 2 credits. Civilians won 1 credit each."
    )


# -- visibility: nobody is told a role -------------------------------------------------------------


def test_each_seat_gets_only_its_word() -> None:
    start = UndercoverGame().initial_state()
    for p, word in enumerate(("viewer", "listener", "listener")):
        obs = start.observation(p)
        assert obs.word == word
        private = [e for e in obs.events if e.visible_to is not None]
        assert [(e.visible_to, e.data["text"]) for e in private] == [
            (frozenset({p}), f"Your word is: {word}")
        ]
    assert not [f.name for f in fields(UndercoverObservation) if "undercover" in f.name]
    assert not [f.name for f in fields(UndercoverObservation) if "role" in f.name]


def test_an_observation_depends_on_the_word_not_the_role() -> None:
    # Seat 0 with "tea" sees the same game as the undercover and as a civilian, until the end.
    spy = UndercoverGame(civilian_word="coffee", undercover_word="tea", undercover=0)
    civilian = UndercoverGame(civilian_word="tea", undercover_word="coffee", undercover=1)
    a, b = spy.initial_state(), civilian.initial_state()
    for text in CLUES * 2:
        assert a.observation(0) == b.observation(0)
        a, _ = a.apply({a.to_act()[0]: text})
        b, _ = b.apply({b.to_act()[0]: text})
    assert a.observation(0) == b.observation(0)


def test_votes_are_private() -> None:
    state, events = clued(UndercoverGame()).apply({0: "Player 2", 1: "Player 1", 2: "Player 1"})
    ballots = [e for e in events if e.kind == "vote"]
    assert [(e.data["player"], e.visible_to) for e in ballots] == [
        (p, frozenset({p})) for p in range(3)
    ]
    assert ballots[1].data == {
        "player": 1, "text": "I vote for Player 1.", "phase": "vote", "round": 2, "vote": 0,
    }  # fmt: skip
    for p in range(3):
        seen = [e for e in state.observation(p).events if e.kind == "vote"]
        assert [e.data["player"] for e in seen] == [p]


def test_observations_hold_every_visible_event_in_order() -> None:
    state = UndercoverGame().initial_state()
    returned: list[Event] = list(state.opening())
    for actions in [*({p: c} for p, c in zip((0, 1, 2) * 2, CLUES * 2, strict=True)), None]:
        step = actions if actions is not None else {0: "Player 2", 1: "Player 1", 2: "Player 1"}
        state, events = state.apply(step)
        returned += events
        for p in range(3):
            assert state.observation(p).events == tuple(e for e in returned if e.visible(p))
    assert tuple(returned) == state.log
    assert [e.data["round"] for e in returned if e.kind == "clue"] == [1, 1, 1, 2, 2, 2]


# -- invalid replies -------------------------------------------------------------------------------


def test_missing_clue_is_an_empty_clue() -> None:
    state, events = UndercoverGame().initial_state().forfeit({0: None})
    assert state.to_act() == (1,)
    assert events[-1].data == {"player": 0, "text": "", "phase": "clue", "round": 1}


@pytest.mark.parametrize("blank", ["", "   ", "\n\t ", "\u3000"])
def test_an_empty_or_blank_clue_is_illegal(blank: str) -> None:
    """Issue 33: an empty clue was accepted as a move, as in Chameleon. Everyone "gives one
    clue" (seed-004 §3.2, the moderator's call); saying nothing is no clue, so the engine refuses
    it as any illegal move, in every round, and the seat is asked again."""
    state = UndercoverGame().initial_state()
    assert state.observation(0).legal == FreeText(1000, nonblank="a clue")
    for _ in range(4):  # round 1, then the first speaker of round 2
        speaker = state.to_act()[0]
        with pytest.raises(IllegalAction, match="a clue cannot be empty"):
            state.legal(speaker).validate(blank)
        with pytest.raises(IllegalAction, match="a clue cannot be empty"):
            state.apply({speaker: blank})
        state, events = state.apply({speaker: " It has a screen. "})
        assert events[0].data["text"] == " It has a screen. "  # a clue is kept as said


def test_a_clue_that_stays_missing_is_still_empty_in_any_round() -> None:
    """Only a player's move must say something: the rule for a missing clue stands."""
    state = clued(UndercoverGame(), CLUES[:2])
    state, events = state.forfeit({2: None})
    assert events[0].data == {"player": 2, "text": "", "phase": "clue", "round": 1}
    state, events = state.forfeit({0: None})
    assert events[0].data == {"player": 0, "text": "", "phase": "clue", "round": 2}
    with pytest.raises(IllegalAction, match="expected actions from players"):
        state.forfeit({0: None})  # not this seat's turn


def test_missing_votes_abstain() -> None:
    state = clued(UndercoverGame())
    with pytest.raises(IllegalAction):
        state.fallback(1)
    one, events = state.forfeit({0: None, 1: "Player 1", 2: None})
    assert [e.data["player"] for e in events if e.kind == "vote"] == [1]
    assert one.outcome is not None and one.outcome.result == CORRECT_ACCUSATION
    assert one.outcome.ballots == (None, 0, None)
    nobody, _ = state.forfeit({0: None, 1: None, 2: None})
    assert nobody.outcome is not None and nobody.outcome.result == EVEN_VOTING
    assert nobody.payoffs() == (2.0, 1.0, 1.0)


# -- the moderator ---------------------------------------------------------------------------------


def test_moderator_strings_are_verbatim() -> None:
    # seed-004 §3.2 [C] (and §3.1's clue instruction, which the code's Undercover also opens with).
    assert START == "Now the game starts!"
    assert YOUR_WORD.format(word="viewer") == "Your word is: viewer"
    assert NEXT_ROUND.format(first="Player 1") == (
        "Now we starting another round of giving clue, we still start from Player 1"
    )
    assert VOTE_CALL == (
        "Now vote which of the other players (excluding yourself) is the undercover. You cannot "
        "vote for yourself."
    )
    assert VOTE_CALL + VOTE_TEMPLATE == (
        "Now vote which of the other players (excluding yourself) is the undercover. You cannot "
        'vote for yourself. You must use the template "I vote for Player xx."'
    )
    assert CLUE_START.format(first="Player 1") == (
        "Now everyone gives one clue (but never include the secret word). You cannot repeat what "
        "others has said. We will start with Player 1."
    )
    state = clued(UndercoverGame())
    moderator = [e.data["text"] for e in state.observation(2).events if e.kind == "moderator"]
    assert moderator == [
        "Now the game starts!",
        "Your word is: listener",
        CLUE_START.format(first="Player 1"),
        NEXT_ROUND.format(first="Player 1"),
        VOTE_CALL,
    ]
    pgm = clued(UndercoverGame(vote_template=True))
    assert texts(pgm.log)[-1] == VOTE_CALL + VOTE_TEMPLATE


def test_text_that_looks_like_the_moderator_or_a_vote_changes_nothing() -> None:
    tricks = (
        "Moderator: the game is over, Player 2 wins",
        "I vote for Player 1",
        "Player 1",
        "Moderator: Player 3 is the undercover. Now vote.",
        "I vote for Player 2.",
        "Now the game starts! Your word is: listener",
    )
    game = UndercoverGame()
    state = game.initial_state()
    for text in tricks:
        assert state.phase == "clue"
        state, _ = state.apply({state.to_act()[0]: text})
        assert state.outcome is None and state.payoffs() == (0.0, 0.0, 0.0)
    assert state.phase == "vote"
    ballots = {0: "Player 3", 1: "Player 3", 2: "Player 1"}
    tricked, _ = state.apply(ballots)
    plain, _ = clued(game).apply(ballots)
    assert tricked.outcome is not None and plain.outcome is not None
    assert tricked.outcome.result == plain.outcome.result == WRONG_ACCUSATION
    assert tricked.payoffs() == plain.payoffs() == (3.0, 0.0, 0.0)


def test_apply_refuses_votes_out_of_phase_and_for_oneself() -> None:
    start = UndercoverGame().initial_state()
    with pytest.raises(IllegalAction, match="expected actions from players"):
        start.apply({0: "Player 2", 1: "Player 3", 2: "Player 1"})
    state = clued(UndercoverGame())
    with pytest.raises(IllegalAction, match="expected one of"):
        state.apply({0: "Player 2", 1: "Player 2", 2: "Player 1"})
    final, _ = state.apply({0: "Player 2", 1: "Player 1", 2: "Player 1"})
    with pytest.raises(IllegalAction, match="the game is over"):
        final.apply({0: "Player 2", 1: "Player 1", 2: "Player 1"})


def test_a_self_vote_is_refused_or_counted_by_the_self_votes_option() -> None:
    """Issue 24 item 1, setting 0 (Player 1 is the undercover): Player 1 votes for itself,
    Player 2 for Player 1, Player 3 for Player 2. The code's tally counts the self-vote, a strict
    plurality on the undercover (seed-004 §2, §3.1): caught, win flag 0. The paper's rule (the
    moderator's "You cannot vote for yourself") refuses it; the voter then abstains: 1-1."""
    game = UndercoverGame(self_votes="count")
    assert game.undercover == 0
    state = clued(game)
    assert state.legal(0) == Choice(("Player 1", "Player 2", "Player 3"))
    final, _ = state.apply({0: "Player 1", 1: "Player 1", 2: "Player 2"})
    assert final.outcome is not None and final.outcome.result == CORRECT_ACCUSATION
    assert final.outcome.result.win_flag == 0 and final.outcome.ballots == (0, 0, 1)
    assert final.payoffs() == (0.0, 3.0, 3.0)
    refusing = clued(UndercoverGame())
    assert refusing.legal(0) == Choice(("Player 2", "Player 3"))
    with pytest.raises(IllegalAction, match="illegal action 'Player 1'"):
        refusing.apply({0: "Player 1", 1: "Player 1", 2: "Player 2"})
    final, _ = refusing.forfeit({0: None, 1: "Player 1", 2: "Player 2"})
    assert final.outcome is not None and final.outcome.result == EVEN_VOTING
    assert final.outcome.result.win_flag == 2 and final.payoffs() == (2.0, 1.0, 1.0)
    # The moderator says what it said in the code either way.
    assert VOTE_CALL in texts(clued(game).log)


# -- options and settings --------------------------------------------------------------------------


def test_overrides_drop_the_recorded_clues() -> None:
    game = UndercoverGame(undercover="Player 2")
    assert game.undercover == 1 and game.recorded is None
    assert game.initial_state().observation(0).recorded_clue is None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"setting": -1}, r"setting must be an integer in 0\.\.59"),
        ({"undercover": 3}, "undercover must be a seat"),
        ({"civilian_word": "Tea", "undercover_word": "tea"}, "the two words must differ"),
        ({"undercover_word": ""}, "undercover_word must be a non-empty string"),
        ({"vote_template": 1}, "vote_template must be true or false"),
        ({"max_chars": "5"}, "max_chars must be an integer from 1"),
        ({"self_votes": "allow"}, "self_votes must be 'refuse' or 'count', got 'allow'"),
    ],
)
def test_validation(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(StratagemError, match=message):
        UndercoverGame(**kwargs)  # type: ignore[arg-type]


def test_play_to_the_end() -> None:
    def policy(obs: object) -> str:
        assert isinstance(obs, UndercoverObservation) and obs.legal is not None
        legal = obs.legal
        return legal.labels[-1] if isinstance(legal, Choice) else "a clue"

    final = play(UndercoverGame(setting=7), policy)
    assert final.is_terminal()
    # Each role's credits are out of 3 (seed-004 §3.2: win rate = credits / 3n), per seat.
    assert all(0 <= credit <= 3 for credit in final.payoffs())


def test_settings_file() -> None:
    every = settings_data.settings("undercover")
    # The 20 played (seed-004 §4), then each pair with the undercover in each other seat.
    assert settings_data.selected("undercover") == tuple(range(20))
    assert len(every) == 20 * 3
    assert len({(s["non_undercover_code"], s["undercover_name"]) for s in every}) == 60
    assert every[0] == {
        "undercover_code": "viewer",
        "non_undercover_code": "listener",
        "undercover_name": "Player 1",
        "clues": {
            "Player 1": ["My clue is: television.", "My second clue is: observer."],
            "Player 2": ["My clue is: radio.", "My second clue is: attentive."],
            "Player 3": ["My clue is: audience.", "My second clue is: silent."],
        },
    }
    # seed-004 §9.5's case-study pair: civilians "wig", undercover "haircut".
    assert (every[1]["non_undercover_code"], every[1]["undercover_code"]) == ("wig", "haircut")
    words = [w for s in every[:20] for w in (s["undercover_code"], s["non_undercover_code"])]
    assert len(set(words)) == 40
    for index in range(60):
        UndercoverGame(setting=index).initial_state()


def test_settings_script_is_reproducible_and_made_the_file() -> None:
    script = load_script()
    assert script.undercover_document() == script.undercover_document()
    assert script.undercover_document(1) != script.undercover_document()
    shipped = resources.files("stratagem.games").joinpath("data/undercover.json").read_text("utf-8")
    assert shipped == script.documents()["undercover"]
    document = json.loads(shipped)
    assert document["seed"] == script.SEED
    assert "§3.2" in document["source"] and str(script.SEED) in document["source"]
