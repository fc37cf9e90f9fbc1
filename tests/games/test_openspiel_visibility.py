"""Who sees each event of an OpenSpiel game (games/openspiel/knowledge.py): checked against each
seat's information state as OpenSpiel prints it, against a plain enumeration of each seat's
information set, against what each game's rules make public, and through the episode loop, the
store, `stratagem show` and an import that claims otherwise."""

from __future__ import annotations

import asyncio
import itertools
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.cli import cli

from stratagem.experiments.config import load_config
from stratagem.experiments.runner import STORE_FILE, Runner
from stratagem.experiments.store import ResultStore
from stratagem.games.base import Event
from stratagem.games.catalog import get_game
from stratagem.games.openspiel import OpenSpielGame, OpenSpielState

CHANCE = -1
BATTLESHIP = "battleship(board_width=3,board_height=3,ship_sizes=[2],ship_values=[1],num_shots=3)"
IMPERFECT = [
    "kuhn_poker",
    "kuhn_poker(players=3)",
    "leduc_poker",
    "liars_dice",
    "first_sealed_auction",
    "goofspiel(num_cards=4,imp_info=True)",
    BATTLESHIP,
]
SEEDS = range(8)


def played(name: str, seed: int) -> OpenSpielState:
    """A game of random legal moves, drawn from the seed."""
    rng = random.Random(seed)
    state = get_game(f"openspiel:{name}").initial_state(seed)
    while not state.is_terminal():
        state, _ = state.apply({p: rng.choice(state.legal(p).labels) for p in state.to_act()})
    assert isinstance(state, OpenSpielState)
    return state


def steps(state: OpenSpielState) -> list[tuple[Any, dict[int, int]]]:
    """The true game as (pyspiel state, actor -> action id) pairs, replayed from the root."""
    raw = state.game.spiel_game.new_initial_state()
    history, at, out = state.raw.history(), 0, []
    while not raw.is_terminal():
        if raw.is_chance_node():
            acts = {CHANCE: history[at]}
            at += 1
        elif raw.is_simultaneous_node():
            n = raw.num_players()
            acts = {p: history[at + p] for p in range(n) if raw.legal_actions(p)}
            at += n
        else:
            acts = {raw.current_player(): history[at]}
            at += 1
        out.append((raw, acts))
        raw = advance(raw, acts)
    return out


def advance(raw: Any, acts: dict[int, int]) -> Any:
    nxt = raw.clone()
    if raw.is_simultaneous_node():
        nxt.apply_actions([acts.get(p, 0) for p in range(raw.num_players())])
    else:
        (action,) = acts.values()
        nxt.apply_action(action)
    return nxt


def name(raw: Any, actor: int, action: int) -> str:
    return str(raw.action_to_string(actor, action))


def recorded(state: OpenSpielState) -> list[Event]:
    """The engine's move and chance events, in the order `steps` takes them."""
    return [e for e in state.history if e.kind in ("move", "chance")]


def exact(game: OpenSpielGame, walk: list[tuple[Any, dict[int, int]]]) -> list[Any]:
    """Each event's visibility by the definition, with no bound: seat q sees actor a's action when
    every state it cannot tell from the true one (its information-state string has matched at every
    step) goes, by every step that leaves q's string as the truth left it, to the same actor's
    action of the same name. One entry per event, in `recorded`'s order."""
    n = game.n_players
    worlds: list[list[Any]] = [[walk[0][0]] for _ in range(n)]
    out = []
    for raw, acts in walk:
        after = advance(raw, acts)
        seen = {a: ({a} if a != CHANCE else set()) for a in acts}
        for q in range(n):
            target, following, doubts = after.information_state_string(q), [], set()
            for world in worlds[q]:
                for joint in possible(world, q, acts):
                    nxt = advance(world, joint)
                    if nxt.information_state_string(q) != target:
                        continue
                    following.append(nxt)
                    doubts |= {
                        a
                        for a in acts
                        if a not in joint or name(world, a, joint[a]) != name(raw, a, acts[a])
                    }
            worlds[q] = following
            for actor in set(acts) - doubts - {q}:
                seen[actor].add(q)
        for actor in sorted(acts, key=lambda a: (a == CHANCE, a)):
            out.append(None if seen[actor] == set(range(n)) else frozenset(seen[actor]))
    return out


def possible(world: Any, q: int, acts: dict[int, int]) -> list[dict[int, int]]:
    """Every step a world may take that q, knowing its own move, cannot rule out by itself."""
    if world.is_terminal():
        return []
    if world.is_chance_node():
        return [] if q in acts else [{CHANCE: a} for a, p in world.chance_outcomes() if p > 0]
    if world.is_simultaneous_node():
        actors = [p for p in range(world.num_players()) if world.legal_actions(p)]
        options = [[acts[q]] if p == q else world.legal_actions(p) for p in actors]
        return [dict(zip(actors, joint, strict=True)) for joint in itertools.product(*options)]
    actor = world.current_player()
    if (actor == q) != (q in acts):
        return []
    return [{actor: acts[q]}] if actor == q else [{actor: a} for a in world.legal_actions()]


@pytest.mark.parametrize("name_", IMPERFECT)
def test_each_event_is_seen_by_exactly_the_seats_whose_information_shows_it(name_: str) -> None:
    """For every seat at every step: an event of another actor that the seat is shown is one its
    information-state string tells apart from every other action of that actor (the string
    changes because of it), and the seats shown each event are exactly those the enumeration of
    their information sets says know it."""
    for seed in SEEDS:
        state = played(name_, seed)
        walk = steps(state)
        events = recorded(state)
        assert len(events) == sum(len(acts) for _, acts in walk)
        assert [e.visible_to for e in events] == exact(state.game, walk), (name_, seed)
        k = 0
        for raw, acts in walk:
            after = advance(raw, acts)
            for actor in sorted(acts, key=lambda a: (a == CHANCE, a)):
                event, k = events[k], k + 1
                if actor != CHANCE:
                    assert event.visible(actor)  # a seat always sees its own move
                for q in range(state.game.n_players):
                    if q == actor or not event.visible(q):
                        continue
                    mine = after.information_state_string(q)
                    assert mine != raw.information_state_string(q)
                    options = (
                        [a for a, _ in raw.chance_outcomes()]
                        if actor == CHANCE
                        else raw.legal_actions(actor)
                    )
                    for other in options:
                        if other != acts[actor]:
                            elsewhere = advance(raw, {**acts, actor: other})
                            assert elsewhere.information_state_string(q) != mine


def seen_by(event: Event, n: int) -> set[int]:
    return set(range(n)) if event.visible_to is None else set(event.visible_to)


Rule = Callable[[list[Event], int], None]


def kuhn(events: list[Event], n: int) -> None:
    """Each seat is dealt one card, seen by that seat only; every bet is public."""
    deals = [e for e in events if e.kind == "chance"]
    assert [seen_by(e, n) for e in deals] == [{p} for p in range(n)]
    assert all(e.visible_to is None for e in events if e.kind == "move")


def leduc(events: list[Event], n: int) -> None:
    """Two private cards, then the public card; every bet is public."""
    deals = [seen_by(e, n) for e in events if e.kind == "chance"]
    assert deals[:2] == [{0}, {1}] and all(d == {0, 1} for d in deals[2:])
    assert all(e.visible_to is None for e in events if e.kind == "move")


def liars_dice(events: list[Event], n: int) -> None:
    """Each die is seen by its owner only; every bid and the call are public."""
    assert [seen_by(e, n) for e in events if e.kind == "chance"] == [{0}, {1}]
    assert all(e.visible_to is None for e in events if e.kind == "move")


def auction(events: list[Event], n: int) -> None:
    """Sealed bids: a valuation and a bid are their own seat's; the winner is drawn for no seat
    (a seat learns whether it won from its return)."""
    chances = [e for e in events if e.kind == "chance"]
    assert [seen_by(e, n) for e in chances[:n]] == [{p} for p in range(n)]
    assert chances[-1].data["outcome"].startswith("Chose winner")
    assert chances[-1].visible_to == frozenset()
    assert all(seen_by(e, n) == {e.data["player"]} for e in events if e.kind == "move")


def goofspiel(events: list[Event], n: int) -> None:
    """The point cards are public; a bid is its own seat's, unless the trick's outcome gives it
    away (tested for each bid against the information sets above)."""
    assert all(e.visible_to is None for e in events if e.kind == "chance")


def battleship(events: list[Event], n: int) -> None:
    """Ships are placed in secret; every shot is public."""
    for e in events:
        placed = "place ship" in e.data["move"]
        assert seen_by(e, n) == ({e.data["player"]} if placed else {0, 1}), e


RULES: dict[str, Rule] = {
    "kuhn_poker": kuhn,
    "kuhn_poker(players=3)": kuhn,
    "leduc_poker": leduc,
    "liars_dice": liars_dice,
    "first_sealed_auction": auction,
    "goofspiel(num_cards=4,imp_info=True)": goofspiel,
    BATTLESHIP: battleship,
}


@pytest.mark.parametrize("name_", IMPERFECT)
def test_what_the_rules_make_public_is_public_and_the_rest_private(name_: str) -> None:
    for seed in SEEDS:
        state = played(name_, seed)
        RULES[name_](recorded(state), state.game.n_players)


def test_a_bid_that_only_wins_or_loses_is_not_shown_to_the_other_seat() -> None:
    """Goofspiel with imp_info: a seat learns whether its bid won, not the other's card. Where
    the other holds two cards, one above the seat's bid and one below, the true state's other
    action changes the seat's string too, yet the seat, not knowing the other's hand, cannot
    name the card: only its information set says so, and the engine keeps such a bid from it."""
    given_away = 0
    for seed in range(30):
        state = played("goofspiel(num_cards=4,imp_info=True)", seed)
        walk = steps(state)
        truth = iter(zip(recorded(state), exact(state.game, walk), strict=True))
        for raw, acts in walk:
            after = advance(raw, acts)
            for actor in sorted(acts, key=lambda a: (a == CHANCE, a)):
                event, visibility = next(truth)
                if actor == CHANCE:
                    continue
                other = 1 - actor
                mine = after.information_state_string(other)
                told = all(
                    advance(raw, {**acts, actor: b}).information_state_string(other) != mine
                    for b in raw.legal_actions(actor)
                    if b != acts[actor]
                )
                if told and visibility == frozenset({actor}):
                    given_away += 1
                    assert event.visible_to == frozenset({actor})
    assert given_away  # seeds 0-29 hold such bids


@pytest.mark.parametrize("name_", ["tic_tac_toe", "connect_four"])
def test_in_a_perfect_information_game_everything_is_public(name_: str) -> None:
    for seed in range(3):
        state = played(name_, seed)
        assert state.known is None
        assert all(e.visible_to is None for e in state.history)
        (result,) = [e for e in state.history if e.kind == "result"]
        assert result.data["returns"] == list(state.payoffs())


def test_a_seat_is_told_its_own_return_and_the_record_keeps_them_all() -> None:
    """Three-player Kuhn poker: a seat that folded does not learn who won the showdown."""
    for seed in SEEDS:
        state = played("kuhn_poker(players=3)", seed)
        (result,) = [e for e in state.history if e.kind == "result"]
        assert result.visible_to == frozenset()
        assert result.data["returns"] == list(state.payoffs())
        for seat in range(3):
            seen = state.observation(seat).events
            assert not [e for e in seen if e.kind == "result"]
            told = [e.data for e in seen if e.kind == "return"]
            assert told == [{"player": seat, "return": state.payoffs()[seat]}]


def write(tmp_path: Path, game: str, lineups: list[list[str]], seeds: range) -> Path:
    data = {
        "name": "vis",
        "output": str(tmp_path / "out"),
        "models": [{"model": "scripted/first"}],
        "agents": [{"name": "plain"}],
        "games": [f"openspiel:{game}"],
        "lineups": lineups,
        "seeds": list(seeds),
    }
    path = tmp_path / "vis.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    summary = asyncio.run(Runner(load_config(path), show_progress=False).run())
    assert summary.failed == 0, summary.errors
    return tmp_path / "out"


def test_a_bet_is_in_the_next_prompt_of_the_seat_that_must_answer_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 37's Kuhn game: seat 0 passes, seat 1 (OpenSpiel's random bot) bets; the bet is
    stored as public, and seat 0's prompt lists it, as `stratagem show --full` prints."""
    out = write(tmp_path, "kuhn_poker", [["plain", "openspiel-random"]], range(8))
    answered = 0
    with ResultStore(out / STORE_FILE) as store:
        for episode in store.episodes():
            moves = store.events(episode.id, "move")
            assert moves and all(m.visible_to is None for m in moves)
            if [m.data["move"] for m in moves[:2]] != ["Pass", "Bet"]:
                continue
            answered += 1
            code, text, err = cli(capsys, "show", str(out), episode.id, "--full")
            assert code == 0, err
            second = text.split("seat 0 was asked")[2]
            assert "- player 1: Bet" in second.split("seat 0 replied")[0]
            assert "move: 'Bet', player: 1\n" in text  # no "[seen by seat 1 only]"
    assert answered  # seeds 0-7 hold such a game


def tampered(line: str, kind: str, claim: Any, pick: Callable[[dict[str, Any]], bool]) -> str:
    """The episode with the first `kind` event that `pick` chooses made visible to `claim`."""
    episode = json.loads(line)
    event = next(e for e in episode["events"] if e["kind"] == kind and pick(e))
    event["visible_to"] = claim
    return json.dumps(episode)


@pytest.mark.parametrize(
    ("game", "kind", "pick", "claim"),
    [
        ("kuhn_poker", "chance", lambda e: True, None),  # the other seat's card, public
        (BATTLESHIP, "move", lambda e: e.get("visible_to") is not None, None),  # a ship placed
        ("kuhn_poker", "move", lambda e: True, [1]),  # a public bet hidden from a seat
    ],
)
def test_an_import_claiming_other_visibility_is_refused_by_the_engine(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    game: str,
    kind: str,
    pick: Callable[[dict[str, Any]], bool],
    claim: Any,
) -> None:
    """The engine replays an imported episode and its own visibility wins: a record that shows
    a private move or card to every seat (or keeps a public one from a seat) is refused in one
    line naming the event."""
    out = write(tmp_path, game, [["openspiel-random", "openspiel-random"]], range(1))
    lines = tmp_path / "episodes.jsonl"
    assert cli(capsys, "export", str(lines), "--store", str(out))[0] == 0
    (line,) = lines.read_text(encoding="utf-8").splitlines()
    code, _, err = cli(capsys, "import", str(lines), "--store", str(tmp_path / "copy"))
    assert code == 0, err  # untouched, it imports
    bad = tmp_path / "bad.jsonl"
    bad.write_text(tampered(line, kind, claim, pick) + "\n", encoding="utf-8")
    code, _, err = cli(capsys, "import", str(bad), "--store", str(tmp_path / "other"))
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert ".visible_to" in err and "events[" in err
