"""Prompt variants: every packaged paraphrase renders the neutral framing's facts in its own words
with the reply instruction unchanged, each history view shows the past in its form, a variant's
folder replaces only the files it has, and the checks refuse a variant a seat cannot play."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from stratagem.agents import DebateAgent, PlainLLMAgent, ToolAgent
from stratagem.agents.game_prompts import GamePrompter, prompts_for
from stratagem.agents.history_views import FULL, HistoryView
from stratagem.agents.prompt_variants import (
    PACKAGED,
    PLUGIN_VARIANTS,
    PromptSet,
    check_variant,
    game_prompts_for,
    packaged_variants,
    prompter_for,
    register_variant,
    variant_folder,
)
from stratagem.agents.prompts import Prompter, framings
from stratagem.agents.registry import build_agent
from stratagem.errors import StratagemError
from stratagem.experiments.config import AgentEntry
from stratagem.games.catalog import get_game, get_stage
from stratagem.games.matrix.repeated import RepeatedGame, RepeatedObservation, RepeatedState

PARAPHRASES = ["paraphrase-1", "paraphrase-2", "paraphrase-3"]
MOVES = [("cooperate", "defect"), ("defect", "defect"), ("defect", "cooperate")]
"""Three rounds of the Dilemma from seat 0: S (0, 15), P (5, 5), T (15, 0)."""

# How each variant's round.j2 tells round 2 (defect, defect) to seat 0.
ROUND_2 = {
    "neutral": "Round 2: you chose 'defect' and the other player chose 'defect'; you got 5 "
    "points and the other player got 5 points.",
    "paraphrase-1": "Round 2: you picked 'defect' and the other player picked 'defect'; you "
    "scored 5 points and the other player scored 5 points.",
    "paraphrase-2": "Round 2 | you: 'defect' | other player: 'defect' | points: you 5, other "
    "player 5",
    "paraphrase-3": "In round 2 you played 'defect' while the other player played 'defect', "
    "which gave you 5 points and the other player 5 points.",
}
HEADER = {
    "neutral": "Previous rounds:",
    "paraphrase-1": "What happened so far:",
    "paraphrase-2": "History:",
    "paraphrase-3": "Here is how the earlier rounds went:",
}


def dilemma(rounds: int = 10, moves: list[tuple[str, str]] = MOVES) -> RepeatedObservation:
    state: RepeatedState = RepeatedGame(get_stage("dilemma"), rounds).initial_state()
    for a, b in moves:
        nxt, _ = state.apply({0: a, 1: b})
        assert isinstance(nxt, RepeatedState)
        state = nxt
    return state.observation(0)


def prompter(variant: str | None = None, view: HistoryView = FULL, **kwargs: object) -> Prompter:
    folder = None if variant in (None, "neutral") else variant_folder(str(variant))
    return Prompter("neutral", templates=folder, view=view, **kwargs)  # type: ignore[arg-type]


def test_the_packaged_variants_are_the_three_paraphrases_and_no_framing() -> None:
    assert packaged_variants() == [*PARAPHRASES, "translated-fr"]  # French: its own tests
    assert "variants" not in framings()
    for name in PARAPHRASES:
        assert sorted(p.name for p in (PACKAGED / name / "neutral").iterdir()) == [
            "decision.j2", "history.j2", "round.j2", "system.j2",
        ]  # fmt: skip


@pytest.mark.parametrize("variant", ["neutral", *PARAPHRASES])
@pytest.mark.parametrize("output", ["choice", "json", "tag"])
def test_every_paraphrase_shows_the_history_and_keeps_the_reply_instruction(
    variant: str, output: str
) -> None:
    after = dilemma()
    text = prompter(variant, output=output).decision(after)
    base = prompter(output=output).decision(after)
    # The history: the variant's header, then every round in its own words, in order.
    assert text.startswith(HEADER[variant] + "\n")
    assert ROUND_2[variant] in text
    lines = text.splitlines()
    rounds = [n for n in (1, 2, 3) if any(re.search(rf"\b[Rr]ound {n}\b", x) for x in lines[1:4])]
    assert rounds == [1, 2, 3]
    assert "'cooperate'" in lines[1] and "'defect'" in lines[1]  # round 1: S
    # The reply instruction is neutral's, word for word: replies parse alike.
    instruction = base.split("choose your action.\n", 1)[1]
    assert text.endswith("\n" + instruction)
    assert (text == base) == (variant == "neutral")


@pytest.mark.parametrize("variant", PARAPHRASES)
@pytest.mark.parametrize("player", [0, 1])
def test_every_paraphrase_states_the_same_facts(variant: str, player: int) -> None:
    """Every payoff of both seats, the actions and the number of rounds, from either seat."""
    state: RepeatedState = RepeatedGame(get_stage("dilemma"), 7).initial_state()
    text = prompter(variant).system(state.observation(player))
    assert text != prompter().system(state.observation(player))
    assert "7 rounds" in text and "'cooperate' or 'defect'" in text
    payoffs = re.findall(r"'(\w+)'.*?'(\w+)'.*?(\d+) points.*?(\d+) points", text)
    assert sorted(payoffs) == [
        ("cooperate", "cooperate", "10", "10"), ("cooperate", "defect", "0", "15"),
        ("defect", "cooperate", "15", "0"), ("defect", "defect", "5", "5"),
    ]  # fmt: skip
    hidden = prompter(variant, reveal_rounds=False).system(state.observation(player))
    assert "7" not in hidden


@pytest.mark.parametrize("variant", ["neutral", *PARAPHRASES])
def test_the_last_rounds_view_shows_only_the_last_k(variant: str) -> None:
    text = prompter(variant, HistoryView("last", 2)).decision(dilemma())
    assert text.startswith(HEADER[variant] + "\n")
    assert ROUND_2[variant] in text
    assert not re.search(r"\b[Rr]ound 1\b", text)
    assert re.search(r"\b[Rr]ound 3\b", text)
    # Before k rounds are played, every round is shown.
    short = prompter(variant, HistoryView("last", 2)).decision(dilemma(moves=MOVES[:1]))
    assert short == prompter(variant).decision(dilemma(moves=MOVES[:1]))


@pytest.mark.parametrize("variant", ["neutral", *PARAPHRASES])
def test_the_table_view_counts_each_joint_outcome_and_tells_the_last_round(variant: str) -> None:
    moves = [*MOVES, ("defect", "defect")]
    text = prompter(variant, HistoryView("table")).decision(dilemma(moves=moves))
    table, _, rest = text.partition("\n\n")
    lines = table.splitlines()
    assert lines[0] == "Rounds played so far: 4. How often each pair of choices happened:"
    assert lines[1:5] == [
        "- you 'cooperate' and the other player 'cooperate' (you get 10 points and the other "
        "player gets 10 points): 0 times",
        "- you 'cooperate' and the other player 'defect' (you get 0 points and the other player "
        "gets 15 points): 1 time",
        "- you 'defect' and the other player 'cooperate' (you get 15 points and the other player "
        "gets 0 points): 1 time",
        "- you 'defect' and the other player 'defect' (you get 5 points and the other player gets "
        "5 points): 2 times",
    ]
    assert lines[5] == "Last round:"
    assert lines[6] == ROUND_2[variant].replace("Round 2", "Round 4").replace("round 2", "round 4")
    assert len(lines) == 7 and "Round 1" not in table
    assert re.search(r"\b[Rr]ound:? 5\b", rest.splitlines()[0])


def test_the_table_counts_forfeits_apart_and_is_seen_from_each_seat() -> None:
    state: RepeatedState = RepeatedGame(get_stage("dilemma"), 5).initial_state()
    state, _ = state.forfeit({0: None, 1: "defect"})
    state, _ = state.forfeit({0: "cooperate", 1: "defect"})
    view = HistoryView("table")
    seat0 = prompter(view=view).history_summary(state.observation(0))
    seat1 = prompter(view=view).history_summary(state.observation(1))
    assert "- a player chose no valid action: 1 time" in seat0
    assert "- you 'cooperate' and the other player 'defect' (you get 0 points and the other " \
        "player gets 15 points): 1 time" in seat0  # fmt: skip
    assert "- you 'defect' and the other player 'cooperate' (you get 15 points and the other " \
        "player gets 0 points): 1 time" in seat1  # fmt: skip


def test_a_view_needs_a_prompt_history_and_the_table_its_template() -> None:
    with pytest.raises(StratagemError, match=r"chat history .* cannot be shown as 'last 3'"):
        Prompter("neutral", history="chat", view=HistoryView("last", 3))
    with pytest.raises(StratagemError, match=r"'prisoner' has no history_table\.j2"):
        Prompter("prisoner", output="json", view=HistoryView("table"))
    with pytest.raises(StratagemError, match="needs a number of rounds"):
        HistoryView("last", 0)
    with pytest.raises(StratagemError, match="only 'last' takes"):
        HistoryView("table", 3)
    # The last-rounds view reads any framing's history.j2: seed-001's counts what it shows.
    text = Prompter("prisoner", output="json", view=HistoryView("last", 2)).decision(dilemma())
    assert "Summary of the last 2 interrogation rounds:" in text


def test_a_variant_folder_replaces_only_the_files_it_has(tmp_path: Path) -> None:
    (tmp_path / "neutral").mkdir()
    (tmp_path / "neutral" / "round.j2").write_text("#{{ r.round }}: {{ r.own }}/{{ r.opponent }}\n")
    mine = Prompter("neutral", templates=tmp_path)
    after = dilemma()
    assert mine.system(after) == prompter().system(after)
    assert mine.decision(after).startswith(
        "Previous rounds:\n#1: cooperate/defect\n#2: defect/defect\n#3: defect/cooperate\n\n"
    )


def test_the_seat_plays_its_entrys_variant() -> None:
    """Every framing architecture builds its prompter with the seat's variant."""
    last = PromptSet(history=HistoryView("last", 1))
    plain = AgentEntry(name="p").with_prompts(last)
    assert prompter_for(plain).view == HistoryView("last", 1)
    assert prompter_for(AgentEntry(name="p")).view == FULL
    game = RepeatedGame(get_stage("dilemma"), 3)
    entries = [
        AgentEntry(name="x", framing="prisoner", output="json"),
        AgentEntry(name="x", kind="tool", framing="prisoner", attitude="compute"),
        AgentEntry(name="x", kind="debate", framing="prisoner", attitude="compute"),
    ]
    for entry in entries:
        kind = entry.kind
        agent = build_agent(entry.with_prompts(last), _NoClient(), game)
        assert isinstance(agent, PlainLLMAgent | ToolAgent | DebateAgent), kind
        assert agent.prompter.view == HistoryView("last", 1), kind


class _NoClient:
    model = "none/none"

    async def generate(self, *args: object, **kwargs: object) -> list[object]:
        raise AssertionError("no call is made")


def test_a_games_own_prompts_take_the_variants_folder_of_that_game(tmp_path: Path) -> None:
    (tmp_path / "ultimatum").mkdir()
    (tmp_path / "ultimatum" / "system.j2").write_text("Seat {{ seat }} of an ultimatum.\n")
    game = get_game("ultimatum")
    entry = AgentEntry(name="p").with_prompts(PromptSet(templates=tmp_path))
    prompts = game_prompts_for(entry, game)
    assert prompts is not None and prompts.overlay == tmp_path
    observation = game.initial_state().observation(0)
    assert GamePrompter(game, prompts).system(observation) == "Seat 0 of an ultimatum."
    base = prompts_for(game)
    assert base is not None
    assert GamePrompter(game, prompts).turn(observation, "R") == GamePrompter(game, base).turn(
        observation, "R"
    )
    # A variant without the game's folder leaves its prompts as they are.
    assert game_prompts_for(AgentEntry(name="p").with_prompts(PromptSet(tmp_path / "x")), game) \
        == base  # fmt: skip


def check(prompts: PromptSet, entry: AgentEntry, game: str = "dilemma") -> None:
    built = get_game(game)
    if game == "dilemma":
        built = RepeatedGame(get_stage("dilemma"), 5)
    check_variant(prompts, entry, built, game)


def test_check_variant_refuses_what_a_seat_cannot_play(tmp_path: Path) -> None:
    para = PromptSet(templates=variant_folder("paraphrase-1"))
    check(para, AgentEntry(name="p"))
    debate = AgentEntry(name="d", kind="debate", framing="prisoner", attitude="compute")
    check(PromptSet(history=HistoryView("last", 1)), debate)
    with pytest.raises(StratagemError, match=r"^templates: .* has no 'prisoner' folder, so agent "
                       r"'p' would play its usual prompts in 'dilemma'"):  # fmt: skip
        check(para, AgentEntry(name="p", framing="prisoner", output="json"))
    with pytest.raises(StratagemError, match=r"^history: .* has no history_table\.j2"):
        check(PromptSet(history=HistoryView("table")), AgentEntry(name="p", framing="prisoner"))
    with pytest.raises(StratagemError, match=r"^history: a chat history"):
        check(PromptSet(history=HistoryView("last", 2)), AgentEntry(name="p", history="chat"))
    with pytest.raises(StratagemError, match=r"^history: 'ultimatum' is not a repeated"):
        check(PromptSet(history=HistoryView("table")), AgentEntry(name="p"), "ultimatum")
    with pytest.raises(StratagemError, match=r"^templates: .* has no 'ultimatum' folder"):
        check(para, AgentEntry(name="p"), "ultimatum")


def variant(tmp_path: Path, name: str, files: dict[str, str]) -> PromptSet:
    """A variant folder of neutral templates (a folder per case: templates are read once)."""
    (tmp_path / name / "neutral").mkdir(parents=True)
    for file, text in files.items():
        (tmp_path / name / "neutral" / file).write_text(text)
    return PromptSet(templates=tmp_path / name)


def test_check_variant_finds_a_broken_template_before_a_run(tmp_path: Path) -> None:
    typo = variant(tmp_path, "typo", {"system.j2": "Play {{ labels | alternatives }\n"})
    with pytest.raises(StratagemError, match=r"^templates: .*system\.j2, line 1: unexpected"):
        check(typo, AgentEntry(name="p"))
    unknown = variant(tmp_path, "unknown", {"system.j2": "Play {{ labelz }}.\n"})
    with pytest.raises(StratagemError, match=r"^templates: template neutral/system\.j2: "
                       r"'labelz' is undefined"):  # fmt: skip
        check(unknown, AgentEntry(name="p"))
    late = variant(tmp_path, "late", {"round.j2": "{{ round }}\n"})  # a round cannot read it
    with pytest.raises(StratagemError, match=r"^templates: template neutral/round\.j2: "
                       r"'round' is undefined"):  # fmt: skip
        check(late, AgentEntry(name="p"))
    check(variant(tmp_path, "fine", {"system.j2": "Play {{ labels | alternatives }}.\n"}),
          AgentEntry(name="p"))  # fmt: skip


def test_a_plugins_variant_is_found_by_its_name(tmp_path: Path) -> None:
    (tmp_path / "neutral").mkdir()
    name = register_variant("test-polite", tmp_path)
    try:
        assert variant_folder(name) == tmp_path
    finally:
        PLUGIN_VARIANTS.remove(name)
    with pytest.raises(StratagemError, match=r"unknown prompt variant 'test-polite'"):
        variant_folder("test-polite")
    with pytest.raises(StratagemError, match="is not a folder"):
        register_variant("x", tmp_path / "missing")
