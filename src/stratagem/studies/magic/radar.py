"""The ability radar of seed-004 §9.2 and its area, the paper's summary of the PGM gain.

The paper claims "+37%" from radar areas but gives neither the formula nor the axis order in a
usable form (§10.12). As the spec reads it [I]: the seven abilities in %, clockwise from the top
in the order Judgement, Reasoning, Deception, Collaboration (= Cooperation), Coordination,
Rationality, Self-Awareness, and the area of the heptagon they span,

    area = ½ · sin(2π/7) · Σ_i r_i · r_{i+1}    (cyclic, r in %)

which depends on the axis order (neighbours multiply), hence the fixed order. The PGM gain is the
relative area change, area(PGM) / area(vanilla) - 1.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from stratagem.errors import StratagemError

FloatArray = npt.NDArray[np.float64]

RADAR_AXES: tuple[tuple[str, str], ...] = (
    ("judgment", "Judgement"),
    ("reasoning", "Reasoning"),
    ("deception", "Deception"),
    ("cooperation", "Collaboration"),
    ("coordination", "Coordination"),
    ("rationality", "Rationality"),
    ("self_awareness", "Self-Awareness"),
)
"""(metric name, axis label), clockwise from the top (seed-004 §9.2)."""

_SECTOR = 0.5 * math.sin(2 * math.pi / len(RADAR_AXES))


def radar_values(metrics: Mapping[str, float | None]) -> tuple[float, ...] | None:
    """The seven abilities in %, in axis order; None when any is missing or undefined."""
    out: list[float] = []
    for name, _label in RADAR_AXES:
        v = metrics.get(name)
        if v is None or math.isnan(v):
            return None
        out.append(100.0 * v)
    return tuple(out)


def radar_areas(values: FloatArray) -> FloatArray:
    """Vectorised area: `values` is (..., 7) in %, the result (...), NaN where any is NaN."""
    v = np.asarray(values, dtype=np.float64)
    if v.shape[-1] != len(RADAR_AXES):
        raise StratagemError(f"a radar has {len(RADAR_AXES)} axes, got {v.shape[-1]} values")
    return np.asarray(_SECTOR * (v * np.roll(v, -1, axis=-1)).sum(axis=-1), dtype=np.float64)


def radar_area(values: Sequence[float]) -> float:
    """½·sin(2π/7)·Σ r_i r_{i+1}, cyclic, for the seven values in axis order (in %)."""
    return float(radar_areas(np.asarray(values, dtype=np.float64)))


def area_gain(vanilla: float, pgm: float) -> float | None:
    """Relative area change area(PGM) / area(vanilla) - 1; None when the vanilla area is 0."""
    return None if vanilla <= 0 else pgm / vanilla - 1
