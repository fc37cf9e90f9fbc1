"""seed-003's per-game metrics (§5) on hand-made games with known answers, and the bot ceilings."""

from __future__ import annotations

import itertools
import random
import statistics
from collections.abc import Sequence

import pytest

from stratagem.errors import StratagemError
from stratagem.experiments.store import ResultStore
from stratagem.games.catalog import get_stage
from stratagem.strategies.counterfactual_bots import BestResponseToLast, BestResponseToMode
from stratagem.studies.counterfactual.ceilings import bot_ceiling, exploitability
from stratagem.studies.counterfactual.game import CounterfactualGame
from stratagem.studies.counterfactual.metrics import (
    OUR_METRICS,
    PAPER_METRICS,
    action_distribution,
    comprehension_flags,
    comprehension_round,
    cooperation_rate,
    efficiency,
    equilibrium_distance,
    game_metrics,
    mean_sd,
    normalized_payoff,
    total_points,
    validity,
    win_rate,
)

PD_FAMILY = ("pd", "pd-alt", "sh", "sh-alt")
RPS_FAMILY = ("eq1", "eq1-alt", "ba3", "ba3-alt")


def make(
    game: str,
    own: Sequence[str | None],
    other: Sequence[str | None],
    tokens: Sequence[int | None] | None = None,
) -> CounterfactualGame:
    """A game of the catalog stage `game` from both players' labels (None = invalid move)."""
    stage = get_stage(game)
    table = tuple(tuple((float(c[0]), float(c[1])) for c in row) for row in stage.table)
    moves = tuple(
        (
            None if a is None else stage.labels[0].index(a),
            None if b is None else stage.labels[1].index(b),
        )
        for a, b in zip(own, other, strict=True)
    )
    valid = tuple(a is not None and b is not None for a, b in moves)
    payoffs = tuple(
        table[a][b] if a is not None and b is not None else (0.0, 0.0) for a, b in moves
    )
    return CounterfactualGame(
        labels=stage.labels[0],
        table=table,
        moves=moves,
        payoffs=payoffs,
        valid=valid,
        tokens=tuple(tokens) if tokens is not None else (None,) * len(moves),
    )


def repeat(label: str, n: int) -> list[str | None]:
    return [label] * n


def words(text: str, game: str) -> list[str | None]:
    """'CDx' -> labels by initial letter of the game's actions; 'x' is an invalid move."""
    labels = get_stage(game).labels[0]
    by_initial = {label[0].upper(): label for label in labels}
    return [None if c == "x" else by_initial[c] for c in text.replace(" ", "")]


def opening_game(game: str, rounds: int, opening: int) -> CounterfactualGame:
    """A game in which the bot opened with `opening` (player 0 plays action 0 throughout)."""
    labels = get_stage(game).labels[1]
    return make(game, repeat(labels[0], rounds), [labels[opening]] + [labels[0]] * (rounds - 1))


# -- total points, validity, cooperation (§5.1, §5.3, §5.5) --------------------------------------


def test_total_points_validity_and_cooperation_with_an_invalid_round() -> None:
    # C vs D (1), D vs C (6), invalid (0), D vs D (2).
    g = make("pd", words("C D x D", "pd"), words("D C C D", "pd"))
    assert g.rounds == 4
    assert total_points(g) == 9.0
    assert validity(g) == 75.0
    # seed-003 §5.3: the denominator counts the invalid round.
    assert cooperation_rate(g) == 0.25
    assert g.valid == (True, True, False, True)


def test_zero_rounds() -> None:
    g = make("pd", [], [])
    assert total_points(g) == 0.0
    assert validity(g) == 100.0
    assert cooperation_rate(g) is None
    assert win_rate(g) is None
    assert normalized_payoff(g) is None
    assert efficiency(g) is None
    assert equilibrium_distance(g) is None
    assert action_distribution(g) is None
    assert comprehension_round(comprehension_flags(g)) == 1


def test_cooperation_rate_is_none_for_rps() -> None:
    g = make("eq1", ["rock", "paper"], ["rock", "rock"])
    assert cooperation_rate(g) is None
    assert action_distribution(g) == (0.5, 0.5, 0.0)
    assert action_distribution(g, player=1) == (1.0, 0.0, 0.0)


def test_action_distribution_skips_missing_moves() -> None:
    g = make("ba3", ["rock", None, "scissors", "scissors"], ["paper", "rock", None, "rock"])
    assert action_distribution(g) == pytest.approx((1 / 3, 0.0, 2 / 3))
    assert action_distribution(g, player=1) == pytest.approx((2 / 3, 1 / 3, 0.0))
    with pytest.raises(StratagemError):
        action_distribution(g, player=2)


# -- comprehension round m (§5.2) ----------------------------------------------------------------


def test_m_all_flags_pass() -> None:
    assert comprehension_round([True] * 16) == 1
    assert comprehension_round([True] * 24) == 1


@pytest.mark.parametrize("n", [16, 24])
def test_m_fails_when_the_last_round_fails_and_no_suffix_reaches_tp(n: int) -> None:
    assert comprehension_round([False] * n) == n + 1
    # Alternating, ending in a failure: every suffix is at most about half.
    assert comprehension_round([t % 2 == 0 for t in range(n)]) == n + 1


def test_m_a_single_passing_last_round_qualifies() -> None:
    assert comprehension_round([False] * 15 + [True]) == 16


def test_m_is_existential_a_later_suffix_may_fall_below_tp() -> None:
    # From round 1: 10 hits of 11 = 0.909 >= 0.9, so m = 1 although the suffixes starting at
    # round 3 (8 of 9) and at round 11 (0 of 1) fall below tp.
    flags = [True] * 10 + [False]
    assert comprehension_round(flags) == 1
    assert comprehension_round(flags[1:]) == 1  # 9 of 10 exactly: still >= tp
    assert comprehension_round(flags[2:]) == 10  # 8 of 9 = 0.889: no start qualifies
    # The first qualifying start is taken even if a later one would need a later round.
    flags = [False, True, True, True, True, True, True, True, True, True, True, False]
    assert comprehension_round(flags) == 2  # 10 of 11 from round 2
    assert sum(flags[1:]) / len(flags[1:]) >= 0.9 > sum(flags[3:]) / len(flags[3:])


def test_m_exactly_tp_at_the_boundary_qualifies() -> None:
    # 9 of 10 with tp 0.9: 9 >= 0.9 * 10 despite 0.9 * 10 being 9.000000000000002 in floats.
    assert comprehension_round([False] + [True] * 9, tp=0.9) == 1
    assert comprehension_round([True] * 7 + [False] + [True] * 2, tp=0.9) == 1
    assert comprehension_round([True, False, False, True, True], tp=0.6) == 1
    assert comprehension_round([True, False, False, True, True], tp=0.61) == 3  # 2 of 3
    assert comprehension_round([True, False, True], tp=1.0) == 3


def test_m_with_no_rounds_and_bad_tp() -> None:
    assert comprehension_round([]) == 1
    for tp in (0.0, -0.1, 1.01, float("nan")):
        with pytest.raises(StratagemError):
            comprehension_round([True], tp=tp)


def test_mirror_flags_under_pd_and_stag_hunt_payoffs() -> None:
    own, other = ["C", "C", "D", "D"], ["C", "D", "C", "D"]
    pd = make("pd", words("".join(own), "pd"), words("".join(other), "pd"))
    # PD payoffs: only (C vs D) fails, as the paper's "payoff >= opponent's" (§5.2).
    assert comprehension_flags(pd) == [True, False, True, True]
    assert comprehension_flags(pd, "mirror") == comprehension_flags(pd, "payoff")
    # SH payoffs (pd-alt and sh): under the mirror rule both (S vs H) and (H vs S) fail ...
    sh = make("sh", words("S S H H", "sh"), words("S H S H", "sh"))
    assert comprehension_flags(sh) == [True, False, False, True]
    # ... but the paper's wording accepts (hare vs stag), since 4 > 1 (§9 ambiguity 11).
    assert comprehension_flags(sh, "payoff") == [True, False, True, True]
    alt = make("pd-alt", words("C C D D", "pd-alt"), words("C D C D", "pd-alt"))
    assert comprehension_flags(alt) == [True, False, False, True]


def test_mirror_flags_with_invalid_moves() -> None:
    # Invalid own move is scored as the second action (defection): flag 1 under PD payoffs
    # against either opponent move; an invalid opponent move gives flag 0.
    g = make(
        "pd", [None, None, "cooperation", "defection"], ["cooperation", "defection", None, None]
    )
    assert comprehension_flags(g, "mirror") == [True, True, False, False]
    # Under SH payoffs, hare against stag fails the mirror test.
    g = make("sh", [None, None], ["stag", "hare"])
    assert comprehension_flags(g, "mirror") == [False, True]


def test_rps_nonnegative_flags_count_an_invalid_round_as_a_tie() -> None:
    g = make(
        "ba3",
        ["rock", "rock", "paper", None, "scissors"],
        ["scissors", "paper", "rock", "rock", "rock"],
    )
    # +1, -3, +3, invalid (0), -1.
    assert [u0 for u0, _ in g.payoffs] == [1.0, -3.0, 3.0, 0.0, -1.0]
    assert comprehension_flags(g) == [True, False, True, True, False]
    assert comprehension_flags(g, "nonnegative") == comprehension_flags(g)
    assert comprehension_round(comprehension_flags(g)) == 6  # N + 1: the last round fails
    with pytest.raises(StratagemError):
        comprehension_flags(g, "bogus")  # type: ignore[arg-type]


def test_auto_flag_rule_by_number_of_actions() -> None:
    pd = make("pd", words("CD", "pd"), words("DC", "pd"))
    assert comprehension_flags(pd, "auto") == comprehension_flags(pd, "mirror")
    rps = make("eq1", ["rock"], ["paper"])
    assert comprehension_flags(rps, "auto") == comprehension_flags(rps, "nonnegative") == [False]


# -- efficiency (§5.4) ----------------------------------------------------------------------------


def test_efficiency_max_round_and_total() -> None:
    g = make("ba3", ["paper", "paper", "rock"], ["rock", "rock", "scissors"], [495, 668, 800])
    assert total_points(g) == 7.0
    assert efficiency(g) == pytest.approx(7 / 800 * 1000)
    assert efficiency(g, "max-round") == efficiency(g)
    assert efficiency(g, "total") == pytest.approx(7 / (495 + 668 + 800) * 1000)
    with pytest.raises(StratagemError):
        efficiency(g, "mean")  # type: ignore[arg-type]


def test_efficiency_unknown_or_zero_tokens() -> None:
    assert efficiency(make("pd", ["defection"] * 2, ["cooperation"] * 2, [10, None])) is None
    assert efficiency(make("pd", ["defection"] * 2, ["cooperation"] * 2, [0, 0])) is None
    assert efficiency(make("pd", ["defection"] * 2, ["cooperation"] * 2, [0, 0]), "total") is None


def test_efficiency_can_be_negative_in_rps() -> None:
    g = make("eq1", ["rock", "rock"], ["paper", "paper"], [100, 200])
    assert efficiency(g) == pytest.approx(-10.0)
    assert efficiency(g, "total") == pytest.approx(-2 / 300 * 1000)


# -- our metrics (§5.7) ---------------------------------------------------------------------------


def test_win_rate() -> None:
    g = make("pd", words("D D C x", "pd"), words("C D D C", "pd"))
    assert win_rate(g) == 0.25
    rps = make("eq1", ["paper", "rock", "rock"], ["rock", "rock", "paper"])
    assert win_rate(rps) == pytest.approx(1 / 3)


@pytest.mark.parametrize("game", PD_FAMILY)
def test_normalized_payoff_bounds_pd_family(game: str) -> None:
    labels = get_stage(game).labels[0]
    a, b = labels
    # The bounds are 16 and 96 in every PD variant (§1.2).
    worst = make(game, repeat(a, 16), repeat(b, 16))
    best_pd = make(game, repeat(b, 16), repeat(a, 16))
    best_sh = make(game, repeat(a, 16), repeat(a, 16))
    assert total_points(worst) == 16.0
    assert normalized_payoff(worst) == 0.0
    assert max(total_points(best_pd), total_points(best_sh)) == 96.0
    assert max(normalized_payoff(best_pd) or 0.0, normalized_payoff(best_sh) or 0.0) == 1.0
    mid = make(game, repeat(b, 16), repeat(b, 16))  # mutual second action: 32
    assert normalized_payoff(mid) == pytest.approx((32 - 16) / (96 - 16))


def test_normalized_payoff_bounds_rps() -> None:
    # ba3: -72..72 over 24 rounds (§1.3); paper beats rock pays 3.
    best = make("ba3", repeat("paper", 24), repeat("rock", 24))
    worst = make("ba3", repeat("rock", 24), repeat("paper", 24))
    tie = make("ba3", repeat("rock", 24), repeat("rock", 24))
    assert total_points(best) == 72.0 and normalized_payoff(best) == 1.0
    assert total_points(worst) == -72.0 and normalized_payoff(worst) == 0.0
    assert normalized_payoff(tie) == 0.5
    # eq1: -24..24; 12 wins and 12 losses is the midpoint.
    g = make("eq1", ["paper", "rock"] * 12, ["rock", "paper"] * 12)
    assert normalized_payoff(g) == 0.5
    win = make("eq1", repeat("paper", 24), repeat("rock", 24))
    assert total_points(win) == 24.0 and normalized_payoff(win) == 1.0


def test_equilibrium_distance_ba3_uniform() -> None:
    g = make("ba3", ["rock", "paper", "scissors"] * 8, ["rock"] * 24)
    expected = 0.5 * (abs(1 / 3 - 0.2) * 2 + abs(1 / 3 - 0.6))
    assert equilibrium_distance(g) == pytest.approx(expected)
    assert equilibrium_distance(g) == pytest.approx(0.2667, abs=1e-4)
    # Playing the NE frequencies exactly is at distance 0; in ba3-alt the NE is (paper, rock,
    # scissors) = (0.2, 0.2, 0.6) as well.
    ne = ["rock", "paper", "scissors", "scissors", "scissors"] * 4
    assert equilibrium_distance(make("ba3", ne, ["rock"] * 20)) == pytest.approx(0.0, abs=1e-9)
    assert equilibrium_distance(make("ba3-alt", ne, ["rock"] * 20)) == pytest.approx(0.0, abs=1e-9)
    # eq1: uniform is the NE.
    assert equilibrium_distance(make("eq1", ["rock", "paper", "scissors"], ["rock"] * 3)) == (
        pytest.approx(0.0, abs=1e-9)
    )


def test_equilibrium_distance_takes_the_nearest_of_three_stag_hunt_equilibria() -> None:
    # Stag Hunt has three symmetric NE: stag, hare, and stag w.p. 1/3.
    assert equilibrium_distance(make("sh", repeat("stag", 6), repeat("hare", 6))) == (
        pytest.approx(0.0, abs=1e-9)
    )
    assert equilibrium_distance(make("sh", repeat("hare", 6), repeat("hare", 6))) == (
        pytest.approx(0.0, abs=1e-9)
    )
    half = make("sh", ["stag", "hare"] * 3, repeat("hare", 6))
    assert equilibrium_distance(half) == pytest.approx(0.5 - 1 / 3)
    # PD: the unique NE is defection.
    assert equilibrium_distance(
        make("pd", ["cooperation"] * 3 + ["defection"], ["defection"] * 4)
    ) == (pytest.approx(0.75))
    # No valid own move: undefined.
    assert equilibrium_distance(make("pd", [None, None], ["defection"] * 2)) is None


# -- bot ceilings and exploitability (§5.7 with §1.2-1.3) -----------------------------------------


@pytest.mark.parametrize(
    ("game", "srep", "pp"),
    [
        ("pd", 32.0, 64.0),
        ("sh-alt", 32.0, 64.0),
        ("pd-alt", 16 * 8 / 3, 64.0),
        ("sh", 16 * 8 / 3, 64.0),
    ],
)
def test_srep_and_pattern_ceilings_pd_family(game: str, srep: float, pp: float) -> None:
    g = opening_game(game, 16, 0)
    for name in ("srep", "SingleRoundEquilibrium", "single-round-equilibrium-player"):
        assert bot_ceiling(name, g) == pytest.approx(srep)
    for name in ("pp", "Pattern", "pattern-player"):
        assert bot_ceiling(name, g) == pytest.approx(pp)


@pytest.mark.parametrize(
    ("game", "pp"), [("eq1", 24.0), ("eq1-alt", 24.0), ("ba3", 40.0), ("ba3-alt", 40.0)]
)
def test_srep_and_pattern_ceilings_rps(game: str, pp: float) -> None:
    g = opening_game(game, 24, 0)
    assert bot_ceiling("srep", g) == pytest.approx(0.0, abs=1e-9)
    assert bot_ceiling("pp", g) == pytest.approx(pp)
    # An explicit pattern is resolved on the stage game as well.
    assert bot_ceiling("Pattern(scissors, rock, paper)", g) == pytest.approx(pp)


def test_pattern_ceiling_follows_the_pattern_length() -> None:
    # Three rounds of D, C, D under PD payoffs: 2 + 6 + 2.
    assert bot_ceiling("pp", opening_game("pd", 3, 0)) == 10.0
    assert bot_ceiling("Pattern(0)", opening_game("pd", 4, 0)) == 24.0


@pytest.mark.parametrize("bot", ["tft-br", "BestResponseToLast", "mf", "BestResponseToMode", "ap"])
def test_best_responder_ceilings_pd_payoffs(bot: str) -> None:
    for game in ("pd", "sh-alt"):
        # Opening cooperation: defect once for 6, then 2 a round (the bot always defects).
        assert bot_ceiling(bot, opening_game(game, 16, 0)) == 36.0
        assert bot_ceiling(bot, opening_game(game, 16, 1)) == 32.0


@pytest.mark.parametrize("bot", ["tft-br", "mf"])
def test_best_responder_ceilings_stag_hunt_payoffs(bot: str) -> None:
    for game in ("pd-alt", "sh"):
        # Opening stag: mutual stag every round.
        assert bot_ceiling(bot, opening_game(game, 16, 0)) == 96.0
        # Opening hare: take the sucker's 1 in round 1 to teach it stag, then 15 mutual stags
        # (playing hare first, 2, then stag, 1, then 14 x 6 = 87 is worse).
        assert bot_ceiling(bot, opening_game(game, 16, 1)) == 1 + 15 * 6


def test_best_responder_ceilings_rps() -> None:
    for game in ("eq1", "eq1-alt"):
        for opening in range(3):
            assert bot_ceiling("tft-br", opening_game(game, 24, opening)) == 24.0
            assert bot_ceiling("ap", opening_game(game, 24, opening)) == 24.0
    # ba3 vs the last-move responder opening rock: a 3, 1, 1 cycle (40) improved at the end by
    # 3, 0, 3, which the DP finds.
    assert bot_ceiling("tft-br", opening_game("ba3", 24, 0)) == 41.0
    # ba3-alt has ba3's payoffs by index, so the same opening index (paper there) gives 41.
    assert bot_ceiling("tft-br", opening_game("ba3-alt", 24, 0)) == 41.0


def _simulate(
    bot: BestResponseToLast | BestResponseToMode,
    opening: int,
    plan: Sequence[int],
    u0: list[list[float]],
) -> float:
    """Play `plan` against the real bot class, forcing its random round-1 move to `opening`."""
    rng = random.Random(0)
    own: list[int] = []  # the bot's moves
    other: list[int] = []  # player 0's moves
    total = 0.0
    for t, a in enumerate(plan):
        b = opening if t == 0 else bot.act(own, other, rng)
        total += u0[a][b]
        own.append(b)
        other.append(a)
    return total


@pytest.mark.parametrize("game", PD_FAMILY + RPS_FAMILY)
@pytest.mark.parametrize("bot_class", [BestResponseToLast, BestResponseToMode])
def test_dp_ceiling_equals_brute_force_over_every_action_sequence(
    game: str, bot_class: type[BestResponseToLast | BestResponseToMode]
) -> None:
    stage = get_stage(game)
    k = stage.sizes[0]
    rounds = 8 if k == 2 else 6
    u0 = [[cell[0] for cell in row] for row in stage.table]
    for opening in range(k):
        best = -float("inf")
        for plan in itertools.product(range(k), repeat=rounds):
            bot = bot_class()
            bot.reset(stage, 1)
            best = max(best, _simulate(bot, opening, plan, u0))
        g = opening_game(game, rounds, opening)
        assert bot_ceiling(bot_class.name, g) == pytest.approx(best), (game, opening)


def test_best_responder_ceiling_needs_a_valid_opening() -> None:
    assert bot_ceiling("tft-br", make("pd", ["cooperation"], [None])) is None
    assert bot_ceiling("mf", make("pd", [], [])) is None
    # The other bots need no opening.
    assert bot_ceiling("pp", make("pd", [], [])) == 0.0


def test_ceiling_is_none_for_other_opponents() -> None:
    g = opening_game("pd", 16, 0)
    for name in ("TitForTat", "zs", "gpt-4o", "no such bot", "Random(0.3)", ""):
        assert bot_ceiling(name, g) is None
        assert exploitability(name, g) is None
    # A pattern label the game lacks cannot be resolved.
    assert bot_ceiling("Pattern(scissors)", g) is None


def test_exploitability_is_tp_minus_the_ceiling() -> None:
    # All-D against the pattern player D, C, D, C: 8 x 2 + 8 x 6 = 64, the ceiling.
    pattern = ["defection", "cooperation"] * 8
    g = make("pd", repeat("defection", 16), pattern)
    assert exploitability("pp", g) == 0.0
    g = make("pd", repeat("cooperation", 16), pattern)  # 8 x 1 + 8 x 4 = 40
    assert exploitability("pp", g) == 40.0 - 64.0
    # Mutual cooperation with the copying bot under SH payoffs after it opened hare.
    g = make("sh", repeat("stag", 16), ["hare", *repeat("stag", 15)])
    assert exploitability("tft-br", g) == 0.0
    # Against SREP the ceiling is an expectation: a lucky game can exceed it.
    g = make("sh", repeat("hare", 16), repeat("stag", 16))
    assert exploitability("srep", g) == pytest.approx(64.0 - 16 * 8 / 3)


# -- aggregation and the metric dictionary ------------------------------------------------------


def test_mean_sd_uses_the_sample_sd() -> None:
    values = [96.0, 96.0, 37.0, 37.0, 37.0]
    mean, sd, n = mean_sd(values)
    assert mean == pytest.approx(statistics.mean(values))
    assert sd == pytest.approx(statistics.stdev(values))
    assert n == 5
    # seed-003 §7.1: Table 1 C4S sc-zs vs zs = 34.5 ± 4.9 from the games scoring 38 and 31.
    mean, sd, n = mean_sd([38.0, 31.0])
    assert (mean, n) == (34.5, 2)
    assert sd == pytest.approx(4.9497, abs=1e-4)
    assert mean_sd([3.0]) == (3.0, None, 1)
    with pytest.raises(StratagemError):
        mean_sd([])


def test_game_metrics_keys_and_values() -> None:
    g = make("pd", repeat("defection", 16), ["defection", "cooperation"] * 8, [100] * 15 + [200])
    metrics = game_metrics(g, "pp")
    assert list(metrics) == [
        "points",
        "m",
        "cooperation",
        "efficiency",
        "efficiency_total",
        "validity",
        "win_rate",
        "normalized_payoff",
        "equilibrium_distance",
        "exploitability",
    ]
    assert set(metrics) == set(PAPER_METRICS) | set(OUR_METRICS)
    assert metrics == {
        "points": 64.0,
        "m": 1.0,
        "cooperation": 0.0,
        "efficiency": pytest.approx(64 / 200 * 1000),
        "efficiency_total": pytest.approx(64 / 1700 * 1000),
        "validity": 100.0,
        "win_rate": 0.5,
        "normalized_payoff": pytest.approx(48 / 80),
        "equilibrium_distance": pytest.approx(0.0, abs=1e-9),
        "exploitability": 0.0,
    }
    assert game_metrics(g)["exploitability"] is None
    assert isinstance(metrics["m"], float)


def test_game_metrics_flag_and_tp_options() -> None:
    # SH: hare against stag in the last two rounds; the mirror rule fails them, "payoff" not.
    g = make("sh", [*repeat("stag", 8), "hare", "hare"], repeat("stag", 10))
    assert game_metrics(g)["m"] == 11.0
    assert game_metrics(g, flag="payoff")["m"] == 1.0
    assert game_metrics(g, tp=0.8)["m"] == 1.0


# -- from stored records ------------------------------------------------------------------------


def _store_with_episode(labels: bool) -> ResultStore:
    store = ResultStore(":memory:")
    store.create_experiment("exp", "seed-003 test")
    stage = get_stage("pd")
    store.add_episode(
        "ep1",
        "exp",
        "pd",
        ["claude", "srep"],
        labels=stage.labels if labels else None,
        game_payoffs=stage.payoffs.tolist() if labels else None,
    )
    return store


@pytest.mark.parametrize("stored_game", [True, False])
def test_from_records_with_an_invalid_round(stored_game: bool) -> None:
    store = _store_with_episode(stored_game)
    store.add_round("ep1", 1, ["cooperation", "defection"], [1, 6], tokens=[495, 3])
    store.add_round("ep1", 2, [None, "defection"], None, valid=False, tokens=[668, 3])
    store.add_round("ep1", 3, ["defection", "defection"], None, tokens=[800, 3])
    store.finish_episode("ep1", [3, 8])
    (episode,) = store.episodes("exp")
    g = CounterfactualGame.from_records(episode, store.rounds("ep1"))
    assert g.labels == ("cooperation", "defection")
    assert g.table[1][0] == (6.0, 1.0)
    assert g.moves == ((0, 1), (None, 1), (1, 1))
    assert g.payoffs == ((1.0, 6.0), (0.0, 0.0), (2.0, 2.0))  # round 3 read off the table
    assert g.valid == (True, False, True)
    assert g.tokens == (495, 668, 800)
    assert total_points(g) == 3.0
    assert validity(g) == pytest.approx(200 / 3)
    assert cooperation_rate(g) == pytest.approx(1 / 3)
    assert efficiency(g) == pytest.approx(3 / 800 * 1000)
    assert comprehension_flags(g) == [False, True, True]


def test_from_records_without_tokens_and_out_of_order_rounds() -> None:
    store = _store_with_episode(True)
    store.add_round("ep1", 2, ["defection", "cooperation"])
    store.add_round("ep1", 1, ["cooperation", "cooperation"])
    (episode,) = store.episodes("exp")
    rounds = list(reversed(store.rounds("ep1")))
    g = CounterfactualGame.from_records(episode, rounds)
    assert g.moves == ((0, 0), (1, 0))
    assert g.payoffs == ((4.0, 4.0), (6.0, 1.0))
    assert g.tokens == (None, None)
    assert efficiency(g) is None


def test_from_records_rejects_an_unknown_label() -> None:
    store = _store_with_episode(False)  # no stored labels: the store accepts any word
    store.add_round("ep1", 1, ["cooperation", "defection"])
    store.add_round("ep1", 2, ["stag", "defection"])
    (episode,) = store.episodes("exp")
    with pytest.raises(StratagemError, match=r"episode 'ep1' round 2: 'stag' is not an action"):
        CounterfactualGame.from_records(episode, store.rounds("ep1"))


def test_from_records_rejects_a_non_two_player_game() -> None:
    store = ResultStore(":memory:")
    store.create_experiment("exp", "n-player")
    store.add_episode("ep3", "exp", "npd3", ["a", "b", "c"])
    store.add_round("ep3", 1, ["cooperate", "cooperate", "defect"])
    (episode,) = store.episodes("exp")
    with pytest.raises(StratagemError, match="episode 'ep3'"):
        CounterfactualGame.from_records(episode, store.rounds("ep3"))


def test_invalid_game_shapes_are_rejected() -> None:
    g = make("pd", ["cooperation"], ["defection"])
    with pytest.raises(StratagemError):
        CounterfactualGame(g.labels, g.table, g.moves, g.payoffs, g.valid, (None, None))
    with pytest.raises(StratagemError):
        CounterfactualGame(g.labels, g.table, ((0, None),), ((0.0, 0.0),), (True,), (None,))
    with pytest.raises(StratagemError):
        CounterfactualGame(g.labels, g.table, ((0, None),), ((1.0, 6.0),), (False,), (None,))
    with pytest.raises(StratagemError):
        CounterfactualGame(g.labels, g.table, ((2, 0),), ((1.0, 6.0),), (True,), (None,))
