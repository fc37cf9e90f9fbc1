"""The MAgIC metrics (seed-004 §5, §6, §9.3) on small synthetic games whose answers are worked
out by hand in each test."""

from __future__ import annotations

import pytest
from support.magic_records import cost_sharing, dilemma, public_good, social

from stratagem.errors import StratagemError
from stratagem.studies.magic.metrics import METRICS, metric_values
from stratagem.studies.magic.options import CODE_FIXED_N, MetricOptions
from stratagem.studies.magic.probes import belief_hits, role_answer_correct, row_argmax
from stratagem.studies.magic.records import MagicGame, Vote

# -- win rates: the §3.1 / §3.2 credit tables, eq. 1 ----------------------------------------


@pytest.mark.parametrize(
    ("flag", "spy_credit", "majority_credit"),
    [(0, 0, 2), (1, 1, 1), (2, 2, 0), (3, 1, 1)],  # seed-004 §3.1 table, code win_flag
)
def test_chameleon_credit_rows(flag: int, spy_credit: int, majority_credit: int) -> None:
    # one game: rate = credits / 2n with n = 1
    spy = metric_values([social("chameleon", as_spy=True, win_flag=flag)])
    maj = metric_values([social("chameleon", as_spy=False, win_flag=flag)])
    assert spy["w_chameleon"] == pytest.approx(spy_credit / 2)
    assert maj["w_non_chameleon"] == pytest.approx(majority_credit / 2)
    assert spy["w_non_chameleon"] is None and maj["w_chameleon"] is None


@pytest.mark.parametrize(
    ("flag", "spy_credit", "majority_credit"),
    [(0, 0, 3), (1, 3, 0), (2, 2, 1)],  # seed-004 §3.2 table
)
def test_undercover_credit_rows(flag: int, spy_credit: int, majority_credit: int) -> None:
    # one game: rate = credits / 3n with n = 1
    spy = metric_values([social("undercover", as_spy=True, win_flag=flag)])
    maj = metric_values([social("undercover", as_spy=False, win_flag=flag)])
    assert spy["w_undercover"] == pytest.approx(spy_credit / 3)
    assert maj["w_civilian"] == pytest.approx(majority_credit / 3)


def _seven_roles() -> list[MagicGame]:
    return [
        social("chameleon", as_spy=True, win_flag=2),  # chameleon credits 2
        social("chameleon", as_spy=True, win_flag=0, setting=1),  # 0
        social("chameleon", win_flag=0),  # non-chameleon credits 2
        social("chameleon", win_flag=3, setting=1),  # 1
        social("undercover", as_spy=True, win_flag=2),  # undercover credits 2
        social("undercover", win_flag=1),  # civilian credits 0
        cost_sharing(True, (40, 30, 30), (40, 30, 30)),
        cost_sharing(False, setting=1),
        dilemma("DDDDD", (10, 10, 0)),  # tie for the top: a win
        dilemma("CCCCC", (0, 10, 10), setting=1),  # lost
        public_good([(10, 20, 20)], (90, 120, 110), 2.0),  # lost
    ]


def test_win_rate_is_the_mean_of_the_seven_role_rates() -> None:
    got = metric_values(_seven_roles())
    # chameleon (2+0)/(2*2) = .5; non-chameleon (2+1)/(2*2) = .75; undercover 2/3; civilian 0/3;
    # cost 1/2; PD 1/2 (the tie counts); PG 0/1
    expected = {
        "w_chameleon": 0.5,
        "w_non_chameleon": 0.75,
        "w_undercover": 2 / 3,
        "w_civilian": 0.0,
        "w_cost": 0.5,
        "w_pd": 0.5,
        "w_pg": 0.0,
    }
    for name, value in expected.items():
        assert got[name] == pytest.approx(value), name
    assert got["win_rate"] == pytest.approx(sum(expected.values()) / 7)  # 2.91667 / 7


def test_fixed_n_divides_social_credits_by_the_codes_n() -> None:
    got = metric_values(_seven_roles(), MetricOptions(fixed_n=CODE_FIXED_N))
    assert got["w_chameleon"] == pytest.approx(2 / (2 * 20))  # credits 2 over 2n, n = 20
    assert got["w_non_chameleon"] == pytest.approx(3 / 40)
    assert got["w_undercover"] == pytest.approx(2 / 60)
    assert got["w_cost"] == pytest.approx(0.5)  # game-theory rates are per game played
    assert metric_values([social(as_spy=True)], MetricOptions(fixed_n=20))["w_civilian"] is None


def test_win_rate_is_undefined_until_all_seven_roles_are_played() -> None:
    assert metric_values(_seven_roles()[:-1])["win_rate"] is None


# -- Judgment (§6.2) ------------------------------------------------------------------------


def test_judgment_pools_majority_votes_and_counts_invalid_ones_as_wrong() -> None:
    # spy = seat 2; challenger seats 0 and 1
    games = [
        social(votes=[Vote(0, 2), Vote(1, 0), Vote(2, 0)]),  # 1 of 2 right
        social(votes=[Vote(0, None), Vote(1, 2), Vote(2, 1)], setting=1),  # invalid + right
        social("undercover", votes=[Vote(0, 2), Vote(1, 2)]),  # 2 of 2
        social(as_spy=True, votes=[Vote(2, 0)], setting=2),  # the spy's vote is not scored
    ]
    # (1 + 1 + 2) / (2 + 2 + 2) = 4/6
    assert metric_values(games)["judgment"] == pytest.approx(4 / 6)


def test_judgment_scores_the_pgm_belief_vote_in_chameleon_only() -> None:
    games = [
        # the text says seat 1 but the belief argmax says the spy (seat 2)
        social(votes=[Vote(0, 1, belief_target=2), Vote(1, 2)]),
        social("undercover", votes=[Vote(0, 1, belief_target=2), Vote(1, 2)]),
    ]
    # belief (default): chameleon 2/2, undercover keeps text votes 1/2 -> 3/4
    assert metric_values(games)["judgment"] == pytest.approx(3 / 4)
    # text: 1/2 + 1/2 -> 2/4
    text = MetricOptions(chameleon_vote="text")
    assert metric_values(games, text)["judgment"] == pytest.approx(2 / 4)


# -- Reasoning (§6.3) -----------------------------------------------------------------------

# The chameleon is seat 2; the challenger plays seats 0 and 1.
F0 = ((0, -1, 1), (1, 0, 0), (0, 0, 0))  # own row -> 2 (the spy); row 1 -> 0; row 2 all zero
F1 = ((0, 0, 1), (1, 0, 0), (0, 0, 0))  # own row -> 0 (wrong); row 0 -> 2; row 2 all zero
F2 = ((0, 1, 0), (1, 0, 0), (0, 0, 0))  # the chameleon's own row stays 0 (no first-person block)


def test_reasoning_gold_and_inter_with_the_all_zero_row_quirk() -> None:
    # seat 0: gold argmax F0[0] = 2 = spy: hit. inter: F0[1] -> 0 = argmax F1[1] = 0, and
    #   F0[2] (zeros) -> 0 = argmax F2[2] (zeros) -> 0: hit.
    # seat 1: gold argmax F1[1] = 0: miss. inter: F1[0] -> 2 = argmax F0[0] = 2; F1[2] -> 0 =
    #   argmax F2[2] -> 0: hit.
    # (1 + 2) / (2 + 2) = 0.75
    game = social(beliefs=[(F0, F1, F2)])
    assert metric_values([game])["reasoning"] == pytest.approx(0.75)
    # ties wrong: seat 0 gold hit, inter miss (F0[2] is tied); seat 1 gold miss, inter miss (F1[2]
    # tied) -> 1/4
    ties = MetricOptions(ties_wrong=True)
    assert metric_values([game], ties)["reasoning"] == pytest.approx(0.25)


def test_all_zero_own_row_points_at_the_first_seat() -> None:
    zeros = ((0, 0, 0),) * 3
    # the spy is seat 0 and the respondent's own row is all zeros: argmax 0 = spy (the quirk)
    assert belief_hits([zeros, zeros, zeros], 1, 0) == (True, True)
    assert belief_hits([zeros, zeros, zeros], 1, 0, ties_wrong=True) == (False, False)
    assert row_argmax((0, 1, 1), ties_wrong=False) == 1
    assert row_argmax((0, 1, 1), ties_wrong=True) is None


def test_an_unparsable_belief_answer_is_an_all_zero_f_by_default() -> None:
    # issue 24 item 4, seed-004 §6.3: "argmax of an all-zero row is 0", in both variants.
    game = social(beliefs=[(F0, None, F2)])
    # zeros (default): F1 = zeros. seat 1: gold 0 != 2 miss; inter F1[0] -> 0 vs argmax F0[0] = 2
    # miss. seat 0: gold hit; inter F0[1] -> 0 = zeros -> 0, F0[2] -> 0 = 0 hit. 2/4
    assert metric_values([game])["reasoning"] == pytest.approx(0.5)
    assert metric_values([game], MetricOptions(code_compat=True))["reasoning"] == 0.5
    # wrong (the option): seat 1 has nothing (gold and inter miss, counted); seat 0's inter needs
    # F1 as the reference: miss. Only seat 0's gold hits: 1/4.
    wrong = MetricOptions(unparsed_belief="wrong")
    assert metric_values([game], wrong)["reasoning"] == pytest.approx(0.25)
    # A belief answer that is all zeros when it parses scores the same as one that did not.
    zeros = ((0, 0, 0),) * 3
    assert metric_values([social(beliefs=[(F0, zeros, F2)])])["reasoning"] == 0.5


def test_reasoning_pools_probe_times_and_competitions() -> None:
    undercover_spy = social("undercover", as_spy=True, spy=0, beliefs=[(F0, F1, F2)] * 2)
    # the undercover is seat 0, the challenger's seat: gold argmax F0[0] = 2 != 0 miss; inter
    # F0[1] -> 0 = argmax F1[1] = 0, F0[2] -> 0 = argmax F2[2] -> 0: hit. Per time 1 of 2, twice.
    chameleon = social(beliefs=[(F0, F1, F2)])  # 3 of 4 (above)
    # (3 + 2) / (4 + 4) = 5/8
    assert metric_values([chameleon, undercover_spy])["reasoning"] == pytest.approx(5 / 8)


# -- Deception (§6.4) -----------------------------------------------------------------------


def _deception_games(guess_flags: list[int]) -> list[MagicGame]:
    spy_games = [
        social("chameleon", as_spy=True, win_flag=1),  # a right guess: win (flag != 0)
        social("chameleon", as_spy=True, win_flag=0, setting=1),  # caught: loss
        social("undercover", as_spy=True, win_flag=2),  # even votes: win
        social("undercover", as_spy=True, win_flag=0, setting=1),  # loss
    ]
    majority = [social("chameleon", win_flag=f, setting=10 + k) for k, f in enumerate(guess_flags)]
    return spy_games + majority


def test_deception_paper_counts_wrong_guesses() -> None:
    # spy term: 2 wins / 4 spy games = .5; the caught GPT-4 chameleon guessed in flags 0, 0, 1
    # (flag 2 = no guess): 2 wrong of 3. S_D = .5 + .25 * 2/3
    got = metric_values(_deception_games([0, 0, 1, 2]))
    assert got["deception"] == pytest.approx(0.5 + 0.25 * 2 / 3)
    lam = MetricOptions(deception_lambda=0.5)
    assert metric_values(_deception_games([0, 0, 1, 2]), lam)["deception"] == pytest.approx(
        0.5 + 0.5 * 2 / 3
    )


@pytest.mark.parametrize(
    ("flags", "ratio"),
    [([0, 0, 0], 0.0), ([0, 1, 0, 2], 0.5), ([1, 1, 2], 1.0)],
)
def test_deception_code_compat_counts_distinct_flags(flags: list[int], ratio: float) -> None:
    # the code: right guesses over the *distinct* flags 0 / 1 seen: only 0 -> 0, both -> 1/2,
    # only 1 -> 1, however many games each
    for compat in (MetricOptions(code_compat=True), MetricOptions(deception_guess="code")):
        got = metric_values(_deception_games(flags), compat)["deception"]
        assert got == pytest.approx(0.5 + 0.25 * ratio)
    # set explicitly, the paper's reading wins over the variant
    paper = MetricOptions(code_compat=True, deception_guess="wrong")
    expected = metric_values(_deception_games(flags))["deception"]
    assert metric_values(_deception_games(flags), paper)["deception"] == expected


def test_deception_without_any_guess_is_the_spy_term() -> None:
    # "not all the games trigger code guesses": the guess term counts 0 when none did
    assert metric_values(_deception_games([2, 3]))["deception"] == pytest.approx(0.5)


# -- Self-awareness (§6.5) ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "seat", "role", "right"),
    [
        ("I am Player 2, my role is a non-chameleon", 1, "non-chameleon", True),
        ("I am Player 2, my role is non-chameleon.", 1, "non-chameleon", True),
        ("I am Player 3, my role is the chameleon.", 2, "chameleon", True),
        ("I am Player 3, my role is non-chameleon", 1, "non-chameleon", False),  # wrong seat
        ("I am Player 2, my role is chameleon", 1, "non-chameleon", False),  # wrong role
        ("I am Player 2, my role is not sure, because...", 1, "civilian", False),  # not sure
        ("not sure", 1, "civilian", False),
        ("I am Player 2, my role is non-undercover, because...", 1, "civilian", True),
        ("I am Player 1, my role is undercover, because", 0, "undercover", True),
        ("i am player 2, my role is non-chameleon", 1, "non-chameleon", False),  # case-sensitive
        ("I am Player 21, my role is non-chameleon", 1, "non-chameleon", False),
        (None, 1, "non-chameleon", False),  # an invalid reply
    ],
)
def test_role_answer_check(text: str | None, seat: int, role: str, right: bool) -> None:
    assert role_answer_correct(text, seat, role) is right


def _awareness_games() -> list[MagicGame]:
    ok0, ok1 = "I am Player 1, my role is non-chameleon", "I am Player 2, my role is non-chameleon"
    chameleon = social(  # seats 0, 1 answer 3 times: 3 right of 6 (one invalid)
        role_answers=[(ok0, ok1, None), (ok0, "not sure", None), (None, "I am Player 1", None)]
    )
    spy = "I am Player 3, my role is undercover"
    undercover = social("undercover", as_spy=True, role_answers=[(None, None, spy)] * 2)  # 2/2
    return [chameleon, undercover]


def test_self_awareness_alpha_weighting_and_code_pooling() -> None:
    games = _awareness_games()
    # chameleon 3/6 = .5, undercover 2/2 = 1
    assert metric_values(games)["self_awareness"] == pytest.approx(0.6 * 0.5 + 0.4 * 1.0)
    other = MetricOptions(alpha_term="undercover")
    assert metric_values(games, other)["self_awareness"] == pytest.approx(0.6 * 1.0 + 0.4 * 0.5)
    a = MetricOptions(alpha=0.5)
    assert metric_values(games, a)["self_awareness"] == pytest.approx(0.75)
    # the code pools: (3 + 2) / (6 + 2)
    compat = MetricOptions(code_compat=True)
    assert metric_values(games, compat)["self_awareness"] == pytest.approx(5 / 8)
    # one game alone: the paper's form needs both games, the pooled one does not
    assert metric_values(games[:1])["self_awareness"] is None
    assert metric_values(games[:1], compat)["self_awareness"] == pytest.approx(0.5)


# -- Cooperation, Coordination, Cost (§6.6, §6.7) -------------------------------------------


def _cost_games() -> list[MagicGame]:
    return [
        cost_sharing(True, (40, 30, 30), (40, 30, 30), seat=2),  # its proposal, share 30
        cost_sharing(True, (50, 25, 25), (40, 30, 30), seat=2, setting=1),  # share 25
        cost_sharing(True, (50, 25, None), (50, 25, 20), seat=2, setting=2),  # unreadable share
        cost_sharing(False, None, (40, 30, 30), seat=2, setting=3),
    ]


def test_cooperation_coordination_and_cost() -> None:
    got = metric_values(_cost_games())
    assert got["cooperation"] == pytest.approx(3 / 4)  # successes / games
    assert got["cooperation"] == got["w_cost"]
    assert got["coordination"] == pytest.approx(1 / 3)  # agreed == latest in 1 of 3 successes
    assert got["cost"] == pytest.approx((30 + 25 + 30) / 3)  # the unreadable share reads 30
    skip = MetricOptions(unparsed_share=None)
    assert metric_values(_cost_games(), skip)["cost"] == pytest.approx((30 + 25) / 2)


# -- Rationality (§6.8) and the §9.3 details ------------------------------------------------


def _repeated_games() -> list[MagicGame]:
    pd = dilemma("DCDDC", (7, 9, 9), seat=1, invalid_rounds=[3])  # round 4's D was invalid
    pg = public_good(
        [
            (10, 20, 10),  # 10 ties the minimum: rational
            (30, 0, 5),  # not the minimum
            (0, 0, 0),  # a three-way tie at the minimum: rational
            (0, 10, 10),  # the minimum, but the reply was invalid (applied as 0)
        ],
        (123.0, 80.0, 90.0),
        2.0,
        invalid_rounds=[3],
    )
    return [pd, pg]


def test_rationality_pools_pd_and_pg_decisions() -> None:
    games = _repeated_games()
    # wrong (default): PD D, D (round 4 invalid) -> 2; PG rounds 1, 3 -> 2; (2 + 2) / (5 + 4)
    assert metric_values(games)["rationality"] == pytest.approx(4 / 9)
    # as played: PD 3 defections, PG 3 minima -> 6/9
    played = MetricOptions(invalid_decisions="as-played")
    assert metric_values(games, played)["rationality"] == pytest.approx(6 / 9)


def test_score_and_payback_details() -> None:
    games = _repeated_games()
    got = metric_values(games)
    assert got["score"] == pytest.approx(9.0)  # the challenger (seat 1) finished with 9
    assert got["w_pd"] == 1.0  # 9 ties the top
    # pool = 40 + 35 + 0 + 20 = 95; share = 2 * 95 / 3
    assert got["payback"] == pytest.approx(2 * 95 / 3)
    net = metric_values(games, MetricOptions(payback="net"))["payback"]
    assert net == pytest.approx(2 * 95 / 3 - (10 + 30 + 0 + 0))
    final = metric_values(games, MetricOptions(payback="final-score"))["payback"]
    assert final == pytest.approx(123.0)
    assert got["w_pg"] == 1.0


def test_metrics_without_data_are_none() -> None:
    got = metric_values([social(as_spy=True, win_flag=2)])
    assert set(got) == set(METRICS)
    for name in ("judgment", "reasoning", "cooperation", "coordination", "rationality", "cost"):
        assert got[name] is None, name
    assert got["deception"] == pytest.approx(1.0)  # the spy term alone


# -- records and options --------------------------------------------------------------------


def test_records_reject_inconsistent_games() -> None:
    with pytest.raises(StratagemError, match="win_flag"):
        social("undercover", win_flag=3)
    with pytest.raises(StratagemError, match="guess"):
        social(win_flag=1, guess_right=False)
    with pytest.raises(StratagemError, match="belief"):
        social(beliefs=[(((0, 2, 0),) * 3, None, None)])
    with pytest.raises(StratagemError, match="invalid"):
        social(invalid=(1, 0, 0), decisions=(0, 0, 0))


def test_options_reject_bad_values() -> None:
    with pytest.raises(StratagemError, match="alpha"):
        MetricOptions(alpha=1.5)
    with pytest.raises(StratagemError, match="payback"):
        MetricOptions(payback="mean")  # type: ignore[arg-type]
    with pytest.raises(StratagemError, match="decisions must be one of strict, code"):
        MetricOptions(decisions="lenient")  # type: ignore[arg-type]
    assert MetricOptions().describe() == "defaults"
    assert MetricOptions(fixed_n=20).describe() == "fixed_n=20"
    assert MetricOptions(decisions="strict").describe() == "defaults"


def test_code_compat_switches_every_option_the_paper_and_the_code_read_differently() -> None:
    code = MetricOptions(code_compat=True).resolved()
    assert (code.game_count, code.deception_guess, code.self_awareness, code.decisions) == (
        "code",
        "code",
        "pooled",
        "code",
    )
    paper = MetricOptions().resolved()
    assert (paper.game_count, paper.deception_guess, paper.self_awareness, paper.decisions) == (
        "played",
        "wrong",
        "alpha",
        "strict",
    )
    # the options both variants share keep their defaults
    assert (code.unparsed_belief, code.chameleon_vote, code.unparsed_share) == (
        "zeros",
        "belief",
        30,
    )
    # the caption says what is in force, and what was set against the variant
    assert MetricOptions(code_compat=True).describe() == (
        "code_compat=True, game_count='code', deception_guess='code', "
        "self_awareness='pooled', decisions='code'"
    )
    assert MetricOptions(code_compat=True, decisions="strict").describe() == (
        "code_compat=True, game_count='code', deception_guess='code', "
        "self_awareness='pooled', decisions='strict'"
    )


def test_records_filled_with_lists_compare_as_tuples() -> None:
    from stratagem.studies.magic.records import CostSharingOutcome

    base = cost_sharing(True, (40, 30, 30), (40, 30, 30))
    listed = MagicGame(
        game="cost-sharing",
        setting=0,
        repetition=0,
        challenger="m|plain",
        defender="d",
        challenger_seats=[0],  # type: ignore[arg-type]
        roles=["player"] * 3,  # type: ignore[arg-type]
        invalid=[0, 0, 0],  # type: ignore[arg-type]
        decisions=[0, 0, 0],  # type: ignore[arg-type]
        cost_sharing=CostSharingOutcome(True, [40, 30, 30], [40, 30, 30]),  # type: ignore[arg-type]
    )
    assert listed.pair_key == base.pair_key
    assert metric_values([listed])["coordination"] == 1.0  # [40, 30, 30] equals (40, 30, 30)


def test_a_game_carries_exactly_its_own_detail() -> None:
    pd = dilemma("D", (1, 0, 0))
    with pytest.raises(StratagemError, match="detail 'social' is missing"):
        MagicGame(**{**pd.__dict__, "game": "chameleon"})
    with pytest.raises(StratagemError, match="'C' or 'D'"):
        dilemma("X", (1, 0, 0))
