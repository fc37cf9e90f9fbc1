"""Every study's analysis options, by name, from the experiment file (`analysis:`) and from
`stratagem report --set` (issue 24): names checked before anything is computed or played, values
converted to the option's type, and the report stating what differs from the defaults."""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pytest
import yaml
from support.cli import cli

from stratagem.analysis.report_options import (
    build_options,
    convert,
    differences,
    merge,
    parse_assignments,
)
from stratagem.errors import StratagemError


@dataclass(frozen=True)
class Example:
    flag: bool = False
    count: int = 3
    share: float | None = 30.0
    mode: Literal["a", "b"] = "a"
    grid: tuple[float, ...] = (1e-6, 0.5)


def test_assignments_are_study_option_value() -> None:
    assert parse_assignments(["magic.code_compat=true", "tom.epsilon = 0.5", "magic.alpha=1"]) == {
        "magic": {"code_compat": "true", "alpha": "1"},
        "tom": {"epsilon": "0.5"},
    }
    for bad in ("code_compat=true", "magic.=1", ".x=1", "magic.alpha"):
        with pytest.raises(StratagemError, match=r"expected study\.option=value"):
            parse_assignments([bad])


def test_values_take_the_option_type_from_text_and_from_yaml() -> None:
    built = build_options(
        Example, {"flag": "yes", "count": "5", "share": "none", "mode": "b", "grid": "0,1"}, "ex"
    )
    assert built == Example(True, 5, None, "b", (0.0, 1.0))
    assert build_options(Example, {"flag": True, "count": 5.0, "share": 12}, "ex") == Example(
        True, 5, 12.0
    )
    assert convert("0.25", float | None, "ex.share") == 0.25


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"nope": 1}, "analysis option 'ex.nope' does not exist; valid: ex.flag, ex.count"),
        ({"flag": "maybe"}, "ex.flag must be true or false, got 'maybe'"),
        ({"count": "2.5"}, "ex.count must be an integer, got '2.5'"),
        ({"count": 2.5}, "ex.count must be an integer, got 2.5"),
        ({"count": True}, "ex.count must be a number, got True"),
        ({"share": "nan"}, "ex.share must be a finite number"),
        ({"mode": "c"}, "ex.mode must be one of a, b, got 'c'"),
    ],
)
def test_bad_names_and_values_are_one_line_errors(values: dict[str, object], message: str) -> None:
    with pytest.raises(StratagemError, match=message.replace(".", r"\.").replace("(", r"\(")):
        build_options(Example, values, "ex")


def test_set_values_override_the_file_option_by_option() -> None:
    merged = merge({"magic": {"alpha": 0.5, "code_compat": True}}, {"magic": {"alpha": "0.7"}})
    assert merged == {"magic": {"alpha": "0.7", "code_compat": True}}
    assert differences(Example(flag=True, mode="b")) == [("flag", True, False), ("mode", "b", "a")]
    assert differences(Example()) == []


# -- through the commands ------------------------------------------------------------------------


def _experiment(tmp_path: Path, analysis: dict[str, object] | None = None) -> Path:
    """A scripted plain agent against rule-based opponents in the Dilemma: the thesis applies."""
    data: dict[str, object] = {
        "name": "small",
        "output": "results/small",
        "models": [{"model": "scripted/cooperate"}],
        "agents": [{"name": "plain"}],
        "games": ["dilemma"],
        "opponents": ["TitForTat", "AlwaysDefect"],
        "rounds": [3],
        "seeds": [0, 1],
    }
    if analysis is not None:
        data["analysis"] = analysis
    path = tmp_path / "small.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def _report_text(path: Path) -> str:
    return html.unescape(path.read_text(encoding="utf-8"))


STATED = "Analysis options that differ from the defaults: numbers = 'last' (default 'first')."


def test_report_set_states_the_options_and_rejects_unknown_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli(capsys, "run", str(_experiment(tmp_path)), "--no-progress")[0] == 0
    code, _, err = cli(capsys, "report", "--out", "plain.html")
    assert code == 0, err
    assert "Analysis options that differ" not in _report_text(tmp_path / "plain.html")
    code, _, err = cli(capsys, "report", "--out", "set.html", "--set", "thesis.numbers=last")
    assert code == 0, err
    assert STATED in _report_text(tmp_path / "set.html")

    code, out, err = cli(capsys, "report", "--out", "x.html", "--set", "thesis.nubmers=last")
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "'thesis.nubmers' does not exist; valid: thesis.q2_expects" in err
    code, out, err = cli(capsys, "report", "--out", "x.html", "--set", "nosuch.alpha=1")
    assert code == 2 and "no study 'nosuch' has options; studies with options:" in err
    assert "thesis" in err and "Traceback" not in err + out
    assert not (tmp_path / "x.html").exists()


def test_the_files_analysis_section_is_checked_before_playing_and_used_by_the_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = cli(
        capsys,
        "run",
        str(_experiment(tmp_path, {"thesis": {"numbers": "middle"}})),
        "--no-progress",
    )
    assert code == 2 and "thesis.numbers must be one of first, last, got 'middle'" in err
    assert not (tmp_path / "results" / "small").exists()  # nothing was played

    file = _experiment(tmp_path, {"thesis": {"numbers": "last"}})
    assert cli(capsys, "run", str(file), "--no-progress")[0] == 0
    assert cli(capsys, "report", "--out", "r.html")[0] == 0
    assert STATED in _report_text(tmp_path / "r.html")
    # --set overrides the file: back to the default, nothing to state.
    assert cli(capsys, "report", "--out", "d.html", "--set", "thesis.numbers=first")[0] == 0
    assert "Analysis options that differ" not in _report_text(tmp_path / "d.html")
