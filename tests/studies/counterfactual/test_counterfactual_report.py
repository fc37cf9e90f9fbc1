"""seed-003's report section, on a scripted run (logic only) and on imported external logs."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from stratagem.experiments.config import ExperimentConfig
from stratagem.experiments.episode_io import import_episodes
from stratagem.experiments.runner import STORE_FILE, Runner
from stratagem.experiments.store import (
    EpisodeBundle,
    EpisodeRecord,
    ExperimentRecord,
    ResultStore,
    RoundRecord,
)
from stratagem.studies import build_report
from stratagem.studies.counterfactual import paired_analysis as pa
from stratagem.studies.counterfactual import tables as ct
from stratagem.studies.counterfactual.section import MAX_MODEL_PLOTS


def test_the_report_has_the_study_tables_and_the_paired_analysis(tmp_path: Path) -> None:
    config = ExperimentConfig.model_validate({
        "name": "cf", "output": str(tmp_path),
        "models": [{"model": "scripted/defect"}],
        "agents": [{"name": "zs", "framing": "counterfactual", "output": "choice",
                    "history": "chat", "repetitions": 2}],
        "games": ["pd", "pd-alt", "eq1", "ba3"], "opponents": ["srep", "pp", "agent:zs"],
        "rounds": [4],
    })  # fmt: skip
    asyncio.run(Runner(config, show_progress=False).run())
    html = build_report(tmp_path).read_text(encoding="utf-8")
    assert "Counterfactual strategic reasoning (seed-003 tables)" in html
    for tag in ("as Table 1 of the study", "as Table 6 of the study", "as Table 17 of the study",
                "as Table 13 of the study", "as Tables 14 and 24"):  # fmt: skip
        assert tag in html
    assert "printed in the paper under the caption “label-based”" in html  # pd-alt, gotcha 1
    assert "Paired differences: total points" in html and "Paired differences: m" not in html
    assert "Paired differences: comprehension round m" in html
    assert "Canonical-strategy persistence, cell by cell" in html
    assert "Action distribution vs equilibrium: ba3" in html
    with ResultStore(tmp_path / STORE_FILE) as store:
        games, skipped = ct.load_study_games(store, "cf")
    assert skipped == 0 and {g.opponent for g in games} == {"srep", "pp", "zs"}
    cells = pa.paired_analysis(games, ["pd", "pd-alt"]).cells
    # scripted/defect always defects: behaviour by role is unchanged, so persistence is 1.
    assert cells and all(c.persistence.score == 1.0 for c in cells)
    assert all(c.points is not None and c.points.n == 2 for c in cells)


def test_imported_logs_of_another_tool_get_the_same_tables(tmp_path: Path) -> None:
    """docs/episode-format.md: seed-003 game.json files as JSONL lines."""
    lines = []
    for run in range(2):
        for game, moves in (("pd/pd", ["defection"] * 4), ("pd/sh", ["stag"] * 4)):
            lines.append({
                "game": game, "players": [{"name": "zs", "kind": "llm", "model": "m"}, "tft-br"],
                "spec": {"iteration": run},
                "rounds": [{"actions": [a, a], "tokens": [100 + t, None]}
                           for t, a in enumerate(moves)],
            })  # fmt: skip
    path = tmp_path / "logs.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    with ResultStore(tmp_path / STORE_FILE) as store:
        import_episodes(store, path, experiment_id="logs", source="import:seed-003")
        games, skipped = ct.load_study_games(store, "logs")
    assert skipped == 0 and {(g.game, g.default, g.opponent) for g in games} == {
        ("pd", "pd", "tft"), ("sh", "pd", "tft")}  # fmt: skip
    table = ct.opponent_table(games, "sh", "points", "t", "c")
    assert [c.text for c in table.rows[0]] == ["m", "zs", "24.0 ± 0.0"]  # 4 x mutual stag (6)
    (cell,) = pa.paired_analysis(games, ["pd", "sh"]).cells
    assert cell.points is not None and cell.points.estimate == 24.0 - 8.0
    # The same difference in both runs: an interval of that value, and no p-value to claim.
    assert (cell.points.ci_low, cell.points.ci_high, cell.points.p) == (16.0, 16.0, None)
    assert cell.persistence.score == 0.0  # always b in pd, always a in sh
    html = build_report(tmp_path, "logs").read_text(encoding="utf-8")
    assert "Counterfactual strategic reasoning" in html


def test_many_models_share_heat_maps_drawn_as_tables(tmp_path: Path) -> None:
    """More models than MAX_MODEL_PLOTS: one heat map per family or game, as a coloured table."""
    experiment = ExperimentRecord("many", "many models", {}, "")
    with ResultStore(tmp_path / STORE_FILE) as store:
        for m in range(MAX_MODEL_PLOTS + 1):
            for game, move in (("pd/pd", "defection"), ("pd/pd-alt", "cooperation"),
                               ("rps/eq1", "rock"), ("rps/eq1-alt", "paper")):  # fmt: skip
                for run in range(2):
                    eid = f"{game}-{m}-{run}".replace("/", "_")
                    rounds = tuple(
                        RoundRecord(eid, t, (move, move), None, True, (100, None))
                        for t in range(1, 4)
                    )
                    record = EpisodeRecord(
                        id=eid, experiment_id="many", game=game,
                        players=({"name": "zs", "kind": "llm", "model": f"m{m}"}, {"name": "srep"}),
                        seed=run, status="finished", spec={"iteration": run, "model": f"m{m}"},
                        source="import:seed-003",
                    )  # fmt: skip
                    store.put_episode(EpisodeBundle(record, rounds), experiment=experiment)
    html = build_report(tmp_path, "many").read_text(encoding="utf-8")
    section = html[html.index('id="counterfactual"') :]
    assert "<img" not in section
    # Paired differences and persistence per family, action shares of each RPS game.
    assert section.count('<table class="heat">') == 2 + 2 + 2
    assert "Canonical-strategy persistence, pd family" in section
    assert "Action distribution vs equilibrium: eq1-alt" in section
    persistence = section[section.index("Canonical-strategy persistence, pd family") :]
    assert 'style="background:#440154;color:#fff">0.00</td>' in persistence  # always flipped
