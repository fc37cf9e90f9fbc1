"""Random forest + SHAP feature importance (seed-001 §10.3) on the Appendix-A data."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support.thesis_data import APPENDIX_A

from stratagem.analysis.plots import PNG_SIGNATURE
from stratagem.errors import StratagemError
from stratagem.studies.thesis.importance import (
    feature_importance,
    importance_by_group,
    one_hot,
    shap_plots,
)

# shap 0.51 calls matplotlib colormap setters that matplotlib 3.11 marks for deprecation.
pytestmark = pytest.mark.filterwarnings("ignore::PendingDeprecationWarning:shap")

APPENDIX = APPENDIX_A


@pytest.fixture(scope="module")
def rows() -> list[dict[str, str]]:
    if not APPENDIX.is_file():
        pytest.fail(f"seed-001 Appendix-A data not found at {APPENDIX}", pytrace=False)
    with APPENDIX.open(newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def tool_cr(rows: list[dict[str, str]]) -> dict[tuple[str, ...], Any]:
    return importance_by_group(rows, "CR", where={"Arch": "Tool"})


def test_one_hot_columns_and_constant_drop() -> None:
    data = [
        {"Att": "defect", "NR": 10, "Game": "Dilemma"},
        {"Att": "cooperate", "NR": 20, "Game": "Dilemma"},
        {"Att": "compute", "NR": 10, "Game": "Dilemma"},
    ]
    design = one_hot(data, ["Att", "NR", "Game"])
    assert design.columns == ("Att_compute", "Att_cooperate", "Att_defect", "NR_10", "NR_20")
    assert design.matrix.tolist()[0] == [0, 0, 1, 1, 0]
    assert "Game_Dilemma" in one_hot(data, ["Game", "NR"], drop_constant=False).columns


def test_tool_cr_is_driven_by_attitude(tool_cr: dict[tuple[str, ...], Any]) -> None:
    # seed-001 §13: "Attitude is the top feature" for the Tool agent's CR; the appendix bears it
    # out for both models (checked across seeds 0-4 before writing this test).
    assert list(tool_cr) == [("Tool", "gpt-4o-mini"), ("Tool", "ministral-8b")]
    for result in tool_cr.values():
        assert len(result.y) == 54
        assert result.top_feature.startswith("Att_")
        setting = result.by_setting()
        assert max(setting, key=setting.__getitem__) == "Att"
        assert setting["Att"] > 3 * setting["OppStr"]  # "the opponent is almost irrelevant"
        assert result.r2 > 0.9


def test_shap_values_explain_the_forest(tool_cr: dict[tuple[str, ...], Any]) -> None:
    result = tool_cr[("Tool", "gpt-4o-mini")]
    predicted = result.model.predict(result.design.matrix)
    reconstructed = result.expected_value + result.shap_values.sum(axis=1)
    assert np.allclose(predicted, reconstructed, atol=1e-6)


def test_seeded_fits_repeat(rows: list[dict[str, str]]) -> None:
    subset = [r for r in rows if r["Arch"] == "Assistant" and r["Model"] == "ministral-8b"]
    first = feature_importance(subset, "TM", seed=3)
    again = feature_importance(subset, "TM", seed=3)
    assert np.array_equal(first.shap_values, again.shap_values)
    assert first.ranking() == again.ranking()


def test_shap_plots_write_pngs(tool_cr: dict[tuple[str, ...], Any], tmp_path: Path) -> None:
    bar, violin = shap_plots(tool_cr[("Tool", "ministral-8b")], tmp_path)
    assert bar.name == "Tool_ministral-8b_CR_bar.png"
    assert violin.name == "Tool_ministral-8b_CR_violin.png"
    for path in (bar, violin):
        data = path.read_bytes()
        assert data.startswith(PNG_SIGNATURE) and len(data) > 1000


def test_bad_input_is_a_user_error() -> None:
    with pytest.raises(StratagemError, match="no target column 'CR'"):
        feature_importance([{"Att": "a"}, {"Att": "b"}], "CR", ["Att"])
    with pytest.raises(StratagemError, match="must be a number"):
        feature_importance([{"Att": "a", "CR": "x"}, {"Att": "b", "CR": 1}], "CR", ["Att"])
    with pytest.raises(StratagemError, match="nothing to explain"):
        one_hot([{"Att": "a"}, {"Att": "a"}], ["Att"])
    with pytest.raises(StratagemError, match="no rows match"):
        importance_by_group([{"Arch": "Tool"}], "CR", where={"Arch": "Debate"})
