"""`stratagem play`: a person takes a seat in the terminal. Driven as a user would, through the
installed command with its input piped in."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from support.play import play

from stratagem.errors import StratagemError
from stratagem.experiments.config import load_config
from stratagem.experiments.grid import expand
from stratagem.experiments.store import ResultStore


def test_a_person_proposes_and_illegal_input_is_asked_again(tmp_path: Path) -> None:
    done = play(tmp_path, "abc\n150\n40\n", "ultimatum", "--seat", "0=human",
                "--seat", "1=scripted:accept")  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "You are the proposer." in out
    assert "your move (a whole number from 0 to 100)" in out
    assert "not a legal move: type a whole number from 0 to 100" in out
    assert "not a legal move: illegal action 150: expected 0..100" in out
    assert "game over: seat 0: 60, seat 1: 40" in out
    with ResultStore(tmp_path / "play" / "stratagem.db") as store:
        (episode,) = store.episodes()
        assert episode.players[0] == {"name": "human", "kind": "human"}
        assert episode.payoffs == (60.0, 40.0)
        first = store.events(episode.id, "decision")[0]
        assert first.data == {"action": 40, "valid": True, "attempts": 3, "tokens": 0}


def test_a_person_in_a_magic_game_reads_the_chat(tmp_path: Path) -> None:
    """seed-004's games are a chat: the person sees what their seat may see, as the study's
    players did (`[Moderator]: ...`), including their private word, and never another's role."""
    seats = ["0=human", "1=scripted:It is sweet.,Player 1", "2=scripted:Red.,Player 1"]
    args = [arg for seat in seats for arg in ("--seat", seat)]
    done = play(tmp_path, "It grows in bunches.\n1\n", "chameleon/0", *args)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "[Moderator]: You are not chameleon. The word is: Grape" in out
    assert "You are the chameleon!" not in out  # Player 3's private message
    assert "[Player 2]: It is sweet." in out and "[Player 3]: Red." in out
    assert "your move (1=Player 2, 2=Player 3)" in out
    assert "[Player 1]: I vote for Player 2." in out  # the person's own (private) vote


def test_a_person_plays_tradecraft_with_the_formats_shown(tmp_path: Path) -> None:
    """seed-002's TradeCraft: the person sees both hands and only their own target, is told the
    JSON format of each move, and a proposal they type is played."""
    proposal = '{"offer": {"coal": 1}, "request": {"raw_iron": 1}, "message": "hi"}'
    done = play(tmp_path, proposal + "\n\n" * 20, "tradecraft", "--seat", "0=human",
                "--seat", "1=scripted:reject")  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "- hands now: Player 1: 1 cherry_planks, 1 coal" in out  # §2: hands are public
    assert "[Moderator]: Your target is to craft 1 shears." in out
    assert out.count("Your target is") == 1  # the other seat's target stays private
    assert 'your move (a proposal as JSON, e.g. {"offer"' in out
    assert "wants to exchange Player 2's 1 raw_iron with 1 coal. Message: hi" in out
    assert "game over:" in out


def test_a_person_against_the_embedded_model(tmp_path: Path) -> None:
    done = play(tmp_path, "cooperate\n2\n", "dilemma", "--seat", "0=human", "--seat", "1=plain",
                "--rounds", "2")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "your move (1=cooperate, 2=defect)" in done.stdout
    with ResultStore(tmp_path / "play" / "stratagem.db") as store:
        (episode,) = store.episodes()
        assert episode.players[1]["model"] == "local/gemma-3-270m"
        rounds = store.rounds(episode.id)
        assert [r.actions[0] for r in rounds] == ["cooperate", "defect"]
        assert all(r.actions[1] in ("cooperate", "defect") for r in rounds)
        assert len(store.llm_calls(episode.id)) == 2


@pytest.mark.parametrize(
    ("typed", "args", "message"),
    [
        ("", ["ultimatum", "--seat", "0=human"], "error: --seat: no player for seat(s) 1"),
        ("", ["ultimatum", "--seat", "0=human", "--seat", "2=plain"],
         "error: --seat '2=plain': the game has seats 0..1"),
        ("", ["nosuchgame", "--seat", "0=human"], "error: unknown game 'nosuchgame'"),
        ("4", ["ultimatum", "--seat", "0=scripted:40", "--seat", "1=human"],
         "error: the game did not finish: "),
    ],
)  # fmt: skip
def test_play_errors_are_one_line(
    tmp_path: Path, typed: str, args: list[str], message: str
) -> None:
    done = play(tmp_path, typed, *args)
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(message)


def test_a_human_seat_is_refused_in_a_run_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "human.yaml"
    data = {
        "name": "h",
        "output": str(tmp_path / "out"),
        "models": [{"model": "scripted/first"}],
        "games": ["ultimatum"],
        "lineups": [["human", "plain"]],
    }
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(StratagemError, match="a human seat is played in the terminal"):
        expand(load_config(path))
