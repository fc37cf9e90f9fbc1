"""seed-001's Appendix A through the import path, and Tables 3.1-3.8 recomputed from the store.

Acceptance target (seed-001 §16.7, §12.4): recomputing Tables 3.1-3.8 from the appendix gives the
printed values within ±0.01, with the documented exceptions. Those exceptions are asserted as the
discrepancies they are, not skipped.
"""

from __future__ import annotations

import csv
import itertools
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stratagem.errors import StratagemError
from stratagem.experiments.episode_io import export_episodes, import_episodes
from stratagem.experiments.store import ResultStore
from stratagem.games.catalog import get_stage
from stratagem.studies.thesis.behaviour import (
    emulation,
    forgiveness,
    niceness,
    retaliation,
    troublemaking,
)
from stratagem.studies.thesis.dataset import (
    DATASET_COLUMNS,
    GAME_CSV_COLUMNS,
    game_csv_rows,
    thesis_dataset,
    write_dataset_csv,
    write_game_csvs,
)
from stratagem.studies.thesis.importer import (
    DEFAULT_EXPERIMENT,
    DEFAULT_SOURCE,
    SUMMARY_EVENT,
    import_thesis_csv,
    read_thesis_csv,
)
from stratagem.studies.thesis.tables import (
    THESIS_TABLE_KEYS,
    Table,
    group_means,
    thesis_tables,
    unconditional_match,
)

Row = dict[str, Any]

# -- fixtures ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def store(appendix_a: Path) -> Iterator[ResultStore]:
    with ResultStore() as db:
        report = import_thesis_csv(db, appendix_a)
        assert (report.imported, report.skipped) == (252, 0)
        yield db


@pytest.fixture(scope="module")
def rows(store: ResultStore) -> list[Row]:
    return thesis_dataset(store, DEFAULT_EXPERIMENT)


@pytest.fixture(scope="module")
def tables(rows: list[Row]) -> dict[str, Table]:
    return thesis_tables(rows)


# -- the import path -----------------------------------------------------------------------------


def test_each_row_is_a_finished_episode_with_a_summary(store: ResultStore) -> None:
    episodes = store.episodes(DEFAULT_EXPERIMENT)
    assert len(episodes) == 252
    row6 = episodes[6]
    assert row6.status == "finished"
    assert row6.source == DEFAULT_SOURCE
    assert row6.game == "dilemma"
    assert row6.spec == {
        "model": "gpt-4o-mini",
        "agent": {"name": "plain", "kind": "plain", "attitude": None},
        "opponent": "AlwaysDefect",
        "rounds": 10,
        "game": "dilemma",
        "idx": 6,
    }
    assert store.rounds(row6.id) == []
    [summary] = store.events(row6.id, SUMMARY_EVENT)
    assert summary.data["Ret"] == 0.75
    assert episodes[36].spec["agent"] == {"name": "tool", "kind": "tool", "attitude": "cooperate"}
    assert episodes[200].spec["agent"]["kind"] == "debate"


def test_importing_again_skips_every_row(store: ResultStore, appendix_a: Path) -> None:
    report = import_thesis_csv(store, appendix_a)
    assert (report.imported, report.skipped) == (0, 252)
    assert len(store.episodes(DEFAULT_EXPERIMENT)) == 252


def test_the_dataset_reproduces_the_appendix_byte_for_byte(
    rows: list[Row], appendix_a: Path, tmp_path: Path
) -> None:
    # §8.2: the aggregated dataset has Appendix A's schema, values printed with 2 decimals.
    assert list(rows[0]) == list(DATASET_COLUMNS)
    out = write_dataset_csv(rows, tmp_path / "dataset.csv")
    assert out.read_bytes() == appendix_a.read_bytes()


def test_imported_summaries_survive_a_jsonl_round_trip(store: ResultStore, tmp_path: Path) -> None:
    path = tmp_path / "appendix.jsonl"
    assert export_episodes(store, path, experiment_id=DEFAULT_EXPERIMENT) == 252
    with ResultStore() as other:
        assert import_episodes(other, path).imported == 252
        assert thesis_dataset(other, DEFAULT_EXPERIMENT) == thesis_dataset(
            store, DEFAULT_EXPERIMENT
        )


def test_the_data_obeys_the_scoring_rules(rows: list[Row]) -> None:
    # §7 [CHECKED]: Q1 cannot be right in the last round, and Q3 has one relevance judgement.
    for row in rows:
        n = row["NR"]
        assert row["CR1"] + row["MR1"] <= (n - 1) / n + 1e-9
        assert row["MR3M"] == row["MR3m"]


# -- Tables 3.1-3.4, 3.6, 3.7 ---------------------------------------------------------------------

# seed-001 §12, copied exactly. Row labels GPT / Ministral are the thesis' short model names.
PRINTED: dict[str, dict[str, tuple[float, ...]]] = {
    "3.1": {
        "Avg. Correct Rate": (0.79, 0.99, 0.92, 0.64, 0.46),
        "Avg. Misunderstand Rate": (0.01, 0, 0.06, 0.06, 0.01),
    },
    "3.2": {
        "Avg": (0.52, 0.64, 0.23, 0.29, 0.28, 0.78),
        "gpt-4o-mini": (0.73, 1.0, 0.0, 0.30, 0.20, 0.95),
        "ministral-8b": (0.31, 0.27, 0.45, 0.26, 0.36, 0.61),
    },
    "3.3": {
        "Avg. Correct Rate": (0.64, 0.77, 0.88, 0.76, 0.63),
        "Avg. Misunderstand Rate": (0, 0, 0.03, 0.05, 0.01),
    },
    "3.4": {
        "Avg": (0.47, 0.35, 0.51, 0.18, 0.24, 0.63),
        "GPT": (0.49, 0.44, 0.51, 0.17, 0.22, 0.65),
        "Ministral": (0.46, 0.26, 0.51, 0.18, 0.25, 0.62),
    },
    "3.6": {
        "Avg. Correct Rate": (0.49, 0.71, 0.67, 0.48, 0.35),
        "Avg. Misunderstand Rate": (0.06, 0.09, 0.14, 0.14, 0.24),
    },
    "3.7": {
        "Avg": (0.42, 0.23, 0.53, 0.21, 0.34, 0.64),
        "GPT": (0.30, 0.20, 0.61, 0.25, 0.22, 0.69),
        "Ministral": (0.54, 0.26, 0.45, 0.16, 0.45, 0.58),
    },
}
MODELS = {"GPT": "gpt-4o-mini", "Ministral": "ministral-8b"}

# §12.4: values the thesis truncated to 2 decimals instead of rounding.
TRUNCATED = {
    ("3.3", "Avg. Correct Rate", "Q2"),  # .7773 -> .77
    ("3.4", "Avg", "CR"),  # .4769 -> .47
    ("3.4", "Avg", "Em"),  # .6358 -> .63
    ("3.6", "Avg. Correct Rate", "Q4"),  # .3565 -> .35
    ("3.6", "Avg. Misunderstand Rate", "Q4"),  # .2491 -> .24
    ("3.2", "gpt-4o-mini", "Em"),  # .958 -> .95
    # Two more that §12.4 does not list (both within ±0.01, so its check passes them too):
    ("3.2", "ministral-8b", "N"),  # .2778 -> .27
    ("3.2", "ministral-8b", "Ret"),  # .2694 -> .26
}
# §12.4's documented exceptions, asserted separately below.
TOOL_MR_Q3_MIN = ("3.3", "Avg. Misunderstand Rate", "Q3-min")
DEBATE_FOR = ("3.7", "Avg", "For")


def _cells() -> Iterator[tuple[str, str, str, float]]:
    columns = {
        "comprehension": ("Q1", "Q2", "Q3-max", "Q3-min", "Q4"),
        "behaviour": ("CR", "N", "TM", "Ret", "For", "Em"),
    }
    for number, body in PRINTED.items():
        kind = THESIS_TABLE_KEYS[number].split("/")[0]
        for label, values in body.items():
            for column, value in zip(columns[kind], values, strict=True):
                yield number, label, column, value


CELLS = [c for c in _cells() if c[:3] not in (TOOL_MR_Q3_MIN, DEBATE_FOR)]


def _truncate(x: float) -> float:
    return math.floor(x * 100 + 1e-9) / 100


def _value(tables: dict[str, Table], number: str, label: str, column: str) -> float:
    value = tables[THESIS_TABLE_KEYS[number]].value(MODELS.get(label, label), column)
    assert isinstance(value, float)
    return value


@pytest.mark.parametrize(
    ("number", "label", "column", "printed"), CELLS, ids=["-".join(c[:3]) for c in CELLS]
)
def test_printed_value_is_reproduced(
    tables: dict[str, Table], number: str, label: str, column: str, printed: float
) -> None:
    value = _value(tables, number, label, column)
    assert abs(value - printed) <= 0.01 + 1e-9
    # And to the printed digit: rounded, or truncated where the thesis truncated.
    shown = _truncate(value) if (number, label, column) in TRUNCATED else round(value, 2)
    assert shown == pytest.approx(printed, abs=1e-9)


def test_truncated_cells_are_really_truncations(tables: dict[str, Table]) -> None:
    for number, label, column in TRUNCATED:
        value = _value(tables, number, label, column)
        assert round(value, 2) != pytest.approx(_truncate(value), abs=1e-9)


def test_max_deviation_from_the_thesis(tables: dict[str, Table]) -> None:
    deviation = max(abs(_value(tables, *c[:3]) - c[3]) for c in CELLS)
    assert deviation == pytest.approx(0.0094, abs=1e-4)  # Plain ministral-8b Ret: .2694 vs .26


def test_documented_exception_tool_misunderstanding_q3_min(
    tables: dict[str, Table], rows: list[Row]
) -> None:
    # §12.4: the thesis prints 0.05 but the data gives 0.029; MR3m equals MR3M in every row, and
    # the thesis prints 0.03 for Q3-max, so the 0.05 is probably a typo.
    value = _value(tables, *TOOL_MR_Q3_MIN)
    assert value == pytest.approx(0.029, abs=5e-4)
    assert abs(value - 0.05) > 0.01
    assert value == _value(tables, "3.3", "Avg. Misunderstand Rate", "Q3-max")
    assert all(r["MR3m"] == r["MR3M"] for r in rows if r["Arch"] == "Tool")


def test_documented_exception_debate_forgiveness(tables: dict[str, Table]) -> None:
    # §12.4: the thesis prints .34, the data gives .335, which neither rounds nor truncates to it.
    value = _value(tables, *DEBATE_FOR)
    assert value == pytest.approx(0.335, abs=5e-4)
    assert abs(value - 0.34) <= 0.01
    assert round(value, 2) == 0.33
    assert _truncate(value) == 0.33


# -- Tables 3.5 and 3.8: SFEM --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("number", "model", "printed"),
    [("3.5", "GPT", 0.66), ("3.5", "Ministral", 0.71), ("3.8", "GPT", 0.71)],
)
def test_always_defect_assignments(
    tables: dict[str, Table], number: str, model: str, printed: float
) -> None:
    # §10.2 [CHECKED]: AD's match percentage is the pooled defection rate of the 18 Dilemma games.
    table = tables[THESIS_TABLE_KEYS[number]]
    assert table.value(MODELS[model], "Assigned Strategy") == "Always Defect"
    match = table.value(MODELS[model], "Match Percentage")
    assert isinstance(match, float)
    assert round(match, 2) == printed


def _gt2(opponent: list[bool]) -> list[bool]:
    """Grim Trigger 2 (§2: defects forever once the opponent has defected twice)."""
    return [sum(not o for o in opponent[:t]) < 2 for t in range(len(opponent))]


def _consistent_sequences(row: Row) -> Iterator[tuple[list[bool], list[bool]]]:
    """Every (agent, opponent) sequence pair that gives the row's N, TM, Ret, For, Em."""
    n = row["NR"]
    k = round(row["CR"] * n)
    checks = (
        ("N", niceness),
        ("TM", troublemaking),
        ("Em", emulation),
        ("Ret", retaliation),
        ("For", forgiveness),
    )
    for positions in itertools.combinations(range(n), k):
        agent = [i in positions for i in range(n)]
        if row["OppStr"] == "AlwaysDefect":
            opponent = [False] * n
        else:
            assert row["OppStr"] == "TitForTat"
            opponent = [True, *agent[:-1]]
        if all(round(f(agent, opponent), 2) == row[name] for name, f in checks):
            yield agent, opponent


def test_documented_exception_debate_ministral_grim_trigger_2(
    tables: dict[str, Table], rows: list[Row]
) -> None:
    # Table 3.8 assigns Grim Trigger 2 (match .63) to Debate/ministral-8b. GT2's match depends on
    # the round sequences, which the appendix does not hold, so the aggregate-only table cannot
    # assign it: it falls back to the best unconditional strategy, and says so.
    table = tables[THESIS_TABLE_KEYS["3.8"]]
    assert table.value("ministral-8b", "Assigned Strategy") == "Always Cooperate"
    assert "aggregates" in table.note
    rates = unconditional_match(rows, "Assistant", "ministral-8b")
    assert rates is not None
    assert max(rates.values()) < 0.63
    # But .63 is consistent with the data: over every agent sequence that reproduces each game's
    # metrics (§9), GT2's pooled match over the 18 Dilemma games lies in [0.574, 0.659].
    games = [
        r
        for r in rows
        if (r["Arch"], r["Model"], r["Game"]) == ("Assistant", "ministral-8b", "Dilemma")
    ]
    assert len(games) == 18
    low = high = total = 0
    for row in games:
        n = row["NR"]
        total += n
        if row["OppStr"] == "AlwaysCooperate":  # never betrayed: GT2 always cooperates
            low += round(row["CR"] * n)
            high += round(row["CR"] * n)
            continue
        matches = [
            sum(a == g for a, g in zip(agent, _gt2(opponent), strict=True))
            for agent, opponent in _consistent_sequences(row)
        ]
        low += min(matches)
        high += max(matches)
    assert (round(low / total, 3), round(high / total, 3)) == (0.574, 0.659)
    assert low / total <= 0.63 <= high / total


def test_an_sfem_fit_fills_the_table(rows: list[Row]) -> None:
    fitted = {("Assistant", "ministral-8b"): ("Grim Trigger 2", 0.63)}
    table = thesis_tables(rows, sfem=fitted)[THESIS_TABLE_KEYS["3.8"]]
    gpt, ministral = table.rows
    assert gpt[:2] == ("gpt-4o-mini", "Always Defect")
    assert gpt[2] == pytest.approx(0.707, abs=5e-4)
    assert ministral == ("ministral-8b", "Grim Trigger 2", 0.63)
    assert table.title == "Table 3.8: SFEM strategies assigned to Debate-based agents"


def test_no_sfem_table_for_the_plain_agent(tables: dict[str, Table]) -> None:
    # §10.3: SFEM and SHAP are not applied to the Plain LLM.
    assert "sfem/Plain_LLM" not in tables


# -- values §12.4 derives from the appendix ------------------------------------------------------

# §12.4 "Per-model comprehension recomputed from the appendix", 3 decimals.
PER_MODEL: dict[tuple[str, str], tuple[float, ...]] = {
    ("Plain_LLM", "gpt-4o-mini"): (0.925, 0.992, 0.911, 0.533, 0.706, 0, 0.006, 0.089, 0),
    ("Plain_LLM", "ministral-8b"): (0.653, 0.997, 0.925, 0.744, 0.219, 0.022, 0, 0.033, 0.022),
    ("Tool", "gpt-4o-mini"): (0.655, 0.997, 0.793, 0.797, 0.681, 0, 0.002, 0.038, 0.001),
    ("Tool", "ministral-8b"): (0.627, 0.557, 0.975, 0.724, 0.581, 0.001, 0, 0.019, 0.011),
    ("Assistant", "gpt-4o-mini"): (0.642, 0.952, 0.834, 0.645, 0.432, 0.006, 0.007, 0.040, 0.179),
    ("Assistant", "ministral-8b"): (
        0.333, 0.462, 0.501, 0.306, 0.281, 0.106, 0.170, 0.231, 0.319,
    ),
}  # fmt: skip


@pytest.mark.parametrize(("arch", "model"), list(PER_MODEL))
def test_per_model_comprehension(tables: dict[str, Table], arch: str, model: str) -> None:
    table = tables[f"comprehension-by-model/{arch}"]
    got = [table.value(model, c) for c in table.columns[1:]]
    assert got == pytest.approx(list(PER_MODEL[(arch, model)]), abs=5e-4 + 1e-9)


# §12.4 "Values behind the lost figures", 2 decimals: (arch, metric, by, {group: value}).
FIGURES: list[tuple[str, str, tuple[str, ...], dict[tuple[str, ...], float]]] = [
    ("Plain_LLM", "CR4", ("Model", "OppStr"), {  # Fig 3.1
        ("gpt-4o-mini", "AlwaysCooperate"): 1.00, ("gpt-4o-mini", "AlwaysDefect"): 0.12,
        ("gpt-4o-mini", "TitForTat"): 1.00, ("ministral-8b", "AlwaysCooperate"): 0.23,
        ("ministral-8b", "AlwaysDefect"): 0.20, ("ministral-8b", "TitForTat"): 0.22,
    }),
    ("Plain_LLM", "CR", ("Model", "OppStr"), {  # Fig 3.2
        ("gpt-4o-mini", "AlwaysCooperate"): 1.00, ("gpt-4o-mini", "AlwaysDefect"): 0.19,
        ("gpt-4o-mini", "TitForTat"): 1.00, ("ministral-8b", "AlwaysCooperate"): 0.40,
        ("ministral-8b", "AlwaysDefect"): 0.24, ("ministral-8b", "TitForTat"): 0.28,
    }),
    ("Tool", "CR4", ("Model", "Att"), {  # Fig 3.3
        ("gpt-4o-mini", "compute"): 0.57, ("gpt-4o-mini", "cooperate"): 0.84,
        ("gpt-4o-mini", "defect"): 0.63, ("ministral-8b", "compute"): 0.50,
        ("ministral-8b", "cooperate"): 0.74, ("ministral-8b", "defect"): 0.49,
    }),
    ("Tool", "CR", ("Att", "Game"), {  # Fig 3.4
        ("compute", "Confusion"): 0.45, ("compute", "Delight"): 0.97,
        ("compute", "Dilemma"): 0.00, ("cooperate", "Confusion"): 0.98,
        ("cooperate", "Delight"): 0.92, ("cooperate", "Dilemma"): 0.93,
        ("defect", "Confusion"): 0.01, ("defect", "Delight"): 0.01, ("defect", "Dilemma"): 0.02,
    }),
    ("Tool", "TM", ("Att", "Game"), {  # Fig 3.5
        ("compute", "Confusion"): 0.52, ("compute", "Delight"): 0.03,
        ("compute", "Dilemma"): 1.00, ("cooperate", "Confusion"): 0.00,
        ("cooperate", "Delight"): 0.03, ("cooperate", "Dilemma"): 0.04,
        ("defect", "Confusion"): 0.99, ("defect", "Delight"): 0.99, ("defect", "Dilemma"): 1.00,
    }),
    ("Assistant", "CR1", ("Model", "Att"), {  # Fig 3.8
        ("gpt-4o-mini", "compute"): 0.64, ("gpt-4o-mini", "cooperate"): 0.62,
        ("gpt-4o-mini", "defect"): 0.66, ("ministral-8b", "compute"): 0.22,
        ("ministral-8b", "cooperate"): 0.36, ("ministral-8b", "defect"): 0.41,
    }),
    ("Assistant", "CR", ("Att", "Game"), {  # Fig 3.9
        ("compute", "Confusion"): 0.35, ("compute", "Delight"): 0.38,
        ("compute", "Dilemma"): 0.37, ("cooperate", "Confusion"): 0.10,
        ("cooperate", "Delight"): 0.10, ("cooperate", "Dilemma"): 0.10,
        ("defect", "Confusion"): 0.79, ("defect", "Delight"): 0.81, ("defect", "Dilemma"): 0.77,
    }),
    ("Assistant", "N", ("Att", "Game"), {  # Fig 3.10
        ("compute", "Confusion"): 0.00, ("compute", "Delight"): 0.08,
        ("compute", "Dilemma"): 0.25, ("cooperate", "Confusion"): 0.08,
        ("cooperate", "Delight"): 0.08, ("cooperate", "Dilemma"): 0.17,
        ("defect", "Confusion"): 0.42, ("defect", "Delight"): 0.42, ("defect", "Dilemma"): 0.58,
    }),
    ("Assistant", "CR", ("Model", "Att"), {
        ("gpt-4o-mini", "compute"): 0.16, ("gpt-4o-mini", "cooperate"): 0.06,
        ("gpt-4o-mini", "defect"): 0.68, ("ministral-8b", "compute"): 0.58,
        ("ministral-8b", "cooperate"): 0.15, ("ministral-8b", "defect"): 0.90,
    }),
    ("Tool", "CR", ("Model", "Att"), {
        ("gpt-4o-mini", "compute"): 0.48, ("gpt-4o-mini", "cooperate"): 0.97,
        ("gpt-4o-mini", "defect"): 0.02, ("ministral-8b", "compute"): 0.47,
        ("ministral-8b", "cooperate"): 0.92, ("ministral-8b", "defect"): 0.00,
    }),
]  # fmt: skip


@pytest.mark.parametrize(
    ("arch", "metric", "by", "expected"), FIGURES, ids=[f"{f[0]}-{f[1]}-{f[2]}" for f in FIGURES]
)
def test_figure_group_means(
    rows: list[Row],
    arch: str,
    metric: str,
    by: tuple[str, ...],
    expected: dict[tuple[str, ...], float],
) -> None:
    got = group_means(rows, metric, by, where={"Arch": arch})
    assert got == pytest.approx(expected, abs=0.005 + 1e-9)


def test_cooperation_by_number_of_rounds(rows: list[Row]) -> None:
    got = group_means(rows, "CR", ("Arch", "NR"))
    expected = {
        ("Assistant", 10): 0.43, ("Assistant", 20): 0.41, ("Plain_LLM", 10): 0.54,
        ("Plain_LLM", 20): 0.49, ("Tool", 10): 0.48, ("Tool", 20): 0.48,
    }  # fmt: skip
    assert got == pytest.approx(expected, abs=0.005 + 1e-9)


# -- validation of the CSV -----------------------------------------------------------------------

HEADER = ",".join(DATASET_COLUMNS)
GOOD = "0,gpt-4o-mini,Tool,AlwaysDefect,defect,10,Dilemma," + ",".join(["0.50"] * 16)


def _write(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "aggregates.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_small_file_without_idx_imports(tmp_path: Path) -> None:
    path = _write(tmp_path, HEADER.removeprefix("idx,"), GOOD.removeprefix("0,"))
    with ResultStore() as db:
        report = import_thesis_csv(db, path, experiment_id="mine", source="import:mine")
        assert report.imported == 1
        [row] = thesis_dataset(db, "mine")
        assert row["Arch"] == "Tool"
        assert row["Att"] == "defect"
        assert row["Em"] == 0.5


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (
            [HEADER.replace("CR3m", "CR3min"), GOOD],
            r"aggregates\.csv:1:11: expected column 'CR3m' \(got 'CR3min'\)",
        ),
        ([HEADER + ",Extra", GOOD + ",1"], r"aggregates\.csv:1:24: unexpected column 'Extra'"),
        (
            [HEADER, GOOD, GOOD.replace("0,gpt", "1,gpt").replace(",0.50,", ",1.30,", 1)],
            r"aggregates\.csv:3:8: CR1: expected a number in \[0, 1\], got 1\.30",
        ),
        ([HEADER, GOOD.replace(",0.50", ",abc", 1)], r":2:8: CR1: expected a number in \[0, 1\]"),
        ([HEADER, GOOD.replace("Tool", "Judge")], r":2:3: Arch: unknown architecture 'Judge'"),
        ([HEADER, GOOD.replace(",defect,", ",NA,")], r":2:5: Att: a Tool agent's attitude must"),
        (
            [HEADER, GOOD.replace(",Tool,", ",Plain_LLM,")],
            r":2:5: Att: a Plain_LLM agent's attitude must be NA",
        ),
        ([HEADER, GOOD.replace(",10,", ",ten,")], r":2:6: NR: expected a number of rounds"),
        ([HEADER, GOOD.replace("Dilemma", "Chicken")], r":2:7: Game: unknown game 'Chicken'"),
        ([HEADER, GOOD.replace("AlwaysDefect", "Nobody")], r":2:4: OppStr: unknown strategy"),
        ([HEADER, GOOD, GOOD], r":3:1: idx: duplicate idx 0 \(first on line 2\)"),
        ([HEADER, GOOD + ",0.5"], r"aggregates\.csv:2: expected 23 values, got 24"),
    ],
)
def test_bad_files_name_file_line_and_column(
    tmp_path: Path, lines: list[str], message: str
) -> None:
    path = _write(tmp_path, *lines)
    with ResultStore() as db:
        with pytest.raises(StratagemError, match=message) as info:
            import_thesis_csv(db, path)
        assert "\n" not in str(info.value)
        assert db.episodes() == []  # nothing imported


def test_every_bad_row_is_reported(tmp_path: Path) -> None:
    bad = [GOOD.replace("0,gpt", f"{i},gpt").replace("Tool", "X") for i in range(7)]
    with pytest.raises(StratagemError, match=r"; and 2 more bad lines \(nothing imported\)"):
        read_thesis_csv(_write(tmp_path, HEADER, *bad))


def test_missing_and_empty_files(tmp_path: Path) -> None:
    with pytest.raises(StratagemError, match="no such file"):
        read_thesis_csv(tmp_path / "nope.csv")
    with pytest.raises(StratagemError, match="empty file"):
        read_thesis_csv(_write(tmp_path, ""))


# -- played episodes: the same dataset from rounds and answers -----------------------------------

ROW6_AGENT = list("CDCCDDDDDD")  # §9 worked row 6


def _play(
    db: ResultStore,
    episode_id: str,
    agent: list[str],
    opponent: list[str],
    *,
    kind: str = "plain",
    attitude: str | None = None,
    opponent_name: str = "AlwaysDefect",
    answers: bool = True,
) -> None:
    """Record a Dilemma game as the runner would, with a perfect answerer."""
    stage = get_stage("dilemma")
    label = {"C": "cooperate", "D": "defect"}
    spec = {
        "model": "openai/gpt-4o-mini",
        "agent": {"name": f"{kind}-agent", "kind": kind, "attitude": attitude},
        "opponent": opponent_name,
        "rounds": len(agent),
        "game": "dilemma",
        "seed": 0,
    }
    db.add_episode(
        episode_id,
        "played",
        "dilemma",
        [{"name": "me", "kind": "llm"}, {"name": opponent_name, "kind": "strategy"}],
        0,
        spec=spec,
        labels=[list(ls) for ls in stage.labels],
        game_payoffs=stage.payoffs.tolist(),
    )
    db.start_episode(episode_id)
    years = 0.0
    for t, (a, o) in enumerate(zip(agent, opponent, strict=True), start=1):
        i, j = stage.labels[0].index(label[a]), stage.labels[1].index(label[o])
        payoffs = [float(stage.payoffs[i, j, 0]), float(stage.payoffs[i, j, 1])]
        db.add_round(episode_id, t, [label[a], label[o]], payoffs)
        years += 15 - payoffs[0]
        if answers:
            nxt = label[opponent[t]] if t < len(agent) else "defect"
            db.add_answer(episode_id, t, 0, "Q1", f"{{'ANSWER': '{nxt.capitalize()}'}}")
            db.add_answer(episode_id, t, 0, "Q2", f"{{'ANSWER': '{t}'}}")
            db.add_answer(episode_id, t, 0, "Q3", "ANSWER: MAXIMUM:15, MINIMUM:0")
            db.add_answer(episode_id, t, 0, "Q4", f"{{'ANSWER': '{years:g}'}}", correct=False)
    db.finish_episode(episode_id)


@pytest.fixture
def played() -> Iterator[ResultStore]:
    with ResultStore() as db:
        db.create_experiment("played", "played games")
        _play(db, "row6", ROW6_AGENT, ["D"] * 10)
        _play(
            db, "tool", ["D"] * 4, ["C", "D", "D", "D"], kind="tool", attitude="defect",
            opponent_name="tft", answers=False,
        )  # fmt: skip
        yield db


def test_a_played_game_gives_its_appendix_row(played: ResultStore) -> None:
    row6, tool = thesis_dataset(played, "played")
    assert {k: row6[k] for k in ("idx", "Model", "Arch", "OppStr", "Att", "NR", "Game")} == {
        "idx": 0, "Model": "gpt-4o-mini", "Arch": "Plain_LLM", "OppStr": "AlwaysDefect",
        "Att": "NA", "NR": 10, "Game": "Dilemma",
    }  # fmt: skip
    # §9 worked row 6.
    behaviour = {k: round(row6[k], 2) for k in ("CR", "N", "TM", "Ret", "For", "Em")}
    assert behaviour == {"CR": 0.3, "N": 1.0, "TM": 0.0, "Ret": 0.75, "For": 0.67, "Em": 0.78}
    # A perfect answerer; Q1 of the last round cannot be right (§7). Stored `correct` flags
    # are not trusted: answers are re-scored.
    assert row6["CR1"] == 0.9
    assert [row6[c] for c in ("CR2", "CR3M", "CR3m", "CR4")] == [1.0] * 4
    assert [row6[c] for c in ("MR1", "MR2", "MR3M", "MR3m", "MR4")] == [0.0] * 5
    # No answers: comprehension cells are empty, not zero. The opponent name is canonical.
    assert tool["Arch"] == "Tool"
    assert tool["Att"] == "defect"
    assert tool["OppStr"] == "TitForTat"
    assert all(tool[c] is None for c in ("CR1", "MR4"))
    assert tool["CR"] == 0.0
    assert tool["TM"] == 1.0


def test_tables_of_a_small_grid_omit_missing_cells(played: ResultStore, tmp_path: Path) -> None:
    rows = thesis_dataset(played, "played")
    tables = thesis_tables(rows)
    assert set(tables) == {
        "comprehension/Plain_LLM",
        "comprehension-by-model/Plain_LLM",
        "behaviour/Plain_LLM",
        "behaviour/Tool",
        "sfem/Tool",
    }
    assert tables["behaviour/Tool"].rows[0][:2] == ("Avg", 0.0)
    text = tables["comprehension/Plain_LLM"].to_markdown()
    assert "| Avg. Correct Rate | 0.90 | 1.00 | 1.00 | 1.00 | 1.00 |" in text
    written = write_dataset_csv(rows, tmp_path / "played.csv")
    with written.open(newline="") as stream:
        [_, tool] = list(csv.DictReader(stream))
    assert tool["CR1"] == ""
    assert tool["TM"] == "1.00"


def test_per_game_raw_csv(played: ResultStore, tmp_path: Path) -> None:
    rows = game_csv_rows(played, "row6")
    assert len(rows) == 10
    assert list(rows[0]) == list(GAME_CSV_COLUMNS)
    assert len(GAME_CSV_COLUMNS) == 15  # §8.1
    assert rows[1]["Action"] == "defect"
    assert rows[1]["OppAction"] == "defect"
    assert (rows[1]["Score"], rows[1]["OppScore"]) == (5.0, 20.0)  # S then P, cumulative
    assert rows[1]["Q2"] == "{'ANSWER': '2'}"
    assert (rows[0]["Arch"], rows[0]["Scenario"], rows[0]["Model"]) == (
        "Plain_LLM",
        "classic",
        "gpt-4o-mini",
    )
    in_years = game_csv_rows(played, "row6", scores="years")
    assert in_years[1]["Score"] == 25.0  # 15 + 10 years
    files = write_game_csvs(played, "played", tmp_path / "games")
    relative = sorted(str(f.relative_to(tmp_path / "games")) for f in files)
    assert relative == [
        "gpt-4o-mini/Plain_LLM/AlwaysDefect/NA/10/Dilemma.csv",
        "gpt-4o-mini/Tool/TitForTat/defect/4/Dilemma.csv",
    ]
    with files[0].open(newline="") as stream:
        assert len(list(csv.DictReader(stream))) == 10


def test_unknown_experiment(played: ResultStore) -> None:
    with pytest.raises(StratagemError, match="unknown experiment 'nope'"):
        thesis_dataset(played, "nope")


def test_export_command_writes_the_thesis_csvs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from stratagem.cli import main

    path = tmp_path / "stratagem.db"
    with ResultStore(path) as db:
        db.create_experiment("played", "played games")
        _play(db, "row6", ROW6_AGENT, ["D"] * 10)
    out_dir = tmp_path / "csv"
    with pytest.raises(SystemExit) as exit_info:
        main(["export", "--format", "thesis-csv", str(out_dir), "--store", str(path)])
    assert exit_info.value.code == 0
    assert "played: 1 game CSVs" in capsys.readouterr().out
    with (out_dir / "games/gpt-4o-mini/Plain_LLM/AlwaysDefect/NA/10/Dilemma.csv").open() as f:
        assert len(list(csv.DictReader(f))) == 10
    with (out_dir / "dataset.csv").open(newline="") as f:
        [row] = list(csv.DictReader(f))
    assert (row["CR"], row["CR1"]) == ("0.30", "0.90")
    with pytest.raises(SystemExit) as exit_info:
        main(["export", "--format", "xml", str(out_dir), "--store", str(path)])
    assert exit_info.value.code == 2
    assert "--format: got 'xml'" in capsys.readouterr().err
