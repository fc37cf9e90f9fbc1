"""`stratagem.testing`: every built-in game passes the conformance checks (OpenSpiel and
TextArena samples included), architectures answer every action space of the games they claim,
and each check fails on a toy game broken in its way (so none of them passes by construction)."""

from __future__ import annotations

import json
import re
import sqlite3
from importlib.util import find_spec
from pathlib import Path

import pytest
from support.high_card import CARDS, HighCard
from support.plugin_files import named_plugin

from stratagem import testing
from stratagem.errors import StratagemError
from stratagem.experiments import conformance as runs
from stratagem.games.catalog import GAMES
from stratagem.llm.types import Request

OPENSPIEL = pytest.mark.skipif(find_spec("pyspiel") is None, reason="OpenSpiel not installed")
TEXTARENA = pytest.mark.skipif(find_spec("textarena") is None, reason="TextArena not installed")

BUILTIN = [f"{name}/0" if GAMES[name].settings else name for name in GAMES.builtin_names()]
LIBRARIES = [
    pytest.param("openspiel:kuhn_poker", marks=OPENSPIEL),
    pytest.param("openspiel:tic_tac_toe", marks=OPENSPIEL),
    pytest.param("openspiel:leduc_poker", marks=OPENSPIEL),
    pytest.param("textarena:TicTacToe-v0", marks=TEXTARENA),
    pytest.param("textarena:KuhnPoker-v0", marks=TEXTARENA),
]


@pytest.mark.parametrize("game", [*BUILTIN, *LIBRARIES])
def test_every_builtin_game_conforms(game: str) -> None:
    testing.check_game(game, seeds=(0, 1))


def test_the_catalog_sample_covers_every_family() -> None:
    """The parametrisation above reaches every built-in game, not a fixed list gone stale."""
    assert len(BUILTIN) == len(GAMES.builtin_names()) >= 19
    assert {"chameleon/0", "tradecraft/0", "ultimatum", "dilemma"} <= set(BUILTIN)


# -- architectures --------------------------------------------------------------------------------


def first_available(request: Request) -> str:
    """TicTacToe's first available square, as its latest board lists them."""
    prompt = next(m.content for m in request.messages if m.role == "user")
    listed = prompt.rsplit("Available Moves:", 1)[1].splitlines()[0]
    return str(re.findall(r"\[\d\]", listed)[0])


@pytest.mark.parametrize(
    ("kind", "game", "settings", "spaces"),
    [
        ("plain", "dilemma", {}, {"Choice"}),
        ("plain", "ultimatum", {}, {"IntegerRange", "Choice"}),
        ("plain", "public-good/0", {}, {"IntegerRange"}),
        ("plain", "dilemma-talk", {}, {"FreeText", "Choice"}),
        pytest.param("plain", "openspiel:kuhn_poker", {}, {"Choice"}, marks=OPENSPIEL),
        ("debate", "dilemma", {"attitude": "cooperate", "framing": "prisoner"}, {"Choice"}),
        ("tool", "delight", {"attitude": "defect", "framing": "prisoner"}, {"Choice"}),
        ("magic", "cost-sharing/0", {}, {"Shares", "Choice"}),
        ("magic", "chameleon/0", {}, {"FreeText", "Choice"}),
        ("pgm", "undercover/0", {}, {"FreeText", "Choice"}),
        ("tom", "tradecraft/0", {}, {"ProposalSpace", "DecisionSpace", "CraftSpace"}),
    ],
)
def test_architectures_answer_every_space_of_the_games_they_claim(
    kind: str, game: str, settings: dict[str, str], spaces: set[str]
) -> None:
    assert testing.check_architecture(kind, game, settings=settings) == spaces


@TEXTARENA
def test_an_architecture_on_textarena_needs_a_model_that_writes_its_moves() -> None:
    answered = testing.check_architecture("plain", "textarena:TicTacToe-v0", reply=first_available)
    assert answered == {"TextArenaMove"}
    # The default model writes a line of prose, which TextArena refuses as a move.
    with pytest.raises(AssertionError, match=r"seat 0 gave no valid answer to a TextArenaMove"):
        testing.check_architecture("plain", "textarena:TicTacToe-v0")


def test_an_architecture_is_checked_only_on_games_it_claims() -> None:
    with pytest.raises(AssertionError, match="a tool agent does not claim to play ultimatum"):
        testing.check_architecture("tool", "ultimatum")
    with pytest.raises(StratagemError, match="unknown architecture 'nobody'"):
        testing.check_architecture("nobody", "ultimatum")


def test_a_model_that_breaks_the_format_fails_the_architecture_check() -> None:
    refused = r"plain agent in seat 0 gave no valid answer to a IntegerRange: .*expected 0\.\.100"
    with pytest.raises(AssertionError, match=refused):
        testing.check_architecture("plain", "ultimatum", reply=lambda r: '{"offer": 1000}')


# -- a toy game, correct and broken ---------------------------------------------------------------


def test_a_correct_toy_game_passes_every_check() -> None:
    """A `Game` object is checked as a registered game is, through the runner and the store too,
    and leaves no name behind."""
    before = set(GAMES)
    testing.check_game(HighCard(), seeds=(0, 1, 2))
    assert set(GAMES) == before


def test_a_game_that_ignores_its_seed_fails_determinism_and_replay() -> None:
    differs = r"high-card is not deterministic given its seed: seed \d, step 0, .*card"
    with pytest.raises(AssertionError, match=differs):
        testing.check_determinism(HighCard(fickle=True), seeds=range(5))
    with pytest.raises(AssertionError, match=r"the engine's replay differs from the episode"):
        testing.check_replay(HighCard(fickle=True), seeds=range(5))


def test_a_game_that_accepts_an_illegal_action_fails() -> None:
    accepted = r"high-card, seed 0, step 0: seat 0's None in Choice is accepted"
    with pytest.raises(AssertionError, match=accepted):
        testing.check_illegal_refused(HighCard(lenient=True))


def test_a_nan_payoff_fails() -> None:
    with pytest.raises(AssertionError, match=r"step 1 \(the end\): payoff of player 1 is nan"):
        testing.check_payoffs_finite(HighCard(nan=True), seeds=range(10))


def test_an_observation_with_another_seats_card_fails() -> None:
    leak = r"seat 0: observation field 'opponent_card' contains '\w+', from a 'deal' event "
    with pytest.raises(AssertionError, match=leak + r"visible only to seats \[1\]"):
        testing.check_private_information(HighCard(leak=True))


def test_words_the_rules_show_every_seat_can_be_declared_public() -> None:
    """A hidden event may share a word with what every seat is told (the rules); naming it public
    keeps the check from failing on it, and only on it."""
    leaky = HighCard(leak=True)
    testing.check_private_information(leaky, seeds=range(3), public_words=[c for c in CARDS])
    with pytest.raises(AssertionError, match="opponent_card"):
        testing.check_private_information(leaky, seeds=range(3), public_words=CARDS[:2])


def test_a_prompt_holding_another_seats_word_fails(tmp_path: Path) -> None:
    """The prompt check on a real Chameleon episode: its prompts pass; the same store with the
    secret word written into a prompt of the chameleon's seat (seat 2 in setting 0) fails."""
    store = runs.play(
        "chameleon/0", tmp_path, seeds=(0,), rounds=3, options={}, architecture="magic"
    )
    assert runs.check_prompts_private(store, "chameleon/0") > 0
    with sqlite3.connect(store) as db:
        row_id, text = db.execute(
            "SELECT id, request FROM llm_calls WHERE player = 2 ORDER BY id DESC LIMIT 1"
        ).fetchone()
        request = json.loads(text)
        request["messages"][-1]["content"] += "\nPsst: the word is Grape."
        db.execute("UPDATE llm_calls SET request = ? WHERE id = ?", (json.dumps(request), row_id))
    leak = r"the prompt of seat 2 contains 'grape', from a 'moderator' event visible only to seats"
    with pytest.raises(AssertionError, match=leak + r" \[[01]\]"):
        runs.check_prompts_private(store, "chameleon/0")


def test_a_game_is_named_or_given() -> None:
    with pytest.raises(StratagemError, match="unknown game 'no-such-game'"):
        testing.check_payoffs_finite("no-such-game")
    with pytest.raises(StratagemError, match="has no option 'pies'"):
        testing.check_payoffs_finite("ultimatum", pies=3)
    with pytest.raises(StratagemError, match="name the game as registered to set its options"):
        testing.check_payoffs_finite(HighCard(), pie=3)
    testing.check_payoffs_finite("ultimatum", pie=10)


# -- a plugin's game, by its namespaced name ------------------------------------------------------

PLUGIN = '''
"""A plugin registering High Card (a class of its own) with prompts for the plain agent."""
from stratagem import register
from support.high_card import HighCard


class PluginHighCard(HighCard):
    pass


register.game("high-card", PluginHighCard, prompts="prompts")
'''


def test_a_plugins_game_is_checked_by_its_namespaced_name(tmp_path: Path) -> None:
    """As a plugin author's suite runs it: the game through the runner and the importer by its
    `<namespace>:<name>`, with its own prompts, so the plain agent's prompts are checked too;
    its factory's options reach it (here: the option that leaks the other seat's card)."""
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "system.j2").write_text("You play High Card as seat {{ seat }}.")
    (tmp_path / "prompts" / "turn.j2").write_text("Your card: {{ obs.card }}.\n{{ reply }}")
    (tmp_path / "cards.py").write_text(PLUGIN, encoding="utf-8")
    with named_plugin(tmp_path / "cards.py"):
        testing.check_game("cards:high-card", seeds=(0, 1))
        assert testing.check_architecture("plain", "cards:high-card") == {"Choice"}
        with pytest.raises(AssertionError, match="cards:high-card, seed 0, step 0, seat 0: obs"):
            testing.check_private_information("cards:high-card", leak=True)
