"""OpenSpiel's rules texts are data: rendered with the game string's parameters, replaced by an
experiment's prompt variant as any template is (a rules file of the variant's `openspiel/rules/`
folder), and a game without a text of its own is described from OpenSpiel's game type and
parameters, saying that no rules text exists (issue 37 items 2 and 3)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml

from stratagem.agents.game_prompts import GamePrompter, prompts_for
from stratagem.experiments.config import load_config
from stratagem.experiments.grid import expand
from stratagem.experiments.runner import STORE_FILE, Runner
from stratagem.experiments.store import ResultStore
from stratagem.games.catalog import get_game

pytest.importorskip("pyspiel")


def system_prompt(game_string: str) -> str:
    game = get_game(f"openspiel:{game_string}")
    prompts = prompts_for(game)
    assert prompts is not None
    state = game.initial_state(0)
    return GamePrompter(game, prompts).system(state.observation(state.to_act()[0]))


def test_a_rules_text_follows_the_game_strings_parameters() -> None:
    assert "a grid of 19x19 points" in system_prompt("go")
    nine = system_prompt("go(board_size=9)")
    assert "a grid of 9x9 points" in nine and "White adds 7.5 points" in nine
    dice = system_prompt("liars_dice(numdice=2,bidding_rule=reset-quantity)")
    assert "rolls 2 dice with 6 faces" in dice and "a higher face (any number" in dice
    assert "The deck has 4 cards, numbered 0" in system_prompt("kuhn_poker(players=3)")


def test_a_game_without_a_rules_text_is_described_from_openspiel_and_says_so() -> None:
    text = system_prompt("nim")
    assert "stratagem has no rules text for this game" in text
    assert "In Nim, the players take turns, there is no chance" in text
    assert "pile_sizes=1;3;5;7" in text and "between -1 and 1" in text


def test_the_payoffs_of_a_matrix_game_come_from_the_game() -> None:
    text = system_prompt("repeated_game(stage_game=matrix_sh(),num_repetitions=4)")
    assert "played 4 times in a row" in text
    assert "player 0 plays Stag and player 1 plays Hare: player 0 gets 0, player 1 gets 1" in text


def test_an_experiments_prompt_variant_replaces_or_adds_rules_texts(tmp_path: Path) -> None:
    """`prompts: [{name: house, templates: ./house}]` with `house/openspiel/rules/<game>.md`:
    the variant's episodes are told its texts, the base episodes the packaged ones."""
    rules = tmp_path / "house" / "openspiel" / "rules"
    rules.mkdir(parents=True)
    (rules / "kuhn_poker.md").write_text("House rules for {{ params.players }} players.\n")
    (rules / "nim.md").write_text("Nim as we play it: piles {{ params.pile_sizes }}.\n")
    config = {
        "name": "rules",
        "output": str(tmp_path / "out"),
        "models": [{"model": "scripted/first"}],
        "agents": [{"name": "plain"}],
        "games": ["openspiel:kuhn_poker", "openspiel:nim"],
        "lineups": [["plain", "openspiel-random"]],
        "seeds": [0],
        "prompts": [{"name": "base"}, {"name": "house", "templates": "./house"}],
    }
    path = tmp_path / "rules.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    summary = asyncio.run(Runner(load_config(path), show_progress=False).run())
    assert (summary.finished, summary.failed) == (4, 0), summary.errors
    told: dict[tuple[str, bool], set[str]] = {}
    with ResultStore(tmp_path / "out" / STORE_FILE) as store:
        for episode in store.episodes():
            house = "prompt" in episode.spec
            for call in store.llm_calls(episode.id):
                system = call.request["messages"][0]["content"]
                told.setdefault((episode.game, house), set()).add(system)
    kuhn, nim = "openspiel:kuhn_poker", "openspiel:nim"
    assert all("Rules of Kuhn poker" in s for s in told[kuhn, False])
    assert all("House rules for 2 players." in s for s in told[kuhn, True])
    assert not any("Rules of Kuhn poker" in s for s in told[kuhn, True])
    assert all("stratagem has no rules text" in s for s in told[nim, False])
    assert all("Nim as we play it: piles 1;3;5;7." in s for s in told[nim, True])


def test_the_measuring_example_plays_20_games_of_each_game_in_both_seats() -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "openspiel-rules.yaml"
    specs = expand(load_config(example))
    assert len(specs) == 120  # 3 games x 2 agents x 2 seats x 10 seeds
    for game in ("openspiel:tic_tac_toe", "openspiel:kuhn_poker", "openspiel:liars_dice"):
        for agent in ("plain", "plain-free"):
            seats = [s for s in specs if s.game == game and agent in [x.label for x in s.seats]]
            assert len(seats) == 20


def test_a_battleship_seat_is_shown_its_own_grids_and_never_the_others_ships() -> None:
    """Battleship's observation string draws the seat's grid and its shots; the turn shows it
    beside the information state, and the rules text says how to read it."""
    game = get_game(
        "openspiel:battleship(board_width=4,board_height=4,ship_sizes=[2],ship_values=[1],"
        "num_shots=4)"
    )
    state = game.initial_state(0)
    for move in ("horizontally with top-left corner in (0, 0)", "vertically with top-left "
                 "corner in (2, 3)"):  # fmt: skip
        seat = state.to_act()[0]
        state, _ = state.apply({seat: f"Pl{seat}: place ship {move}"})
    state, _ = state.apply({0: "Pl0: shoot at (2, 3)"})  # a hit on seat 1's ship
    prompter = GamePrompter(game, prompts_for(game))  # type: ignore[arg-type]
    mine = prompter.turn(state.observation(0), "Reply.")
    theirs = prompter.turn(state.observation(1), "Reply.")
    assert "|aa  |" in mine and "|   #|" in mine  # its ship; its shot that hit
    assert "|aa  |" not in theirs and "|   A|" in theirs  # its own ship, hit; not seat 0's
    assert "Your grids now (your observation):" in mine
    assert '"#" a hit' in prompter.system(state.observation(0))
    kuhn = get_game("openspiel:kuhn_poker").initial_state(0)
    assert all(kuhn.observation(p).view == "" for p in (0, 1))  # type: ignore[attr-defined]
