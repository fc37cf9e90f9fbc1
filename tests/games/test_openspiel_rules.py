"""Every curated OpenSpiel rules text, played: the embedded model in seat 0 against OpenSpiel's
random player for the first moves of each game, through the episode loop into a real store. Each
prompt must carry the game's own rules text and the seat's state as OpenSpiel prints it, and every
decision must be recorded (issue 37 item 2)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from stratagem.agents.base import Agent
from stratagem.agents.game_bot_agent import GameBotAgent
from stratagem.agents.game_prompts import prompts_for
from stratagem.agents.general import GeneralLLMAgent
from stratagem.experiments.call_writer import CallWriter
from stratagem.experiments.episode import play_episode
from stratagem.experiments.runner import RunSummary
from stratagem.experiments.store import ResultStore
from stratagem.games.base import Event, Game, Observation, State
from stratagem.games.catalog import get_game
from stratagem.games.openspiel import OpenSpielGame
from stratagem.games.openspiel.facts import RULES
from stratagem.games.spaces import Action, ActionSpace
from stratagem.llm.pipeline import build_client
from stratagem.llm.registry import ModelConfig
from stratagem.strategies.openspiel_bots import OpenSpielRandom

pytest.importorskip("pyspiel")

GAMES = {
    "backgammon": "backgammon",
    "bargaining": "bargaining",
    "battleship": "battleship(board_width=4,board_height=4,ship_sizes=[2;3],"
    "ship_values=[1.0;1.0],num_shots=6)",
    "breakthrough": "breakthrough(rows=5,columns=4)",
    "bridge": "bridge",
    "chess": "chess",
    "connect_four": "connect_four(rows=4,columns=5)",
    "dots_and_boxes": "dots_and_boxes",
    "first_sealed_auction": "first_sealed_auction",
    "go": "go(board_size=9)",
    "goofspiel": "goofspiel(num_cards=4)",
    "hearts": "hearts",
    "hex": "hex(board_size=5)",
    "kuhn_poker": "kuhn_poker",
    "leduc_poker": "leduc_poker",
    "liars_dice": "liars_dice",
    "matrix_coordination": "matrix_coordination",
    "matrix_pd": "matrix_pd",
    "matrix_sh": "matrix_sh",
    "oware": "oware(num_houses_per_player=3,num_seeds_per_house=2)",
    "repeated_game": "repeated_game(stage_game=matrix_pd(),num_repetitions=3)",
    "tic_tac_toe": "tic_tac_toe",
    "tiny_bridge_2p": "tiny_bridge_2p",
    "trade_comm": "trade_comm",
}
"""The game string each rules text is played under: small boards where a parameter allows, so
the prompts stay short."""

CAP = 2
"""Steps after which a game is stopped: its first moves show whether its prompt works."""
SEED = 3


@dataclass
class Capped(Game):
    """A game stopped after `CAP` steps (the test's bound on long games; OpenSpiel has none)."""

    inner: OpenSpielGame

    def __post_init__(self) -> None:
        self.name, self.n_players = self.inner.name, self.inner.n_players

    def initial_state(self, seed: int = 0) -> CappedState:
        return CappedState(self, self.inner.initial_state(seed), 0)


@dataclass(frozen=True)
class CappedState(State):
    game: Capped
    inner: State
    steps: int

    def to_act(self) -> tuple[int, ...]:
        return () if self.is_terminal() else self.inner.to_act()

    def legal(self, player: int) -> ActionSpace:
        return self.inner.legal(player)

    def observation(self, player: int) -> Observation:
        return self.inner.observation(player)

    def is_terminal(self) -> bool:
        return self.inner.is_terminal() or self.steps >= CAP

    def payoffs(self) -> tuple[float, ...]:
        return self.inner.payoffs()

    def opening(self) -> tuple[Event, ...]:
        return self.inner.opening()

    def fallback(self, player: int) -> Action:
        return self.inner.fallback(player)

    def _next(self, actions: Mapping[int, Action]) -> tuple[State, list[Event]]:
        after, events = self.inner.apply(actions)
        return CappedState(self.game, after, self.steps + 1), events


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ResultStore]:
    """Every game of `GAMES` played once into one store, the model's calls recorded in it."""
    path = tmp_path_factory.mktemp("rules") / "stratagem.db"
    store = ResultStore(path)
    store.create_experiment("rules", "rules")
    recorder = CallWriter(store, RunSummary("rules", len(GAMES)))
    client = build_client(ModelConfig(model="local/gemma-3-270m"), recorder=recorder)
    for name, game_string in GAMES.items():
        game = get_game(f"openspiel:{game_string}")
        assert isinstance(game, OpenSpielGame)
        llm = GeneralLLMAgent(client, game, prompts_for(game), temperature=0.0, max_reasks=1)
        agents: list[Agent] = [llm]
        agents += [GameBotAgent(OpenSpielRandom()) for _ in range(game.n_players - 1)]
        players: list[Any] = [{"name": llm.name, "kind": "llm"}]
        players += [{"name": "openspiel-random"}] * (game.n_players - 1)
        store.add_episode(name, "rules", game.name, players, SEED)
        store.start_episode(name)
        for agent in agents:
            agent.reset(SEED, name)
        end = asyncio.run(play_episode(store, name, Capped(game), agents, SEED))
        assert isinstance(end, CappedState)
        store.finish_episode(name, end.payoffs())
    yield store
    store.close()


def rules_title(name: str) -> str:
    """The first line of a rules text after its comment, up to any template tag ("Rules of
    chess:", "Rules of contract bridge")."""
    text = re.sub(r"\{#.*?#\}", "", (RULES / f"{name}.md").read_text(encoding="utf-8"), flags=re.S)
    return re.split(r"\{[{%]", text.strip().splitlines()[0])[0]


def test_every_rules_text_is_played_here() -> None:
    assert sorted(GAMES) == sorted(path.stem for path in RULES.glob("*.md"))


@pytest.mark.parametrize("name", sorted(GAMES))
def test_each_prompt_carries_the_rules_and_the_seats_board(store: ResultStore, name: str) -> None:
    (episode,) = [e for e in store.episodes() if e.id == name]
    assert episode.status == "finished"
    decisions = [e for e in store.events(name, "decision") if e.player == 0]
    calls = [c for c in store.llm_calls(name) if c.player == 0]
    assert decisions and all(d.data["valid"] for d in decisions), decisions
    assert len(calls) >= len(decisions)
    events = store.events(name)
    title = rules_title(name)
    for call in calls:
        system, user = (m["content"] for m in call.request["messages"])
        assert title in system and "stratagem has no rules text" not in system
        # The seat's latest board before the call, as the store recorded it for seat 0.
        boards = [
            e.data["board"]
            for e in events
            if e.seq < call.request["after_events"]
            and e.kind == "board"
            and e.visible(0)
            and e.data.get("player", 0) == 0
        ]
        assert boards and boards[-1] in user, (boards[-1:], user)
