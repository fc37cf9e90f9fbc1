"""The packaged translated prompt set `translated-fr` (issue 35 item 3): the neutral framing of the
repeated Prisoner's Dilemma family in French, with the English templates' facts (every payoff,
the actions, the rounds) and their answer format (the labels as the game names them, the JSON key,
the [move] tag), so the parsers read its replies; a short episode per output format with a
scripted model that answers what the French prompt asks, every move valid."""

from __future__ import annotations

import asyncio
import re
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from stratagem.agents.history_views import HistoryView
from stratagem.agents.parsing import PARSERS
from stratagem.agents.prompt_variants import PACKAGED, packaged_variants, variant_folder
from stratagem.agents.prompts import Prompter
from stratagem.analysis.episodes import load_episodes
from stratagem.experiments.config import config_from_dict
from stratagem.experiments.runner import STORE_FILE, Runner
from stratagem.experiments.store import ResultStore
from stratagem.games.catalog import get_stage
from stratagem.games.matrix.repeated import RepeatedGame, RepeatedObservation, RepeatedState
from stratagem.llm.providers.scripted import _REGISTERED, register_script
from stratagem.llm.types import Request

FR = "translated-fr"
ENGLISH = PACKAGED.parent / "neutral"
OUTCOME = re.compile(r"'(\w+)'.*?'(\w+)'.*?(\d+) points.*?(\d+) points")


def observation(
    moves: list[tuple[str, str]], player: int = 0, rounds: int = 6
) -> RepeatedObservation:
    state: RepeatedState = RepeatedGame(get_stage("dilemma"), rounds).initial_state()
    for a, b in moves:
        nxt, _ = state.apply({0: a, 1: b})
        assert isinstance(nxt, RepeatedState)
        state = nxt
    return state.observation(player)


def french(output: str = "choice", **kwargs: object) -> Prompter:
    return Prompter("neutral", output, templates=variant_folder(FR), **kwargs)  # type: ignore[arg-type]


def test_every_worded_file_of_the_neutral_framing_is_translated() -> None:
    assert FR in packaged_variants()
    mine = sorted(p.name for p in (PACKAGED / FR / "neutral").iterdir())
    # result.j2 holds no words of its own (it is round.j2's text); reask.j2 is _common's.
    worded = sorted(p.name for p in ENGLISH.iterdir() if p.name != "result.j2")
    assert mine == sorted([*worded, "reask.j2"])


@pytest.mark.parametrize("player", [0, 1])
def test_the_system_prompt_states_the_english_facts(player: int) -> None:
    obs = observation([], player, rounds=7)
    english, text = Prompter("neutral").system(obs), french().system(obs)
    assert "Vous jouez à un jeu avec un autre joueur." in text
    assert "La partie dure 7 manches." in text and "'cooperate' ou 'defect'" in text
    assert sorted(OUTCOME.findall(text)) == sorted(OUTCOME.findall(english))
    assert len(OUTCOME.findall(text)) == 4
    assert "7" not in french(reveal_rounds=False).system(obs)


@pytest.mark.parametrize("output", ["choice", "json", "tag"])
def test_the_decision_keeps_the_answer_format_the_parser_reads(output: str) -> None:
    obs = observation([("cooperate", "defect"), ("defect", "defect")])
    text = french(output).decision(obs)
    assert text.startswith("Manches précédentes :\nManche 1 : vous avez choisi 'cooperate' et "
                           "l'autre joueur a choisi 'defect' ; vous avez obtenu 0 points et "
                           "l'autre joueur 15 points.\n")  # fmt: skip
    assert "Manche 3 sur 6 : choisissez votre action." in text
    assert "'cooperate' ou 'defect', écrite exactement ainsi" in text  # the labels as named
    wanted = {"json": '{"DECISION": "<votre action>"}', "tag": "[move]", "choice": "uniquement"}
    assert wanted[output] in text
    # A reply as the instruction asks reads as the action.
    reply = {"json": '{"DECISION": "defect"}', "tag": "[move] (par prudence) defect",
             "choice": "defect"}[output]  # fmt: skip
    assert PARSERS[output]().parse(reply, ("cooperate", "defect")) == "defect"


def test_the_history_views_and_the_reask_are_french() -> None:
    obs = observation([("cooperate", "defect"), ("defect", "defect")])
    table = french(view=HistoryView("table")).decision(obs)
    assert table.startswith("Manches jouées jusqu'ici : 2.")
    assert "- vous 'cooperate' et l'autre joueur 'defect' (vous obtenez 0 points et l'autre " \
        "joueur obtient 15 points) : 1 fois" in table  # fmt: skip
    last = french(view=HistoryView("last", 1)).decision(obs)
    assert "Manche 1 :" not in last and "Manche 2 :" in last
    assert french(history="chat").result(obs).startswith("Manche 2 : vous avez choisi 'defect'")
    assert french().reask("reply with 'cooperate' or 'defect'", obs) == (
        "Votre réponse précédente n'a pas pu être utilisée : reply with 'cooperate' or 'defect'\n"
        "Veuillez répondre à nouveau."
    )


SCRIPT = "francophone"
ASKED = re.compile(r"votre action, ((?:'\w+'(?:, | ou )?)+)|est ((?:'\w+'(?:, | ou )?)+)")


def answer(request: Request, sample: int) -> str:
    """A model that reads the French instruction: the labels it names, and the format it asks
    for; it picks a label by the request's text."""
    asked = request.messages[-1].content
    assert "choisissez votre action" in asked, asked
    found = ASKED.search(asked)
    assert found is not None, asked
    labels = re.findall(r"'(\w+)'", found[1] or found[2])
    label = labels[zlib.crc32(asked.encode()) % len(labels)]
    if '{"DECISION"' in asked:
        return f'Voici ma décision : {{"DECISION": "{label}"}}'
    if "[move]" in asked:
        return f"[move] (après réflexion) {label}"
    return label


@pytest.fixture
def model() -> Iterator[None]:
    register_script(SCRIPT, answer)
    yield
    _REGISTERED.pop(SCRIPT, None)


def test_episodes_under_the_french_prompts_read_every_reply(tmp_path: Path, model: None) -> None:
    entry = {"framing": "neutral", "constrain": False, "max_reasks": 0}
    data = {
        "name": "fr",
        "output": str(tmp_path),
        "models": [{"model": f"scripted/{SCRIPT}"}],
        "agents": [
            {"name": "choice", "output": "choice", **entry},
            {"name": "json", "output": "json", **entry},
            {"name": "tag", "output": "tag", **entry},
            {"name": "chat", "output": "json", "history": "chat", **entry},
        ],
        "prompts": [{"name": "fr", "templates": FR}],
        "games": ["dilemma"],
        "opponents": ["TitForTat"],
        "rounds": [4],
        "seeds": [0],
    }  # fmt: skip
    summary = asyncio.run(Runner(config_from_dict(data, "test"), show_progress=False).run())
    assert summary.failed == 0, summary.errors
    with ResultStore(tmp_path / STORE_FILE) as store:
        episodes = load_episodes(store, "fr")
        assert len(episodes) == 4
        for e in episodes:
            assert e.decisions(0) == (4, 0), e.agent_name  # 4 valid moves, none invalid
            calls = store.llm_calls(e.record.id)
            assert len(calls) == 4
            system = calls[0].request["messages"][0]["content"]
            assert system.startswith("Vous jouez à un jeu avec un autre joueur.")
        played = {r.actions[0] for e in episodes for r in e.rounds}
        assert played == {"cooperate", "defect"}
