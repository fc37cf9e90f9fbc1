"""The balance filter of seed-004 §4 ("Setting selection"): the self-play experiment it builds, the
spy win rates it reads from a store (the credit tables of §3.1 and §3.2), and the deterministic
choice of the settings closest to an even 0.5."""

from __future__ import annotations

import asyncio
from fractions import Fraction
from pathlib import Path

import pytest
from support.magic_balance import balance_model

from stratagem.errors import StratagemError
from stratagem.experiments.config import config_from_dict
from stratagem.experiments.runner import STORE_FILE, Runner
from stratagem.experiments.store import ResultStore
from stratagem.studies.magic.balance import (
    BalanceRun,
    SettingRate,
    balance_document,
    describe,
    episode_settings,
    kept_names,
    ranked,
    select_balanced,
    setting_rates,
    slug,
    spy_credits,
)


def rate(setting: str, games: int, credits: int, per_game: int = 2) -> SettingRate:
    return SettingRate(setting, games, credits, per_game)


# -- selection on synthetic rates ----------------------------------------------------------------


def test_rates_are_exact_fractions_of_the_credits_handed_out() -> None:
    # seed-004 §5: chameleon credits / 2n, undercover credits / 3n.
    assert rate("chameleon/0", 10, 9).rate == Fraction(9, 20)
    assert rate("undercover/0", 4, 5, per_game=3).rate == Fraction(5, 12)
    assert rate("chameleon/1", 0, 0).rate is None and rate("chameleon/1", 0, 0).distance is None
    assert rate("chameleon/0", 10, 9).distance == Fraction(1, 20)


def test_the_closest_to_even_are_kept_and_ties_go_to_the_lower_index() -> None:
    rates = [
        rate("chameleon/0", 10, 20),  # 1.0
        rate("chameleon/1", 10, 12),  # 0.6: 0.1 from even
        rate("chameleon/2", 10, 8),  # 0.4: 0.1 from even, as exactly as 0.6 (no float slack)
        rate("chameleon/3", 10, 10),  # 0.5
        rate("chameleon/10", 10, 12),  # 0.6 again: a later index
        rate("chameleon/4", 0, 0),  # never played: never kept
    ]
    kept = select_balanced(rates, 3)
    assert [r.setting for r in kept] == ["chameleon/3", "chameleon/1", "chameleon/2"]
    assert kept_names(kept) == ["chameleon/1", "chameleon/2", "chameleon/3"]
    # index order, not text order: chameleon/10 comes after chameleon/2
    assert [r.setting for r in select_balanced(rates, 4)][-1] == "chameleon/10"
    # keeping more than were played keeps every played setting
    assert len(select_balanced(rates, 20)) == 5
    # the order does not depend on the input order
    assert select_balanced(list(reversed(rates)), 3) == kept
    assert ranked(rates)[-1].setting == "chameleon/0"


def test_keep_must_be_positive() -> None:
    with pytest.raises(StratagemError, match="keep must be"):
        select_balanced([rate("chameleon/0", 1, 1)], 0)


def test_spy_credits_follow_the_credit_tables() -> None:
    # seed-004 §3.1: win_flag 0 caught, 1 right guess, 2 wrong accusation, 3 even votes.
    assert [spy_credits("chameleon", {"win_flag": f}, "x") for f in (0, 1, 2, 3)] == [0, 1, 2, 1]
    # seed-004 §3.2: 0 caught, 1 wrong plurality, 2 even votes.
    assert [spy_credits("undercover", {"win_flag": f}, "x") for f in (0, 1, 2)] == [0, 3, 2]
    with pytest.raises(StratagemError, match=r"episode e1: .* win_flag 3 is not one of undercover"):
        spy_credits("undercover", {"win_flag": 3}, "episode e1")
    with pytest.raises(StratagemError, match="win_flag None"):
        spy_credits("chameleon", {}, "x")


# -- the experiment ------------------------------------------------------------------------------


def test_all_candidates_are_every_setting_of_the_file() -> None:
    """seed-004 §4: the paper chose its 20 from many more; `all` is every topic word and seat."""
    from stratagem.studies.magic.balance import BalanceRun

    every = BalanceRun(game="chameleon", model="local/x", candidates="all").candidate_settings()
    assert len(every) == 96 and every[0] == "chameleon/0" and every[-1] == "chameleon/95"
    selected = BalanceRun(game="undercover", model="local/x").candidate_settings()
    assert selected == [f"undercover/{k}" for k in range(20)]


def test_the_run_is_self_play_of_every_shipped_setting(tmp_path: Path) -> None:
    run = BalanceRun("undercover", "openai/gpt-4o", games_per_setting=3, seed=7, output=tmp_path)
    config = run.config()
    assert config.games == [f"undercover/{k}" for k in range(20)]
    assert config.lineups == [["magic", "magic", "magic"]]
    assert config.agents[0].kind == "magic" and config.agents[0].options == {"probes": False}
    assert config.agents[0].temperature is None  # the architecture's 0 (seed-004 §2)
    assert (config.repetitions, config.seeds, config.output) == (3, [7], tmp_path)
    assert config.models[0].model == "openai/gpt-4o" and config.budget.max_usd is None
    settings = episode_settings(config)
    assert len(settings) == 60 and sorted(set(settings.values())) == sorted(config.games)
    assert run.experiment == "magic-balance-undercover-openai/gpt-4o"
    hot = BalanceRun("chameleon", "openai/m", temperature=0.7, max_usd=2.5, base_url="http://h/v1")
    assert hot.experiment.endswith("-t0.7")
    assert hot.config().agents[0].temperature == 0.7 and hot.config().budget.max_usd == 2.5
    assert hot.config().models[0].base_url == "http://h/v1"
    assert hot.directory == Path("results/magic-balance-chameleon-openai-m")
    assert slug("openai/gpt-4o:latest") == "openai-gpt-4o-latest"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"game": "chamelon"}, "unknown game 'chamelon': did you mean chameleon"),
        ({"game": "npd3"}, "game 'npd3' has no spy side to balance"),
        ({"candidates": "some"}, "unknown candidate pool 'some'"),
        ({"games_per_setting": 0}, "games per setting must be a whole number from 1"),
        ({"keep": 0}, "keep must be a whole number from 1"),
        ({"temperature": -1.0}, "temperature must be >= 0"),
        ({"model": "gpt-4"}, "model must be 'provider/model', .*got 'gpt-4'"),
    ],
)
def test_bad_settings_are_one_line_errors(changes: dict[str, object], message: str) -> None:
    settings: dict[str, object] = {"game": "chameleon", "model": "openai/gpt-4o", **changes}
    with pytest.raises(StratagemError, match=message):
        BalanceRun(**settings).config()  # type: ignore[arg-type]


def test_describe_names_the_words_and_the_spy_seat() -> None:
    assert describe("chameleon/4") == "Sports: Volleyball (chameleon Player 1)"
    assert describe("undercover/1") == "wig / haircut (undercover Player 1)"
    assert describe("dilemma") == ""


# -- win rates read from a real store ------------------------------------------------------------


def test_win_rates_are_read_from_a_scripted_self_play_run(tmp_path: Path) -> None:
    with balance_model() as model:
        config = config_from_dict(
            {
                "name": "balance-test",
                "output": str(tmp_path),
                "models": [{"model": model}],
                "agents": [{"name": "magic", "kind": "magic", "options": {"probes": False}}],
                "games": ["chameleon/3", "chameleon/4", "chameleon/5"],
                "lineups": [["magic", "magic", "magic"]],
                "repetitions": 2,
            },
            "test",
        )
        summary = asyncio.run(Runner(config, show_progress=False).run())
    assert (summary.finished, summary.failed) == (6, 0)
    candidates = ["chameleon/3", "chameleon/4", "chameleon/5", "chameleon/6"]
    with ResultStore(tmp_path / STORE_FILE) as store:
        rates = setting_rates(store, "chameleon", episode_settings(config), candidates)
    by_name = {r.setting: r for r in rates}
    assert [r.setting for r in rates] == candidates
    # chameleon/3: Player 2 is the chameleon, Player 1 is accused -> 2 credits a game
    assert (by_name["chameleon/3"].games, by_name["chameleon/3"].rate) == (2, Fraction(1))
    # chameleon/4: Player 1 chameleon caught, guesses Volleyball right -> 1 credit a game
    assert by_name["chameleon/4"].rate == Fraction(1, 2)
    # chameleon/5: caught, wrong guess -> 0
    assert by_name["chameleon/5"].rate == 0
    assert by_name["chameleon/6"].games == 0
    assert kept_names(select_balanced(rates, 2)) == ["chameleon/3", "chameleon/4"]


def test_episodes_outside_the_grid_or_unfinished_are_not_counted(tmp_path: Path) -> None:
    with ResultStore(tmp_path / STORE_FILE) as store:
        store.create_experiment("x", "x", {})
        players = [{"name": "a"}, {"name": "b"}, {"name": "c"}]
        for episode, finish in (("done", True), ("open", False), ("other", True)):
            store.add_episode(episode, "x", "undercover/2", players)
            store.start_episode(episode)
            store.add_event(episode, "outcome", {"win_flag": 2}, visible_to=())
            if finish:
                store.finish_episode(episode, [1.0, 1.0, 2.0])
        episodes = {"done": "undercover/2", "open": "undercover/2", "missing": "undercover/2"}
        [only] = setting_rates(store, "undercover", episodes, ["undercover/2"])
        assert (only.games, only.spy_credits, only.rate) == (1, 2, Fraction(2, 3))
        store.add_episode("bare", "x", "undercover/2", players)
        store.start_episode("bare")
        store.finish_episode("bare", [0.0, 0.0, 0.0])
        with pytest.raises(StratagemError, match=r"episode bare .*no outcome event"):
            setting_rates(store, "undercover", {"bare": "undercover/2"}, ["undercover/2"])


def test_the_document_records_the_run_and_every_candidate(tmp_path: Path) -> None:
    run = BalanceRun("chameleon", "openai/gpt-4o", keep=1, seed=3, output=tmp_path)
    rates = [rate("chameleon/0", 2, 2), rate("chameleon/1", 0, 0)]
    doc = balance_document(run, rates, select_balanced(rates, run.keep))
    assert doc["kept"] == ["chameleon/0"]
    assert (doc["model"], doc["game"], doc["seed"], doc["spy_role"]) == (
        "openai/gpt-4o", "chameleon", 3, "chameleon",
    )  # fmt: skip
    first, second = doc["settings"]
    assert first == {
        "setting": "chameleon/0", "topic": "Fruits", "code": "Grape", "chameleon_name": "Player 3",
        "games": 2, "spy_credits": 2, "win_rate": 0.5, "distance": 0.0, "kept": True,
    }  # fmt: skip
    assert second["win_rate"] is None and second["kept"] is False
