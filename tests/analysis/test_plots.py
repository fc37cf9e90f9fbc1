"""Grouped bar plots (seed-001 §10.1) and PNG embedding for self-contained reports."""

from __future__ import annotations

import base64
import math
from pathlib import Path

import pytest

from stratagem.analysis.plots import (
    PNG_SIGNATURE,
    group_stats,
    grouped_bar_png,
    png_data_uri,
    png_img_tag,
    save_grouped_bar,
    value_order,
)
from stratagem.errors import StratagemError

ROWS: list[dict[str, object]] = [
    {"Model": "gpt", "OppStr": "AC", "CR": 1.0},
    {"Model": "gpt", "OppStr": "AC", "CR": 0.8},
    {"Model": "gpt", "OppStr": "AD", "CR": 0.2},
    {"Model": "ministral", "OppStr": "AC", "CR": "0.4"},
    {"Model": "ministral", "OppStr": "AD", "CR": None},
]


def test_group_stats_mean_and_sample_sd() -> None:
    stats = {(s.x, s.hue): s for s in group_stats(ROWS, "Model", "CR", "OppStr")}
    assert set(stats) == {("gpt", "AC"), ("gpt", "AD"), ("ministral", "AC")}  # None left out
    gpt_ac = stats[("gpt", "AC")]
    assert gpt_ac.mean == pytest.approx(0.9)
    assert gpt_ac.error == pytest.approx(math.sqrt(0.02))  # ddof = 1
    assert gpt_ac.n == 2
    assert stats[("gpt", "AD")].error == 0.0
    sem = {(s.x, s.hue): s for s in group_stats(ROWS, "Model", "CR", "OppStr", error="sem")}
    assert sem[("gpt", "AC")].error == pytest.approx(math.sqrt(0.02) / math.sqrt(2))


def test_value_order_is_numeric_aware() -> None:
    assert value_order([20, "10", 5, "b", "a"]) == ["5", "10", "20", "a", "b"]


def test_grouped_bar_writes_a_png(tmp_path: Path) -> None:
    png = grouped_bar_png(ROWS, "Model", "CR", "OppStr", title="CR", annotate=True)
    assert png.startswith(PNG_SIGNATURE) and len(png) > 1000
    path = save_grouped_bar(tmp_path / "sub" / "cr.png", ROWS, "OppStr", "CR", error="none")
    assert path.read_bytes().startswith(PNG_SIGNATURE)
    assert grouped_bar_png(ROWS, "Model", "CR") == grouped_bar_png(ROWS, "Model", "CR")


def test_png_embeds_as_data_uri() -> None:
    png = grouped_bar_png(ROWS, "Model", "CR")
    uri = png_data_uri(png)
    assert uri.startswith("data:image/png;base64,")
    assert base64.b64decode(uri.split(",", 1)[1]) == png
    tag = png_img_tag(png, 'CR "by" model', width=400)
    assert tag.startswith('<img src="data:image/png;base64,')
    assert 'alt="CR &quot;by&quot; model"' in tag and 'width="400"' in tag
    with pytest.raises(StratagemError, match="not PNG"):
        png_data_uri(b"GIF89a")


def test_bad_rows_are_user_errors() -> None:
    with pytest.raises(StratagemError, match="no column 'Arch'"):
        grouped_bar_png(ROWS, "Arch", "CR")
    with pytest.raises(StratagemError, match="must be a number"):
        grouped_bar_png([{"Model": "gpt", "CR": "high"}], "Model", "CR")
    with pytest.raises(StratagemError, match="nothing to plot"):
        grouped_bar_png([{"Model": "gpt", "CR": None}], "Model", "CR")
    with pytest.raises(StratagemError, match="error bar"):
        group_stats(ROWS, "Model", "CR", error="ci")  # type: ignore[arg-type]
