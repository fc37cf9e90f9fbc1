"""JSONL export and import of episodes: round trips, skipping, errors naming file/line/field."""

from __future__ import annotations

import asyncio
import gzip
import io
import json
from pathlib import Path
from typing import Any

import pytest

from stratagem.errors import StratagemError
from stratagem.experiments.config import config_from_dict
from stratagem.experiments.episode_io import (
    FORMAT_VERSION,
    EpisodeImportError,
    export_episodes,
    import_episodes,
)
from stratagem.experiments.runner import STORE_FILE, Runner
from stratagem.experiments.store import ResultStore
from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.strategies.match import MatchResult

PD = NormalFormGame.prisoners_dilemma("pd", t=5, r=3, p=1, s=0)


def rich_store() -> ResultStore:
    """A store with every kind of record: matches, an LLM episode with its traces, a failure."""
    store = ResultStore()
    store.create_experiment("exp", "Experiment", {"rounds": 2, "models": ["m"]})
    store.create_experiment("other", "Other", {})
    store.record_match("exp", "m1", PD, ["TitForTat", "AlwaysDefect"], "0:0:1:0", _match())
    store.add_episode(
        "llm1",
        "exp",
        "pd",
        [{"name": "zs", "kind": "llm", "model": "m"}, {"name": "tft", "kind": "strategy"}],
        seed=3,
        spec={"model": "m", "prompt": "zs"},
        labels=PD.labels,
        game_payoffs=PD.payoffs.tolist(),
    )
    store.start_episode("llm1")
    store.add_round("llm1", 1, ["cooperate", "cooperate"], [3, 3], tokens=[495, None])
    store.add_round("llm1", 2, [None, "cooperate"], [0, 0], valid=False, tokens=[668, None])
    store.add_event("llm1", "message", {"text": "Let's cooperate ✓"}, round=1, player=0)
    store.add_llm_call(
        "m",
        episode_id="llm1",
        player=0,
        round=1,
        cache_key="abc",
        request={"messages": [{"role": "user", "content": "move?"}]},
        response={"output_text": "[move] cooperate"},
        text="[move] cooperate",
        input_tokens=400,
        output_tokens=95,
        cost_usd=0.001,
        latency_s=1.25,
    )
    store.add_answer("llm1", 1, 0, "Q1", "3", question="Payoff if both cooperate?", correct=True)
    store.add_belief("llm1", 2, 0, 2, {"p_cooperate": 0.9}, about_player=1, score=0.1)
    store.finish_episode("llm1")
    store.add_episode("f1", "other", "rps/ba3", ["a", "b"], seed=None)
    store.start_episode("f1")
    store.fail_episode("f1", "provider down")
    return store


def _match() -> MatchResult:
    return MatchResult(((0, 1), (0, 1)), (4.0, 4.0))


def snapshot(store: ResultStore) -> dict[str, Any]:
    return {
        "experiments": store.experiments(),
        "episodes": {e.id: store.load_episode(e.id) for e in store.episodes()},
    }


def write_lines(path: Path, lines: list[Any]) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def test_store_to_jsonl_to_new_store_is_equal(tmp_path: Path) -> None:
    store = rich_store()
    path = tmp_path / "out" / "episodes.jsonl"
    assert export_episodes(store, path) == 3
    copy = ResultStore()
    report = import_episodes(copy, path)
    assert (report.imported, report.skipped, report.errors) == (3, 0, [])
    assert snapshot(copy) == snapshot(store)
    # And again, through a file store and a second export: the bytes do not change.
    again = tmp_path / "again.jsonl"
    with ResultStore(tmp_path / "copy.db") as file_store:
        import_episodes(file_store, path)
        export_episodes(file_store, again)
    assert again.read_text(encoding="utf-8") == path.read_text(encoding="utf-8")


def test_export_lines_are_self_contained(tmp_path: Path) -> None:
    stream = io.StringIO()
    assert export_episodes(rich_store(), stream, episode_ids=["llm1"]) == 1
    line = json.loads(stream.getvalue())
    assert line["format"] == FORMAT_VERSION
    assert line["experiment"]["name"] == "Experiment"
    assert line["game"]["labels"] == [["cooperate", "defect"]] * 2
    assert line["game"]["payoffs"][0][1] == [0.0, 5.0]
    assert line["rounds"][1] == {
        "round": 2,
        "actions": [None, "cooperate"],
        "payoffs": [0.0, 0.0],
        "valid": False,
        "tokens": [668, None],
    }
    assert line["payoffs"] == [3.0, 3.0]
    assert line["llm_calls"][0]["input_tokens"] == 400
    assert list(line) == sorted(line)


def test_export_filters(tmp_path: Path) -> None:
    store = rich_store()
    stream = io.StringIO()
    assert export_episodes(store, stream, experiment_id="other") == 1
    assert json.loads(stream.getvalue())["id"] == "f1"
    with pytest.raises(StratagemError, match="unknown episode 'zz'"):
        export_episodes(store, io.StringIO(), episode_ids=["zz"])
    with pytest.raises(StratagemError, match="unknown experiment 'zz'"):
        export_episodes(store, io.StringIO(), experiment_id="zz")


def test_existing_episodes_are_skipped_and_reported(tmp_path: Path) -> None:
    store = rich_store()
    path = tmp_path / "e.jsonl"
    export_episodes(store, path)
    before = snapshot(store)
    report = import_episodes(store, path)
    assert (report.imported, report.skipped) == (0, 3)
    assert report.skipped_ids == ["m1", "llm1", "f1"]
    assert snapshot(store) == before


MINIMAL = {"game": "pd", "players": ["zs", "tft"], "rounds": [{"actions": ["cooperation", None]}]}


def test_minimal_external_record(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "seed3.jsonl", [MINIMAL])
    store = ResultStore()
    report = import_episodes(store, path)
    assert report.imported == 1
    (ep,) = store.episodes()
    assert ep.experiment_id == "import:seed3" and ep.source == "import"
    assert ep.status == "finished" and ep.payoffs is None and ep.labels is None
    (r,) = store.rounds(ep.id)
    assert r.actions == ("cooperation", None) and r.valid is False and r.payoffs is None
    # The id is a hash of the line: importing the same file again does not duplicate it.
    assert import_episodes(store, path).skipped == 1


def test_import_overrides_experiment_and_source(tmp_path: Path) -> None:
    line = {
        **MINIMAL,
        "rounds": [{"actions": ["cooperation", "defection"], "payoffs": [0, 5], "tokens": [10, 0]}],
    }
    path = write_lines(tmp_path / "x.jsonl", [line])
    store = ResultStore()
    import_episodes(store, path, experiment_id="seed-003", source="import:seed-003")
    (ep,) = store.episodes("seed-003")
    assert ep.source == "import:seed-003" and ep.payoffs == (0.0, 5.0)
    assert store.rounds(ep.id)[0].tokens == (10, 0)


@pytest.mark.parametrize(
    ("game", "moves", "expected"),
    [
        ("rps/ba3", ["Scissors", "rock"],
         "rounds[0].actions[0]: the string 'Scissors' is not an action of player 0 "
         "(rock, paper, scissors)"),
        ("pd/sh", ["stag", "cooperation"],
         "rounds[0].actions[1]: the string 'cooperation' is not an action of player 1 "
         "(stag, hare)"),
        ("dilemma", ["cooperate", "Defect"],
         "rounds[0].actions[1]: the string 'Defect' is not an action of player 1 "
         "(cooperate, defect)"),
    ],
)  # fmt: skip
def test_moves_of_a_game_named_only_are_checked_against_the_catalog(
    tmp_path: Path, game: str, moves: list[str], expected: str
) -> None:
    """A game given by name alone is resolved to the catalog (seed-003's `pd/sh` is `sh`), and a
    move that is not one of its labels is refused at import, with the precise reason."""
    line = {"game": game, "players": ["a", "b"], "rounds": [{"actions": moves}]}
    path = write_lines(tmp_path / "x.jsonl", [line])
    with pytest.raises(EpisodeImportError) as info:
        import_episodes(ResultStore(), path)
    assert info.value.errors == [f"{path}:1: {expected}"]
    # A game the catalog does not know is accepted with its own labels, and refused without.
    own = {"name": "elsewhere", "labels": [[*{*moves}], [*{*moves}]]}
    other = write_lines(tmp_path / "y.jsonl", [{**line, "game": own}])
    assert import_episodes(ResultStore(), other).imported == 1


@pytest.mark.parametrize(
    ("game", "field"),
    [("nosuchgame", "game"), ({"name": "nosuchgame"}, "game.name"), ("pd/nosuch", "game")],
)
def test_an_unknown_game_name_is_refused_with_file_line_and_field(
    tmp_path: Path, game: object, field: str
) -> None:
    line = {"game": game, "players": ["a", "b"], "rounds": [{"actions": ["x", "y"]}]}
    path = write_lines(tmp_path / "x.jsonl", [MINIMAL, line])
    with pytest.raises(EpisodeImportError) as info:
        import_episodes(ResultStore(), path)
    name = game if isinstance(game, str) else "nosuchgame"
    assert info.value.errors == [
        f"{path}:2: {field}: unknown game '{name}': expected a catalog game (stratagem games), "
        "seed-003's pd/<setting> or rps/<setting>, or an object with the game's own labels"
    ]


def test_gzipped_jsonl_imports_directly(tmp_path: Path) -> None:
    path = tmp_path / "logs.jsonl.gz"
    path.write_bytes(gzip.compress((json.dumps(MINIMAL) + "\n").encode()))
    assert import_episodes(ResultStore(), path).imported == 1
    broken = tmp_path / "broken.jsonl.gz"
    broken.write_bytes(gzip.compress(b'{"game": "pd"}\n' * 50)[:30])
    with pytest.raises(StratagemError, match=r"broken\.jsonl\.gz: cannot read"):
        import_episodes(ResultStore(), broken)


def test_bad_line_names_file_line_and_field(tmp_path: Path) -> None:
    good = {**MINIMAL, "id": "ok"}
    bad = {
        **MINIMAL,
        "rounds": [{"actions": ["cooperation", "defection"], "payoffs": [1, 1]} for _ in range(3)]
        + [{"actions": ["cooperation", "defection"], "payoffs": [1, 2, 3]}],
    }
    path = write_lines(tmp_path / "episodes.jsonl", [good, bad])
    store = ResultStore()
    with pytest.raises(EpisodeImportError) as info:
        import_episodes(store, path)
    assert info.value.errors == [f"{path}:2: rounds[3].payoffs: expected 2 numbers, got 3"]
    assert str(info.value).startswith(f"{path}:2: rounds[3].payoffs: expected 2 numbers, got 3")
    assert "nothing imported" in str(info.value)
    assert store.episodes() == []  # the good first line was not imported either


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("[1, 2]", ":1: expected an object, got a list"),
        ('{"game": "pd", ', ":1: not valid JSON"),
        ('{"players": ["a", "b"], "rounds": []}', ":1: game: missing"),
        (
            '{"game": "pd", "players": ["a", 3], "rounds": []}',
            ":1: players[1]: expected a name or an object",
        ),
        ('{"game": "pd", "players": [{"kind": "llm"}], "rounds": []}', ":1: players[0].name"),
        ('{"game": "pd", "players": ["a", "b"]}', ":1: rounds: missing"),
        (
            '{"game": "pd", "players": ["a", "b"], "rounds": [{"actions": ["c"]}]}',
            ":1: rounds[0].actions: expected 2 actions, got 1",
        ),
        (
            '{"game": {"name": "pd", "labels": [["c", "d"], ["c", "d"]]}, "players": ["a", "b"],'
            ' "rounds": [{"actions": ["c", "x"]}]}',
            ":1: rounds[0].actions[1]: the string 'x' is not an action of player 1 (c, d)",
        ),
        (
            '{"game": "pd", "players": ["a", "b"], "rounds": [{"round": 2, "actions": '
            '["cooperation", "defection"]}, {"round": 2, "actions": ["cooperation", '
            '"defection"]}]}',
            ":1: rounds[1].round: round 2 does not follow round 2",
        ),
        (
            '{"game": "pd", "players": ["a", "b"], "rounds": [{"actions": ["cooperation", '
            '"defection"], "tokens": [1, -1]}]}',
            ":1: rounds[0].tokens[1]: expected an integer >= 0, got -1",
        ),
        (
            '{"game": {"name": "pd", "labels": [["c", "d"], ["c", "d"]], "payoffs": '
            '[[[1, 1], [0, 2]], [[2, 0]]]}, "players": ["a", "b"], "rounds": []}',
            ":1: game.payoffs[1]: expected 2 entries, got 1",
        ),
        (
            '{"format": 99, "game": "pd", "players": ["a", "b"], "rounds": []}',
            ":1: format: version 99 is newer",
        ),
        (
            '{"game": "pd", "players": ["a", "b"], "rounds": [], "answers": [{"player": 2, '
            '"question_id": "Q1", "answer": "x"}]}',
            ":1: answers[0].player: player 2 does not exist",
        ),
        (
            '{"game": "pd", "players": ["a", "b"], "rounds": [], "status": "done"}',
            ":1: status: expected one of pending, running, finished, failed",
        ),
        # Integers beyond SQLite's 64-bit range are a line's error, not an OverflowError later.
        (
            '{"game": "pd", "players": ["a", "b"], "rounds": [], "seed": 100000000000000000000}',
            ":1: seed: 100000000000000000000 is beyond the 64-bit integers the store holds",
        ),
        (
            '{"game": "pd", "players": ["a", "b"], "rounds": [{"round": 9223372036854775808, '
            '"actions": [null, null]}]}',
            ":1: rounds[0].round: 9223372036854775808 is beyond the 64-bit integers",
        ),
    ],
)
def test_import_errors(tmp_path: Path, line: str, expected: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(StratagemError) as info:
        import_episodes(ResultStore(), path)
    assert f"{path}{expected}" in str(info.value)


def test_many_bad_lines_are_summarised(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(["{}"] * 8) + "\n", encoding="utf-8")
    with pytest.raises(EpisodeImportError) as info:
        import_episodes(ResultStore(), path)
    assert len(info.value.errors) == 8
    assert "and 3 more bad lines" in str(info.value)
    assert "\n" not in str(info.value)


def test_lenient_import_keeps_good_lines(tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl"
    path.write_text(json.dumps(MINIMAL) + "\n\n" + "not json\n", encoding="utf-8")
    store = ResultStore()
    report = import_episodes(store, path, strict=False)
    assert report.imported == 1
    assert report.errors == [f"{path}:3: not valid JSON: Expecting value (column 1)"]


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(StratagemError, match=r"nope\.jsonl: cannot read"):
        import_episodes(ResultStore(), tmp_path / "nope.jsonl")


SEED003_NAMES = {"default": "zs", "tft": "tft-br"}
"""seed-003 player types renamed on import: RPS's zero-shot, and the study's best-response bot."""
SEED003_LLM = {"zs", "cot", "spp", "default"}


def seed003_to_line(game: dict[str, Any], path: str) -> dict[str, Any]:
    """The conversion docs/episode-format.md describes for a seed-003 game.json at `path`."""
    *_, data, iteration, model, family, setting, _matchup, _file = Path(path).parts
    k = int(iteration.removeprefix("iteration_"))
    n = 2
    moves = [game[f"player_{i}_moves"] for i in range(n)]
    points = [game[f"player_{i}_points"] for i in range(n)]
    tokens = [game[f"player_{i}_tokens"] for i in range(n)]

    def name(i: int) -> str:
        kind = game[f"player_{i}_player_type"]
        renamed = SEED003_NAMES.get(kind, kind)
        return f"sc-{renamed}" if data == "data_tot" and i == 0 else renamed

    spec: dict[str, Any] = {"model": model, "iteration": k}
    if "random_player_sequence" in game:
        spec["random_player_sequence"] = game["random_player_sequence"]
    return {
        "game": f"{family}/{setting}",
        "seed": k,
        "spec": spec,
        "players": [
            {
                "name": name(i),
                "kind": "llm" if game[f"player_{i}_player_type"] in SEED003_LLM else "strategy",
                "model": game.get(f"player_{i}_model_id"),
            }
            for i in range(n)
        ],
        "rounds": [
            {
                "round": t + 1,
                "actions": [moves[i][t] for i in range(n)],
                "payoffs": [points[i][t] for i in range(n)],
                "valid": game["valid_outcomes"][t],
                "tokens": [tokens[i][t] for i in range(n)],
            }
            for t in range(len(game["valid_outcomes"]))
        ],
        "payoffs": [game[f"player_{i}_total_points"] for i in range(n)],
    }


def seed003_game(p0: str, p1: str) -> dict[str, Any]:
    return {
        "player_0_player_type": p0,
        "player_0_model_id": "us.anthropic.claude-3-7-sonnet-20250219-v1:0",
        "player_1_player_type": p1,
        "player_1_model_id": None,
        "valid_outcomes": [True, False],
        "player_0_moves": ["paper", None],
        "player_1_moves": ["scissors", "rock"],
        "player_0_points": [-1, 0],
        "player_1_points": [1, 0],
        "player_0_tokens": [495, 668],
        "player_1_tokens": [0, 0],
        "player_0_total_points": -1,
        "player_1_total_points": 1,
        "random_player_sequence": True,
    }


def test_a_seed003_game_converts_as_documented(tmp_path: Path) -> None:
    """Two logs the player types alone would merge: a plain zero-shot game of the thinking variant,
    and a self-consistency game of the plain variant (same provider id, same `default` type)."""
    from stratagem.analysis.episodes import load_episodes
    from stratagem.studies.counterfactual.tables import study_games

    root = "logs/logs_3"
    lines = [
        seed003_to_line(seed003_game("default", "tft"),
                        f"{root}/data/iteration_3/Claude 3.7 Sonnet (Thinking)/rps/ba3/"
                        "rps_default_tft/game.json"),
        seed003_to_line(seed003_game("default", "tft"),
                        f"{root}/data_tot/iteration_1/Claude 3.7 Sonnet/rps/ba3/"
                        "rps_default_tft/game.json"),
    ]  # fmt: skip
    path = write_lines(tmp_path / "rps.jsonl", lines)
    store = ResultStore()
    assert import_episodes(store, path, source="import:seed-003").imported == 2
    plain, sc = sorted(store.episodes(), key=lambda ep: ep.seed or 0, reverse=True)
    assert plain.game == "rps/ba3" and plain.payoffs == (-1.0, 1.0)
    assert [p["name"] for p in plain.players] == ["zs", "tft-br"]
    assert plain.players[1]["kind"] == "strategy"
    assert plain.spec == {"model": "Claude 3.7 Sonnet (Thinking)", "iteration": 3,
                          "random_player_sequence": True}  # fmt: skip
    assert [p["name"] for p in sc.players] == ["sc-zs", "tft-br"] and sc.seed == 1
    rounds = store.rounds(plain.id)
    assert [r.valid for r in rounds] == [True, False]
    assert rounds[1].tokens == (668, 0)
    # The study's tables read them as two rows of two models against its `tft` column.
    (experiment,) = store.experiments()
    games, skipped = study_games(load_episodes(store, experiment.id, event_kinds=()))
    assert not skipped
    assert sorted((g.model, g.prompt, g.opponent, g.run) for g in games) == [
        ("Claude 3.7 Sonnet", "sc-zs", "tft", "1:1"),
        ("Claude 3.7 Sonnet (Thinking)", "zs", "tft", "3:3"),
    ]


def test_a_played_matrix_game_is_replayed_with_its_forfeited_round(tmp_path: Path) -> None:
    """A repeated game played by the runner carries its moves, so the engine replays it (issue
    23 item 6): an invalid move forfeits its round (0, 0) on import as in play, and a round's
    payoffs made up afterwards are refused."""
    config = {
        "name": "pd",
        "output": str(tmp_path / "out"),
        "models": [{"model": "scripted/cooperate"}],
        "agents": [{"name": "plain"}],
        "games": ["dilemma"],
        "rounds": [3],
        "lineups": [["scripted:cooperate,nonsense,defect", "TitForTat"]],
    }
    asyncio.run(Runner(config_from_dict(config, "test"), show_progress=False).run())
    path = tmp_path / "pd.jsonl"
    with ResultStore(tmp_path / "out" / STORE_FILE) as store:
        export_episodes(store, path)
    (line,) = [json.loads(text) for text in path.read_text(encoding="utf-8").splitlines()]
    assert line["rounds"][1]["actions"] == [None, "cooperate"]
    assert line["rounds"][1]["payoffs"] == [0.0, 0.0] and line["rounds"][1]["valid"] is False
    assert import_episodes(ResultStore(), path).imported == 1
    line["rounds"][1]["payoffs"] = [10, 10]
    line["payoffs"][0] += 10
    line["payoffs"][1] += 10
    bad = write_lines(tmp_path / "bad.jsonl", [line])
    with pytest.raises(EpisodeImportError) as info:
        import_episodes(ResultStore(), bad)
    assert info.value.errors == [
        f"{bad}:1: rounds[1].payoffs: expected [0.0, 0.0] as the engine computes it, "
        "got [10.0, 10.0]"
    ]
