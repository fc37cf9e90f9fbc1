"""OpenSpiel games through the runner, the store and the command: the plain agent against
OpenSpiel's bots in both seats, stored, shown with the board as OpenSpiel prints it, replayed from
the cache with no new call; the bots' refusals and the catalog listing."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.cli import cli
from support.play import play

from stratagem.experiments.config import load_config
from stratagem.experiments.runner import STORE_FILE, Runner, RunSummary
from stratagem.experiments.store import ResultStore
from stratagem.web.data.perspective import Perspective
from stratagem.web.data.replay import episode_view


def write(tmp_path: Path, **settings: Any) -> Path:
    data = {
        "name": "os",
        "output": str(tmp_path / "out"),
        "models": [{"model": "scripted/random"}],
        "agents": [{"name": "plain"}],
        "games": ["openspiel:tic_tac_toe", "openspiel:kuhn_poker"],
        "lineups": [
            ["plain", "openspiel-mcts:20"],
            ["openspiel-mcts:20", "plain"],
            ["plain", "openspiel-random"],
        ],
        "seeds": [0, 1],
        **settings,
    }
    path = tmp_path / "os.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def run(path: Path) -> RunSummary:
    return asyncio.run(Runner(load_config(path), show_progress=False).run())


def recorded(db: Path) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(db)
    rows = conn.execute(
        "SELECT episode_id, seq, kind, player, data, visible_to FROM events ORDER BY 1, 2"
    ).fetchall()
    conn.close()
    return rows


def test_the_plain_agent_plays_against_openspiels_bots_stored_shown_and_replayed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path)
    summary = run(path)
    assert (summary.episodes, summary.finished, summary.failed) == (12, 12, 0), summary.errors
    assert summary.calls > 12 and summary.cached_calls == 0
    db = tmp_path / "out" / STORE_FILE
    with ResultStore(db) as store:
        for episode in store.episodes():
            (result,) = store.events(episode.id, "result")
            assert episode.payoffs == tuple(result.data["returns"])  # OpenSpiel's returns
            decisions = store.events(episode.id, "decision")
            assert decisions and all(d.data["valid"] for d in decisions)
        kuhn = next(e for e in store.episodes() if e.game == "openspiel:kuhn_poker")
        tic = next(e for e in store.episodes() if e.game == "openspiel:tic_tac_toe")
        # The replay from seat 0's side sends seat 0's own view only: its own card dealt, never
        # the other card, the whole board or seat 1's return.
        seen = [e for step in episode_view(store, kuhn, Perspective(0))["steps"]
                for e in step["events"]]  # fmt: skip
        boards = [e["data"] for e in seen if e["kind"] == "board"]
        assert boards and all(b["player"] == 0 for b in boards)
        (dealt,) = [e["data"]["outcome"] for e in seen if e["kind"] == "chance"]
        assert dealt == f"Deal:{boards[0]['board'][0]}"  # the card of its information state
        assert [e["data"]["player"] for e in seen if e["kind"] == "return"] == [0]
        assert not [e for e in seen if e["kind"] == "result"]

    # The transcript shows the board as OpenSpiel prints it, each seat's own view marked so.
    code, text, _ = cli(capsys, "show", str(tmp_path / "out"), tic.id)
    assert code == 0 and "  board\n      ...\n      ...\n      ...\n" in text
    code, text, _ = cli(capsys, "show", str(tmp_path / "out"), kuhn.id)
    assert code == 0 and "seat 0 board [seen by seat 0 only]" in text
    assert "chance: outcome: 'Deal:" in text and "[seen by no seat (record only)]" in text

    # Replayed from scratch: every model reply comes from the cache, the bots draw the same moves
    # from the episode's seed, and the record is the same.
    before = recorded(db)
    conn = sqlite3.connect(db)
    conn.execute("UPDATE episodes SET status='failed'")
    conn.commit()
    conn.close()
    again = run(path)
    assert (again.finished, again.failed) == (12, 0), again.errors
    assert again.calls == summary.calls and again.cached_calls == again.calls
    assert [r[2:] for r in recorded(db)] == [r[2:] for r in before]


@pytest.mark.parametrize(
    ("game", "seat", "message"),
    [
        ("openspiel:goofspiel(num_cards=4)", "openspiel-mcts", "has simultaneous moves"),
        ("dilemma", "openspiel-random", "plays OpenSpiel games (openspiel:...), not"),
        ("openspiel:tic_tac_toe", "openspiel-mcts:0", "simulations must be from 1 to 100,000"),
        ("openspiel:tic_tac_toe", "openspiel-mcts(10, 2)", "does not take the arguments"),
        ("openspiel:no_such_game", "openspiel-random", "game 'openspiel:no_such_game'"),
    ],
)
def test_a_bot_or_game_that_cannot_be_played_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], game: str, seat: str, message: str
) -> None:
    path = write(tmp_path, games=[game], lineups=[["plain", seat]], rounds=[1])
    code, _, err = cli(capsys, "run", str(path), "--yes")
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "out" / STORE_FILE).exists()


def test_games_lists_openspiel_and_says_any_game_string_works(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = cli(capsys, "games")
    flat = " ".join(out.split())
    assert code == 0 and "openspiel:kuhn_poker" in out and "openspiel:connect_four" in out
    assert "openspiel:<game string>: any OpenSpiel game" in flat
    assert "openspiel-mcts:<simulations>" in flat


def test_a_person_plays_tic_tac_toe_against_mcts(tmp_path: Path) -> None:
    """`stratagem play openspiel:tic_tac_toe`: the board as OpenSpiel prints it, the legal moves,
    an illegal one asked again."""
    typed = "o(1,1)\n" + "".join(f"x({r},{c})\n" for r in range(3) for c in range(3))
    done = play(tmp_path, typed, "openspiel:tic_tac_toe", "--seat", "0=human",
                "--seat", "1=openspiel-mcts:20")  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "The board:\n...\n...\n...\n" in out
    assert "not a legal move" in out and "x(1,1)" in out
    with ResultStore(tmp_path / "play" / STORE_FILE) as store:
        (episode,) = store.episodes()
        assert episode.status == "finished" and sum(episode.payoffs) == 0


def test_a_models_illegal_move_is_refused_and_counted(tmp_path: Path) -> None:
    """A model that keeps naming a move that is not legal: re-asked, recorded invalid, and the
    seat plays a legal move drawn from the seed (OpenSpiel has no rule for a missing move)."""
    path = write(
        tmp_path,
        models=[{"model": "scripted/always:o(0,0)"}],
        agents=[{"name": "plain", "max_reasks": 1}],
        games=["openspiel:tic_tac_toe"],
        lineups=[["plain", "openspiel-random"]],
        seeds=[0],
    )
    summary = run(path)
    assert summary.finished == 1, summary.errors
    with ResultStore(tmp_path / "out" / STORE_FILE) as store:
        (episode,) = store.episodes()
        invalid = store.events(episode.id, "invalid")
        assert invalid and all(e.data["texts"] == ["o(0,0)", "o(0,0)"] for e in invalid)
        mine = [e.data["move"] for e in store.events(episode.id, "move") if e.data["player"] == 0]
        assert len(mine) == len(invalid) and all(m.startswith("x(") for m in mine)


def test_show_says_a_reply_was_invalid_and_which_move_was_drawn_in_its_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An invalid reply of an OpenSpiel seat: `show` says it made no valid move and names the
    move drawn for it, never "played nothing" beside the move it then shows (issue 33 item
    11)."""
    path = write(
        tmp_path,
        models=[{"model": "scripted/always:o(0,0)"}],
        agents=[{"name": "plain", "max_reasks": 1}],
        games=["openspiel:tic_tac_toe"],
        lineups=[["plain", "openspiel-random"]],
        seeds=[0],
    )
    assert run(path).finished == 1
    with ResultStore(tmp_path / "out" / STORE_FILE) as store:
        (episode,) = store.episodes()
        drawn = [e.data["move"] for e in store.events(episode.id, "move") if e.data["player"] == 0]
    code, text, err = cli(capsys, "show", str(tmp_path / "out"), episode.id)
    assert code == 0, err
    assert "played nothing" not in text
    invalid = [
        line.strip() for line in text.splitlines() if line.strip().startswith("seat 0 invalid:")
    ]
    assert len(invalid) == len(drawn) > 0
    for line, move in zip(invalid, drawn, strict=True):
        assert f"; the game played {move!r} in its place" in line, line
    assert text.count("seat 0 made no valid move (invalid, 2 attempt(s), ") == len(drawn)


def test_exported_episodes_import_checked_by_the_engine(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """JSONL out and in: the engine replays each OpenSpiel episode from its seed and refuses one
    whose move it would not accept."""
    path = write(tmp_path, models=[{"model": "scripted/first"}], games=["openspiel:tic_tac_toe"])
    assert run(path).finished == 6
    lines = tmp_path / "episodes.jsonl"
    assert cli(capsys, "export", str(lines), "--store", str(tmp_path / "out"))[0] == 0
    code, out, err = cli(capsys, "import", str(lines), "--store", str(tmp_path / "copy"))
    assert code == 0 and "imported 6 episodes" in out, err
    first = lines.read_text(encoding="utf-8").splitlines()[0]
    assert '"action":"x(0,0)"' in first  # seat 0's first move ("scripted/first")
    tampered = tmp_path / "tampered.jsonl"
    tampered.write_text(first.replace('"action":"x(0,0)"', '"action":"o(0,0)"', 1) + "\n")
    code, _, err = cli(capsys, "import", str(tampered), "--store", str(tmp_path / "other"))
    assert code == 2 and "the engine refuses the move: illegal action 'o(" in err


def test_the_example_plays_both_games_against_both_bots_in_both_seats() -> None:
    from stratagem.experiments.grid import expand

    example = Path(__file__).resolve().parents[2] / "examples" / "openspiel.yaml"
    specs = expand(load_config(example))
    assert len(specs) == 32  # 2 games x 4 line-ups x 4 seeds
    lineups = {tuple(seat.label for seat in spec.seats) for spec in specs}
    assert lineups == {
        ("plain", "openspiel-mcts:100"), ("openspiel-mcts:100", "plain"),
        ("plain", "openspiel-random"), ("openspiel-random", "plain"),
    }  # fmt: skip
