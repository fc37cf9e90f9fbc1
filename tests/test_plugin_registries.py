"""Architectures, strategies and model providers from a plugin file (issue 34): named, imported
on first use of one of its names, registered as `<namespace>:<name>` beside the built-ins (which
win), a broken one a one-line error where it is used, and all three playing an experiment."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.small_experiment import experiment

import stratagem
from stratagem import plugins
from stratagem.agents import game_prompts
from stratagem.agents.registry import ARCHITECTURES, get_architecture, register
from stratagem.errors import StratagemError
from stratagem.experiments.config import config_from_dict
from stratagem.experiments.runner import Runner
from stratagem.experiments.store import ResultStore
from stratagem.games.registry import GAMES
from stratagem.games.ultimatum import UltimatumGame
from stratagem.llm import registry as models
from stratagem.llm.registry import ModelConfig, check_model, create_provider, parse_model
from stratagem.strategies.reactive import TitForTat
from stratagem.strategies.registry import (
    GAME_BOTS,
    STRATEGIES,
    get_strategy,
    parse_spec,
    register_strategy,
    strategy_names,
)

CARDS = '''
"""A plugin: an architecture, two strategies and a model provider."""
import dataclasses
from pathlib import Path

from stratagem import register
from stratagem.agents.registry import get_architecture
from stratagem.llm.types import Response, Usage
from stratagem.strategies.base import COOPERATE, DEFECT, Classifier, Strategy

with open(Path(__file__).with_name("imports.log"), "a") as log:
    log.write("imported\\n")


class Bluffer(Strategy):
    """Defects with probability p."""

    name = "Bluffer"
    classifier = Classifier(0, stochastic=True, nice=False, retaliating=False, forgiving=False)

    def __init__(self, p=0.5):
        self.p = float(p)

    def act(self, own, opponent, rng):
        return DEFECT if rng.random() < self.p else COOPERATE

    @property
    def label(self):
        return f"Bluffer({self.p})"


class Sucker(Strategy):
    """Cooperates whatever happens, under a built-in strategy's name."""

    name = "TitForTat"
    classifier = Classifier(0, stochastic=False, nice=True, retaliating=False, forgiving=True)

    def act(self, own, opponent, rng):
        return COOPERATE


class LastChoice:
    """Answers the last legal choice."""

    def __init__(self, model):
        self.model = model

    async def complete(self, request, sample):
        text = request.choices[-1] if request.choices else ""
        return Response(text=text, usage=Usage(3, 1), model=self.model)

    async def aclose(self):
        pass


NAMES = {
    "architecture": register.architecture(
        dataclasses.replace(get_architecture("plain"), name="cautious", description="plain, again")
    ),
    "strategy": register.strategy("Bluffer", Bluffer),
    "clash": register.strategy("TitForTat", Sucker),
    "provider": register.provider("last", lambda config: LastChoice(config.model)),
}
'''

BROKEN = """
raise RuntimeError("the deck is\\nmissing")
"""


@pytest.fixture
def plugin_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[[str, str], Path]]:
    """Write a plugin file and name it (`--plugin`), among no other plugin; afterwards forget
    it and every name it registered."""
    monkeypatch.delenv(plugins.ENV_PLUGINS, raising=False)
    monkeypatch.delenv(plugins.ENV_NO_PLUGINS, raising=False)
    registries: dict[str, Any] = {
        "architecture": ARCHITECTURES,
        "strategy": STRATEGIES,
        "game bot": GAME_BOTS,
        "provider": models._FACTORIES,
        "game": GAMES,
    }

    def make(namespace: str, code: str) -> Path:
        path = tmp_path / f"{namespace}.py"
        path.write_text(code, encoding="utf-8")
        plugins.use(str(path), origin="command line")
        return path

    with plugins.isolated():
        try:
            yield make
        finally:
            for plugin in plugins.plugins():
                for kind, names in plugin.registered.items():
                    for name in names:
                        registries[kind].remove(name)  # a kind this file registers none of: fails
                sys.modules.pop(f"stratagem_plugin_{plugin.namespace}", None)


def module(namespace: str) -> str:
    return f"stratagem_plugin_{namespace}"


def test_a_plugin_is_imported_once_on_first_use_of_one_of_its_names(
    plugin_file: Callable[[str, str], Path], tmp_path: Path
) -> None:
    plugin_file("cards", CARDS)
    # Built-in names, listings and model strings of other providers do not import it.
    assert isinstance(get_strategy("TitForTat"), TitForTat)
    assert get_architecture("plain").name == "plain"
    check_model("scripted/echo")
    assert "cards:Bluffer" not in strategy_names()
    assert module("cards") not in sys.modules and not (tmp_path / "imports.log").exists()

    bluffer = get_strategy("cards:Bluffer(0.3)")
    assert module("cards") in sys.modules
    assert type(bluffer).__name__ == "Bluffer" and bluffer.label == "Bluffer(0.3)"
    assert get_strategy("cards:Bluffer:0.3").label == "Bluffer(0.3)"
    assert get_strategy("cards:bluffer").label == "Bluffer(0.5)"  # case, '-' and '_' ignored
    assert parse_spec("cards:Bluffer(0.3)") == ("cards:Bluffer", [0.3])
    assert get_architecture("cards:cautious").description == "plain, again"
    assert create_provider(ModelConfig(model="cards:last/any")).model == "cards:last/any"
    assert (tmp_path / "imports.log").read_text() == "imported\n"

    namespace = sys.modules[module("cards")].__dict__["NAMES"]
    assert namespace == {
        "architecture": "cards:cautious",
        "strategy": "cards:Bluffer",
        "clash": "cards:TitForTat",
        "provider": "cards:last",
    }
    assert {"cards:Bluffer", "cards:TitForTat"} <= set(strategy_names())
    assert "cards:last" in models.provider_names()
    assert ARCHITECTURES.owner("cards:cautious") is plugins.find("cards")
    assert plugins.find("cards").registered == {  # type: ignore[union-attr]
        "architecture": ["cards:cautious"],
        "strategy": ["cards:Bluffer", "cards:TitForTat"],
        "provider": ["cards:last"],
    }


def test_a_plugin_loaded_first_in_a_process_takes_none_of_the_built_in_names(
    tmp_path: Path,
) -> None:
    """The plugin's own imports (`stratagem.register`, ...) register the built-ins while it
    loads: they must keep their names, not take its namespace."""
    (tmp_path / "cards.py").write_text(CARDS, encoding="utf-8")
    script = """
import sys
from stratagem import plugins
plugins.use(sys.argv[1])
from stratagem.strategies.registry import get_strategy
print(type(get_strategy("cards:Bluffer")).__name__)
from stratagem.games.catalog import get_entry
from stratagem.agents.registry import get_architecture
print(get_entry("pd").name, get_architecture("plain").name, type(get_strategy("TFT")).__name__)
print(sorted(n for names in plugins.find("cards").registered.values() for n in names))
"""
    env = {k: v for k, v in os.environ.items() if not k.startswith("STRATAGEM_")}
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "cards.py")],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "Bluffer",
        "pd plain TitForTat",
        "['cards:Bluffer', 'cards:TitForTat', 'cards:cautious', 'cards:last']",
    ]


def test_built_in_names_win(plugin_file: Callable[[str, str], Path]) -> None:
    plugin_file("cards", CARDS)
    assert type(get_strategy("cards:TitForTat")).__name__ == "Sucker"
    for name in ("TitForTat", "tit-for-tat", "TFT", "TitForTat:"):
        assert type(get_strategy(name)) is TitForTat
    # A namespace spelled like a built-in strategy is read as the strategy with arguments.
    with pytest.raises(StratagemError, match="does not take the arguments"):
        get_strategy("TitForTat:3")
    assert get_architecture("plain").description != "plain, again"
    with pytest.raises(StratagemError, match="unknown strategy 'cards:Bluff'"):
        get_strategy("cards:Bluff")


def test_model_strings_with_a_plugin_provider() -> None:
    parsed = parse_model("cards:last/org/model:7b")
    assert (parsed.provider, parsed.name) == ("cards:last", "org/model:7b")
    for bad in ("cards:/x", ":last/x", "cards:Last/x", "a:b:c/x"):
        with pytest.raises(StratagemError, match="expected 'provider/model'"):
            parse_model(bad)


def test_names_that_no_plugin_has(plugin_file: Callable[[str, str], Path]) -> None:
    plugin_file("cards", CARDS)
    with pytest.raises(StratagemError, match=r"'nocards' is no plugin: install it or name it"):
        check_model("nocards:last/x")
    with pytest.raises(StratagemError, match=r"unknown model provider 'cards:lost'"):
        check_model("cards:lost/x")
    with pytest.raises(StratagemError, match=r"if 'nocards' is a plugin, install it or name it"):
        get_strategy("nocards:Bluffer")
    with pytest.raises(StratagemError, match="unknown architecture 'nocards:cautious'"):
        get_architecture("nocards:cautious")


def test_a_broken_plugin_is_one_line_where_its_names_are_used(
    plugin_file: Callable[[str, str], Path],
) -> None:
    path = plugin_file("broken", BROKEN)
    failed = f"plugin 'broken' ({path}) failed to load: RuntimeError: the deck is missing"
    for use in (
        lambda: get_strategy("broken:Bluffer(0.3)"),
        lambda: get_architecture("broken:cautious"),
        lambda: create_provider(ModelConfig(model="broken:last/x")),
        lambda: check_model("broken:last/x"),
    ):
        with pytest.raises(StratagemError) as info:
            use()
        assert failed in str(info.value) and "\n" not in str(info.value)
    assert str(info.value).startswith("model provider 'broken:last': ")
    # Nothing else minds.
    assert type(get_strategy("TitForTat")) is TitForTat
    assert get_architecture("plain").name == "plain"
    assert create_provider(ModelConfig(model="scripted/echo")).model == "scripted/echo"


def test_an_experiment_plays_the_plugin_strategy_architecture_and_model(
    plugin_file: Callable[[str, str], Path], tmp_path: Path
) -> None:
    plugin_file("cards", CARDS)
    data = experiment(
        tmp_path,
        models=[{"model": "cards:last/any"}],
        agents=[{"name": "careful", "kind": "cards:cautious"}],
        games=["pd"],
        opponents=["cards:Bluffer(0)", "cards:TitForTat"],
        rounds=[3],
    )
    summary = asyncio.run(Runner(config_from_dict(data, "plugins"), show_progress=False).run())
    assert summary.finished == 2
    with stratagem.open(tmp_path / "out") as results:
        seats, rounds, calls = results.seats, results.rounds, results.calls
    assert set(seats["name"]) == {"careful:cards:last/any", "cards:Bluffer(0)", "cards:TitForTat"}
    assert set(seats["kind"]) == {"llm", "strategy"}
    assert set(calls["model"]) == {"cards:last/any"}
    llm = rounds[rounds["seat"] == 0]
    bots = rounds[rounds["seat"] == 1]
    assert set(llm["action"]) == {"defection"}  # the provider's last choice, each round
    assert set(bots["action"]) == {"cooperation"}  # Bluffer(0) and the plugin's TitForTat


def test_a_broken_plugin_strategy_in_a_line_up_names_the_field(
    plugin_file: Callable[[str, str], Path], tmp_path: Path
) -> None:
    path = plugin_file("broken", BROKEN)
    data = experiment(tmp_path, opponents=["broken:Bluffer"])
    with pytest.raises(StratagemError, match=f"plugin 'broken' \\({path}\\) failed to load"):
        asyncio.run(Runner(config_from_dict(data, "plugins"), show_progress=False).run())


def test_registrations_in_process_keep_their_names() -> None:
    class Greedy(TitForTat):
        name = "Greedy"

    assert register_strategy("Greedy", Greedy) == "Greedy"
    try:
        assert type(get_strategy("greedy")) is Greedy
        for taken in ("TitForTat", "tit_for_tat", "TFT", "Greedy"):
            with pytest.raises(StratagemError, match="already"):
                register_strategy(taken, Greedy)
        for bad in ("Greedy(2)", "x:Greedy", "", "1st"):
            with pytest.raises(StratagemError, match="strategy name"):
                register_strategy(bad, Greedy)
    finally:
        STRATEGIES.remove("Greedy")
    architecture = get_architecture("plain")
    with pytest.raises(StratagemError, match="registered twice"):
        register(architecture)


def test_game_prompts_go_to_the_exact_class() -> None:
    class Variant(UltimatumGame):
        """A plugin's game that subclasses a built-in one."""

    class Unprompted(UltimatumGame):
        pass

    own = game_prompts.GamePrompts("variant", directory=Path("/prompts"))
    builtin = game_prompts.prompts_for(UltimatumGame())
    assert builtin is not None and builtin.folder == "ultimatum"
    with pytest.raises(StratagemError, match="UltimatumGame: already registered"):
        game_prompts.register_prompts(UltimatumGame, own)
    game_prompts.register_prompts(UltimatumGame, builtin)  # the same again: no clash
    game_prompts.register_prompts(Variant, own)
    try:
        assert game_prompts.prompts_for(Variant()) is own
        assert game_prompts.prompts_for(UltimatumGame()) is builtin
        assert game_prompts.prompts_for(Unprompted()) is None
    finally:
        del game_prompts.GAME_PROMPTS[Variant]


BOTS = """
from stratagem import register
from stratagem.games.spaces import Choice
from stratagem.strategies.game_bots import GameBot


class Halves(GameBot):
    \"\"\"Offers half (or `share` of) the pie and accepts every offer: a bot of whole games.\"\"\"

    name = "Halves"

    def __init__(self, share=0.5):
        self.share = share

    def check(self, game, seat):
        pass

    def act(self, observation, rng):
        legal = observation.legal
        if isinstance(legal, Choice):
            return legal.labels[0]
        return round(legal.low + self.share * (legal.high - legal.low))


register.strategy("Halves", Halves)
"""


def test_a_plugin_bot_of_whole_games_takes_a_seat(
    plugin_file: Callable[[str, str], Path], tmp_path: Path
) -> None:
    plugin_file("bots", BOTS)
    data = experiment(tmp_path, games=["ultimatum"], opponents=[],
                      lineups=[["bots:Halves", "bots:halves(0.3)"]])  # fmt: skip
    summary = asyncio.run(Runner(config_from_dict(data, "bots"), show_progress=False).run())
    assert (summary.finished, summary.failed) == (1, 0)
    with ResultStore(tmp_path / "out" / "stratagem.db") as store:
        (episode,) = store.episodes()
    assert episode.payoffs == (50.0, 50.0)  # seat 0 offered half; seat 1 accepted
    assert [p["name"] for p in episode.players] == ["bots:Halves", "bots:halves(0.3)"]
    assert episode.spec["plugins"][0]["plugin"] == "bots"
