"""Heat maps drawn as coloured tables: each number stays text, its colour follows the map, the
ink stays readable, and a missing value is an empty cell."""

from __future__ import annotations

from stratagem.analysis.heat import HEAT_CSS, heat_table, shade


def test_cells_are_coloured_by_value_with_readable_ink() -> None:
    table = heat_table(
        "Persistence", "caption", "prompt", ["zs", "cot"], ["pd-alt", "sh"],
        [[0.0, 1.0], [0.5, float("nan")]], vmin=0.0, vmax=1.0,
    )  # fmt: skip
    assert table.css == HEAT_CSS and table.columns == ("prompt", "pd-alt", "sh")
    low, high = table.rows[0][1], table.rows[0][2]
    assert (low.text, high.text) == ("0.00", "1.00")
    # viridis: dark purple (white ink) at 0, yellow (black ink) at 1.
    assert low.style == "background:#440154;color:#fff"
    assert high.style == "background:#fde725;color:#000"
    missing = table.rows[1][2]
    assert missing.text == "–" and not missing.style


def test_values_outside_the_range_are_clipped_and_a_flat_range_is_the_middle() -> None:
    assert shade(5.0, 0.0, 1.0, "viridis") == shade(1.0, 0.0, 1.0, "viridis")
    assert shade(3.0, 3.0, 3.0, "RdBu") == shade(0.0, -1.0, 1.0, "RdBu")
