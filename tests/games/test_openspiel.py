"""OpenSpiel's games as stratagem games (`openspiel:<game string>`): played to the end by scripted
seats with the payoffs OpenSpiel's rules give, chance from the seed, each seat seeing only its own
information, and every move checked by the engine."""

from __future__ import annotations

import random

import pytest

from stratagem.agents.game_prompts import GamePrompter, prompts_for
from stratagem.errors import StratagemError
from stratagem.games.base import State
from stratagem.games.catalog import check_game_options, get_entry, get_game
from stratagem.games.openspiel import OpenSpielObservation, OpenSpielState
from stratagem.games.spaces import IllegalAction


def play_script(name: str, moves: list[dict[int, str]], seed: int = 0) -> State:
    """Play `moves` (one mapping of seat -> move per step) to the end of the game."""
    state = get_game(name).initial_state(seed)
    for step in moves:
        assert set(state.to_act()) == set(step)
        state, _ = state.apply(step)
    assert state.is_terminal()
    return state


def cards(state: OpenSpielState) -> tuple[int, int]:
    """Kuhn poker's deal, from the board kept for no seat ("0 2": seat 0 holds 0, seat 1 2)."""
    board = next(e for e in state.history if e.kind == "board" and e.visible_to == frozenset())
    first, second = board.data["board"].split()[:2]
    return int(first), int(second)


def test_a_sequential_game_ends_with_openspiels_payoffs() -> None:
    """Tic-tac-toe: x takes the diagonal and wins, as OpenSpiel scores it (+1, -1)."""
    moves = [{0: "x(0,0)"}, {1: "o(0,1)"}, {0: "x(1,1)"}, {1: "o(0,2)"}, {0: "x(2,2)"}]
    state = play_script("openspiel:tic_tac_toe", moves)
    assert state.payoffs() == (1.0, -1.0)
    assert state.observation(1).info == "xoo\n.x.\n..x"  # the board as OpenSpiel prints it


def test_a_simultaneous_game_pays_its_matrix() -> None:
    """OpenSpiel's one-shot prisoner's dilemma: both seats act at once; (C, D) pays (0, 10)."""
    state = get_game("openspiel:matrix_pd").initial_state(0)
    assert state.to_act() == (0, 1)
    end, events = state.apply({0: "Cooperate", 1: "Defect"})
    assert end.is_terminal() and end.payoffs() == (0.0, 10.0)
    moves = [e.data for e in events if e.kind == "move"]
    assert moves == [{"player": 0, "move": "Cooperate"}, {"player": 1, "move": "Defect"}]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize(("bets", "stake"), [(("Pass", "Pass"), 1.0), (("Bet", "Bet"), 2.0)])
def test_an_imperfect_information_game_with_chance_pays_the_higher_card(
    seed: int, bets: tuple[str, str], stake: float
) -> None:
    """Kuhn poker: the deal comes from the seed; at a showdown the higher card wins the pot."""
    state = play_script("openspiel:kuhn_poker", [{0: bets[0]}, {1: bets[1]}], seed)
    assert isinstance(state, OpenSpielState)
    mine, theirs = cards(state)
    assert state.payoffs() == ((stake, -stake) if mine > theirs else (-stake, stake))


def test_chance_is_drawn_from_the_seed() -> None:
    game = get_game("openspiel:kuhn_poker")
    deals = {seed: cards(game.initial_state(seed)) for seed in range(12)}  # type: ignore[arg-type]
    assert all(cards(game.initial_state(s)) == deal for s, deal in deals.items())  # type: ignore[arg-type]
    assert len(set(deals.values())) > 1  # the seed changes the deal


def test_a_simultaneous_chance_game_plays_to_the_end() -> None:
    """Goofspiel: point cards turned by chance, bids at once; bidding the same card every turn
    ties every trick, so OpenSpiel scores a draw."""
    game = get_game("openspiel:goofspiel(num_cards=4)")
    state = game.initial_state(3)
    turned = [e.data["outcome"] for e in state.opening() if e.kind == "chance"]
    while not state.is_terminal():
        assert state.to_act() == (0, 1)
        low = {p: state.legal(p).labels[0] for p in (0, 1)}
        state, events = state.apply(low)
        turned += [e.data["outcome"] for e in events if e.kind == "chance"]
    assert state.payoffs() == (0.0, 0.0)
    # Three draws (the last card is what is left) of distinct cards, public: perfect information.
    assert len(set(turned)) == 3
    assert isinstance(state, OpenSpielState)
    assert all(e.visible_to is None for e in state.history)


def test_a_seat_never_sees_another_seats_card() -> None:
    """Kuhn poker: seat 0's observation, its events and its prompt hold its own card only."""
    game = get_game("openspiel:kuhn_poker")
    for seed in range(6):
        state = game.initial_state(seed)
        assert isinstance(state, OpenSpielState)
        mine, theirs = cards(state)
        state, _ = state.apply({0: "Bet"})
        seen = state.observation(1)
        assert seen.info == f"{theirs}b"  # seat 1's information state: its card, the bet
        for event in seen.events:
            assert event.visible(1)
            assert event.data.get("player", 1) == 1 or event.kind == "move"
        # Seat 1 sees its own card dealt, and seat 0's bet, which every seat sees.
        assert [e.data for e in seen.events if e.kind == "chance"] == [
            {"outcome": f"Deal:{theirs}"}
        ]
        assert [e.data for e in seen.events if e.kind == "move"] == [{"player": 0, "move": "Bet"}]
        prompter = GamePrompter(game, prompts_for(game))  # type: ignore[arg-type]
        prompt = prompter.system(seen) + prompter.turn(seen, "")
        assert f"{mine} {theirs}" not in prompt and f"\n{theirs}b\n" in prompt
        # Seat 0 sees seat 1's answer, and never seat 1's card.
        state, _ = state.apply({1: "Pass"})
        mine_seen = state.observation(0).events
        assert [e.data for e in mine_seen if e.kind == "chance"] == [{"outcome": f"Deal:{mine}"}]
        assert {"player": 1, "move": "Pass"} in [e.data for e in mine_seen]
        assert all(e.data.get("player", 0) == 0 for e in mine_seen if e.kind != "move")


def test_a_bots_world_is_drawn_from_its_own_information() -> None:
    """What OpenSpiel's bots search in an imperfect-information game: states consistent with the
    seat's information state (its own card), with the other card resampled, not the true one."""
    state = get_game("openspiel:kuhn_poker").initial_state(0)
    observation = state.observation(0)
    assert isinstance(observation, OpenSpielObservation) and observation.world is not None
    rng = random.Random(0)
    worlds = [observation.world(rng) for _ in range(30)]
    assert {w.information_state_string(0) for w in worlds} == {observation.info}
    assert len({w.information_state_string(1) for w in worlds}) == 2  # both other cards occur


def test_an_illegal_move_is_refused() -> None:
    state = get_game("openspiel:tic_tac_toe").initial_state(0)
    with pytest.raises(IllegalAction, match="expected one of"):
        state.apply({0: "o(0,0)"})  # not x's move
    with pytest.raises(IllegalAction, match="expected actions from players"):
        state.apply({1: "o(0,0)"})  # not seat 1's turn
    state, _ = state.apply({0: "x(0,0)"})
    with pytest.raises(IllegalAction, match="expected one of"):
        state.apply({1: "o(0,0)"})  # a taken square
    assert "o(0,0)" not in state.legal(1).labels


def test_a_missing_move_is_a_legal_move_drawn_from_the_seed() -> None:
    state = get_game("openspiel:tic_tac_toe").initial_state(5)
    moves = {state.forfeit({0: None})[1][0].data["move"] for _ in range(3)}
    assert len(moves) == 1 and moves <= set(state.legal(0).labels)


def test_game_strings_resolve_like_catalog_names() -> None:
    entry = get_entry("openspiel:goofspiel(num_cards=5)")
    assert entry.family == "openspiel" and "Goofspiel" in entry.description
    assert get_game("openspiel:goofspiel(num_cards=5)").n_players == 2
    assert check_game_options("openspiel:chess", {}) == {}
    with pytest.raises(StratagemError, match="no option 'pie'"):
        check_game_options("openspiel:chess", {"pie": 3})


@pytest.mark.parametrize(
    "name", ["openspiel:no_such_game", "openspiel:tic_tac_toe(rows=x)", "openspiel:"]
)
def test_a_bad_game_string_is_a_one_line_error(name: str) -> None:
    with pytest.raises(StratagemError) as caught:
        get_game(name)
    message = str(caught.value)
    assert "\n" not in message and f"game '{name}'" in message


def test_an_n_player_game_plays_to_the_end() -> None:
    """Three-player Kuhn poker: three seats in turn, each seeing its own card only."""
    game = get_game("openspiel:kuhn_poker(players=3)")
    assert game.n_players == 3
    state = game.initial_state(2)
    seated: set[int] = set()
    while not state.is_terminal():
        (seat,) = state.to_act()
        seated.add(seat)
        seen = state.observation(seat)
        assert all(e.visible(seat) for e in seen.events)
        state, _ = state.apply({seat: "Bet"})  # everyone bets: a three-way showdown
    assert seated == {0, 1, 2}
    board = next(e for e in state.history if e.kind == "board" and e.visible_to == frozenset())
    dealt = [int(c) for c in board.data["board"].split()[:3]]
    winner = dealt.index(max(dealt))
    assert state.payoffs() == tuple(4.0 if p == winner else -2.0 for p in range(3))
