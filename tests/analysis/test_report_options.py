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


# -- size options: a declared bound, checked where the value is given (issue 33 item 6) ------------


def _size_options() -> list[tuple[str, str, object]]:
    """(study, option, its Bounds) of every registered study option that is a count or holds
    several values: a size, which must declare its bound."""
    import dataclasses
    import typing

    import stratagem.studies  # noqa: F401  (registers the built-in studies)
    from stratagem.analysis.report_options import Bounds
    from stratagem.analysis.report_registry import registered

    out = []
    for study in registered():
        if study.options is None:
            continue
        hints = typing.get_type_hints(study.options, include_extras=True)
        for f in dataclasses.fields(study.options):
            hint = hints[f.name]
            bare = typing.get_args(hint)[0] if typing.get_origin(hint) is typing.Annotated else hint
            kinds = {bare, *typing.get_args(bare)}
            if int in kinds or typing.get_origin(bare) is tuple:
                bounds = [m for m in getattr(hint, "__metadata__", ()) if isinstance(m, Bounds)]
                out.append((study.name, f.name, bounds[0] if bounds else None))
    return out


def test_every_size_option_of_every_study_declares_its_bound() -> None:
    found = _size_options()
    names = {f"{study}.{name}" for study, name, _ in found}
    assert {"tom.bootstrap", "tom.folds", "tom.seed", "tom.epsilons", "magic.fixed_n"} <= names
    assert [f"{s}.{n}" for s, n, bounds in found if bounds is None] == []


@pytest.mark.parametrize(
    ("study", "option", "value", "message"),
    [
        ("tom", "bootstrap", "1000000000",
         "tom.bootstrap must be a whole number from 1 to 100,000, got 1000000000"),
        ("tom", "bootstrap", 0, "tom.bootstrap must be a whole number from 1 to 100,000, got 0"),
        ("tom", "folds", "100000", "tom.folds must be a whole number from 2 to 100, got 100000"),
        ("tom", "seed", 2**70, "tom.seed must be a whole number from 0 to"),
        ("tom", "epsilons", ",".join(["0.5"] * 1001), "tom.epsilons must have 1 to 100 items"),
        ("magic", "fixed_n", "10000000000",
         "magic.fixed_n must be a whole number from 1 to 1,000,000, got 10000000000"),
    ],
)  # fmt: skip
def test_a_size_beyond_its_bound_is_one_line_naming_it(
    study: str, option: str, value: object, message: str
) -> None:
    import stratagem.studies  # noqa: F401
    from stratagem.analysis.report_registry import resolve_options

    with pytest.raises(StratagemError) as caught:
        resolve_options({study: {option: value}})
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_the_bound_holds_for_options_built_in_python_too() -> None:
    from stratagem.studies.magic.options import MetricOptions
    from stratagem.studies.tom.options import TomOptions

    with pytest.raises(StratagemError, match="bootstrap must be a whole number from 1 to 100,000"):
        TomOptions(bootstrap=10**9)
    with pytest.raises(StratagemError, match="fixed_n must be a whole number from 1 to 1,000,000"):
        MetricOptions(fixed_n=10**10)
    assert TomOptions(bootstrap=100_000).bootstrap == 100_000  # the bound itself is allowed


def test_report_set_and_a_dry_run_refuse_a_size_beyond_its_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The issue's command grew to 5.4 GB in 60 s; the same value in `analysis:` passed
    `--dry-run`. Both are one line now, before anything is computed or played."""
    monkeypatch.chdir(tmp_path)
    huge = {"tom": {"bootstrap": 1_000_000_000}}
    code, out, err = cli(capsys, "run", str(_experiment(tmp_path, huge)), "--dry-run")
    assert code == 2 and out == "", out
    (line,) = err.strip().splitlines()
    assert (
        "analysis: tom.bootstrap must be a whole number from 1 to 100,000, got 1000000000" in line
    )
    assert not (tmp_path / "results" / "small").exists()

    assert cli(capsys, "run", str(_experiment(tmp_path)), "--no-progress")[0] == 0
    code, out, err = cli(capsys, "report", "--out", "x.html", "--set", "tom.bootstrap=1000000000")
    assert code == 2 and out == "", out
    (line,) = err.strip().splitlines()
    assert "tom.bootstrap must be a whole number from 1 to 100,000, got 1000000000" in line
    assert not (tmp_path / "x.html").exists()
