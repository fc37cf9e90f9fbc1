"""The cooperation mechanisms (games/mechanisms/): their names, payoffs and enforcement, and
what the engine refuses when a player tries to claim more than the rules allow (a removed
action, a contract's other terms, a recommendation the mediator did not make)."""

from __future__ import annotations

import itertools
import statistics

import pytest

from stratagem.errors import StratagemError
from stratagem.games.base import State
from stratagem.games.catalog import check_game_options, get_entry, get_game, get_stage
from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.games.mechanisms.contracting import ContractingGame, ContractingState
from stratagem.games.mechanisms.disarmament import DisarmamentGame
from stratagem.games.mechanisms.mediation import MediationState
from stratagem.games.mechanisms.repetition import RepetitionState, stopping_time
from stratagem.games.mechanisms.reputation import ReputationState
from stratagem.games.spaces import IllegalAction

C, D = "cooperate", "defect"


def play(state: State, *steps: dict[int, str]) -> State:
    for actions in steps:
        state, _ = state.apply(actions)
    return state


def refused(state: State, actions: dict[int, object], match: str) -> None:
    """`actions` raise IllegalAction and leave the state as it was."""
    before = [state.observation(p) for p in (0, 1)]
    with pytest.raises(IllegalAction, match=match):
        state.apply(actions)
    assert [state.observation(p) for p in (0, 1)] == before


# -- names ----------------------------------------------------------------------------------------


def test_a_mechanism_names_its_stage_game_after_a_slash_or_as_an_option() -> None:
    assert get_game("contracting").matrix().name == "dilemma"
    assert get_game("contracting", stage="sh").name == "contracting/sh"
    staged = get_game("contracting/sh")
    assert staged.name == "contracting/sh" and staged.matrix() is not None
    assert staged.matrix().labels == get_stage("sh").labels
    # The stage is the name's: the other options remain.
    assert get_entry("contracting/sh").options() == ("rounds", "penalty", "proposer")
    assert check_game_options("repetition/sh", {"continuation": 0.5}) == {"continuation": 0.5}


@pytest.mark.parametrize(
    ("name", "options", "message"),
    [
        ("contracting/nope", {}, "game 'contracting/nope': stage game 'nope': not a catalog game"),
        ("mediation/npd3", {}, "stage game 'npd3': not a 2-player matrix game; stage games: dil"),
        ("repetition/sh", {"continuation": 1.5}, "continuation must be a probability from 0 to 1"),
        ("reputation", {"members": 1}, "members must be an integer from 2 to 100, got 1"),
        ("reputation", {"members": 100, "rounds": 101}, "10,100 matches, more than the 10,000"),
        ("mediation", {"mediator": "oracle"}, "unknown mediator 'oracle'"),
        ("contracting", {"penalty": -1}, "penalty must be a finite number of points from 0"),
        ("contracting", {"proposer": 2}, "proposer must be a seat from 0 to 1, got 2"),
    ],
)
def test_bad_names_and_options_are_one_line_naming_them(
    name: str, options: dict[str, object], message: str
) -> None:
    with pytest.raises(StratagemError) as caught:
        get_game(name, **options)
    assert message in str(caught.value) and "\n" not in str(caught.value)


# -- repetition -----------------------------------------------------------------------------------


def test_repetition_stops_at_a_time_drawn_from_the_seed_and_never_tells_it() -> None:
    game = get_game("repetition", rounds=50, continuation=0.8)
    lengths = []
    for seed in range(400):
        state = game.initial_state(seed)
        assert isinstance(state, RepetitionState)
        other = get_game("repetition/sh", rounds=50).initial_state(seed)
        assert state.stop == stopping_time(seed, 0.8, 50) == other.stop  # one seed, one length
        observation = state.observation(0)
        assert observation.rounds == 0 and observation.continuation == 0.8
        lengths.append(state.stop)
    # A geometric length: P(T > t) = 0.8^t, mean (1 - 0.8^50) / 0.2 ~ 5.
    assert 4.5 < statistics.mean(lengths) < 5.5
    assert sum(t > 1 for t in lengths) / len(lengths) == pytest.approx(0.8, abs=0.06)
    # Played to its end: the last round says so, publicly.
    state = game.initial_state(3)
    stop = state.stop
    events = []
    while not state.is_terminal():
        state, new = state.apply({0: C, 1: D})
        events += new
    assert [e.data["round"] for e in events if e.kind == "stopped"] == [stop]
    assert state.payoffs() == (0.0 * stop, 15.0 * stop)


def test_repetition_with_certainty_plays_its_cap() -> None:
    assert get_game("repetition", rounds=7, continuation=1).initial_state(5).stop == 7
    assert get_game("repetition", rounds=7, continuation=0).initial_state(5).stop == 1


# -- reputation -----------------------------------------------------------------------------------


def test_reputation_rotates_partners_so_each_pair_meets_once_in_members_rounds() -> None:
    game = get_game("reputation", rounds=8, members=4)
    orders = set()
    for seed in range(6):
        state = game.initial_state(seed)
        assert isinstance(state, ReputationState)
        orders.add(state.order)
        for start in (0, 4):  # each block of 4 rounds: every A member meets every B member once
            met = [state.names(k) for k in range(start * 4, (start + 4) * 4)]
            everyone = itertools.product(
                [f"A{i}" for i in range(1, 5)], [f"B{i}" for i in range(1, 5)]
            )
            assert sorted(met) == sorted(everyone)
    assert len(orders) > 1  # who meets whom first is the seed's


def test_reputation_records_are_public_and_rows_are_matches() -> None:
    state = get_game("reputation", rounds=2, members=2).initial_state(1)
    assert isinstance(state, ReputationState)
    moves = [(C, D), (D, D), (C, C), (D, C)]
    for a, b in moves:
        state, _ = state.apply({0: a, 1: b})
    assert state.is_terminal() and len(state.history) == 4
    records = state.records()
    for k, (a, b) in enumerate(moves):
        first, second = state.names(k)
        assert records[first][k // 2].own == a and records[first][k // 2].partner == second
        assert records[second][k // 2].own == b and records[second][k // 2].other == a
    stage = get_stage("dilemma")
    expected = [sum(stage.payoff((0 if a == C else 1, 0 if b == C else 1))[p] for a, b in moves)
                for p in (0, 1)]  # fmt: skip
    assert list(state.payoffs()) == expected
    # A deciding member sees its partner's record and its own.
    fresh = get_game("reputation", rounds=2, members=2).initial_state(1)
    fresh = play(fresh, {0: C, 1: D}, {0: D, 1: D})
    observation = fresh.observation(1)
    assert observation.member.startswith("B") and observation.partner.startswith("A")
    assert observation.period == 2 and observation.round == 3
    assert len(observation.records[observation.partner]) == 1


# -- mediation ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("stage", "best"), [("dilemma", [C, C]), ("sh", ["stag", "stag"]),
                                             ("delight", [D, D])])  # fmt: skip
def test_the_mediator_recommends_the_profile_of_largest_total(stage: str, best: list[str]) -> None:
    state = get_game("mediation", stage=stage).initial_state(0)
    assert [e.data["profile"] for e in state.opening()] == [best]
    assert state.observation(0).recommendation == tuple(best)


def test_the_record_says_who_followed_as_the_engine_compares() -> None:
    state = get_game("mediation", rounds=2).initial_state(0)
    state, events = state.apply({0: C, 1: D})
    record = next(e for e in events if e.kind == "mediation")
    assert record.data == {"round": 1, "recommended": [C, C], "followed": [True, False]}
    assert [e.data for e in events if e.kind == "recommendation"] == [
        {"round": 2, "profile": [C, C]}
    ]
    state, _ = state.forfeit({0: None, 1: C})
    assert state.observation(0).followed == ((True, False), (None, True))


@pytest.mark.parametrize(("stage", "punish"), [("dilemma", [D, D]), ("sh", ["hare", "hare"])])
def test_the_trigger_mediator_punishes_after_anyone_disobeys(stage: str, punish: list[str]) -> None:
    game = get_game("mediation", stage=stage, mediator="trigger", rounds=4)
    labels = get_stage(stage).labels[0]
    state = game.initial_state(0)
    state, events = state.apply({0: labels[0], 1: labels[0]})  # both follow: no change
    assert next(e for e in events if e.kind == "recommendation").data["profile"] == [labels[0]] * 2
    state, events = state.apply({0: labels[1], 1: labels[0]})  # seat 0 disobeys
    for _ in range(2):
        assert next(e for e in events if e.kind == "recommendation").data["profile"] == punish
        state, events = state.apply({0: labels[0], 1: labels[0]})  # forever, whatever they do


def test_a_forged_recommendation_is_no_move() -> None:
    """The mediator is the engine's: a seat cannot move for it, nor play a recommendation
    instead of an action; what it is told comes from the engine's state only."""
    state = get_game("mediation").initial_state(0)
    refused(state, {0: C, 1: C, 2: D}, r"expected actions from players \[0, 1\]")
    refused(state, {0: "follow", 1: C}, "illegal action 'follow'")
    refused(state, {0: "mediator recommends: defect", 1: C}, "illegal action")
    assert isinstance(state, MediationState)
    assert state.observation(1).recommendation == (C, C)


# -- contracting ----------------------------------------------------------------------------------


def contract(proposer: int = 0, **options: object) -> ContractingState:
    state = get_game("contracting", proposer=proposer, **options).initial_state(0)
    assert isinstance(state, ContractingState)
    return state


def test_a_deviation_from_the_contract_pays_the_penalty_to_the_other_player() -> None:
    state = play(contract(), {0: "cooperate/cooperate"}, {1: "accept"})
    assert state.phase == "move" and state.to_act() == (0, 1)
    state, events = state.apply({0: C, 1: D})  # seat 1 deviates: 0 + 15, 15 - 15
    assert state.history[-1].payoffs == (15.0, 0.0)
    assert next(e for e in events if e.kind == "enforcement").data == {
        "round": 1, "deviated": [False, True], "transfers": [15.0, -15.0]}  # fmt: skip
    state, _ = state.apply({0: D, 1: D})  # both deviate: the transfers cancel
    assert state.history[-1].payoffs == (5.0, 5.0)
    state, _ = state.apply({0: C, 1: C})
    assert state.history[-1].payoffs == (10.0, 10.0)
    state, _ = state.forfeit({0: None, 1: D})  # an invalid round moves no points
    assert state.history[-1].payoffs == (0.0, 0.0)


def test_the_default_penalty_makes_no_deviation_pay() -> None:
    """Against a partner who keeps any contract, breaking it never pays, in every 2-player
    matrix game of the catalog (the penalty is the range of the stage's payoffs)."""
    for name in ("dilemma", "delight", "confusion", "pd", "pd-alt", "sh", "sh-alt", "eq1", "ba3"):
        stage = get_stage(name)
        game = get_game("contracting", stage=name)
        assert isinstance(game, ContractingGame)
        for profile in stage.profiles():
            for p, other in itertools.product((0, 1), range(stage.sizes[0])):
                deviation = list(profile)
                deviation[p] = other
                gain = stage.payoff(deviation)[p] - stage.payoff(profile)[p]
                assert gain - (game.penalty if other != profile[p] else 0) <= 0


def test_a_rejected_or_declined_contract_binds_nothing() -> None:
    for steps in ([{0: "defect/cooperate"}, {1: "reject"}], [{0: "none"}]):
        state = play(contract(), *steps)
        assert state.contract is None and state.phase == "move"
        state, _ = state.apply({0: D, 1: C})
        assert state.history[-1].payoffs == (15.0, 0.0)


def test_the_proposer_is_drawn_from_the_seed_and_proposals_read_from_its_side() -> None:
    game = get_game("contracting")
    proposers = {game.initial_state(seed).to_act() for seed in range(20)}
    assert proposers == {(0,), (1,)}
    state = play(contract(proposer=1), {1: "defect/cooperate"}, {0: "accept"})
    assert state.contract == (0, 1)  # seat 0 cooperates, seat 1 defects
    assert state.observation(0).contract == (C, D)


def test_claims_beyond_the_contract_are_refused() -> None:
    state = contract()
    refused(state, {1: "accept"}, r"expected actions from players \[0\]")
    refused(state, {0: "cooperate/cooperate, penalty 0"}, "illegal action")
    refused(state, {0: "cooperate+cooperate"}, "illegal action")
    refused(state, {0: "accept"}, "illegal action 'accept'")
    offered = play(state, {0: "cooperate/cooperate"})
    refused(offered, {1: "accept defect/cooperate"}, "illegal action")
    refused(offered, {0: "accept"}, r"expected actions from players \[1\]")
    refused(offered, {1: C}, "illegal action 'cooperate'")


def test_a_decision_that_stays_invalid_declines() -> None:
    state, _ = contract().forfeit({0: None})
    assert state.phase == "move" and state.contract is None
    offered = play(contract(), {0: "cooperate/cooperate"})
    state, events = offered.forfeit({1: None})
    assert state.contract is None and events[0].data["accepted"] is False


# -- disarmament ----------------------------------------------------------------------------------


def test_a_removed_action_is_refused_for_the_whole_game() -> None:
    state = get_game("disarmament", rounds=3).initial_state(0)
    assert state.legal(0).labels == ("keep all", "remove cooperate", "remove defect")
    state, events = state.apply({0: "remove defect", 1: "keep all"})
    assert events[0].data == {"removed": [D, None]}
    for _ in range(3):
        refused(state, {0: D, 1: D}, "illegal action 'defect'")
        assert state.legal(1).labels == (C, D)
        state, _ = state.apply({0: C, 1: D})
    assert state.is_terminal() and state.payoffs() == (0.0, 45.0)
    # A move the removal forbids, stayed invalid, forfeits the round like any invalid move.
    again = get_game("disarmament", rounds=1).initial_state(0)
    again = play(again, {0: "remove defect", 1: "remove defect"})
    refused(again, {0: D, 1: C}, "illegal action")


def test_a_player_cannot_remove_the_other_players_action() -> None:
    stage = NormalFormGame("ud", [["up", "down"], ["left", "right"]],
                           [[[3, 3], [0, 4]], [[4, 0], [1, 1]]])  # fmt: skip
    state = DisarmamentGame(stage, 2).initial_state(0)
    refused(state, {0: "remove left", 1: "keep all"}, "illegal action 'remove left'")
    refused(state, {0: "remove up, remove down", 1: "keep all"}, "illegal action")
    state, _ = state.forfeit({0: None, 1: "remove right"})  # an invalid commitment keeps all
    assert state.legal(0).labels == ("up", "down") and state.legal(1).labels == ("left",)


# -- every move, in a fixed order (a PettingZoo seat's Discrete actions) --------------------------


def test_every_move_a_seat_may_be_asked_for_is_listed_in_a_fixed_order() -> None:
    offers = ("cooperate/cooperate", "cooperate/defect", "defect/cooperate", "defect/defect")
    assert get_game("contracting").moves(0) == (C, D, "none", *offers, "accept", "reject")
    removals = ("keep all", "remove stag", "remove hare")
    assert get_game("disarmament/sh").moves(1) == ("stag", "hare", *removals)
    for name in ("repetition", "reputation", "mediation", "contracting", "disarmament"):
        game = get_game(name, rounds=2)
        state = game.initial_state(0)
        while not state.is_terminal():
            for p in state.to_act():
                assert set(state.legal(p).labels) <= set(game.moves(p))
            state, _ = state.apply({p: state.legal(p).labels[-1] for p in state.to_act()})
