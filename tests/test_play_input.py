"""What a person types in `stratagem play` (issue 23, items 8 and 13): input that is never legal
ends the game unfinished, a long line is neither held, stored nor echoed whole, and each game
accepts what its own moderator tells the person to type. Through the installed command, with the
input piped in."""

from __future__ import annotations

import asyncio
import io
import re
import sys
from pathlib import Path

import pytest
from support.play import play

from stratagem.agents.human import (
    ECHO_CHARS,
    MAX_ATTEMPTS,
    MAX_LINE_CHARS,
    MAX_QUERIES,
    HumanPlayer,
)
from stratagem.cli.play import _read_line
from stratagem.errors import StratagemError
from stratagem.experiments.store import ResultStore
from stratagem.games.base import State
from stratagem.games.tradecraft.game import TradecraftGame

DILEMMA = ("dilemma", "--seat", "0=human", "--seat", "1=TitForTat", "--rounds", "1")


def test_input_that_is_never_legal_leaves_the_game_unfinished(tmp_path: Path) -> None:
    """`yes nope | stratagem play dilemma ...` ran forever: after MAX_ATTEMPTS illegal moves the
    game is left unfinished, as at the end of the input (the legal move after is never read)."""
    done = play(tmp_path, "nope\n" * (MAX_ATTEMPTS + 1) + "1\n", *DILEMMA)
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("error: the game did not finish: ")
    assert line.endswith(
        f"no legal move in {MAX_ATTEMPTS} tries; the game is left unfinished, as at the end of "
        "the input"
    )
    assert done.stdout.count("not a legal move: illegal action 'nope'") == MAX_ATTEMPTS
    assert "game over" not in done.stdout
    with ResultStore(tmp_path / "play" / "stratagem.db") as store:
        (episode,) = store.episodes()
        assert episode.status != "finished" and store.rounds(episode.id) == []


def test_a_long_line_is_refused_and_only_a_prefix_is_echoed(tmp_path: Path) -> None:
    long_line = "y" * (MAX_LINE_CHARS * 5)
    cut = "Z" * 200  # short enough to read, too long to echo whole
    done = play(tmp_path, f"{long_line}\n{cut}\n1\n", *DILEMMA)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    refused = f"a line of more than {MAX_LINE_CHARS:,} characters ({'y' * ECHO_CHARS!r}... cut)"
    assert f"not a legal move: {refused}" in out
    assert "y" * (ECHO_CHARS + 1) not in out
    # the rest of the long line was dropped, not read as the next move
    assert f"illegal action {'Z' * ECHO_CHARS!r}... (cut from 200 characters)" in out
    assert "Z" * (ECHO_CHARS + 1) not in out
    assert "game over: seat 0: 10, seat 1: 10" in out


def test_tool_queries_without_a_move_are_bounded_too() -> None:
    """TradeCraft's queries (`?help`) are not attempts at a move, but they end as well."""
    game = TradecraftGame(0)
    asked = 0

    async def ask(prompt: str) -> str | None:
        nonlocal asked
        asked += 1
        return "?help" if asked <= 10 * MAX_QUERIES else None

    player = HumanPlayer(game, ask, lambda _: None)
    with pytest.raises(StratagemError, match=f"no legal move in {MAX_QUERIES} tool queries; "):
        asyncio.run(player.act(game.initial_state().observation(0)))
    assert asked == MAX_QUERIES


def test_the_terminal_reader_holds_one_character_past_the_bound_and_drops_the_rest(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("y" * (MAX_LINE_CHARS * 3) + "\nnext\n"))
    assert _read_line("> ") == "y" * (MAX_LINE_CHARS + 1)  # refused by the player as too long
    assert _read_line("> ") == "next\n"
    assert _read_line("> ") is None


GAMES = [
    pytest.param(
        ["chameleon/0", "0=human", "1=scripted:It is sweet.,Player 1", "2=scripted:Red.,Player 1"],
        "It grows in bunches.\nI vote for Player 1.\nI vote for Player 3.\n",
        ["not a legal move: illegal action 'I vote for Player 1.'",  # oneself: the engine's no
         "[Player 1]: I vote for Player 3."],
        id="chameleon",
    ),
    pytest.param(
        ["undercover/0", "0=human", "1=scripted:a,b,Player 1", "2=scripted:c,d,Player 1"],
        "c1\nc2\nI vote for Player 3.\n",
        ["[Player 1]: I vote for Player 3."],
        id="undercover",
    ),
    pytest.param(
        ["cost-sharing", "0=human", "1=scripted:40/30/30,Player 1", "2=scripted:40/30/30,Player 1"],
        "40/30/30\nI vote for Player 2's proposal\n",
        ["[Player 1]: I vote for Player 2's proposal"],
        id="cost-sharing",
    ),
    pytest.param(
        ["npd3", "0=human", "1=scripted:cooperate", "2=scripted:defect"],
        "Cooperate.\nDefect\ncooperate\n2\nI defect\n",
        ["Round 1 is over.\nPlayer 1 said: Cooperate", "Round 2 is over.\nPlayer 1 said: Defect"],
        id="npd3",
    ),
    pytest.param(
        ["public-good", "0=human", "1=scripted:10", "2=scripted:10"],
        "I contribute 10\n5\nI contribute 5\n0\n0\n",
        ["Player 1 said: I contribute 10", "Player 1 said: I contribute 5"],
        id="public-good",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("args", "typed", "shown"), GAMES)
def test_a_person_may_type_what_the_game_asks_for(
    tmp_path: Path, args: list[str], typed: str, shown: list[str]
) -> None:
    """The Chameleon moderator says `You must use the template "I vote for Player xx."`, and that
    text was refused; each MAgIC game now reads its template as it reads a model's reply, and
    the plain choice as before. The engine still refuses an illegal move in either form."""
    game, *seats = args
    done = play(tmp_path, typed, game, *(arg for seat in seats for arg in ("--seat", seat)))
    assert done.returncode == 0, done.stderr
    for text in shown:
        assert text in done.stdout
    assert "game over:" in done.stdout


def test_tradecraft_reads_the_example_each_move_format_gives() -> None:
    """TradeCraft tells a person each move's format by an example (`FORMAT_HINT`); the example as
    typed is read, in the phase it belongs to, and the engine plays it."""
    game = TradecraftGame(0)

    def typed(state: State, seat: int, line: str) -> str:
        hint = getattr(state.observation(seat).legal, "FORMAT_HINT", "")
        if line == "example":
            found = re.search(r"(\{.*\}|\[.*\])", hint)
            assert found is not None, hint
            line = found.group(1)

        async def ask(prompt: str) -> str:
            return line

        decision = asyncio.run(HumanPlayer(game, ask, lambda _: None).act(state.observation(seat)))
        assert decision.valid and decision.attempts == 1
        return str(decision.action)

    state = game.initial_state()
    state = state.apply({0: typed(state, 0, "example")})[0]  # the proposal's example
    assert typed(state, 1, "accept") == '{"decision":"accept","message":""}'
    assert typed(state, 1, "reject") == '{"decision":"reject","message":""}'
    state = state.apply({1: typed(state, 1, "example")})[0]  # {"decision": "accept", ...}
    crafts = typed(state, 1, "example")  # Player 2 holds the example's oak planks
    state, events = state.apply({0: "[]", 1: crafts})
    assert any(e.kind == "craft" and e.data["crafts"] for e in events)
