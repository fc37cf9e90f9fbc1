"""Calibration of stored beliefs: Brier score, log loss, expected calibration error and the bins
of a reliability diagram, per (model, agent, game, belief kind), with episode-bootstrap intervals.

A forecast i (`analysis.forecasts.Forecast`) is a probability vector f_i over K_i outcomes and
the index y_i of the outcome that happened (o_i its one-hot vector), or a point guess that was
right or wrong. Point guesses get only an accuracy: no probability is ever made up for them.

**Brier score** (Brier 1950, "Verification of forecasts expressed in terms of probability",
Monthly Weather Review 78(1), eq. 1): per forecast

    b_i = Σ_k (f_ik - o_ik)²            (K_i >= 3; from 0, perfect, to 2)
    b_i = (f_i,yes - o_i,yes)²          (K_i = 2: the usual binary (p - y)², half the sum above)

and the score is the mean of the b_i. The two conventions are scikit-learn's
`brier_score_loss` (`scale_by_half="auto"`).

**Log loss** (the logarithmic scoring rule, Good 1952, "Rational decisions", JRSS B 14(1)):
l_i = -ln(min(max(f_i,y_i, ε), 1 - ε)), mean over i, ε = `EPSILON` = 1e-15 (scikit-learn's
long-standing default): a belief that gave the true outcome probability 0 costs
-ln(1e-15) ≈ 34.5 nats instead of infinity, which is why the bounded Brier score is shown
beside it.

**Top-label confidence and accuracy** (Guo, Pleiss, Sun & Weinberger 2017, "On calibration of
modern neural networks", ICML, §2): c_i = max_k f_ik, and the forecast is right when y_i is
its argmax. A tie at the top (T_i = the outcomes within 1e-12 of c_i; a uniform belief ties
all) is read as a uniformly random pick among them, so a_i = 1[y_i ∈ T_i] / |T_i|, its
expected accuracy (an argmax that always took the first seat would make a uniform belief look
right whenever the first seat is the spy). A point guess has a_i = 1 or 0 and no c_i.

**Expected calibration error** (Naeini, Cooper & Hauskrecht 2015, "Obtaining well calibrated
probabilities using Bayesian binning", AAAI; Guo et al. 2017, eq. 3): M equal-width bins
B_m = {i : c_i ∈ ((m-1)/M, m/M]} (the first bin also holds 0), and with N forecasts

    ECE = Σ_m (|B_m| / N) · |acc(B_m) - conf(B_m)| = (1/N) Σ_m |Σ_{i∈B_m} a_i - Σ_{i∈B_m} c_i|

where acc(B_m) and conf(B_m) are the bin's mean a_i and mean c_i: the reliability diagram plots
acc against conf per bin (scikit-learn's `calibration_curve` with `strategy="uniform"` bins
the same way). ECE is biased upwards when bins hold few forecasts (Kumar, Liang & Ma 2019,
"Verified uncertainty calibration", NeurIPS), so it is shown with its count.

**Intervals.** The forecasts of one episode are correlated (one agent's beliefs after each clue
of one game, the tied top items of one report), so the bootstrap resamples *episodes*, each
with all its forecasts (a cluster bootstrap): a replicate draws the group's episodes with
replacement, and every score is recomputed from the summed per-episode tallies. The interval is
the central `level` percentile interval of `n_boot` replicates; a group with one episode has
none. All randomness goes through `numpy.random.default_rng(seed)` (`analysis.bootstrap`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from numbers import Integral

import numpy as np
import numpy.typing as npt

from stratagem.analysis.bootstrap import check_bootstrap, percentile_interval, resampled_sums
from stratagem.analysis.forecasts import Forecast
from stratagem.errors import StratagemError

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

EPSILON = 1e-15
"""The log loss clips probabilities to [ε, 1 - ε] (module docstring)."""
TIE = 1e-12
"""Outcomes within this of the top probability tie for the top label."""
BINS = 10
"""M, the equal-width confidence bins of the ECE and the reliability diagram (Guo et al.)."""
N_BOOT = 2000
LEVEL = 0.95
SEED = 0


def _check(probs: FloatArray, outcomes: IntArray) -> None:
    if probs.ndim != 2 or probs.shape[1] < 2 or outcomes.shape != (probs.shape[0],):
        raise StratagemError(
            f"forecasts need an (N, K >= 2) probability array and N outcomes, got shapes "
            f"{probs.shape} and {outcomes.shape}"
        )
    if outcomes.size and (outcomes.min() < 0 or outcomes.max() >= probs.shape[1]):
        raise StratagemError(f"outcomes must be indices 0..{probs.shape[1] - 1}")


def _arrays(probs: object, outcomes: object) -> tuple[FloatArray, IntArray]:
    p = np.asarray(probs, dtype=np.float64)
    y = np.asarray(outcomes, dtype=np.int64)
    _check(p, y)
    return p, y


def brier_scores(probs: object, outcomes: object) -> FloatArray:
    """b_i per forecast (module docstring): the summed squared error over the K outcomes,
    halved for K = 2."""
    p, y = _arrays(probs, outcomes)
    onehot = np.zeros_like(p)
    onehot[np.arange(len(y)), y] = 1.0
    sums: FloatArray = ((p - onehot) ** 2).sum(axis=1)
    return sums / 2.0 if p.shape[1] == 2 else sums


def log_losses(probs: object, outcomes: object, epsilon: float = EPSILON) -> FloatArray:
    """l_i = -ln(clip(f_i,y_i, ε, 1 - ε)) per forecast."""
    if not 0 < epsilon < 0.5:
        raise StratagemError(f"epsilon must be in (0, 0.5), got {epsilon!r}")
    p, y = _arrays(probs, outcomes)
    true = np.clip(p[np.arange(len(y)), y], epsilon, 1.0 - epsilon)
    losses: FloatArray = -np.log(true)
    return losses


def top_label(probs: object, outcomes: object) -> tuple[FloatArray, FloatArray]:
    """(c_i, a_i) per forecast: the top probability, and the chance that the top label is the
    outcome when a tie at the top is broken uniformly at random."""
    p, y = _arrays(probs, outcomes)
    confidence: FloatArray = p.max(axis=1)
    top = p >= confidence[:, None] - TIE
    hit = top[np.arange(len(y)), y]
    accuracy: FloatArray = hit / top.sum(axis=1)
    return confidence, accuracy


def _check_bins(n_bins: int) -> None:
    if isinstance(n_bins, bool) or not isinstance(n_bins, Integral) or n_bins < 1:
        raise StratagemError(f"the number of bins must be a positive integer, got {n_bins!r}")


def bin_index(confidence: object, n_bins: int = BINS) -> IntArray:
    """The bin m - 1 of each confidence: bins ((m-1)/M, m/M], the first one closed at 0."""
    _check_bins(n_bins)
    c = np.asarray(confidence, dtype=np.float64)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    found: IntArray = np.searchsorted(edges[1:-1], c, side="left").astype(np.int64)
    return found


@dataclass(frozen=True)
class Bin:
    """One bar of a reliability diagram."""

    lower: float
    upper: float
    count: int
    confidence: float | None
    """Mean top-label confidence of its forecasts (None when empty)."""
    accuracy: float | None


def _bin_sums(confidence: FloatArray, accuracy: FloatArray, n_bins: int) -> FloatArray:
    """(3, M): per bin, the count, Σ c_i and Σ a_i."""
    index = bin_index(confidence, n_bins)
    out = np.zeros((3, n_bins))
    np.add.at(out[0], index, 1.0)
    np.add.at(out[1], index, confidence)
    np.add.at(out[2], index, accuracy)
    return out


def reliability_bins(confidence: object, accuracy: object, n_bins: int = BINS) -> tuple[Bin, ...]:
    """Every bin of the reliability diagram, empty ones included."""
    c = np.asarray(confidence, dtype=np.float64)
    a = np.asarray(accuracy, dtype=np.float64)
    if c.shape != a.shape or c.ndim != 1:
        raise StratagemError(f"confidence and accuracy must be two 1-d arrays of one length, got "
                             f"shapes {c.shape} and {a.shape}")  # fmt: skip
    sums = _bin_sums(c, a, n_bins)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    out = []
    for m in range(n_bins):
        n = int(sums[0, m])
        out.append(
            Bin(
                float(edges[m]),
                float(edges[m + 1]),
                n,
                float(sums[1, m] / n) if n else None,
                float(sums[2, m] / n) if n else None,
            )
        )
    return tuple(out)


def _ece(sums: FloatArray) -> FloatArray:
    """ECE from bin sums shaped (..., 3, M): Σ_m |Σa - Σc| / N (NaN when N = 0)."""
    n = sums[..., 0, :].sum(axis=-1)
    gap = np.abs(sums[..., 2, :] - sums[..., 1, :]).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out: FloatArray = gap / n
    return out


def expected_calibration_error(confidence: object, accuracy: object, n_bins: int = BINS) -> float:
    """ECE over M equal-width bins (module docstring)."""
    c = np.asarray(confidence, dtype=np.float64)
    a = np.asarray(accuracy, dtype=np.float64)
    if c.size == 0:
        raise StratagemError("the ECE of no forecast is undefined")
    return float(_ece(_bin_sums(c, a, n_bins)))


# -- per group, with intervals ---------------------------------------------------------------------


@dataclass(frozen=True)
class Estimate:
    value: float
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class Calibration:
    """One (model, agent, game, kind)'s scores; Brier, log loss, ECE and bins only when its
    forecasts are probabilistic."""

    model: str
    agent: str
    game: str
    kind: str
    forecasts: int
    episodes: int
    accuracy: Estimate
    """Mean a_i: top-label accuracy, or the share of point guesses that were right."""
    brier: Estimate | None = None
    log_loss: Estimate | None = None
    ece: Estimate | None = None
    bins: tuple[Bin, ...] = ()

    @property
    def probabilistic(self) -> bool:
        return self.brier is not None


def _per_forecast(
    forecasts: Sequence[Forecast], epsilon: float
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """(b_i, l_i, c_i, a_i) of probabilistic forecasts, computed K by K."""
    n = len(forecasts)
    scores = np.zeros((4, n))
    by_k: dict[int, list[int]] = {}
    for i, f in enumerate(forecasts):
        assert f.probabilities is not None
        by_k.setdefault(len(f.probabilities), []).append(i)
    for ix in by_k.values():
        probs = [forecasts[i].probabilities for i in ix]
        outcomes = [forecasts[i].outcome for i in ix]
        scores[0, ix] = brier_scores(probs, outcomes)
        scores[1, ix] = log_losses(probs, outcomes, epsilon)
        scores[2, ix], scores[3, ix] = top_label(probs, outcomes)
    return scores[0], scores[1], scores[2], scores[3]


def _interval(stats: FloatArray, level: float, episodes: int) -> tuple[float | None, float | None]:
    return percentile_interval(stats, level) if episodes > 1 else (None, None)


def _summarise(
    key: tuple[str, str, str, str],
    forecasts: Sequence[Forecast],
    n_bins: int,
    n_boot: int,
    level: float,
    seed: int,
    epsilon: float,
) -> Calibration:
    units = list(dict.fromkeys(f.episode_id for f in forecasts))
    unit = {e: k for k, e in enumerate(units)}
    rows = np.array([unit[f.episode_id] for f in forecasts], dtype=np.int64)
    kinds = {f.probabilistic for f in forecasts}
    if len(kinds) > 1:
        raise StratagemError(f"belief kind '{key[3]}' of {key[0]} in {key[2]} mixes "
                             "probabilistic forecasts and point guesses")  # fmt: skip
    if not kinds.pop():
        hits = np.array([f.outcome for f in forecasts], dtype=np.float64)
        tallies = np.zeros((len(units), 2))
        np.add.at(tallies[:, 0], rows, 1.0)
        np.add.at(tallies[:, 1], rows, hits)
        reps = resampled_sums(tallies, [0] * len(units), n_boot, seed)
        accuracy = Estimate(
            float(hits.mean()), *_interval(reps[:, 1] / reps[:, 0], level, len(units))
        )
        return Calibration(*key, len(forecasts), len(units), accuracy)
    brier, loss, conf, acc = _per_forecast(forecasts, epsilon)
    index = bin_index(conf, n_bins)
    # Per episode: n, Σb, Σl, Σa, then per bin the count, Σc and Σa (what every score needs).
    tallies = np.zeros((len(units), 4 + 3 * n_bins))
    for column, values in enumerate((np.ones_like(brier), brier, loss, acc)):
        np.add.at(tallies[:, column], rows, values)
    for column, values in enumerate((np.ones_like(conf), conf, acc)):
        np.add.at(tallies, (rows, 4 + column * n_bins + index), values)
    reps = resampled_sums(tallies, [0] * len(units), n_boot, seed)
    n = reps[:, 0]
    ece_reps = _ece(reps[:, 4:].reshape(n_boot, 3, n_bins))
    e = len(units)
    return Calibration(
        *key,
        len(forecasts),
        e,
        accuracy=Estimate(float(acc.mean()), *_interval(reps[:, 3] / n, level, e)),
        brier=Estimate(float(brier.mean()), *_interval(reps[:, 1] / n, level, e)),
        log_loss=Estimate(float(loss.mean()), *_interval(reps[:, 2] / n, level, e)),
        ece=Estimate(expected_calibration_error(conf, acc, n_bins), *_interval(ece_reps, level, e)),
        bins=reliability_bins(conf, acc, n_bins),
    )


def calibration(
    forecasts: Sequence[Forecast],
    *,
    n_bins: int = BINS,
    n_boot: int = N_BOOT,
    level: float = LEVEL,
    seed: int = SEED,
    epsilon: float = EPSILON,
) -> list[Calibration]:
    """Every (model, agent, game, kind) group's scores with episode-bootstrap intervals, groups
    sorted; the same forecasts and seed always give the same intervals."""
    check_bootstrap(n_boot, level)
    _check_bins(n_bins)
    groups: dict[tuple[str, str, str, str], list[Forecast]] = {}
    for f in forecasts:
        groups.setdefault(f.group, []).append(f)
    return [
        _summarise(key, groups[key], n_bins, n_boot, level, seed, epsilon) for key in sorted(groups)
    ]
