"""`stratagem play` with no human seat: the game is watched in the terminal as it is played (issue
37 item 5), through the installed command: each step printed as it is stored, at the pace asked,
the episode stored like any played game, and Ctrl-C leaving it unfinished with what was played."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from support.play import COMMAND, play

from stratagem.experiments.store import ResultStore


def stored(tmp_path: Path) -> ResultStore:
    return ResultStore(tmp_path / "play" / "stratagem.db", read_only=True)


def test_two_strategies_are_watched_round_by_round(tmp_path: Path) -> None:
    done = play(tmp_path, "", "dilemma", "--seat", "0=TitForTat", "--seat", "1=AlwaysDefect",
                "--rounds", "3", "--pace", "0")  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == (
        "dilemma, seed 7: seat 0: TitForTat (strategy); seat 1: AlwaysDefect (strategy)"
    )
    assert lines[1:5] == [
        "round 1",
        "  seat 0 played 'cooperate' (valid, 0 attempt(s), 0 tokens)",
        "  seat 1 played 'defect' (valid, 0 attempt(s), 0 tokens)",
        "  moves: seat 0: cooperate, seat 1: defect; scored 0, 15",
    ]
    assert lines[5] == "round 2" and lines[9] == "round 3"
    assert lines[12] == "  moves: seat 0: defect, seat 1: defect; scored 5, 5"
    with stored(tmp_path) as store:
        (episode,) = store.episodes()
        assert episode.status == "finished" and episode.payoffs == (10.0, 25.0)
        assert [r.actions for r in store.rounds(episode.id)] == [
            ("cooperate", "defect"), ("defect", "defect"), ("defect", "defect"),
        ]  # fmt: skip
    assert lines[13:] == [
        f"game over: seat 0: 10, seat 1: 25  (stratagem show {tmp_path / 'play'} {episode.id})"
    ]


def test_only_the_public_record_and_the_moves_are_shown(tmp_path: Path) -> None:
    """Chameleon's secret word goes to two seats only: the watch shows the moderator's public
    lines, the clues and every seat's move, never the word."""
    seats = ["0=scripted:It is sweet.,Player 2", "1=scripted:Round.,Player 1",
             "2=scripted:Red.,Player 1"]  # fmt: skip
    args = [arg for seat in seats for arg in ("--seat", seat)]
    done = play(tmp_path, "", "chameleon/0", *args, "--pace", "0")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "moderator: Now the game starts! The topic is: Fruits" in out
    assert "seat 1 said (clue): Round." in out
    assert "seat 2 played 'Player 1' (valid" in out
    assert "Grape" not in out and "You are the chameleon" not in out
    assert "game over: seat 0: 0, seat 1: 0, seat 2: 2" in out


def test_the_embedded_model_is_watched(tmp_path: Path) -> None:
    done = play(tmp_path, "", "dilemma", "--seat", "0=plain", "--seat", "1=TitForTat",
                "--rounds", "2", "--pace", "0")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "seat 0: plain:local/gemma-3-270m (llm)" in done.stdout.splitlines()[0]
    with stored(tmp_path) as store:
        (episode,) = store.episodes()
        assert episode.status == "finished"
        assert episode.players[0]["model"] == "local/gemma-3-270m"
        rounds = store.rounds(episode.id)
        assert len(rounds) == 2 and len(store.llm_calls(episode.id)) == 2
    for r in rounds:
        assert f"moves: seat 0: {r.actions[0]}, seat 1: {r.actions[1]}" in done.stdout


def test_the_pace_spaces_the_steps_and_ctrl_c_keeps_what_was_played(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [COMMAND, "play", "dilemma", "--seat", "0=TitForTat", "--seat", "1=Random",
         "--rounds", "50", "--pace", "0.5", "--out", str(tmp_path / "play"), "--seed", "7"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    assert proc.stdout is not None
    seen: dict[str, float] = {}
    try:
        while "round 4" not in seen:
            line = proc.stdout.readline()
            assert line, proc.communicate(timeout=30)
            seen[line.strip()] = time.monotonic()
        proc.send_signal(signal.SIGINT)
        rest, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert seen["round 4"] - seen["round 2"] >= 0.9  # two pauses of 0.5 s
    assert proc.returncode == 130, err
    (line,) = err.strip().splitlines()
    with stored(tmp_path) as store:
        (episode,) = store.episodes()
        played = len(store.rounds(episode.id))
    assert line == (
        "interrupted: the game is left unfinished, its steps so far stored "
        f"(stratagem show {tmp_path / 'play'} {episode.id})"
    )
    assert episode.status == "running" and episode.payoffs is None
    assert 4 <= played < 50
    assert "game over" not in rest


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--pace", "-1"], "error: --pace -1: a number of seconds from 0 to 60"),
        (["--pace", "inf"], "error: --pace inf: a number of seconds from 0 to 60"),
        (["--idle", "5"], "error: --idle: only with a human seat"),
        (["--seat", "1=human", "--pace", "1"],
         "error: --pace: only for a game with no human seat (one you watch)"),
    ],
)  # fmt: skip
def test_bad_watch_options_are_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    seat1 = [] if "1=human" in args else ["--seat", "1=AlwaysDefect"]
    done = play(tmp_path, "", "dilemma", "--seat", "0=TitForTat", *seat1, *args, "--web")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [message]
    assert not (tmp_path / "play").exists()
