"""seed-003's algorithmic opponents, as §2.2 ("Exact behaviour in the code") defines them."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from stratagem.errors import StratagemError
from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.strategies import (
    SEED003_PATTERNS,
    AlwaysCooperate,
    AlwaysDefect,
    BestResponseToLast,
    BestResponseToMode,
    Pattern,
    SingleRoundEquilibrium,
    Strategy,
    TitForTat,
    best_responses,
    play_match,
)


def pd_family(
    name: str, a: str, b: str, aa: float, ab: float, ba: float, bb: float
) -> NormalFormGame:
    """seed-003 §1.2: a setting keyed by labels a, b and the row payoffs aa, ab, ba, bb."""
    return NormalFormGame.symmetric(name, (a, b), [[aa, ab], [ba, bb]])


def rps_family(
    name: str, labels: tuple[str, str, str], ac: float, ba: float, cb: float
) -> NormalFormGame:
    """seed-003 §1.3: a beats c (±ac), b beats a (±ba), c beats b (±cb), ties 0."""
    return NormalFormGame.symmetric(name, labels, [[0, -ba, ac], [ba, 0, -cb], [-ac, cb, 0]])


PD = pd_family("pd", "cooperation", "defection", 4, 1, 6, 2)
PD_ALT = pd_family("pd-alt", "cooperation", "defection", 6, 1, 4, 2)
SH = pd_family("sh", "stag", "hare", 6, 1, 4, 2)
SH_ALT = pd_family("sh-alt", "stag", "hare", 4, 1, 6, 2)
EQ1 = rps_family("eq1", ("rock", "paper", "scissors"), 1, 1, 1)
EQ1_ALT = rps_family("eq1-alt", ("paper", "rock", "scissors"), 1, 1, 1)
BA3 = rps_family("ba3", ("rock", "paper", "scissors"), 1, 3, 1)
BA3_ALT = rps_family("ba3-alt", ("paper", "rock", "scissors"), 1, 3, 1)
PD_PAYOFFS = (PD, SH_ALT)
SH_PAYOFFS = (PD_ALT, SH)


def moves_against(
    strategy: Strategy, stage: NormalFormGame, opponent: list[int], seed: int = 0
) -> list[int]:
    """The bot's moves, round by round, against a scripted opponent."""
    strategy.reset(stage, 0)
    rng = random.Random(seed)
    own: list[int] = []
    for t in range(len(opponent) + 1):
        own.append(strategy.act(own, opponent[:t], rng))
    return own


def test_rps_helper_reproduces_the_printed_matrices() -> None:
    # seed-003 §1.3, as printed in App. B.3.2 (row player's payoffs).
    assert EQ1.matrices()[0].tolist() == [[0, -1, 1], [1, 0, -1], [-1, 1, 0]]
    assert BA3.matrices()[0].tolist() == [[0, -3, 1], [3, 0, -1], [-1, 1, 0]]
    assert BA3_ALT.matrices()[0].tolist() == [[0, -3, 1], [3, 0, -1], [-1, 1, 0]]


# -- best responses ------------------------------------------------------------------------------


def test_best_responses_follow_the_payoffs() -> None:
    for stage in PD_PAYOFFS:
        assert best_responses(stage, 0) == best_responses(stage, 1) == [1, 1]
    for stage in SH_PAYOFFS:
        assert best_responses(stage, 0) == [0, 1]
    # Counters: eq1 rock -> paper, paper -> scissors, scissors -> rock.
    assert best_responses(EQ1, 0) == [1, 2, 0]
    # eq1-alt (paper, rock, scissors; rock beats paper, scissors beats rock, paper beats scissors).
    assert best_responses(EQ1_ALT, 0) == [1, 2, 0]
    labels = EQ1_ALT.labels[0]
    assert [labels[i] for i in best_responses(EQ1_ALT, 0)] == ["rock", "scissors", "paper"]


def test_best_responses_ties_go_to_the_first_action() -> None:
    flat = NormalFormGame.symmetric("flat", ("a", "b"), [[1, 1], [1, 1]])
    assert best_responses(flat, 0) == [0, 0]


def test_best_responses_of_the_column_player_in_an_asymmetric_game() -> None:
    game = NormalFormGame.bimatrix(
        "asym", [("u", "d"), ("l", "r")], [[1, 0], [0, 1]], [[0, 5], [2, 0]]
    )
    assert best_responses(game, 0) == [0, 1]  # row: match the column
    assert best_responses(game, 1) == [1, 0]  # column: against u play r (5), against d play l (2)


# -- TFT variant (best response to the last move) ------------------------------------------------


@pytest.mark.parametrize("stage", PD_PAYOFFS, ids=lambda g: g.name)
def test_tft_variant_always_defects_from_round_2_under_pd_payoffs(stage: NormalFormGame) -> None:
    for seed in range(5):
        moves = moves_against(BestResponseToLast(), stage, [0, 1, 0, 0, 1, 0], seed)
        assert moves[1:] == [1] * 6


@pytest.mark.parametrize("stage", SH_PAYOFFS, ids=lambda g: g.name)
def test_tft_variant_copies_the_last_move_under_sh_payoffs(stage: NormalFormGame) -> None:
    opponent = [0, 1, 1, 0, 1, 0, 0]
    assert moves_against(BestResponseToLast(), stage, opponent)[1:] == opponent


def test_tft_variant_opens_uniformly_at_random() -> None:
    firsts = Counter(moves_against(BestResponseToLast(), PD, [], seed)[0] for seed in range(2000))
    assert firsts[0] / 2000 == pytest.approx(0.5, abs=0.04)
    firsts = Counter(moves_against(BestResponseToLast(), EQ1, [], seed)[0] for seed in range(3000))
    assert set(firsts) == {0, 1, 2}
    assert all(n / 3000 == pytest.approx(1 / 3, abs=0.04) for n in firsts.values())


def test_tft_variant_counters_in_rps_per_the_variant_dominance() -> None:
    bot = BestResponseToLast()
    for stage, expected in [
        (EQ1, "paper"),
        (BA3, "paper"),
        (EQ1_ALT, "scissors"),
        (BA3_ALT, "scissors"),
    ]:
        rock = stage.index(1, "rock")
        move = moves_against(bot, stage, [rock])[1]
        assert stage.labels[0][move] == expected, stage.name


# -- MF / AP (best response to the modal move) ---------------------------------------------------


@pytest.mark.parametrize("stage", PD_PAYOFFS, ids=lambda g: g.name)
def test_mf_always_defects_from_round_2_under_pd_payoffs(stage: NormalFormGame) -> None:
    moves = moves_against(BestResponseToMode(), stage, [0, 0, 0, 1, 0, 1])
    assert moves[1:] == [1] * 6


@pytest.mark.parametrize("stage", SH_PAYOFFS, ids=lambda g: g.name)
def test_mf_copies_the_modal_move_under_sh_payoffs(stage: NormalFormGame) -> None:
    opponent = [1, 0, 0, 1, 1, 1, 0]
    # Modes after each prefix: b; tie -> a; a; tie -> a; b; b; b.
    assert moves_against(BestResponseToMode(), stage, opponent)[1:] == [1, 0, 0, 0, 1, 1, 1]


def test_ap_counters_the_modal_move_ties_to_the_first_label() -> None:
    rock, paper, scissors = (EQ1.index(1, x) for x in ("rock", "paper", "scissors"))
    opponent = [scissors, paper, paper, rock, rock, scissors, scissors]
    moves = moves_against(BestResponseToMode(), EQ1, opponent)[1:]
    labels = EQ1.labels[0]
    # Modes: scissors; tie s/p -> paper (index order: rock, paper, scissors); paper; paper;
    # tie r/p -> rock; three-way tie -> rock; scissors.
    assert [labels[m] for m in moves] == [
        "rock",
        "scissors",
        "scissors",
        "scissors",
        "paper",
        "paper",
        "rock",
    ]


def test_ap_in_a_label_permuted_variant() -> None:
    # eq1-alt: labels (paper, rock, scissors); the counter of rock is scissors there.
    rock = EQ1_ALT.index(1, "rock")
    moves = moves_against(BestResponseToMode(), EQ1_ALT, [rock, rock])
    assert [EQ1_ALT.labels[0][m] for m in moves[1:]] == ["scissors", "scissors"]


def test_mode_bot_follows_histories_it_did_not_see_round_by_round() -> None:
    bot = BestResponseToMode()
    bot.reset(SH, 0)
    rng = random.Random(0)
    assert bot.act([0] * 5, [1, 1, 1, 0, 0], rng) == 1
    assert bot.act([0] * 6, [1, 1, 1, 0, 0, 0], rng) == 0  # 3-3 tie: the mode is the first action
    bot.act([], [], rng)
    assert bot.act([0], [0], rng) == 0


# -- PP ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("stage", (PD, PD_ALT, SH, SH_ALT), ids=lambda g: g.name)
def test_pp_plays_defect_cooperate_by_role_in_the_pd_family(stage: NormalFormGame) -> None:
    moves = play_match(Pattern(), AlwaysCooperate(), stage, 6, random.Random(0)).actions[0]
    assert moves == (1, 0, 1, 0, 1, 0)
    first = stage.labels[0][moves[0]]
    assert first in ("defection", "hare")


@pytest.mark.parametrize("stage", (EQ1, EQ1_ALT, BA3, BA3_ALT), ids=lambda g: g.name)
def test_pp_plays_the_same_words_in_every_rps_variant(stage: NormalFormGame) -> None:
    moves = play_match(Pattern(), Pattern([0]), stage, 7, random.Random(0)).actions[0]
    words = [stage.labels[0][m] for m in moves]
    assert words == ["scissors", "rock", "paper"] * 2 + ["scissors"]


def test_pp_indices_differ_in_label_permuted_variants() -> None:
    eq1 = play_match(Pattern(), Pattern([0]), EQ1, 3, random.Random(0)).actions[0]
    alt = play_match(Pattern(), Pattern([0]), EQ1_ALT, 3, random.Random(0)).actions[0]
    assert eq1 == (2, 0, 1)
    assert alt == (2, 1, 0)


def test_pattern_from_indices_and_labels() -> None:
    assert play_match(Pattern([0, 0, 1]), TitForTat(), SH, 7, random.Random(0)).actions[0] == (
        0,
        0,
        1,
        0,
        0,
        1,
        0,
    )
    assert play_match(Pattern(["hare", "stag"]), TitForTat(), SH, 3, random.Random(0)).actions[
        0
    ] == (
        1,
        0,
        1,
    )
    assert Pattern(["hare", "stag"]).label == "Pattern(hare, stag)"
    assert Pattern().label == "Pattern"
    assert SEED003_PATTERNS[2] == (1, 0)


def test_pattern_errors() -> None:
    with pytest.raises(StratagemError, match="not an action"):
        Pattern(["rock"]).reset(SH, 0)
    with pytest.raises(StratagemError, match="out of range"):
        Pattern([0, 2]).reset(SH, 0)
    with pytest.raises(StratagemError, match="at least one"):
        Pattern([])
    with pytest.raises(StratagemError, match="indices"):
        Pattern([0.5])  # type: ignore[list-item]
    five = NormalFormGame.symmetric("five", list("abcde"), [[0] * 5] * 5)
    with pytest.raises(StratagemError, match="no default pattern"):
        Pattern().reset(five, 0)


# -- SREP ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("stage", PD_PAYOFFS, ids=lambda g: g.name)
def test_srep_always_defects_under_pd_payoffs(stage: NormalFormGame) -> None:
    for seed in range(3):
        result = play_match(
            SingleRoundEquilibrium(), AlwaysCooperate(), stage, 16, random.Random(seed)
        )
        assert result.actions[0] == (1,) * 16


@pytest.mark.parametrize("stage", SH_PAYOFFS, ids=lambda g: g.name)
def test_srep_plays_the_first_action_one_third_of_the_time_under_sh_payoffs(
    stage: NormalFormGame,
) -> None:
    bot = SingleRoundEquilibrium()
    bot.reset(stage, 0)
    assert bot.probabilities == pytest.approx([1 / 3, 2 / 3])
    result = play_match(bot, AlwaysDefect(), stage, 30_000, random.Random(11))
    assert result.cooperation(0) == pytest.approx(1 / 3, abs=0.01)


@pytest.mark.parametrize(
    ("stage", "expected"),
    [
        (EQ1, {"rock": 1 / 3, "paper": 1 / 3, "scissors": 1 / 3}),
        (EQ1_ALT, {"rock": 1 / 3, "paper": 1 / 3, "scissors": 1 / 3}),
        (BA3, {"rock": 0.2, "paper": 0.2, "scissors": 0.6}),
        (BA3_ALT, {"rock": 0.2, "paper": 0.2, "scissors": 0.6}),
    ],
    ids=lambda x: getattr(x, "name", ""),
)
def test_srep_in_rps(stage: NormalFormGame, expected: dict[str, float]) -> None:
    bot = SingleRoundEquilibrium()
    bot.reset(stage, 1)
    labels = stage.labels[1]
    assert dict(zip(labels, bot.probabilities, strict=True)) == pytest.approx(expected)
    moves = play_match(Pattern([0]), bot, stage, 30_000, random.Random(2)).actions[1]
    counts = Counter(moves)
    for i, label in enumerate(labels):
        assert counts[i] / len(moves) == pytest.approx(expected[label], abs=0.01)


def test_srep_is_reproducible_from_the_seed() -> None:
    a = play_match(SingleRoundEquilibrium(), TitForTat(), SH, 50, random.Random(4))
    b = play_match(SingleRoundEquilibrium(), TitForTat(), SH, 50, random.Random(4))
    assert a == b


def test_bots_classifiers() -> None:
    for cls in (SingleRoundEquilibrium, Pattern, BestResponseToMode, BestResponseToLast):
        assert cls.classifier.n_actions is None
        assert cls.bot_name.endswith("-player")
    assert SingleRoundEquilibrium.classifier.uses_payoffs
    assert BestResponseToMode.classifier.uses_payoffs and BestResponseToLast.classifier.uses_payoffs
    assert not Pattern.classifier.uses_payoffs and not Pattern.classifier.stochastic
    assert BestResponseToLast.classifier.stochastic  # random opening


def test_mode_bot_joining_after_round_1() -> None:
    bot = BestResponseToMode()
    bot.reset(SH, 0)
    assert bot.act([0], [1], random.Random(0)) == 1
