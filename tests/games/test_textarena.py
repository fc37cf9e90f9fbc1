"""TextArena environments as stratagem games (`textarena:<env id>`): played through the runner
on a scripted model, stored, shown and resumed; TextArena's invalid-move rule after stratagem's
re-asks; each seat's observation its own; states replayable from the seed and the moves."""

from __future__ import annotations

import asyncio
import json
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.cli import cli

from stratagem.agents.parsing import ParseError
from stratagem.agents.replies import reply_format
from stratagem.experiments.config import load_config
from stratagem.experiments.grid import expand
from stratagem.experiments.plan import _play_counting
from stratagem.experiments.runner import STORE_FILE, Runner, RunSummary
from stratagem.experiments.store import ResultStore
from stratagem.games.catalog import get_entry, get_game
from stratagem.games.spaces import IllegalAction
from stratagem.games.textarena import TextArenaGame, TextArenaState
from stratagem.llm.providers.scripted import _REGISTERED, register_script
from stratagem.llm.types import Request

pytest.importorskip("textarena")

TICTACTOE = "textarena:TicTacToe-v0"


def said(event: Any) -> str:
    """The text of a line TextArena sent (a multi-line one is stored as a board)."""
    return str(event.data.get("text") or event.data.get("board"))


def first_available(request: Request) -> str:
    """The first move TicTacToe lists as available in the seat's latest board."""
    prompt = next(m.content for m in request.messages if m.role == "user")
    listed = prompt.rsplit("Available Moves:", 1)[1].splitlines()[0]
    return re.findall(r"\[\d\]", listed)[0]


@pytest.fixture
def replies() -> Iterator[list[Any]]:
    slot: list[Any] = [first_available]
    register_script("textarena", lambda request, sample: slot[0](request))
    yield slot
    _REGISTERED.pop("textarena", None)


def run(tmp_path: Path, game: str = TICTACTOE, max_reasks: int = 1) -> RunSummary:
    data = {
        "name": "ta",
        "output": str(tmp_path / "out"),
        "models": [{"model": "scripted/textarena"}],
        "agents": [{"name": "plain", "max_reasks": max_reasks}],
        "games": [game],
        "lineups": [["plain", "plain"]],
        "seeds": [0],
        "retry": {"base_delay": 0},
    }
    path = tmp_path / "ta.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return asyncio.run(Runner(load_config(path), show_progress=False).run())


def test_a_game_plays_to_the_end_is_stored_shown_and_not_played_again(
    tmp_path: Path, replies: list[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    summary = run(tmp_path)
    # Both seats take the first free cell: O fills 0, 2, 4 ... and wins on the diagonal 2-4-6.
    assert (summary.finished, summary.failed, summary.calls) == (1, 0, 7)
    with ResultStore(tmp_path / "out" / STORE_FILE) as store:
        (episode,) = store.episodes()
        assert episode.game == TICTACTOE and episode.payoffs == (1.0, -1.0)
        decisions = store.events(episode.id, "decision")
        assert [e.data["action"] for e in decisions] == [f"[{k}]" for k in range(7)]
        (outcome,) = store.events(episode.id, "textarena-outcome")
        assert outcome.data == {"payoffs": [1.0, -1.0], "reason": "Player 0 has won!"}
        told = store.events(episode.id, "textarena")
        prompts = [e for e in told if e.data["kind"] == "prompt"]
        assert [sorted(e.visible_to) for e in prompts] == [[0], [1]]  # each seat its own
    code, text, _ = cli(capsys, "show", str(tmp_path / "out"), episode.id[:8])
    assert code == 0 and "Player 0 has won" in text and "payoffs: 1, -1" in text
    again = run(tmp_path)
    assert (again.finished, again.calls) == (0, 0)


def test_an_invalid_move_is_refused_recorded_and_then_judged_by_textarena(
    tmp_path: Path, replies: list[Any]
) -> None:
    replies[0] = lambda request: "[9]"  # off the board, every time
    summary = run(tmp_path, max_reasks=1)
    # Seat 0 is asked twice (a re-ask each): TextArena's error allowance gives it one warning
    # and another turn, then the second missing move loses the game.
    assert (summary.finished, summary.calls) == (1, 4)
    with ResultStore(tmp_path / "out" / STORE_FILE) as store:
        (episode,) = store.episodes()
        assert episode.payoffs == (-1.0, 1.0)
        decisions = store.events(episode.id, "decision")
        assert [(e.player, e.data["valid"], e.data["attempts"]) for e in decisions] == [
            (0, False, 2),
            (0, False, 2),
        ]
        invalid = store.events(episode.id, "invalid")
        assert len(invalid) == 2 and "Must be between 0 and 8" in invalid[0].data["error"]
        told = " ".join(said(e) for e in store.events(episode.id, "textarena"))
        assert "[9]" not in told  # the refused move never reached the game
        assert "attempted an invalid move" in told


def test_the_engine_refuses_what_textarena_refuses_and_states_never_change() -> None:
    game = get_game(TICTACTOE)
    assert isinstance(game, TextArenaGame) and game.n_players == 2
    state = game.initial_state(0)
    with pytest.raises(IllegalAction, match="already occupied"):
        after, _ = state.apply({0: "[4]"})
        after.apply({1: "[4]"})
    with pytest.raises(IllegalAction, match="exceeds"):
        state.apply({0: "[4]" + " " * 1000})
    before = state.observation(0).text
    state.apply({0: "[0]"})
    assert state.observation(0).text == before and state.to_act() == (0,)


def test_a_state_replays_from_the_seed_and_moves_whatever_else_draws() -> None:
    game = get_game("textarena:KuhnPoker-v0")

    def play(noise: bool) -> list[str]:
        state = game.initial_state(7)
        seen = []
        for move in ("[check]", "[check]", "[bet]", "[call]"):
            if noise:
                random.random()
            (seat,) = state.to_act()
            assert isinstance(state, TextArenaState)
            state, _ = state.apply({seat: move})
            seen.append(state.observation(0).text + state.observation(1).text)
        return seen

    quiet = play(False)
    outer = random.getstate()
    start = game.initial_state(3)
    start.apply({start.to_act()[0]: "[check]"})
    assert random.getstate() == outer  # stepping TextArena leaves the global generator alone
    assert play(True) == quiet


def test_each_seat_sees_its_own_card_only() -> None:
    game = get_game("textarena:KuhnPoker-v0")
    for seed in range(6):
        state = game.initial_state(seed)
        cards = [re.findall(r"Your card is: '(\w)'", state.observation(p).text) for p in (0, 1)]
        assert all(len(set(c)) == 1 for c in cards)  # each seat is told its card
        own = [c[0] for c in cards]
        if own[0] != own[1]:
            for p in (0, 1):
                assert f"Your card is: '{own[1 - p]}'" not in state.observation(p).text
                assert all(
                    f"'{own[1 - p]}'" not in said(e) or e.visible(1 - p)
                    for e in state.observation(p).events
                )


def test_names_resolve_and_bad_ones_say_what_is_wrong() -> None:
    entry = get_entry(TICTACTOE)
    assert entry.family == "textarena" and entry.options() == ("players", "max_steps")
    with pytest.raises(Exception, match="TextArena has no environment 'NoSuchGame-v0'"):
        get_game("textarena:NoSuchGame-v0")
    with pytest.raises(Exception, match="players: TextArena says"):
        get_game(TICTACTOE, players=3)
    short = get_game(TICTACTOE, max_steps=2).initial_state(0)
    short, _ = short.apply({0: "[0]"})
    short, events = short.apply({1: "[1]"})
    assert short.is_terminal() and short.payoffs() == (0.0, 0.0)
    assert events[-1].kind == "textarena-stopped"


def test_the_plan_counts_decisions_by_playing_moves_textarena_accepts() -> None:
    """A plan plays the game once with stand-in moves; an empty text is no TextArena move, so
    the stand-in is an option the game named to the seat ("[4]")."""
    counts = _play_counting(get_game(TICTACTOE))
    assert 5 <= sum(counts) <= 9 and counts[0] - counts[1] in (0, 1)


def test_the_example_file_expands_to_its_four_games() -> None:
    config = load_config(Path(__file__).resolve().parents[2] / "examples" / "textarena.yaml")
    specs = expand(config)
    assert sorted(s.game for s in specs) == [
        "textarena:KuhnPoker-v0",
        "textarena:KuhnPoker-v0",
        "textarena:TicTacToe-v0",
        "textarena:TicTacToe-v0",
    ]


def test_an_exported_episode_imports_and_the_engine_checks_it(
    tmp_path: Path, replies: list[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    run(tmp_path)
    jsonl = tmp_path / "ep.jsonl"
    assert cli(capsys, "export", str(jsonl), "--store", str(tmp_path / "out"))[0] == 0
    code, text, _ = cli(capsys, "import", str(jsonl), "--store", str(tmp_path / "copy"))
    assert code == 0 and "imported 1 episodes" in text
    record = json.loads(jsonl.read_text(encoding="utf-8"))
    record["payoffs"] = [-1.0, 1.0]
    jsonl.write_text(json.dumps(record) + "\n", encoding="utf-8")
    code, _, err = cli(capsys, "import", str(jsonl), "--store", str(tmp_path / "other"))
    assert code == 2 and "payoffs: expected [1.0, -1.0] as the engine computes it" in err


def test_a_reply_is_read_whole_as_textarena_reads_a_move() -> None:
    """TextArena finds the move in the text, so the whole reply is the move: a move after a line
    of thought counts (the first-line rule of other free text would lose it)."""
    space = get_game(TICTACTOE).initial_state(0).legal(0)
    reply = reply_format(space, "move")
    assert reply.parse("Let me take the centre.\nMy move: [4]", ()) == (
        "Let me take the centre.\nMy move: [4]"
    )
    with pytest.raises(ParseError, match="does not follow the correct format"):
        reply.parse("Let me take the centre.", ())
