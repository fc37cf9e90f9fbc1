"""Strategies by name: syntax, aliases, errors."""

from __future__ import annotations

import random

import pytest

from stratagem.errors import StratagemError
from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.strategies import (
    ALIASES,
    STRATEGIES,
    BestResponseToLast,
    BestResponseToMode,
    GrimTrigger,
    Pattern,
    Random,
    SingleRoundEquilibrium,
    TitForTat,
    get_strategy,
    parse_spec,
    play_match,
    strategy_names,
)

SH = NormalFormGame.symmetric("sh", ("stag", "hare"), [[6, 1], [4, 2]])


def test_every_name_builds_a_strategy_whose_label_round_trips() -> None:
    for name in strategy_names():
        s = get_strategy(name)
        assert s.name == name
        assert get_strategy(s.label).label == s.label
        play_match(s, get_strategy("TitForTat"), SH, 5, random.Random(0))


def test_aliases_point_at_canonical_names() -> None:
    assert set(ALIASES.values()) <= set(STRATEGIES)
    assert isinstance(get_strategy("TFT"), TitForTat)
    assert isinstance(get_strategy("Grudger"), GrimTrigger)
    assert isinstance(get_strategy("srep"), SingleRoundEquilibrium)
    assert isinstance(get_strategy("pp"), Pattern)
    assert isinstance(get_strategy("mf"), BestResponseToMode)
    assert isinstance(get_strategy("ap"), BestResponseToMode)
    assert isinstance(get_strategy("adaptive-player"), BestResponseToMode)
    assert isinstance(get_strategy("tft-br"), BestResponseToLast)
    assert isinstance(get_strategy("tit-for-tat-player"), BestResponseToLast)


def test_lookup_ignores_case_and_separators() -> None:
    for spelling in ("titfortat", "TIT_FOR_TAT", "tit-for-tat", " Tit For Tat "):
        assert isinstance(get_strategy(spelling), TitForTat)
    assert get_strategy("grim-trigger-2").name == "GrimTrigger2"


def test_parameters_in_both_syntaxes() -> None:
    for spec in ("Random(0.3)", "Random:0.3", "random( 0.3 )", "Random(3e-1)"):
        s = get_strategy(spec)
        assert isinstance(s, Random) and s.p == 0.3
    assert get_strategy("Random(1)").label == "Random(1.0)"
    assert get_strategy("Random()").label == "Random(0.5)"
    assert get_strategy("Pattern(1, 0, 0)").label == "Pattern(1, 0, 0)"
    assert get_strategy("Pattern:stag,hare").label == "Pattern(stag, hare)"
    assert get_strategy("pp").label == "Pattern"
    assert parse_spec("axl:Random:0.3") == ("axl:Random", [0.3])
    assert parse_spec("Pattern('rock', \"paper\")") == ("Pattern", ["rock", "paper"])


def test_errors_are_user_errors() -> None:
    with pytest.raises(
        StratagemError, match="unknown strategy 'TitForTap': did you mean TitForTat"
    ):
        get_strategy("TitForTap")
    with pytest.raises(StratagemError, match="does not take the arguments"):
        get_strategy("TitForTat(3)")
    with pytest.raises(StratagemError, match="probability"):
        get_strategy("Random(2)")
    with pytest.raises(StratagemError, match="bad strategy"):
        get_strategy("")
    with pytest.raises(StratagemError, match="bad strategy"):
        get_strategy("Random(0.3")
    with pytest.raises(StratagemError, match="empty argument"):
        get_strategy("Pattern(1,,0)")


def test_fresh_instances() -> None:
    assert get_strategy("GrimTrigger") is not get_strategy("GrimTrigger")
