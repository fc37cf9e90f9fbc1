"""The seed-004 §9.2 radar: axis order, area and the PGM gain as relative area change."""

from __future__ import annotations

import math

import numpy as np
import pytest

from stratagem.errors import StratagemError
from stratagem.studies.magic.radar import (
    RADAR_AXES,
    area_gain,
    radar_area,
    radar_areas,
    radar_values,
)


def test_axis_order_is_the_papers() -> None:
    assert [label for _, label in RADAR_AXES] == [
        "Judgement",
        "Reasoning",
        "Deception",
        "Collaboration",
        "Coordination",
        "Rationality",
        "Self-Awareness",
    ]
    assert dict(RADAR_AXES)["cooperation"] == "Collaboration"


def test_regular_heptagon_of_radius_100() -> None:
    # seven triangles of two sides 100 and angle 2π/7
    expected = 0.5 * math.sin(2 * math.pi / 7) * 7 * 100**2
    assert radar_area([100.0] * 7) == pytest.approx(expected)
    values = radar_values({name: 1.0 for name, _ in RADAR_AXES})
    assert values == (100.0,) * 7
    assert values is not None and radar_area(values) == pytest.approx(expected)


def test_area_multiplies_neighbours_cyclically() -> None:
    r = [10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0]
    # 10*20 + 20*30 + 30*40 + 40*50 + 50*60 + 60*70 + 70*10 = 11900
    assert radar_area(r) == pytest.approx(0.5 * math.sin(2 * math.pi / 7) * 11900)
    # the order matters: the same values shuffled span another area
    assert radar_area([10.0, 70.0, 20.0, 60.0, 30.0, 50.0, 40.0]) != pytest.approx(radar_area(r))
    both = radar_areas(np.array([r, [100.0] * 7]))
    assert both.shape == (2,) and both[0] == pytest.approx(radar_area(r))


def test_values_are_percent_and_need_all_seven() -> None:
    m = {name: 0.5 for name, _ in RADAR_AXES}
    m["deception"] = 1.25  # Deception is not normalised (max 1.25)
    values = radar_values(m)
    assert values is not None and values[2] == pytest.approx(125.0)
    m["rationality"] = None  # type: ignore[assignment]
    assert radar_values(m) is None
    with pytest.raises(StratagemError, match="7 axes"):
        radar_area([1.0, 2.0])


def test_pgm_gain_is_the_relative_area_change() -> None:
    # all axes scaled by 1.1 -> area scaled by 1.21 -> +21%
    base = [50.0] * 7
    assert area_gain(radar_area(base), radar_area([55.0] * 7)) == pytest.approx(0.21)
    assert area_gain(0.0, 10.0) is None
