"""The capability profile: per-episode advantages, per-game means with Student-t intervals
(checked against statsmodels' DescrStatsW), and the DerSimonian-Laird unevenness across a family
of games (checked against statsmodels' combine_effects, and by simulation: no between-game
variance is found where there is none)."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.meta_analysis import combine_effects
from statsmodels.stats.weightstats import DescrStatsW

from stratagem.analysis.capability_profile import (
    DEFAULT_FAMILY,
    Advantage,
    capability_profile,
    dersimonian_laird,
    episode_advantages,
)
from stratagem.errors import StratagemError


def test_episode_advantages_by_wins_and_by_score() -> None:
    # X holds seats 0 and 2, Y seat 1; scores 5, 3, 3: X's seats beat 3 once, tie once
    wins = episode_advantages(["X", "Y", "X"], [5, 3, 3], game="g", episode_id="e")
    assert [(a.entity, a.value) for a in wins] == [("X", 0.75 - 0.5), ("Y", 0.25 - 0.5)]
    score = episode_advantages(["X", "Y", "X"], [5, 3, 3], game="g", measure="score")
    assert [(a.entity, a.value) for a in score] == [("X", 1.0), ("Y", -1.0)]
    assert episode_advantages(["X", "X"], [1, 2], game="g") == []  # self-play: no opponent
    with pytest.raises(StratagemError, match="measure must be"):
        episode_advantages(["X", "Y"], [1, 2], game="g", measure="elo")  # type: ignore[arg-type]


def _simulated(tau: float, seed: int) -> list[Advantage]:
    """Entity M in 6 games: true advantage 0.1 + N(0, tau²) per game, 30 noisy episodes each."""
    rng = np.random.default_rng(seed)
    out = []
    for g in range(6):
        true = 0.1 + tau * rng.normal()
        for k in range(30):
            out.append(Advantage("M", f"g{g}", true + 0.3 * rng.normal(), f"g{g}-{k}"))
    return out


def test_per_game_means_and_intervals_match_statsmodels() -> None:
    obs = _simulated(0.2, seed=1)
    profile = capability_profile(obs, level=0.9)
    for g in range(6):
        a = profile.advantage("M", f"g{g}")
        assert a is not None and a.n == 30 and len(a.episodes) == 30
        d = DescrStatsW(np.array([o.value for o in obs if o.game == f"g{g}"]))
        low, high = d.tconfint_mean(alpha=0.1)
        assert a.mean == pytest.approx(d.mean)
        assert a.se == pytest.approx(d.std_mean)
        assert (a.ci_low, a.ci_high) == pytest.approx((low, high))


def test_dersimonian_laird_matches_statsmodels() -> None:
    rng = np.random.default_rng(2)
    for _ in range(5):
        k = int(rng.integers(2, 9))
        eff = rng.normal(size=k)
        var = rng.uniform(0.01, 0.5, size=k)
        mine = dersimonian_laird(eff, var)
        ref = combine_effects(eff, var, method_re="dl")
        assert mine.tau2 == pytest.approx(ref.tau2, abs=1e-12)
        assert mine.q == pytest.approx(ref.q)
        assert mine.i2 == pytest.approx(max(0.0, ref.i2), abs=1e-12)
        assert mine.mean_fe == pytest.approx(ref.mean_effect_fe)
        assert mine.mean_re == pytest.approx(ref.mean_effect_re)
        assert mine.se_re == pytest.approx(ref.sd_eff_w_re)


def test_unevenness_separates_real_spread_from_noise() -> None:
    """Without between-game variance the DL estimate is 0 or small, while the plain standard
    deviation of the game means still shows the noise (0.3 / √30 ≈ 0.055); with τ = 0.2 the
    estimate finds it."""
    flat = capability_profile(_simulated(0.0, seed=3)).unevenness[0]
    assert flat.family == DEFAULT_FAMILY and flat.heterogeneity is not None
    assert flat.spread is not None and flat.spread > 0.02
    assert flat.heterogeneity.tau < flat.spread
    taus = [
        h.tau
        for seed in range(20)
        if (h := capability_profile(_simulated(0.0, seed)).unevenness[0].heterogeneity)
    ]
    assert np.mean(taus) < 0.03
    uneven = capability_profile(_simulated(0.2, seed=3)).unevenness[0].heterogeneity
    assert uneven is not None and 0.08 < uneven.tau < 0.4 and uneven.i2 > 0.5


def test_families_and_games_without_a_standard_error() -> None:
    obs = [*_simulated(0.1, seed=4), Advantage("M", "lonely", 0.3, "x")]
    obs += [Advantage("N", "g0", 0.1), Advantage("N", "g1", -0.1)]
    families = {"pd": ["g0", "g1", "g2", "lonely"], "rest": ["g3", "g4", "g5"]}
    profile = capability_profile(obs, families)
    m_pd, m_rest, n_pd, n_rest = profile.unevenness
    assert (m_pd.entity, m_pd.family, m_pd.games, m_pd.left_out) == (
        "M", "pd", ("g0", "g1", "g2"), ("lonely",))  # fmt: skip
    assert m_pd.heterogeneity is not None and m_pd.heterogeneity.k == 3
    assert m_rest.games == ("g3", "g4", "g5")
    lonely = profile.advantage("M", "lonely")
    assert lonely is not None and lonely.se is None and lonely.ci_low is None
    # N played two games once each: no standard errors, a plain spread, no τ²
    assert n_pd.heterogeneity is None and n_pd.left_out == ("g0", "g1")
    assert n_pd.spread == pytest.approx(np.std([0.1, -0.1], ddof=1))
    assert n_rest.games == () and n_rest.spread is None
    with pytest.raises(StratagemError, match="family 'x' names games with no data: zz"):
        capability_profile(obs, {"x": ["zz"]})
    with pytest.raises(StratagemError, match="at least 2 estimates"):
        dersimonian_laird([0.1], [0.01])
    with pytest.raises(StratagemError, match="positive variance"):
        dersimonian_laird([0.1, 0.2], [0.01, 0.0])
