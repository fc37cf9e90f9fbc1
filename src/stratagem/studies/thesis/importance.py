"""Which experimental setting drives a behaviour metric: random forest + SHAP (seed-001 §10.3).

The thesis fits a `RandomForestRegressor` with 10 trees on the one-hot encoded settings (attitude,
opponent strategy, game type, number of rounds) with one behaviour metric as the target, separately
per architecture and per model, and explains it with SHAP bar (mean |SHAP|) and violin plots.

Choices the thesis leaves open (seed-001 §17 AMBIG-11), as options with these defaults:

- Features: `DEFAULT_FEATURES` (Att, OppStr, Game, NR); the model and the architecture are split
  out by `importance_by_group`, not used as features.
- Encoding: full one-hot, one column per value, named `Feature_value` (pandas' `get_dummies`
  style); NR is categorical too. Columns constant within the fitted rows (e.g. a single NR) are
  dropped, since they cannot explain anything.
- No train/test split: the forest explains the observed settings rather than predicting new
  ones, so it is fitted on every row; the in-sample R² is reported for context.
- Seed: `random_state=seed`, default 0. Explainer: SHAP's exact `TreeExplainer` with its default
  tree-path-dependent perturbation (no background sample needed).

scikit-learn and shap are imported inside the functions that use them: they are slow to import
and only the analysis needs them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np
from matplotlib.figure import Figure
from numpy.typing import NDArray

from stratagem.analysis.plots import figure_png, new_figure, order_key, save_png, value_order
from stratagem.errors import StratagemError

Row = Mapping[str, Any]

DEFAULT_FEATURES: tuple[str, ...] = ("Att", "OppStr", "Game", "NR")
"""seed-001 §10.3: attitude, opponent strategy, game type, number of rounds."""

BEHAVIOUR_TARGETS: tuple[str, ...] = ("CR", "N", "TM", "Ret", "For", "Em")
"""seed-001 §10.3: the metrics the thesis explains (comprehension rates are not used)."""


@dataclass(frozen=True)
class OneHot:
    """A one-hot design matrix and where each column comes from."""

    columns: tuple[str, ...]
    """Column names, `Feature_value`."""
    sources: tuple[str, ...]
    """The setting each column encodes (`Att`, ...)."""
    values: tuple[str, ...]
    """The setting value each column encodes (`cooperate`, ...)."""
    matrix: NDArray[np.float64] = field(repr=False)


def one_hot(rows: Sequence[Row], features: Sequence[str], *, drop_constant: bool = True) -> OneHot:
    """One column per (feature, value) seen in `rows`, values in `value_order`."""
    if not rows:
        raise StratagemError("no rows to encode")
    if not features:
        raise StratagemError("at least one feature is needed")
    spec: list[tuple[str, str]] = []
    for feature in features:
        for i, row in enumerate(rows):
            if feature not in row:
                raise StratagemError(f"row {i} has no feature column '{feature}'")
        spec.extend((feature, value) for value in value_order(row[feature] for row in rows))
    matrix = np.array(
        [[1.0 if str(row[f]) == v else 0.0 for f, v in spec] for row in rows], dtype=np.float64
    )
    keep = [
        j for j in range(len(spec)) if not drop_constant or matrix[:, j].min() != matrix[:, j].max()
    ]
    if not keep:
        raise StratagemError(
            f"every setting in {', '.join(features)} is constant over these rows, "
            "so there is nothing to explain"
        )
    return OneHot(
        columns=tuple(f"{spec[j][0]}_{spec[j][1]}" for j in keep),
        sources=tuple(spec[j][0] for j in keep),
        values=tuple(spec[j][1] for j in keep),
        matrix=matrix[:, keep],
    )


def _targets(rows: Sequence[Row], target: str) -> NDArray[np.float64]:
    values = []
    for i, row in enumerate(rows):
        if target not in row:
            raise StratagemError(f"row {i} has no target column '{target}'")
        try:
            value = float(row[target])
        except (TypeError, ValueError):
            raise StratagemError(
                f"row {i}: target '{target}' must be a number, got {row[target]!r}"
            ) from None
        if math.isnan(value):
            raise StratagemError(f"row {i}: target '{target}' is NaN")
        values.append(value)
    return np.array(values, dtype=np.float64)


@dataclass(frozen=True)
class ImportanceResult:
    """A fitted forest for one target and its SHAP explanation."""

    target: str
    design: OneHot
    y: NDArray[np.float64] = field(repr=False)
    shap_values: NDArray[np.float64] = field(repr=False)
    """One row per game, one column per one-hot column."""
    expected_value: float
    """SHAP base value: the forest's mean prediction."""
    r2: float
    """In-sample R² of the forest (no split, see the module docstring)."""
    seed: int
    n_estimators: int
    label: str = ""
    """What the rows were (e.g. `Tool / gpt-4o-mini`), for plot titles."""
    model: Any = field(default=None, repr=False, compare=False)
    """The fitted `RandomForestRegressor`."""

    @property
    def columns(self) -> tuple[str, ...]:
        return self.design.columns

    def mean_abs_shap(self) -> dict[str, float]:
        """Global importance of each one-hot column (the bar plot), in column order."""
        means = np.abs(self.shap_values).mean(axis=0)
        return {c: float(m) for c, m in zip(self.columns, means, strict=True)}

    def ranking(self) -> list[tuple[str, float]]:
        """(column, mean |SHAP|) from most to least important; ties keep column order."""
        return sorted(self.mean_abs_shap().items(), key=lambda item: -item[1])

    @property
    def top_feature(self) -> str:
        return self.ranking()[0][0]

    def by_setting(self) -> dict[str, float]:
        """Importance of each original setting: mean |sum of its one-hot columns' SHAP|.

        SHAP values are additive, so summing a setting's columns gives that setting's total
        contribution per game; this answers "does attitude matter" without splitting it by value.
        """
        out: dict[str, float] = {}
        for source in dict.fromkeys(self.design.sources):
            idx = [j for j, s in enumerate(self.design.sources) if s == source]
            out[source] = float(np.abs(self.shap_values[:, idx].sum(axis=1)).mean())
        return out


def feature_importance(
    rows: Sequence[Row],
    target: str,
    features: Sequence[str] = DEFAULT_FEATURES,
    *,
    seed: int = 0,
    n_estimators: int = 10,
    drop_constant: bool = True,
    label: str = "",
) -> ImportanceResult:
    """Fit the forest on `rows` (already filtered to one architecture and model) and explain it."""
    import shap
    from sklearn.ensemble import RandomForestRegressor

    design = one_hot(rows, features, drop_constant=drop_constant)
    y = _targets(rows, target)
    forest = RandomForestRegressor(n_estimators=n_estimators, random_state=seed)
    forest.fit(design.matrix, y)
    explainer = shap.TreeExplainer(forest)
    values = np.asarray(explainer.shap_values(design.matrix), dtype=np.float64)
    return ImportanceResult(
        target=target,
        design=design,
        y=y,
        shap_values=values,
        expected_value=float(np.ravel(explainer.expected_value)[0]),
        r2=float(forest.score(design.matrix, y)),
        seed=seed,
        n_estimators=n_estimators,
        label=label,
        model=forest,
    )


def importance_by_group(
    rows: Sequence[Row],
    target: str,
    *,
    by: Sequence[str] = ("Arch", "Model"),
    features: Sequence[str] = DEFAULT_FEATURES,
    where: Mapping[str, object] | None = None,
    seed: int = 0,
    n_estimators: int = 10,
) -> dict[tuple[str, ...], ImportanceResult]:
    """One fit per combination of the `by` columns (the thesis: per architecture and model).

    `where` keeps only rows whose columns equal the given values (compared as text), e.g.
    `{"Arch": "Tool"}`. Groups come out in `value_order`.
    """
    kept = [
        row
        for row in rows
        if where is None or all(str(row.get(k)) == str(v) for k, v in where.items())
    ]
    if not kept:
        raise StratagemError(f"no rows match {dict(where or {})}")
    groups: dict[tuple[str, ...], list[Row]] = {}
    for i, row in enumerate(kept):
        for column in by:
            if column not in row:
                raise StratagemError(f"row {i} has no column '{column}'")
        groups.setdefault(tuple(str(row[c]) for c in by), []).append(row)
    ordered = sorted(groups, key=lambda key: [order_key(part) for part in key])
    return {
        key: feature_importance(
            groups[key],
            target,
            features,
            seed=seed,
            n_estimators=n_estimators,
            label=" / ".join(key),
        )
        for key in ordered
    }


# -- plots -----------------------------------------------------------------------------------------

_PRESENT = "#D55E00"  # the setting has this value in the game
_ABSENT = "#0072B2"


def _title(result: ImportanceResult, kind: str, title: str | None) -> str:
    if title is not None:
        return title
    where = f" — {result.label}" if result.label else ""
    return f"SHAP {kind}: {result.target}{where}"


def shap_bar_figure(
    result: ImportanceResult, *, title: str | None = None, max_display: int = 20
) -> Figure:
    """Mean |SHAP| per one-hot column, most important on top."""
    ranking = result.ranking()[:max_display]
    figure = new_figure(7.0, 0.6 + 0.35 * max(len(ranking), 3))
    ax = figure.add_subplot()
    names = [name for name, _ in reversed(ranking)]
    values = [value for _, value in reversed(ranking)]
    bars = ax.barh(range(len(names)), values, color=_ABSENT)
    ax.bar_label(bars, labels=[f"{v:.3f}" for v in values], fontsize=8, padding=2)
    ax.set_yticks(range(len(names)), names)
    ax.set_xlabel(f"mean |SHAP value| (impact on {result.target})")
    ax.set_title(_title(result, "importance", title))
    ax.margins(x=0.15)
    ax.spines[["top", "right"]].set_visible(False)
    return figure


def shap_violin_figure(
    result: ImportanceResult, *, title: str | None = None, max_display: int = 20
) -> Figure:
    """SHAP value distribution per one-hot column, games coloured by whether the value is set.

    Orange dots (setting has this value) right of zero mean that value raises the target; this
    is the direction the thesis reads off its violin plots.
    """
    order = [result.columns.index(name) for name, _ in result.ranking()[:max_display]]
    order.reverse()  # most important on top
    figure = new_figure(7.5, 0.6 + 0.45 * max(len(order), 3))
    ax = figure.add_subplot()
    jitter = np.random.default_rng(0)  # fixed: the picture is reproducible
    for position, j in enumerate(order):
        values = result.shap_values[:, j]
        if np.ptp(values) > 1e-12:
            body = ax.violinplot(
                [values], positions=[position], vert=False, widths=0.8, showextrema=False
            )
            for part in cast(Sequence[Any], body["bodies"]):
                part.set_facecolor("#BBBBBB")
                part.set_alpha(0.5)
        present = result.design.matrix[:, j] > 0.5
        offsets = jitter.uniform(-0.18, 0.18, size=len(values))
        for mask, colour in ((~present, _ABSENT), (present, _PRESENT)):
            ax.scatter(values[mask], position + offsets[mask], s=10, color=colour, alpha=0.8, lw=0)
    ax.axvline(0.0, color="#444444", lw=0.8)
    ax.set_yticks(range(len(order)), [result.columns[j] for j in order])
    ax.set_xlabel(f"SHAP value (impact on {result.target})")
    ax.set_title(_title(result, "values", title))
    handles = [
        ax.scatter([], [], s=20, color=_PRESENT, label="game has this value"),
        ax.scatter([], [], s=20, color=_ABSENT, label="game has another value"),
    ]
    ax.legend(handles=handles, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.spines[["top", "right"]].set_visible(False)
    return figure


def shap_plots(
    result: ImportanceResult,
    out_dir: str | Path,
    *,
    stem: str | None = None,
    max_display: int = 20,
) -> tuple[Path, Path]:
    """Write the bar and violin plots as `<stem>_bar.png` and `<stem>_violin.png`."""
    base = stem or "_".join(
        part for part in (result.label.replace(" / ", "_"), result.target) if part
    )
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in base)
    folder = Path(out_dir)
    bar = save_png(
        figure_png(shap_bar_figure(result, max_display=max_display)), folder / f"{safe}_bar.png"
    )
    violin = save_png(
        figure_png(shap_violin_figure(result, max_display=max_display)),
        folder / f"{safe}_violin.png",
    )
    return bar, violin
