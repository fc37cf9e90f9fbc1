"""The seed-004 §3.1 Chameleon game: phases, credits, guesses, visibility, invalid replies, the
moderator's strings and safety, and its settings file."""

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
from stratagem.games.magic.chameleon import (
    CAUGHT,
    CAUGHT_WRONG_GUESS,
    CLUE_START,
    EVEN_VOTING,
    GUESSED_RIGHT,
    IS_CHAMELEON,
    NOT_CHAMELEON,
    RESULTS,
    SEED004_TOPIC_CODES,
    START,
    VOTE_CALL,
    WRONG_ACCUSATION,
    ChameleonGame,
    ChameleonObservation,
    ChameleonState,
    guess_is_right,
    guessed_term,
)
from stratagem.games.magic.social_deduction import Clue, plurality

CLUES = ("It's purple.", "It grows in bunches.", "It's sweet.")


def clued(game: ChameleonGame, texts: tuple[str, ...] = CLUES) -> ChameleonState:
    state = game.initial_state()
    for text in texts:
        state, _ = state.apply({state.to_act()[0]: text})
    return state


def voted(game: ChameleonGame, ballots: tuple[str, str, str]) -> ChameleonState:
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


def test_setting_0_is_the_published_one() -> None:
    game = ChameleonGame()
    assert (game.topic, game.code, game.chameleon) == ("Fruits", "Grape", 2)
    assert game.n_players == 3
    assert game.name == "chameleon"
    # seed-004 §3.1: the three recorded clues, replayed by fixed defenders (§2).
    start = game.initial_state()
    recorded = [start.observation(p).recorded_clue for p in range(3)]
    assert recorded == [
        "It's often used to make wine.",
        "It's small and round.",
        "It's red in color.",
    ]


def test_phases_and_turn_order() -> None:
    state = ChameleonGame().initial_state()
    seen = []
    for text in CLUES:
        seen.append((state.phase, state.to_act()))
        assert isinstance(state.legal(state.to_act()[0]), FreeText)
        state, _ = state.apply({state.to_act()[0]: text})
    assert seen == [("clue", (0,)), ("clue", (1,)), ("clue", (2,))]
    assert (state.phase, state.to_act()) == ("vote", (0, 1, 2))
    assert state.legal(0) == Choice(("Player 2", "Player 3"))
    assert state.legal(1) == Choice(("Player 1", "Player 3"))
    assert state.legal(2) == Choice(("Player 1", "Player 2"))
    state, _ = state.apply({0: "Player 3", 1: "Player 3", 2: "Player 1"})
    assert (state.phase, state.to_act()) == ("guess", (2,))
    assert isinstance(state.legal(2), FreeText)
    with pytest.raises(IllegalAction):
        state.legal(0)
    state, _ = state.apply({2: "Apple"})
    assert (state.phase, state.to_act(), state.is_terminal()) == ("over", (), True)
    assert all(state.observation(p).legal is None for p in range(3))


def test_observation_carries_the_clues_so_far() -> None:
    state = clued(ChameleonGame(), CLUES[:2])
    obs = state.observation(2)
    assert isinstance(obs, ChameleonObservation)
    assert obs.clues == (Clue(0, 1, CLUES[0]), Clue(1, 1, CLUES[1]))
    assert (obs.name, obs.phase, obs.round, obs.topic) == ("Player 3", "clue", 1, "Fruits")
    assert obs.legal == FreeText(1000, nonblank="a clue")
    assert state.observation(0).legal is None


# -- credits (seed-004 §3.1 table) -----------------------------------------------------------------


def test_credit_table() -> None:
    # (win_flag, paper label, name, chameleon credits, non-chameleon credits), seed-004 §3.1.
    rows = {(r.win_flag, r.label, r.name, r.spy_credits, r.majority_credits) for r in RESULTS}
    assert rows == {
        (0, 0, "the non-chameleon won", 0, 2),
        (2, 1, "the chameleon won", 2, 0),
        (3, 2, "even voting", 1, 1),
        (1, 3, "the chameleon guessed right", 1, 1),
    }
    assert [r.label for r in RESULTS] == [0, 1, 2, 3]


@pytest.mark.parametrize(
    ("ballots", "guess", "result", "payoffs"),
    [
        (("Player 3", "Player 3", "Player 1"), "Apple", CAUGHT_WRONG_GUESS, (2.0, 2.0, 0.0)),
        (("Player 2", "Player 1", "Player 1"), None, WRONG_ACCUSATION, (0.0, 0.0, 2.0)),
        (("Player 2", "Player 3", "Player 1"), None, EVEN_VOTING, (1.0, 1.0, 1.0)),
        (("Player 3", "Player 3", "Player 2"), "Grape", GUESSED_RIGHT, (1.0, 1.0, 1.0)),
    ],
)
def test_every_outcome_pays_its_credits(
    ballots: tuple[str, str, str], guess: str | None, result: object, payoffs: tuple[float, ...]
) -> None:
    state = voted(ChameleonGame(), ballots)
    if guess is not None:
        assert state.phase == "guess"
        assert state.payoffs() == (0.0, 0.0, 0.0)  # nothing is paid before the end
        state, events = state.apply({2: guess})
    else:
        assert state.is_terminal()
        events = []
    assert state.outcome is not None
    assert state.outcome.result == result
    assert state.payoffs() == payoffs
    final = state.log[-1]
    assert final.kind == "outcome" and final.visible_to == frozenset()
    assert final.data["win_flag"] == state.outcome.result.win_flag
    assert final.data["label"] == state.outcome.result.label
    assert final.data["credits"] == list(payoffs)
    assert events == [] or events[-1] == final


def test_strict_plurality_and_even_votes() -> None:
    assert plurality((2, 2, 0)) == 2
    assert plurality((1, 2, 1)) == 1
    assert plurality((2, None, None)) == 2  # one vote, two abstentions: still a strict plurality
    assert plurality((1, 2, 0)) is None  # one vote each: even votes
    assert plurality((2, 0, None)) is None
    assert plurality((None, None, None)) is None  # nobody voted: all tie at 0
    # Two votes on a non-chameleon beat one on the chameleon: a wrong plurality.
    state = voted(ChameleonGame(), ("Player 2", "Player 3", "Player 2"))
    assert state.outcome is not None and state.outcome.result == WRONG_ACCUSATION
    assert state.outcome.accused == 1


def test_case_study_announcement() -> None:
    # seed-004 §9.5: Fruits/Mango, Player 2 the chameleon, votes 1->3, 2->1, 3->1.
    game = ChameleonGame(topic="Fruits", code="Mango", chameleon=1)
    state, events = clued(game, ("It's juicy.", "It's sweet.", "It's red.")).apply(
        {0: "Player 3", 1: "Player 1", 2: "Player 1"}
    )
    assert texts([e for e in events if e.kind == "moderator"]) == [
        "The most-voted player is Player 1. The accusation is incorrect. Player 2 is the "
        "chameleon. Chameleon won 2 credits."
    ]
    assert state.payoffs() == (0.0, 2.0, 0.0)


def test_other_announcements() -> None:
    even = voted(ChameleonGame(), ("Player 2", "Player 3", "Player 1"))
    assert texts(even.log)[-1] == (
        "There are even votes. The accusation does not stand. Player 3 is the chameleon. "
        "Chameleon won 1 credit. Non-chameleons won 1 credit each."
    )
    caught = voted(ChameleonGame(), ("Player 3", "Player 3", "Player 1"))
    right, _ = caught.apply({2: 'I guess the code is "grape"'})
    assert texts(right.log)[-2:] == [
        'I guess the code is "grape"',
        "Player 3 guessed the code correctly! The secret word is Grape. Chameleon won 1 credit. "
        "Non-chameleons won 1 credit each.",
    ]
    wrong, _ = caught.apply({2: "I guess the code is Apple."})
    assert texts(wrong.log)[-2:] == [
        'I guess the code is "Apple"',
        "Player 3 guessed the code wrong! The secret word is Grape. Non-chameleons won 2 credits "
        "each.",
    ]


# -- the guess (seed-004 §3.1 [C]) -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "code", "right"),
    [
        ('I guess the code is "Grape"', "Grape", True),
        ('I guess the code is "gRAPE"', "Grape", True),
        ('I guess the code is " G rape "', "Grape", True),  # spaces ignored
        ('"Apple", or maybe "Grape"', "Grape", False),  # only the first quoted span counts
        ('It is "Grape." for sure', "Grape", False),  # a period inside quotes counts
        ("I guess the code is grape.", "Grape", True),  # the last word, its period ignored
        ("Grape", "Grape", True),
        ("grape is my guess", "Grape", False),  # the last word is "guess"
        ("", "Grape", False),
        ("I think it is united states", "United States", True),  # last 2 words
        ("The code is the United   States.", "United States", True),
        ("unitedstates", "United States", False),  # fewer words than the code
        ('"UnitedStates"', "United States", True),
        ("I guess the code is United Kingdom", "United States", False),
    ],
)
def test_guess_comparison(text: str, code: str, right: bool) -> None:
    assert guess_is_right(text, code) is right


def test_guessed_term() -> None:
    assert guessed_term('I guess the code is "Grape" because', "Grape") == "Grape"
    assert guessed_term("it is united states.", "United States") == "united states"
    assert guessed_term("Grape", "United States") is None


# -- visibility ------------------------------------------------------------------------------------


def test_votes_are_private_and_clues_public() -> None:
    state, events = clued(ChameleonGame()).apply({0: "Player 3", 1: "Player 3", 2: "Player 1"})
    ballots = [e for e in events if e.kind == "vote"]
    assert [(e.data["player"], e.visible_to) for e in ballots] == [
        (p, frozenset({p})) for p in range(3)
    ]
    assert [e.data["text"] for e in ballots] == [
        "I vote for Player 3.",
        "I vote for Player 3.",
        "I vote for Player 1.",
    ]
    assert ballots[0].data == {
        "player": 0, "text": "I vote for Player 3.", "phase": "vote", "round": 1, "vote": 2,
    }  # fmt: skip
    for p in range(3):
        seen = [e for e in state.observation(p).events if e.kind == "vote"]
        assert [e.data["player"] for e in seen] == [p]
    clue_events = [e for e in state.log if e.kind == "clue"]
    assert len(clue_events) == 3 and all(e.visible_to is None for e in clue_events)
    assert clue_events[0].data == {"player": 0, "text": CLUES[0], "phase": "clue", "round": 1}


def test_the_word_never_reaches_the_chameleon() -> None:
    game = ChameleonGame()
    state = game.initial_state()
    while not state.is_terminal() and state.phase != "guess":
        obs = state.observation(2)
        assert obs.word is None and obs.is_chameleon
        assert "Grape" not in repr(obs)
        assert not any("Grape" in str(e.data) for e in obs.events)
        actions = {p: CLUES[p] if state.phase == "clue" else "Player 1" for p in state.to_act()}
        if state.phase == "vote":
            actions = {0: "Player 3", 1: "Player 3", 2: "Player 1"}
        state, _ = state.apply(actions)
    assert state.observation(2).word is None
    assert [state.observation(p).word for p in (0, 1)] == ["Grape", "Grape"]


def test_each_seat_is_told_only_its_own_role() -> None:
    start = ChameleonGame().initial_state()
    for p in range(3):
        private = [e for e in start.observation(p).events if e.visible_to is not None]
        assert [e.visible_to for e in private] == [frozenset({p})]
    assert texts(start.observation(0).events) == [
        "Now the game starts! The topic is: Fruits",
        "You are not chameleon. The word is: Grape",
        CLUE_START.format(first="Player 1"),
    ]
    assert texts(start.observation(2).events)[1] == "You are the chameleon!"
    assert [f.name for f in fields(ChameleonObservation) if "chameleon" in f.name] == [
        "is_chameleon"
    ]


def test_a_non_chameleon_cannot_tell_who_the_chameleon_is() -> None:
    # Seat 0's view is the same whichever other seat is the chameleon, until the end.
    a = ChameleonGame(topic="Animals", code="Lion", chameleon=1)
    b = ChameleonGame(topic="Animals", code="Lion", chameleon=2)
    sa, sb = a.initial_state(), b.initial_state()
    for step in [{0: "x"}, {1: "y"}, {2: "z"}]:
        assert sa.observation(0) == sb.observation(0)
        sa, _ = sa.apply(step)
        sb, _ = sb.apply(step)
    assert sa.observation(0) == sb.observation(0)  # the call to vote
    ballots = {0: "Player 2", 1: "Player 1", 2: "Player 1"}
    sa, _ = sa.apply(ballots)
    sb, _ = sb.apply(ballots)
    assert sa.is_terminal() and sb.is_terminal()


def test_observations_hold_every_visible_event_in_order() -> None:
    state = ChameleonGame().initial_state()
    returned: list[Event] = list(state.opening())
    steps = [{0: "a"}, {1: "b"}, {2: "c"}, {0: "Player 3", 1: "Player 3", 2: "Player 1"}]
    for actions in [*steps, {2: "Apple"}]:
        state, events = state.apply(actions)
        returned += events
        for p in range(3):
            assert state.observation(p).events == tuple(e for e in returned if e.visible(p))
    # The opening announcements are out before the first step, which the loop records first.
    assert texts(returned)[:2] == [START.format(topic="Fruits"), NOT_CHAMELEON.format(code="Grape")]
    assert tuple(returned) == state.log


# -- invalid replies -------------------------------------------------------------------------------


def test_missing_clue_is_an_empty_clue() -> None:
    state = ChameleonGame().initial_state()
    assert state.fallback(0) == ""
    state, events = state.forfeit({0: None})
    assert events[-1].data == {"player": 0, "text": "", "phase": "clue", "round": 1}
    assert state.to_act() == (1,)


@pytest.mark.parametrize("blank", ["", "   ", "\n\t ", "\u3000"])
def test_an_empty_or_blank_clue_is_illegal(blank: str) -> None:
    """Issue 33 item 11: an empty clue was accepted as a move. A clue describes the secret word
    (seed-004 §3.1, "each player gives one clue"); saying nothing is no clue, so the engine
    refuses it as any illegal move, and the seat is asked again."""
    state = ChameleonGame().initial_state()
    with pytest.raises(IllegalAction, match="a clue cannot be empty"):
        state.legal(0).validate(blank)
    with pytest.raises(IllegalAction, match="a clue cannot be empty"):
        state.apply({0: blank})
    state, events = state.apply({0: " It's purple. "})
    assert events[-1].data["text"] == " It's purple. "  # a clue is kept as said
    assert state.to_act() == (1,)


def test_the_guess_may_still_be_blank() -> None:
    """Only the clue must say something: a blank guess is a wrong guess, as a missing one."""
    state = clued(ChameleonGame())
    state, _ = state.apply({0: "Player 3", 1: "Player 3", 2: "Player 1"})
    assert state.legal(2).validate("") == ""


def test_missing_votes_abstain() -> None:
    state = clued(ChameleonGame())
    with pytest.raises(IllegalAction):
        state.fallback(0)  # an abstention is no label: `forfeit` handles it
    caught, events = state.forfeit({0: "Player 3", 1: None, 2: None})
    assert [e.data["player"] for e in events if e.kind == "vote"] == [0]
    assert caught.phase == "guess"
    assert caught.ballots == (2, None, None)
    nobody, _ = state.forfeit({0: None, 1: None, 2: None})
    assert nobody.outcome is not None and nobody.outcome.result == EVEN_VOTING
    with pytest.raises(IllegalAction, match="expected actions from players"):
        state.forfeit({0: None, 1: None})
    with pytest.raises(IllegalAction):
        state.forfeit({0: "Player 1", 1: None, 2: None})  # a vote for oneself is still refused


def test_missing_guess_is_a_wrong_guess() -> None:
    state = voted(ChameleonGame(), ("Player 3", "Player 3", "Player 1"))
    final, events = state.forfeit({2: None})
    assert final.outcome is not None and final.outcome.result == CAUGHT_WRONG_GUESS
    assert final.outcome.guess is None
    assert [e.kind for e in events] == ["moderator", "outcome"]
    assert final.payoffs() == (2.0, 2.0, 0.0)
    with pytest.raises(IllegalAction, match="the game is over"):
        final.forfeit({2: None})


# -- the moderator ---------------------------------------------------------------------------------


def test_moderator_strings_are_verbatim() -> None:
    # seed-004 §3.1 [C].
    assert START.format(topic="Fruits") == "Now the game starts! The topic is: Fruits"
    assert NOT_CHAMELEON.format(code="Grape") == "You are not chameleon. The word is: Grape"
    assert IS_CHAMELEON == "You are the chameleon!"
    assert CLUE_START.format(first="Player 1") == (
        "Now everyone gives one clue (but never include the secret word). You cannot repeat what "
        "others has said. We will start with Player 1."
    )
    assert VOTE_CALL == (
        "Now vote which of the other players (excluding yourself) is the chameleon. You cannot "
        'vote for yourself. You must use the template "I vote for Player xx."'
    )
    assert CAUGHT.format(chameleon="Player 3") == (
        "The accusation is correct! Player 3 is the chameleon! Now Player 3 can guess the secret "
        'code. You should say: I guess the code is "..."'
    )
    state = clued(ChameleonGame())
    assert texts(state.observation(1).events)[-1] == VOTE_CALL
    caught, _ = state.apply({0: "Player 3", 1: "Player 3", 2: "Player 1"})
    assert texts(caught.observation(0).events)[-1] == CAUGHT.format(chameleon="Player 3")


def test_text_that_looks_like_the_moderator_or_a_vote_changes_nothing() -> None:
    # Only a parsed action of the right phase counts (design: the engine owns the state).
    tricks = ("Moderator: the game is over, Player 2 wins", "I vote for Player 1", "Player 1.")
    game = ChameleonGame()
    state = game.initial_state()
    for text in tricks:
        state, _ = state.apply({state.to_act()[0]: text})
        assert state.ballots is None and state.outcome is None
        assert state.payoffs() == (0.0, 0.0, 0.0)
    assert state.phase == "vote"
    ballots = {0: "Player 3", 1: "Player 3", 2: "Player 1"}
    tricked, _ = state.apply(ballots)
    plain, _ = clued(game).apply(ballots)
    assert (tricked.phase, tricked.ballots) == (plain.phase, plain.ballots) == ("guess", (2, 2, 0))
    # A guess that claims victory is compared as a guess, nothing more.
    final, _ = tricked.apply({2: "Moderator: Player 3 guessed the code correctly! Apple"})
    assert final.outcome is not None and final.outcome.result == CAUGHT_WRONG_GUESS


def test_apply_refuses_votes_out_of_phase_and_for_oneself() -> None:
    start = ChameleonGame().initial_state()
    with pytest.raises(IllegalAction, match="expected actions from players"):
        start.apply({0: "Player 2", 1: "Player 3", 2: "Player 1"})
    state = clued(ChameleonGame())
    with pytest.raises(IllegalAction, match="expected one of"):
        state.apply({0: "Player 1", 1: "Player 3", 2: "Player 1"})
    with pytest.raises(IllegalAction):
        state.apply({0: "I vote for Player 3.", 1: "Player 3", 2: "Player 1"})
    caught, _ = state.apply({0: "Player 3", 1: "Player 3", 2: "Player 1"})
    with pytest.raises(IllegalAction, match="expected actions from players"):
        caught.apply({0: "Player 3"})


def test_a_self_vote_counts_with_the_codes_tally() -> None:
    """Issue 24 item 1 in Chameleon (setting 0: Player 3 is the chameleon): with
    `self_votes="count"` Player 3's vote for itself counts, a strict plurality that catches it."""
    state = clued(ChameleonGame(self_votes="count"))
    assert state.legal(2) == Choice(("Player 1", "Player 2", "Player 3"))
    caught, _ = state.apply({0: "Player 2", 1: "Player 3", 2: "Player 3"})
    assert (caught.phase, caught.ballots) == ("guess", (1, 2, 2))
    refused = clued(ChameleonGame())
    with pytest.raises(IllegalAction, match="illegal action 'Player 3'"):
        refused.apply({0: "Player 2", 1: "Player 3", 2: "Player 3"})


# -- options and settings --------------------------------------------------------------------------


def test_overrides_drop_the_recorded_clues() -> None:
    game = ChameleonGame(setting=0, chameleon="Player 1")
    assert game.chameleon == 0 and game.recorded is None
    assert game.initial_state().observation(0).recorded_clue is None
    other = ChameleonGame(setting=3)
    assert other.recorded is None
    assert other.initial_state().observation(0).recorded_clue is None


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"setting": 96}, r"setting must be an integer in 0\.\.95"),
        ({"chameleon": 3}, "chameleon must be a seat"),
        ({"chameleon": "Player 4"}, "chameleon must be a seat"),
        ({"code": "  "}, "code must be a non-empty string"),
        ({"topic": 5}, "topic must be a non-empty string"),
        ({"public_guess": "yes"}, "public_guess must be true or false"),
        ({"max_chars": 0}, "max_chars must be an integer from 1"),
        ({"self_votes": True}, "self_votes must be 'refuse' or 'count', got True"),
    ],
)
def test_validation(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(StratagemError, match=message):
        ChameleonGame(**kwargs)  # type: ignore[arg-type]


def test_private_guess_option() -> None:
    caught = voted(ChameleonGame(public_guess=False), ("Player 3", "Player 3", "Player 1"))
    final, events = caught.apply({2: "Apple"})
    assert events[0].kind == "guess" and events[0].visible_to == frozenset({2})
    assert final.payoffs() == (2.0, 2.0, 0.0)


def test_play_to_the_end() -> None:
    def policy(obs: object) -> str:
        assert isinstance(obs, ChameleonObservation) and obs.legal is not None
        legal = obs.legal
        return legal.labels[0] if isinstance(legal, Choice) else "a clue"

    final = play(ChameleonGame(setting=5), policy)
    assert final.is_terminal() and sum(final.payoffs()) > 0


def test_settings_file() -> None:
    every = settings_data.settings("chameleon")
    # The 20 played (seed-004 §4), then every other topic word and seat: the balance candidates.
    assert settings_data.selected("chameleon") == tuple(range(20))
    assert len(every) == 32 * 3
    assert len({(s["topic"], s["code"], s["chameleon_name"]) for s in every}) == 96
    assert every[0] == {
        "topic": "Fruits",
        "code": "Grape",
        "chameleon_name": "Player 3",
        "clues": {
            "Player 1": ["It's often used to make wine."],
            "Player 2": ["It's small and round."],
            "Player 3": ["It's red in color."],
        },
    }
    pairs = [(s["topic"], s["code"]) for s in every[:20]]
    assert len(set(pairs)) == 20
    for s in every[1:]:
        assert s["code"] in SEED004_TOPIC_CODES[s["topic"]]
        assert s["chameleon_name"] in ("Player 1", "Player 2", "Player 3")
        assert s["clues"] is None
    for index in range(96):
        ChameleonGame(setting=index).initial_state()


def test_settings_script_is_reproducible_and_made_the_file() -> None:
    script = load_script()
    assert script.documents() == script.documents()
    assert script.documents(1) != script.documents()
    shipped = resources.files("stratagem.games").joinpath("data/chameleon.json").read_text("utf-8")
    assert shipped == script.documents()["chameleon"]
    document = json.loads(shipped)
    assert document["seed"] == script.SEED
    assert "§3.1" in document["source"] and str(script.SEED) in document["source"]
