"""The Axelrod adapter: any Axelrod strategy plays by role in stratagem's 2-action games."""

from __future__ import annotations

import copy
import random
import sys

import pytest

from stratagem.errors import StratagemError
from stratagem.experiments.tournament import Tournament
from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.strategies import (
    Alternator,
    AlwaysCooperate,
    AlwaysDefect,
    AxelrodStrategy,
    GrimTrigger,
    Strategy,
    SuspiciousTitForTat,
    TitForTat,
    TitForTwoTats,
    WinStayLoseShift,
    axelrod_names,
    get_strategy,
    play_match,
)

axl = pytest.importorskip("axelrod")

STAG_HUNT = NormalFormGame.symmetric("sh", ("stag", "hare"), [[6, 1], [4, 2]])
AXELROD_PD = NormalFormGame.prisoners_dilemma("axelrod-pd", t=5, r=3, p=1, s=0)
UNKNOWN_LENGTH = {"length": -1, "game": axl.Game(), "noise": 0}

NATIVE: dict[str, type[Strategy]] = {
    "Cooperator": AlwaysCooperate,
    "Defector": AlwaysDefect,
    "TitForTat": TitForTat,
    "Grudger": GrimTrigger,
    "TitFor2Tats": TitForTwoTats,
    "SuspiciousTitForTat": SuspiciousTitForTat,
    "WinStayLoseShift": WinStayLoseShift,
    "Alternator": Alternator,
}


def test_grudger_plays_a_stag_hunt_by_role() -> None:
    result = play_match(get_strategy("axl:Grudger"), Alternator(), STAG_HUNT, 6, random.Random(0))
    assert [STAG_HUNT.labels[0][m] for m in result.actions[0]] == ["stag"] * 2 + ["hare"] * 4
    assert result.scores == (6 + 1 + 4 + 2 + 4 + 2, 6 + 4 + 1 + 2 + 1 + 2)


def test_wrapped_equals_native_in_a_stag_hunt() -> None:
    for a_name, a_cls in NATIVE.items():
        for b_name, b_cls in NATIVE.items():
            wrapped = play_match(
                AxelrodStrategy(a_name), AxelrodStrategy(b_name), STAG_HUNT, 40, random.Random(1)
            )
            native = play_match(a_cls(), b_cls(), STAG_HUNT, 40, random.Random(1))
            assert wrapped == native, (a_name, b_name)


def test_wrapped_equals_native_under_noise() -> None:
    for a_name, a_cls in NATIVE.items():
        wrapped = play_match(
            AxelrodStrategy(a_name), TitForTat(), AXELROD_PD, 80, random.Random(3), 0.1
        )
        native = play_match(a_cls(), TitForTat(), AXELROD_PD, 80, random.Random(3), 0.1)
        assert wrapped == native, a_name


def test_every_deterministic_axelrod_strategy_matches_axelrod_match() -> None:
    # With the length unknown to both (stratagem's reset does not know it), every fair,
    # deterministic, fast Axelrod strategy plays exactly as in axelrod.Match.
    checked = 0
    for name in axelrod_names():
        cls = getattr(axl, name.removeprefix("axl:"))
        if cls.classifier.get("long_run_time") or cls.classifier.get("stochastic"):
            continue
        ours = AxelrodStrategy(cls)
        if ours.classifier.stochastic:
            continue
        mine = play_match(ours, get_strategy("axl:Alternator"), AXELROD_PD, 25, random.Random(0))
        theirs = axl.Match(
            (cls(), axl.Alternator()), turns=25, match_attributes=UNKNOWN_LENGTH
        ).play()
        assert mine.actions[0] == tuple(0 if a == axl.Action.C else 1 for a, _ in theirs), name
        checked += 1
    assert checked > 100


def test_length_reaches_end_game_strategies() -> None:
    ours = play_match(
        AxelrodStrategy("BackStabber", length=30), TitForTat(), AXELROD_PD, 30, random.Random(0)
    )
    theirs = axl.Match((axl.BackStabber(), axl.TitForTat()), turns=30).play()
    assert ours.actions[0] == tuple(0 if a == axl.Action.C else 1 for a, _ in theirs)
    assert ours.actions[0][-2:] == (1, 1)


def test_random_is_seeded_from_the_match_rng() -> None:
    a = play_match(get_strategy("axl:Random(0.3)"), TitForTat(), STAG_HUNT, 200, random.Random(8))
    b = play_match(get_strategy("axl:Random(0.3)"), TitForTat(), STAG_HUNT, 200, random.Random(8))
    c = play_match(get_strategy("axl:Random(0.3)"), TitForTat(), STAG_HUNT, 200, random.Random(9))
    assert a == b
    assert a != c
    long = play_match(
        get_strategy("axl:Random:0.3"), TitForTat(), STAG_HUNT, 20_000, random.Random(1)
    )
    assert long.cooperation(0) == pytest.approx(0.3, abs=0.015)


def test_names_labels_and_classifiers() -> None:
    grudger = get_strategy("axl:Grudger")
    assert grudger.name == grudger.label == "axl:Grudger"
    assert grudger.classifier.memory_depth == float("inf") and not grudger.classifier.stochastic
    assert get_strategy("axl:TitForTat").classifier.memory_depth == 1
    rnd = get_strategy("axl:Random(0.3)")
    assert rnd.label == "axl:Random(0.3)" and rnd.classifier.stochastic
    assert get_strategy("axl:Random").label == "axl:Random"
    assert AxelrodStrategy(axl.Random(0.25)).label == "axl:Random(0.25)"
    assert AxelrodStrategy(axl.TitForTat).label == "axl:TitForTat"
    assert get_strategy("axl:tit for tat").label == "axl:TitForTat"  # display name, any case
    # Fixed classifier flags Axelrod does not have.
    assert not grudger.classifier.nice and not grudger.classifier.retaliating
    # The class-level placeholder is untouched by instances.
    assert AxelrodStrategy.classifier.stochastic and AxelrodStrategy.name == "axl"


def test_copies_play_independently_in_self_play() -> None:
    grudger = get_strategy("axl:Grudger")
    twin = copy.deepcopy(grudger)
    result = play_match(grudger, twin, STAG_HUNT, 10, random.Random(0))
    assert result.actions == ((0,) * 10, (0,) * 10)
    standings = Tournament(
        [get_strategy("axl:Grudger"), get_strategy("axl:Random(0.3)"), TitForTat()],
        STAG_HUNT,
        turns=20,
        repetitions=2,
    ).play()
    assert len(standings.matches) == 6 * 2


def test_reuse_without_reset_starts_a_new_match() -> None:
    s = get_strategy("axl:Grudger")
    s.reset(AXELROD_PD, 0)
    rng = random.Random(0)
    assert s.act([0, 0], [1, 0], rng) == 1
    assert s.act([], [], rng) == 0  # a new history: the grudge is gone


def test_errors() -> None:
    with pytest.raises(StratagemError, match="unknown axelrod strategy"):
        get_strategy("axl:NoSuchStrategy")
    with pytest.raises(StratagemError, match="cannot play"):
        get_strategy("axl:Darwin")  # inspects and manipulates its opponent
    with pytest.raises(StratagemError, match="bad parameters"):
        get_strategy("axl:Random(1, 2, 3)")
    with pytest.raises(StratagemError, match="not an Axelrod strategy"):
        AxelrodStrategy(42)
    with pytest.raises(StratagemError, match="cannot play 'sh'"):
        get_strategy("axl:ZDExtortion").reset(STAG_HUNT, 0)
    rps = NormalFormGame.symmetric("rps", ("r", "p", "s"), [[0, -1, 1], [1, 0, -1], [-1, 1, 0]])
    with pytest.raises(StratagemError, match="2-action"):
        get_strategy("axl:Grudger").reset(rps, 0)


def test_missing_extra_gives_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "axelrod", None)  # makes `import axelrod` raise ImportError
    with pytest.raises(StratagemError, match=r"pip install 'stratagem\[axelrod\]'"):
        get_strategy("axl:Grudger")
