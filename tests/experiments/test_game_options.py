"""A game's rule options from the experiment file (`game_options`, issue 24): checked when the file
is read, played by the engine, part of the episode id only when they differ from the game's
defaults (so every stored id stays as it was), replayed under the same rules on import, and never
mixed into stored episodes of other rules without `--force`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.cli import cli

from stratagem.errors import StratagemError
from stratagem.experiments.config import config_from_dict
from stratagem.experiments.grid import expand
from stratagem.experiments.runner import STORE_FILE
from stratagem.experiments.store import ResultStore

LINEUP = [["scripted:10", "scripted:10", "scripted:10"]]


def settings(**extra: Any) -> dict[str, Any]:
    return {
        "name": "pg",
        "output": "results/pg",
        "models": [{"model": "scripted/cooperate"}],
        "games": ["public-good"],
        "lineups": LINEUP,
        **extra,
    }


def write(tmp_path: Path, **extra: Any) -> Path:
    path = tmp_path / "pg.yaml"
    path.write_text(yaml.safe_dump(settings(**extra)), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"nosuch": {"x": 1}}, "game_options.nosuch: unknown game 'nosuch'"),
        ({"public-good": {"colour": 1}}, "game 'public-good' has no option 'colour': options: "),
        ({"public-good": {"rounds": 3}}, "has no option 'rounds'"),  # the grid's, not a rule
        ({"public-good": {"endowment": 0}}, "game_options.public-good: "),
    ],
)
def test_bad_options_are_one_line_errors_naming_the_field(
    options: dict[str, Any], message: str
) -> None:
    with pytest.raises(StratagemError) as caught:
        config_from_dict(settings(game_options=options), "pg.yaml")
    assert message in str(caught.value) and "\n" not in str(caught.value)
    assert str(caught.value).startswith("pg.yaml: game_options.")


def test_only_options_that_differ_from_the_defaults_change_the_id() -> None:
    (plain,) = expand(config_from_dict(settings(), "f"))
    (same,) = expand(
        config_from_dict(settings(game_options={"public-good": {"endowment": 100}}), "f")
    )
    (other,) = expand(
        config_from_dict(settings(game_options={"public-good": {"endowment": 50}}), "f")
    )
    assert "game_options" not in plain.key() and same.id == plain.id
    assert other.key()["game_options"] == {"endowment": 50} and other.id != plain.id
    assert other.build_game().endowment == 50  # type: ignore[attr-defined]


def _payoffs(store_dir: Path) -> list[float]:
    with ResultStore(store_dir / STORE_FILE) as store:
        (episode,) = store.episodes()
        return list(episode.payoffs or [])


def test_the_engine_plays_them_and_replays_them_on_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    rules = {"public-good": {"multiplier": 2.0}}
    code, _, err = cli(capsys, "run", str(write(tmp_path, game_options=rules)), "--no-progress")
    assert code == 0, err
    # 5 rounds of 10 each: 50 kept, a pool of 150 x 2 shared by 3 (3.5 by default would give 225).
    assert _payoffs(tmp_path / "results" / "pg") == [150.0, 150.0, 150.0]

    assert cli(capsys, "export", "pg.jsonl")[0] == 0
    line = json.loads(Path("pg.jsonl").read_text().splitlines()[0])
    assert line["spec"]["game_options"] == {"multiplier": 2.0}
    code, _, err = cli(capsys, "import", "pg.jsonl", "--store", "copy")
    assert code == 0, err  # the engine replayed it under its rules: the payoffs match
    assert _payoffs(tmp_path / "copy") == [150.0, 150.0, 150.0]

    for bad, why in (({"colour": 1}, "has no option 'colour'"), ([1], "a mapping")):
        line["spec"]["game_options"] = bad
        Path("bad.jsonl").write_text(json.dumps(line) + "\n")
        code, _, err = cli(capsys, "import", "bad.jsonl", "--store", "bad")
        assert code == 2 and "spec.game_options" in err and why in err, err
    line["spec"].pop("game_options")  # the default rules: the payoffs are not the engine's
    Path("bad.jsonl").write_text(json.dumps(line) + "\n")
    code, _, err = cli(capsys, "import", "bad.jsonl", "--store", "bad")
    assert code == 2 and "payoffs" in err, err


def test_changing_the_rules_of_a_stored_game_needs_force(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli(capsys, "run", str(write(tmp_path)), "--no-progress")[0] == 0
    same = write(tmp_path, game_options={"public-good": {"endowment": 100}})  # the default
    code, _, err = cli(capsys, "run", str(same), "--no-progress")
    assert code == 0, err
    changed = write(tmp_path, game_options={"public-good": {"multiplier": 2.0}})
    code, _, err = cli(capsys, "run", str(changed), "--no-progress")
    assert code == 2 and "game_options.public-good: {} -> {'multiplier': 2.0}" in err, err
    assert cli(capsys, "run", str(changed), "--no-progress", "--force")[0] == 0
