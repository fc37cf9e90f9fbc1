"""`stratagem.open` and `stratagem export --format parquet`: the frames and the Parquet files hold
what the store holds, read back alike by pyarrow, DuckDB and polars, and no key."""

from __future__ import annotations

import gzip
import json
import math
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest
from support.cli import cli
from support.fake_openai import FakeOpenAIServer
from support.scripted_run import run_scripted

import stratagem
from stratagem.analysis.frames import COLUMNS, TABLES
from stratagem.errors import StratagemError
from stratagem.experiments.runner import CACHE_FILE, STORE_FILE
from stratagem.experiments.store import ResultStore
from stratagem.llm.cache import ResponseCache
from stratagem.llm.types import Request

SENTINEL = "sk-frames-sentinel-7d2a91"
DATA = Path(__file__).resolve().parent / "data"


def _reply() -> Any:
    """The first action, except the 3rd to 6th replies: nonsense (one round played invalid)."""
    calls = [0]

    def reply(request: Request, sample: int) -> str:
        calls[0] += 1
        return "banana" if 3 <= calls[0] <= 6 else request.choices[0]

    return reply


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One store, three experiments: PD on a scripted model with an invalid move, the thesis'
    dilemma, and PD on a fake OpenAI server that was sent a key."""
    out = tmp_path_factory.mktemp("frames") / "out"
    summary = run_scripted(
        out, "pdx", _reply(), rounds=[3], seeds=[0, 1], agents=[{"name": "a", "max_reasks": 1}]
    )
    assert summary.finished == 2, summary.errors
    summary = run_scripted(out, "thesis", lambda r, s: r.choices[1], games=["dilemma"], rounds=[2])
    assert summary.finished == 1, summary.errors
    with pytest.MonkeyPatch.context() as patch, FakeOpenAIServer([], reply="cooperate") as server:
        patch.setenv("STRATAGEM_FRAMES_KEY", SENTINEL)
        price = {"input": 1.0, "output": 2.0}
        model = {"model": "openai/fake", "base_url": server.base_url,
                 "api_key_env": "STRATAGEM_FRAMES_KEY", "price": price}  # fmt: skip
        summary = run_scripted(out, "keyed", _reply(), models=[model], rounds=[2])
        assert summary.finished == 1, summary.errors
        assert server.requests  # the key was sent: the calls are real
    yield out


def _value(x: Any) -> Any:
    """A cell as plain Python: missing (None, NaN, NA) is None, numpy scalars are Python's."""
    if x is None or x is pd.NA or (isinstance(x, float) and math.isnan(x)):
        return None
    return x.item() if hasattr(x, "item") else x


def _rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return [{k: _value(v) for k, v in row.items()} for row in frame.to_dict("records")]


def _json(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def test_every_frame_holds_what_the_store_reads(results: Path) -> None:
    with stratagem.open(results) as frames, ResultStore(results / STORE_FILE) as db:
        episodes = db.episodes()
        assert len(episodes) == 4
        eps = _rows(frames.episodes)
        assert [e["episode_id"] for e in eps] == [e.id for e in episodes]
        for row, e in zip(eps, episodes, strict=True):
            assert (row["experiment_id"], row["game"], row["seed"], row["status"]) == (
                e.experiment_id, e.game, e.seed, e.status)  # fmt: skip
            assert _json(row["spec"]) == e.spec and row["n_seats"] == len(e.players)
            assert _json(row["game_payoffs"]) == e.game_payoffs
        seats = _rows(frames.seats)
        assert [(s["episode_id"], s["seat"], s["payoff"], _json(s["player"])) for s in seats] == [
            (e.id, k, e.payoffs[k] if e.payoffs else None, p)
            for e in episodes
            for k, p in enumerate(e.players)
        ]
        rounds = _rows(frames.rounds)
        assert [(r["episode_id"], r["round"], r["seat"], r["action"], r["payoff"])
                for r in rounds] == [
            (e.id, r.round, k, r.actions[k], r.payoffs[k] if r.payoffs else None)
            for e in episodes for r in db.rounds(e.id) for k in range(len(r.actions))
        ]  # fmt: skip
        assert any(not r["valid"] and r["action"] is None for r in rounds)  # the invalid move
        events = _rows(frames.events)
        assert [(v["episode_id"], v["seq"], v["kind"], _json(v["data"]), v["seat"])
                for v in events] == [
            (e.id, v.seq, v.kind, v.data, v.player) for e in episodes for v in db.events(e.id)
        ]  # fmt: skip
        assert any(v["kind"] == "invalid" for v in events)
        calls = _rows(frames.calls)
        stored = db.llm_calls()
        assert [(c["call_id"], c["episode_id"], c["text"], c["cost_usd"], c["cached"],
                 _json(c["request"]), _json(c["response"])) for c in calls] == [
            (c.id, c.episode_id, c.text, c.cost_usd, c.cached, c.request, c.response)
            for c in stored
        ]  # fmt: skip
        assert sum(c["cost_usd"] or 0 for c in calls) == pytest.approx(
            db.call_totals()["cost_usd"], abs=0
        )
        for table in ("beliefs", "answers"):
            frame = frames.frame(table)
            assert list(frame.columns) == list(COLUMNS[table])
            assert len(frame) == sum(len(getattr(db, table)(e.id)) for e in episodes)


def test_one_experiment_and_the_spend_it_paid(results: Path) -> None:
    with (
        stratagem.open(results / STORE_FILE, experiment="keyed") as frames,
        ResultStore(results / STORE_FILE) as db,
    ):
        assert set(frames.episodes["experiment_id"]) == {"keyed"}
        ids = set(frames.episodes["episode_id"])
        assert set(frames.rounds["episode_id"]) == ids == set(frames.calls["episode_id"])
        assert frames.calls["cost_usd"].sum() == pytest.approx(db.call_totals("keyed")["cost_usd"])
        assert db.call_totals("keyed")["cost_usd"] > 0
    with pytest.raises(StratagemError, match=r"unknown experiment 'nope' \(stored: pdx, "):
        stratagem.open(results, experiment="nope")


def test_each_seats_validity_is_its_own(results: Path) -> None:
    """The LLM's invalid move makes its own row invalid, not TitForTat's of the same round
    (issue 33 N6): `valid` is the seat's move's, as `analysis.invalid` defines an invalid move,
    and a round is valid when every seat's row is."""
    with (
        stratagem.open(results, experiment="pdx") as frames,
        ResultStore(results / STORE_FILE) as db,
    ):
        rounds = frames.rounds
        bad = rounds[~rounds["valid"]]
        assert len(bad) > 0 and set(bad["seat"]) == {0}
        invalid = frames.events[frames.events["kind"] == "invalid"]
        assert sorted(zip(bad["episode_id"], bad["round"], strict=True)) == sorted(
            zip(invalid["episode_id"], invalid["round"], strict=True)
        )
        for e in db.episodes("pdx"):
            for r in db.rounds(e.id):
                mine = rounds[(rounds["episode_id"] == e.id) & (rounds["round"] == r.round)]
                assert bool(mine["valid"].all()) == r.valid


def test_each_call_names_the_response_cache_entry_it_used(results: Path) -> None:
    """`calls.cache_key` is the key the run's response cache used for the call (issue 33 N6),
    so the cache answers it with the call's own reply."""
    with stratagem.open(results) as frames, ResponseCache(results / CACHE_FILE) as cache:
        calls = _rows(frames.calls)
        assert calls and all(re.fullmatch("[0-9a-f]{64}", c["cache_key"] or "") for c in calls)
        for call in calls:
            hit = cache.get(call["cache_key"])
            assert hit is not None and hit.text == call["text"], call["call_id"]


ARROW_TYPES = {
    "str": pa.string(),
    "int64": pa.int64(),
    "Int64": pa.int64(),
    "float64": pa.float64(),
    "bool": pa.bool_(),
    "boolean": pa.bool_(),
    "object": pa.int64(),  # `seed`: integers when every seed is one (none here)
}


def test_every_parquet_column_has_its_declared_type_when_it_holds_no_value(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An episode without a seed, a move, a belief or an answer, and a call that holds nearly
    nothing: each file still types every column as docs/dataframes.md declares it, never as
    Arrow's `null` (issue 33 N6), so two exports read as one dataset."""
    import pyarrow.parquet as pq

    with ResultStore(tmp_path / "bare" / STORE_FILE) as db:
        db.create_experiment("bare", "bare")
        db.add_episode("e1", "bare", "pd", ["a", "b"], None)
        db.start_episode("e1")
        db.add_llm_call("scripted/x", episode_id="e1")
    target = tmp_path / "pq"
    code, _, err = cli(capsys, "export", str(target), "--store", str(tmp_path / "bare"),
                       "--format", "parquet")  # fmt: skip
    assert code == 0, err
    for table in TABLES:
        schema = pq.read_schema(target / f"{table}.parquet")
        assert [(f.name, f.type) for f in schema] == [
            (name, ARROW_TYPES[dtype]) for name, dtype in COLUMNS[table].items()
        ], table


def test_no_key_reaches_a_frame_or_a_parquet_file(
    results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with stratagem.open(results) as frames:
        requests = frames.calls["request"].dropna()
        assert requests.str.contains("messages").all()  # the prompts are there, the key not
        for table in TABLES:
            assert SENTINEL not in frames.frame(table).to_csv()
    code, out, _ = cli(capsys, "export", str(tmp_path / "pq"), "--store", str(results),
                       "--format", "parquet")  # fmt: skip
    assert code == 0, out
    for file in (tmp_path / "pq").iterdir():
        assert SENTINEL.encode() not in file.read_bytes()


def test_the_parquet_files_read_back_in_pyarrow_duckdb_and_polars(
    results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import duckdb
    import polars as pl
    import pyarrow.parquet as pq

    target = tmp_path / "export"
    code, out, err = cli(capsys, "export", str(target), "--store", str(results),
                         "--format", "parquet", "--experiment", "pdx")  # fmt: skip
    assert code == 0, err
    assert out.strip() == (
        f"exported 7 tables (episodes, seats, rounds, events, calls, beliefs, answers) to {target}"
    )
    with stratagem.open(results, experiment="pdx") as frames:
        for table in TABLES:
            want = _rows(frames.frame(table))
            file = target / f"{table}.parquet"
            assert pq.read_table(file).to_pylist() == want, table
            assert pl.read_parquet(file).to_dicts() == want, table
            relation = duckdb.sql(f"SELECT * FROM '{file}'")
            got = [dict(zip(relation.columns, row, strict=True)) for row in relation.fetchall()]
            assert got == want, table
            assert list(pq.read_schema(file).names) == list(COLUMNS[table])
        assert len(frames.rounds) == 2 * 3 * 2  # 2 games x 3 rounds x 2 seats


def test_export_refuses_a_non_empty_directory_an_unknown_format_and_experiment(
    results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    full = tmp_path / "full"
    full.mkdir()
    (full / "mine.txt").write_text("keep me")
    code, _, err = cli(capsys, "export", str(full), "--store", str(results), "--format", "parquet")
    assert code == 2
    assert err.strip() == f"error: export directory '{full}' is not empty: name a new directory"
    assert [p.name for p in full.iterdir()] == ["mine.txt"]
    code, _, err = cli(capsys, "export", str(tmp_path / "x"), "--store", str(results),
                       "--format", "feather")  # fmt: skip
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "--format: got 'feather', allowed: jsonl, parquet" in err
    code, _, err = cli(capsys, "export", str(tmp_path / "y"), "--store", str(results),
                       "--format", "parquet", "--experiment", "nope")  # fmt: skip
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "unknown experiment 'nope'" in err and not (tmp_path / "y").exists()


def test_a_study_table_is_the_rows_its_report_is_computed_from(results: Path) -> None:
    with stratagem.open(results, experiment="pdx") as frames:
        table = frames.study("counterfactual")
        assert list(table["episode_id"]) == list(frames.episodes["episode_id"])
        # seed-003 §5.1: a game's points are player 0's payoffs summed (an invalid round 0).
        points = frames.rounds[frames.rounds["seat"] == 0].groupby("episode_id")["payoff"].sum()
        assert list(table["points"]) == [points[i] for i in table["episode_id"]]
        assert set(table["opponent"]) == {"TitForTat"} and (table["validity"] < 100).all()
        assert frames.study("thesis").empty  # PD is seed-003's game, not the thesis'
    with stratagem.open(results, experiment="thesis") as frames:
        table = frames.study("thesis")
        assert list(table["episode_id"]) == list(frames.episodes["episode_id"])
        assert table.loc[0, "Model"] and table.loc[0, "Arch"] == "Plain_LLM"
        assert frames.study("magic").empty and frames.study("tom").empty
        with pytest.raises(StratagemError, match="unknown study 'poker': studies with a table"):
            frames.study("poker")


def test_an_older_store_opens_once_upgraded(tmp_path: Path) -> None:
    """The stores of tests/data are schema v1: read-only, `open` says how to upgrade; upgraded,
    its frames hold its rows."""
    store = tmp_path / "quickstart"
    store.mkdir()
    with (
        gzip.open(DATA / "quickstart-v1" / "stratagem.db.gz") as src,
        (store / STORE_FILE).open("wb") as dst,
    ):
        shutil.copyfileobj(src, dst)
    with pytest.raises(StratagemError, match=r"schema version 1 is older.*`stratagem status"):
        stratagem.open(store)
    ResultStore(store / STORE_FILE).close()  # what `stratagem status` does
    with stratagem.open(store) as frames, ResultStore(store / STORE_FILE) as db:
        assert len(frames.episodes) == len(db.episodes()) > 0
        assert len(frames.calls) == len(db.llm_calls())


def test_every_kind_of_value_survives_the_frames_and_the_parquet_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What a scripted PD game never stores: a text seed, a structured move, beliefs, answers
    (right, wrong, unjudged), a call whose request carried a key (redacted by the store)."""
    import polars as pl
    import pyarrow.parquet as pq

    with ResultStore(tmp_path / "hand" / STORE_FILE) as db:
        db.create_experiment("hand", "hand")
        for id_, seed in (("e1", 7), ("e2", "imported-seed")):
            db.add_episode(id_, "hand", "trade", ["a", {"name": "b", "kind": "llm"}], seed)
            db.start_episode(id_)
        db.add_round(
            "e1", 1, [{"give": {"wood": 2}}, None], [1.5, 0.0], valid=False, tokens=[3, None]
        )
        db.add_event("e1", "proposal", {"give": {"wood": 2}}, round=1, player=0, visible_to=[0])
        db.add_belief("e1", 1, 0, 1, {"wood": 4}, about_player=1, score=0.25)
        db.add_belief("e1", 2, 1, 0, [1, 2])
        db.add_answer("e1", 1, 0, "q1", "cooperate", question="?", parsed="cooperate", correct=True)
        db.add_answer("e1", 2, 0, "q1", "x", correct=False)
        db.add_answer("e1", None, 1, "q2", None)
        request = {"messages": [{"role": "user", "content": "hi"}], "api_key": SENTINEL,
                   "headers": {"Authorization": SENTINEL}}  # fmt: skip
        db.add_llm_call("openai/x", episode_id="e1", player=0, request=request, text="ok",
                        cost_usd=0.5)  # fmt: skip
        db.finish_episode("e1", [1.5, 0.0])
    with stratagem.open(tmp_path / "hand") as frames:
        assert list(frames.episodes["seed"]) == ["7", "imported-seed"]  # one Parquet type
        assert _rows(frames.rounds)[0]["action"] == '{"give":{"wood":2}}'
        assert [b["content"] for b in _rows(frames.beliefs)] == ['{"wood":4}', "[1,2]"]
        assert [a["correct"] for a in _rows(frames.answers)] == [True, False, None]
        assert SENTINEL not in frames.calls.to_csv()
        assert _json(frames.calls.loc[0, "request"])["api_key"] == "[redacted]"
        assert list(frames.seats["payoff"].isna()) == [False, False, True, True]
        code, _, err = cli(capsys, "export", str(tmp_path / "pq"), "--store",
                           str(tmp_path / "hand"), "--format", "parquet")  # fmt: skip
        assert code == 0, err
        for table in TABLES:
            file = tmp_path / "pq" / f"{table}.parquet"
            assert SENTINEL.encode() not in file.read_bytes()
            want = _rows(frames.frame(table))
            assert pq.read_table(file).to_pylist() == want == pl.read_parquet(file).to_dicts()


def test_import_stratagem_stays_light_and_open_comes_on_first_use() -> None:
    """Every command imports `stratagem`: pandas is imported by `stratagem.open`, not before."""
    code = (
        "import sys, stratagem; assert 'pandas' not in sys.modules; "
        "from stratagem.api import open as api_open; assert stratagem.open is api_open; "
        "assert 'pandas' in sys.modules; print('ok')"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.stdout.strip() == "ok", done.stderr
