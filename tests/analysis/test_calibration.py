"""Belief calibration (`analysis.calibration`): each score against scikit-learn or scipy on the
same data, small cases computed by hand, and episode-bootstrap intervals reproducible by seed."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from sklearn.calibration import calibration_curve
from sklearn.metrics import brier_score_loss, log_loss

from stratagem.analysis.calibration import (
    EPSILON,
    bin_index,
    brier_scores,
    calibration,
    expected_calibration_error,
    log_losses,
    reliability_bins,
    top_label,
)
from stratagem.analysis.forecasts import Forecast
from stratagem.errors import StratagemError


def random_forecasts(n: int, k: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Dirichlet probability vectors and outcomes drawn from a sharpened version of them (so the
    forecasts are miscalibrated, and confidences never sit on a bin edge)."""
    rng = np.random.default_rng(seed)
    probs = rng.dirichlet(np.ones(k), size=n)
    sharp = probs**2 / (probs**2).sum(axis=1, keepdims=True)
    outcomes = np.array([rng.choice(k, p=p) for p in sharp])
    return probs, outcomes


def test_brier_matches_sklearn_multiclass_and_binary() -> None:
    probs, y = random_forecasts(300, 3, seed=1)
    expected = brier_score_loss(y, probs, labels=[0, 1, 2])
    assert brier_scores(probs, y).mean() == pytest.approx(expected, rel=1e-12)
    p, yb = random_forecasts(300, 2, seed=2)
    assert brier_scores(p, yb).mean() == pytest.approx(brier_score_loss(yb, p[:, 1]), rel=1e-12)


def test_brier_by_hand() -> None:
    # Brier (1950) eq. 1: Σ_k (f_k - o_k)², e.g. (0.2 - 1)² + 0.3² + 0.5² = 0.98.
    probs = [[0.2, 0.3, 0.5], [0.1, 0.1, 0.8], [0.3, 0.4, 0.3]]
    assert brier_scores(probs, [0, 2, 1]) == pytest.approx([0.98, 0.06, 0.54])
    # Two outcomes: the binary (p - y)², half the sum over both.
    assert brier_scores([[0.3, 0.7], [0.9, 0.1]], [1, 1]) == pytest.approx([0.09, 0.81])


def test_log_loss_matches_sklearn_and_clips_zero() -> None:
    probs, y = random_forecasts(300, 3, seed=3)
    expected = log_loss(y, probs, labels=[0, 1, 2])
    assert log_losses(probs, y).mean() == pytest.approx(expected, rel=1e-12)
    # A true outcome given probability 0 costs -ln(1e-15), not infinity; one given 1 costs ~0.
    found = log_losses([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0]], [1, 0])
    assert found[0] == pytest.approx(-math.log(EPSILON)) and found[0] == pytest.approx(
        34.5388, 1e-4
    )
    assert found[1] == pytest.approx(0.0, abs=1e-14)
    assert log_losses([[0.25, 0.75]], [0]) == pytest.approx([math.log(4)])


def test_top_label_breaks_ties_as_a_random_pick() -> None:
    third = 1 / 3
    confidence, accuracy = top_label(
        [[third, third, third], [0.5, 0.5, 0.0], [0.5, 0.5, 0.0], [0.2, 0.7, 0.1]], [2, 0, 2, 0]
    )
    assert confidence == pytest.approx([third, 0.5, 0.5, 0.7])
    assert accuracy == pytest.approx([third, 0.5, 0.0, 0.0])


def test_bins_are_right_closed_as_in_guo_et_al() -> None:
    assert list(bin_index([0.0, 0.1, 0.1000001, 0.35, 0.5, 1.0])) == [0, 0, 1, 3, 4, 9]
    assert list(bin_index([0.5, 0.51], n_bins=2)) == [0, 1]


def test_reliability_bins_match_sklearn_calibration_curve() -> None:
    probs, y = random_forecasts(500, 3, seed=4)
    confidence, accuracy = top_label(probs, y)
    bins = reliability_bins(confidence, accuracy, n_bins=10)
    filled = [b for b in bins if b.count]
    prob_true, prob_pred = calibration_curve(accuracy, confidence, n_bins=10, strategy="uniform")
    assert [b.accuracy for b in filled] == pytest.approx(list(prob_true))
    assert [b.confidence for b in filled] == pytest.approx(list(prob_pred))
    assert sum(b.count for b in bins) == 500
    assert [(b.lower, b.upper) for b in bins[:2]] == [(0.0, 0.1), (0.1, 0.2)]
    # ECE = Σ (n_m / N) |acc_m - conf_m|, the counts from numpy's histogram (no edge values).
    counts, _ = np.histogram(confidence, bins=np.linspace(0, 1, 11))
    weights = counts[counts > 0] / 500
    expected = float(np.sum(weights * np.abs(prob_true - prob_pred)))
    assert expected_calibration_error(confidence, accuracy) == pytest.approx(expected, rel=1e-12)


def test_ece_by_hand() -> None:
    # Bin (0.8, 0.9]: two forecasts at 0.9, one right: |0.5 - 0.9| x 2/4; bin (0.5, 0.6]: two
    # at 0.6, both right: |1 - 0.6| x 2/4. ECE = 0.2 + 0.2.
    assert expected_calibration_error([0.9, 0.9, 0.6, 0.6], [1, 0, 1, 1]) == pytest.approx(0.4)
    # Perfectly calibrated in every bin: 0.
    assert expected_calibration_error([0.75] * 4, [1, 1, 1, 0]) == pytest.approx(0.0)


def forecasts_of(probs: np.ndarray, y: np.ndarray, per_episode: int = 1) -> list[Forecast]:
    return [
        Forecast(f"e{i // per_episode}", "m", "a", "g", "k", int(o), tuple(p))
        for i, (p, o) in enumerate(zip(probs, y, strict=True))
    ]


def test_group_summary_uses_the_same_formulas() -> None:
    probs, y = random_forecasts(120, 3, seed=5)
    (found,) = calibration(forecasts_of(probs, y, per_episode=3), n_boot=200)
    assert (found.forecasts, found.episodes) == (120, 40)
    assert found.brier is not None and found.log_loss is not None and found.ece is not None
    assert found.brier.value == pytest.approx(brier_score_loss(y, probs, labels=[0, 1, 2]))
    assert found.log_loss.value == pytest.approx(log_loss(y, probs, labels=[0, 1, 2]))
    assert found.accuracy.value == pytest.approx(np.mean(probs.argmax(axis=1) == y))
    for estimate in (found.brier, found.log_loss, found.accuracy):
        assert estimate.low is not None and estimate.high is not None
        assert estimate.low <= estimate.value <= estimate.high


def test_intervals_are_reproducible_by_seed() -> None:
    probs, y = random_forecasts(60, 3, seed=6)
    forecasts = forecasts_of(probs, y, per_episode=2)
    first = calibration(forecasts, n_boot=300, seed=7)
    assert calibration(forecasts, n_boot=300, seed=7) == first
    assert calibration(forecasts, n_boot=300, seed=8) != first


def test_one_forecast_per_episode_gives_scipys_percentile_bootstrap() -> None:
    rng = np.random.default_rng(9)
    hits = rng.random(200) < 0.6
    forecasts = [Forecast.point(f"e{i}", "m", "a", "g", "k", bool(h)) for i, h in enumerate(hits)]
    (found,) = calibration(forecasts, n_boot=5000, seed=1)
    ref = stats.bootstrap(
        (hits.astype(float),), np.mean, n_resamples=5000, method="percentile", random_state=2
    )
    assert found.accuracy.value == pytest.approx(hits.mean())
    assert found.accuracy.low == pytest.approx(ref.confidence_interval.low, abs=0.01)
    assert found.accuracy.high == pytest.approx(ref.confidence_interval.high, abs=0.01)


def test_the_bootstrap_resamples_episodes_not_forecasts() -> None:
    """Copies of an episode's forecasts add no information: the interval stays that of one copy
    (a bootstrap of single forecasts would shrink it by √copies)."""
    probs, y = random_forecasts(40, 3, seed=10)
    once = calibration(forecasts_of(probs, y), n_boot=500, seed=3)[0]
    copies = forecasts_of(np.repeat(probs, 4, axis=0), np.repeat(y, 4), per_episode=4)
    four = calibration(copies, n_boot=500, seed=3)[0]
    assert (four.forecasts, four.episodes) == (160, 40)
    for mine, single in ((four.brier, once.brier), (four.log_loss, once.log_loss),
                         (four.accuracy, once.accuracy), (four.ece, once.ece)):  # fmt: skip
        assert mine is not None and single is not None
        assert (mine.value, mine.low, mine.high) == pytest.approx(
            (single.value, single.low, single.high), rel=1e-12
        )
    assert once.brier is not None and once.brier.low is not None and once.brier.high is not None
    assert once.brier.high - once.brier.low > 0.05


def test_point_guesses_get_accuracy_only_and_one_episode_no_interval() -> None:
    forecasts = [Forecast.point("e1", "m", "a", "g", "guess", c) for c in (True, True, False)]
    (found,) = calibration(forecasts, n_boot=100)
    assert not found.probabilistic and found.brier is None and found.bins == ()
    assert found.accuracy.value == pytest.approx(2 / 3)
    assert (found.accuracy.low, found.accuracy.high) == (None, None)


def test_groups_are_model_agent_game_kind() -> None:
    f = [
        Forecast.binary("e1", "m1", "a", "g", "k", 0.8, True),
        Forecast.binary("e2", "m2", "a", "g", "k", 0.8, False),
        Forecast.binary("e3", "m1", "a", "g2", "k", 0.3, False),
    ]
    found = calibration(f, n_boot=50)
    assert [(c.model, c.game) for c in found] == [("m1", "g"), ("m1", "g2"), ("m2", "g")]
    assert [c.brier.value for c in found if c.brier] == pytest.approx([0.04, 0.09, 0.64])


def test_bad_forecasts_are_one_line_errors() -> None:
    with pytest.raises(StratagemError, match="sum to"):
        Forecast("e", "m", "a", "g", "k", 0, (0.5, 0.6))
    with pytest.raises(StratagemError, match=">= 0"):
        Forecast("e", "m", "a", "g", "k", 0, (1.5, -0.5))
    with pytest.raises(StratagemError, match="outcome 2"):
        Forecast("e", "m", "a", "g", "k", 2, (0.5, 0.5))
    with pytest.raises(StratagemError, match="right"):
        Forecast("e", "m", "a", "g", "k", 3)
    mixed = [Forecast.point("e", "m", "a", "g", "k", True), Forecast("e", "m", "a", "g", "k", 0,
             (1.0, 0.0))]  # fmt: skip
    with pytest.raises(StratagemError, match="mixes"):
        calibration(mixed)
    with pytest.raises(StratagemError, match="bins"):
        calibration([], n_bins=0)
    with pytest.raises(StratagemError, match="n_boot"):
        calibration([], n_boot=0)
