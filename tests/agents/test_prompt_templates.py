"""Prompt templates render the studies' texts verbatim, and every framing renders for its games."""

from __future__ import annotations

from pathlib import Path

import pytest

from stratagem.agents import PastRound, Prompter, framings
from stratagem.errors import StratagemError
from stratagem.games.catalog import get_stage
from stratagem.games.matrix.repeated import RepeatedGame, RepeatedObservation, RepeatedState


def state(game: str, rounds: int, *moves: tuple[str, str]) -> RepeatedState:
    s = RepeatedGame(get_stage(game), rounds).initial_state()
    for a, b in moves:
        nxt, _ = s.apply({0: a, 1: b})
        assert isinstance(nxt, RepeatedState)
        s = nxt
    return s


def obs(game: str, rounds: int, *moves: tuple[str, str], player: int = 0) -> RepeatedObservation:
    return state(game, rounds, *moves).observation(player)


# -- seed-001: the prisoner framing ----------------------------------------------------------------

# seed-001 §6.1 (Fig 2.2) with the Dilemma's years (§4.1: T 0, R 5, P 10, S 15) and 10 rounds.
DILEMMA_ROLE_PROMPT = """\
You are a person.
SCENARIO:
You and your partner were arrested and are waiting separately for interrogation.
You will be interrogated for 10 rounds.
During each interrogation round, you and your partner will independently and simultaneously \
choose one action: 'Cooperate' or 'Defect'.
Depending on your choices, you will receive different sentences.
If you choose 'Defect' and your partner chooses 'Defect', you will receive 10 years in prison \
and you partner will receive 10 years in prison.
If you choose 'Defect' and your partner chooses 'Cooperate', you will receive 0 years in prison \
and you partner will receive 15 years in prison.
If you choose 'Cooperate' and your partner chooses 'Defect', you will receive 15 years in prison \
and you partner will receive 0 years in prison.
If you choose 'Cooperate' and your partner chooses 'Cooperate', you will receive 5 years in \
prison and you partner will receive 5 years in prison.
Your objective is to minimise your total years in prison over all interrogation rounds."""

# seed-001 §6.1 (Fig 2.3).
DECISION_PROMPT = """\
Think about this carefully.

OUTPUT FORMAT:
Once you have made your final decision, respond with ONLY this JSON format and nothing else:
{'DECISION': '<YOUR_DECISION>'}"""


@pytest.mark.parametrize("player", [0, 1])
def test_dilemma_role_prompt_is_verbatim(player: int) -> None:
    prompter = Prompter("prisoner", output="json")
    assert prompter.system(obs("dilemma", 10, player=player)) == DILEMMA_ROLE_PROMPT


@pytest.mark.parametrize(
    ("game", "years"),  # seed-001 §4.1: T, R, P, S years
    [("dilemma", (0, 5, 10, 15)), ("delight", (15, 10, 5, 0)), ("confusion", (5, 0, 10, 15))],
)
def test_years_follow_the_thesis_table(game: str, years: tuple[int, int, int, int]) -> None:
    t, r, p, s = years
    text = Prompter("prisoner", output="json").system(obs(game, 20))
    assert "You will be interrogated for 20 rounds." in text
    assert (
        f"If you choose 'Defect' and your partner chooses 'Cooperate', you will receive {t} years "
        f"in prison and you partner will receive {s} years in prison." in text
    )
    assert f"chooses 'Cooperate', you will receive {r} years in prison and you partner will " \
        f"receive {r} years" in text  # fmt: skip
    assert f"chooses 'Defect', you will receive {p} years in prison and you partner will " \
        f"receive {p} years" in text  # fmt: skip


def test_decision_prompt_and_history_summary_are_verbatim() -> None:
    prompter = Prompter("prisoner", output="json")
    assert prompter.decision(obs("dilemma", 10)) == DECISION_PROMPT
    assert prompter.history_summary(obs("dilemma", 10)) == ""
    after = obs(
        "dilemma", 10, ("cooperate", "defect"), ("defect", "defect"), ("defect", "cooperate")
    )
    summary = (
        "ADDITIONAL INFORMATION:\n"
        "Summary of the last 3 interrogation rounds:\n"
        "Round 1 - Suspect chose: Cooperate, Suspect's partner chose: Defect\n"
        "Round 2 - Suspect chose: Defect, Suspect's partner chose: Defect\n"
        "Round 3 - Suspect chose: Defect, Suspect's partner chose: Cooperate"
    )  # seed-001 §5 (Fig 2.1)
    assert prompter.history_summary(after) == summary
    assert prompter.decision(after) == DECISION_PROMPT + "\n\n" + summary


def test_history_is_told_from_each_players_seat() -> None:
    after = obs("dilemma", 10, ("cooperate", "defect"), player=1)
    text = Prompter("prisoner", output="json").history_summary(after)
    assert text.endswith("Round 1 - Suspect chose: Defect, Suspect's partner chose: Cooperate")


def test_prisoner_output_variants_change_only_the_format_lines() -> None:
    o = obs("dilemma", 10)
    choice = Prompter("prisoner", output="choice").decision(o)
    assert choice.startswith("Think about this carefully.\n\nOUTPUT FORMAT:\n")
    assert choice.endswith(
        "respond with ONLY your decision, 'Cooperate' or 'Defect', and nothing else."
    )
    assert "[move] (Optional explanation here) <YOUR_DECISION>" in Prompter(
        "prisoner", output="tag"
    ).decision(o)
    assert Prompter("prisoner").labels(o) == ("Cooperate", "Defect")


def test_prisoner_framing_needs_two_actions() -> None:
    with pytest.raises(StratagemError, match="prisoner framing needs a 2-action game"):
        Prompter("prisoner").system(obs("eq1", 24))


def test_prisoner_rounds_can_be_hidden() -> None:
    text = Prompter("prisoner", reveal_rounds=False).system(obs("dilemma", 10))
    assert (
        "interrogated for" not in text and text.count("\n") == DILEMMA_ROLE_PROMPT.count("\n") - 1
    )


# -- seed-003: the counterfactual framing ----------------------------------------------------------

# seed-003 §4.1, rendered for `pd` (a, b = cooperation, defection; aa 4, ab 1, ba 6, bb 2).
PD_SYSTEM = """\
You are playing a game against other player(s). The game is based on strategic moves.

Game Description:
There are two possible moves: cooperation and defection.
- if both players choose cooperation, both get 4 points.
- if both players choose defection, both get 2 points.
- if you choose cooperation and the other player chooses defection, you get 1 points and the \
other player gets 6 points.
- if you choose defection and the other player chooses cooperation, you get 6 points and the \
other player gets 1 points.

In each round of the game you play against one other player. You and the other player each make \
a move privately. The moves are compared and you and the other player get your reward/penalty \
based on the moves made.

Message Formats:
Move messages are sent when you want to make a move.
Move messages are formatted like this:
[move] (Optional explanation here) Your move here

Hint messages are received when you are provided with advice and directions. These messages are \
important and you should pay attention to them.
Hint messages are formatted like this:
[hint] Hint message here

Objective:
Maximize your points and/or minimize your penalties.

Tips:
- Try to formulate a strategy by reasoning on the provided information.
- Pay attention to the payoff matrix of the game moves.
- You should only send move messages. Hint messages will only be provided to you.
- Pay attention to hints when provided.
- Do not use markdown formatting in your messages (e.g., bold text, italic text, etc.).
"""


def test_counterfactual_pd_system_prompt_is_verbatim() -> None:
    assert Prompter("counterfactual", output="tag", history="chat").system(obs("pd", 16)) == (
        PD_SYSTEM
    )


def test_counterfactual_rps_system_prompt_matches_the_spec_rendering() -> None:
    text = Prompter("counterfactual", output="tag", history="chat").system(obs("ba3-alt", 24))
    # seed-003 §4.2, rendered for ba3-alt.
    assert text.startswith(
        "You are playing a game against other player(s). The game is based on making moves.\n\n"
        "Game Description:\n"
        "There are three possible moves: paper, rock, and scissors.\n"
        "- paper beats scissors giving the winner 1 points and the loser -1 points.\n"
        "- rock beats paper giving the winner 3 points and the loser -3 points.\n"
        "- scissors beats rock giving the winner 1 points and the loser -1 points.\n"
        "- If both players make the same move, the game is a tie and no points are awarded.\n\n"
        "In each round of the game you play against one other player."
    )
    assert text.endswith(PD_SYSTEM[PD_SYSTEM.index("\n\nIn each round") :])


@pytest.mark.parametrize(
    ("mode", "opening", "closing"),
    [
        # seed-003 §4.4: the CoT and SPP preambles' first and last sentences, verbatim.
        ("cot", "You are going to play a game with other player(s). Think step-by-step. Begin by "
         "identifying steps that will contribute to you winning.",
         "You may come up with different reasoning steps for each round, as you see fit."),
        ("spp", "You are going to play a game with other player(s). Begin by identifying the "
         "personas who could contribute to you winning. Then initiate a multi-round "
         "collaboration process among these personas",
         "help you complete the objective of the the game. You may discuss with your personas "
         "on any round of the game, as you see fit."),
    ],
)  # fmt: skip
def test_cot_and_spp_system_prompts_are_preamble_then_the_zero_shot_prompt(
    mode: str, opening: str, closing: str
) -> None:
    text = Prompter("counterfactual", output="tag", history="chat", prompting=mode).system(  # type: ignore[arg-type]
        obs("pd", 16)
    )
    preamble, rest = text.split("\n\nGame Description:\n\n", 1)
    assert preamble.startswith(opening) and preamble.endswith(closing)
    assert rest == PD_SYSTEM  # so "Game Description:" appears twice, as the study's prompts do
    assert preamble.count("\n---\n") == 2  # the worked example sits between two rules


def test_spp_preamble_keeps_the_studys_demonstration() -> None:
    text = Prompter("counterfactual", output="tag", prompting="spp").system(obs("eq1", 24))
    # seed-003 §4.4: nine alternating turns, Math Expert x5 and AI Assistant x4.
    assert text.count("\nMath Expert: ") == 5 and text.count("\nAI Assistant (you): ") == 4
    assert "Finish collaboration!\n\nFinal decision: 6 * (1 + 1) + 12 = 24\n\n---" in text


def test_paper_templates_are_the_printed_ones_with_a_history_block() -> None:
    p = Prompter("counterfactual-paper", output="choice", prompting="zs")
    first = p.decision(obs("pd", 16))
    # seed-003 §4.3 [P App. C.2] ZS, with the history and the actions filled in.
    assert first == (
        "You are playing a repeated game. At each round, choose one of the available actions. "
        "The history of previous rounds is provided below. Based on this, select your next move. "
        "Output only your final action.\n\nHistory: none yet, this is the first round.\n\n"
        "Available actions: cooperation, defection\n"
    )
    later = p.decision(obs("pd", 16, ("cooperation", "defection")))
    assert "\n\nHistory:\nRound 1: you played cooperation, your opponent played defection. " \
        "You scored 1 points, your opponent scored 6 points.\n" in later  # fmt: skip
    cot = Prompter("counterfactual-paper", prompting="cot").decision(obs("eq1", 24))
    assert cot.startswith(
        "You are playing a repeated game. Analyze the opponent's behavior and think step by step "
        "before deciding your move.\nThen output your final action.\n\nHistory:"
    )
    # The game's rules are the system prompt (the printed templates give no payoffs).
    assert p.system(obs("pd", 16)) == PD_SYSTEM[: PD_SYSTEM.index("\nIn each round")]


def test_a_prompting_mode_needs_its_preamble() -> None:
    with pytest.raises(StratagemError, match="framing 'prisoner' has no spp prompt"):
        Prompter("prisoner", prompting="spp")
    with pytest.raises(StratagemError, match="unknown prompting mode 'tot'"):
        Prompter("counterfactual", prompting="tot")  # type: ignore[arg-type]


def test_counterfactual_hints_are_verbatim() -> None:
    p = Prompter("counterfactual", output="tag", history="chat")
    assert p.decision(obs("pd", 16)) == (
        "[hint] Let's play this game. You are playing against a fresh player. "
        "Please choose your move.\n"
    )
    assert p.decision(obs("eq1", 24, ("rock", "paper"))) == (
        "[hint] Let's play another round. Please make your move.\n"
    )
    assert p.move_made(obs("pd", 16)) == "[hint] Move made. Waiting for the game to end.\n"
    assert p.result(obs("pd", 16, ("defection", "defection"))) == (
        "[hint] The round ended. Both players choose the same move: defection.\n"
        "You scored 2 points.\n"
    )
    for player, own, other, pts in [
        (0, "cooperation", "defection", 1),
        (1, "defection", "cooperation", 6),
    ]:
        assert p.result(obs("pd", 16, ("cooperation", "defection"), player=player)) == (
            f"[hint] The round ended. You choose the move: {own}. Your opponent choose the move: "
            f"{other}.\nYou scored {pts} points.\n"
        )
    assert p.result(obs("ba3", 24, ("rock", "rock"))) == (
        "[hint] The round ended in a tie. Both players made the same move: rock.\n"
        "You scored 0 points.\n"
    )
    assert p.result(obs("ba3", 24, ("paper", "rock"))) == (
        "[hint] You won the round. You made the move: paper. Your opponent made the move: rock.\n"
        "You scored 3 points.\n"
    )
    assert p.result(obs("ba3", 24, ("paper", "rock"), player=1)) == (
        "[hint] You lost the round. You made the move: rock. Your opponent made the move: paper.\n"
        "You scored -3 points.\n"
    )
    assert p.reask("ERR", obs("pd", 16)) == (
        "[hint] An error occurred. Please resend the previous message with the following "
        "correction, without indicating in any way that you have made a correction to a prior "
        'message: \n "ERR"\n'
    )


def test_counterfactual_invalid_round_hint() -> None:
    forfeited, _ = state("pd", 16).forfeit({0: None, 1: "defection"})
    p = Prompter("counterfactual", output="tag", history="chat")
    for player in (0, 1):
        assert p.result(forfeited.observation(player)) == (
            "[hint] The round ended abnormally. You scored 0 points.\n"
        )
    summary = Prompter("prisoner").history_summary(forfeited.observation(1))
    assert summary.endswith("Suspect chose: Defection, Suspect's partner chose: no valid choice")


def test_counterfactual_rejects_games_its_text_would_misdescribe() -> None:
    p = Prompter("counterfactual", output="tag", history="chat")
    with pytest.raises(StratagemError, match="3-action text needs a rock-paper-scissors"):
        from stratagem.games.matrix.normal_form import NormalFormGame

        g = NormalFormGame.symmetric("x", ("a", "b", "c"), [[1, 0, 0], [0, 1, 0], [0, 0, 1]])
        p.system(RepeatedGame(g, 2).initial_state().observation(0))


# -- the neutral framing ---------------------------------------------------------------------------


def test_neutral_framing_shows_actions_payoffs_and_rounds() -> None:
    p = Prompter("neutral", output="choice")
    text = p.system(obs("eq1", 24, player=1))
    assert "The game lasts 24 rounds." in text
    assert "You can choose 'rock', 'paper', or 'scissors'." in text
    assert (
        "- If you choose 'rock' and the other player chooses 'paper', you get -1 points and the "
        "other player gets 1 points." in text
    )
    assert text.count("- If you choose") == 9
    hidden = Prompter("neutral", reveal_rounds=False).system(obs("eq1", 24))
    assert "24" not in hidden and "several rounds" in hidden


def test_neutral_decision_in_each_output_and_history_mode() -> None:
    after = obs("pd", 16, ("cooperation", "defection"))
    prompt = Prompter("neutral", output="json").decision(after)
    assert prompt.startswith(
        "Previous rounds:\nRound 1: you chose 'cooperation' and the other player chose "
        "'defection'; you got 1 points and the other player got 6 points.\n\nRound 2 of 16:"
    )
    assert prompt.endswith('{"DECISION": "<your action>"}, where <your action> is '
                           "'cooperation' or 'defection'.")  # fmt: skip
    chat = Prompter("neutral", output="tag", history="chat")
    assert chat.decision(after).startswith("Round 2 of 16: choose your action.\nReply with a move")
    assert chat.result(after).startswith("Round 1: you chose 'cooperation'")


def test_neutral_summary_and_chat_tell_a_round_alike() -> None:
    """history.j2 and result.j2 each write the round line out (no shared macro): held equal here,
    forfeits included."""
    moves = [("cooperation", "defection"), (None, "cooperation"), ("defection", None)]
    s = RepeatedGame(get_stage("pd"), 10).initial_state()
    for t, (a, b) in enumerate(moves, start=1):
        s, _ = s.forfeit({0: a, 1: b})
        after = s.observation(0)
        summary = Prompter("neutral").history_summary(after).splitlines()
        assert summary[0] == "Previous rounds:" and len(summary) == t + 1
        assert summary[-1] == Prompter("neutral", history="chat").result(after)
    assert "you chose no valid action" in summary[2]
    assert "the other player chose no valid action" in summary[3]


def test_asymmetric_labels_are_listed_for_both_players() -> None:
    from stratagem.games.matrix.normal_form import NormalFormGame

    g = NormalFormGame.bimatrix("b", [("up", "down"), ("left", "right")], [[1, 2], [3, 4]],
                                [[5, 6], [7, 8]])  # fmt: skip
    o = RepeatedGame(g, 3).initial_state().observation(1)
    text = Prompter("neutral").system(o)
    assert "You can choose 'left' or 'right'." in text
    assert "The other player can choose 'up' or 'down'." in text
    # Seat 1 playing right against up: row up, column right -> (2, 6).
    assert "If you choose 'right' and the other player chooses 'up', you get 6 points and the " \
        "other player gets 2 points." in text  # fmt: skip


# -- the loader ------------------------------------------------------------------------------------


def test_framings_and_errors(tmp_path: Path) -> None:
    assert framings() == ["counterfactual", "counterfactual-paper", "neutral", "prisoner"]
    with pytest.raises(StratagemError, match=r"unknown framing 'prisonr'.*prisoner"):
        Prompter("prisonr")
    with pytest.raises(StratagemError, match="unknown output format"):
        Prompter("neutral", output="xml")  # type: ignore[arg-type]
    with pytest.raises(StratagemError, match="unknown history mode"):
        Prompter("neutral", history="memory")  # type: ignore[arg-type]
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "system.j2").write_text("Play {{ labels | alternatives }}.\n")
    (tmp_path / "mine" / "decision.j2").write_text("Go.\n")
    (tmp_path / "mine" / "history.j2").write_text("-\n")
    assert "mine" in framings(tmp_path)
    assert Prompter("mine", templates=tmp_path).system(obs("sh", 3)) == "Play 'stag' or 'hare'."
    with pytest.raises(StratagemError, match=r"no result\.j2"):
        Prompter("mine", history="chat", templates=tmp_path)
    with pytest.raises(StratagemError, match="repeated matrix games"):
        Prompter("neutral").system(get_stage("pd").initial_state().observation(0))


def mine(tmp_path: Path, round_j2: str) -> Prompter:
    """A user framing whose history lists each round's `round.j2` text."""
    folder = tmp_path / "mine"
    folder.mkdir(exist_ok=True)
    (folder / "system.j2").write_text("Play.\n")
    (folder / "decision.j2").write_text('{% include "mine/history.j2" %}\n')
    (folder / "history.j2").write_text("{% for r in history %}{{ r.text }};{% endfor %}\n")
    (folder / "round.j2").write_text(round_j2)
    return Prompter("mine", templates=tmp_path)


def test_a_rounds_text_is_rendered_once_however_many_prompts_show_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """round.j2 makes a game's prompts linear in its length: each past round is rendered once,
    not at every later prompt."""
    prompter = mine(tmp_path, "{{ r.round }}:{{ r.own }}/{{ labels[0] }}")
    rendered: list[int] = []
    real = Prompter._round_text

    def counted(self: Prompter, past: PastRound, fixed: dict[str, object]) -> str:
        rendered.append(past.round)
        return real(self, past, fixed)

    monkeypatch.setattr(Prompter, "_round_text", counted)
    moves = [("stag", "hare"), ("hare", "hare"), ("stag", "stag")]
    s = state("sh", 5)
    text = prompter.decision(s.observation(0))
    for a, b in moves:  # one episode: each state extends the last
        s, _ = s.forfeit({0: a, 1: b})
        text = prompter.decision(s.observation(0))
    assert text == "1:stag/stag;2:hare/stag;3:stag/stag;"
    assert rendered == [1, 2, 3]


def test_without_round_j2_a_round_has_no_text(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "system.j2").write_text("Play.\n")
    (tmp_path / "plain" / "decision.j2").write_text('{% include "plain/history.j2" %}\n')
    (tmp_path / "plain" / "history.j2").write_text("{% for r in history %}{{ r.text }}{% endfor %}")
    after = obs("sh", 5, ("stag", "hare"))
    assert Prompter("plain", templates=tmp_path).decision(after) == "None"


def test_a_rounds_text_cannot_read_what_changes_from_round_to_round(tmp_path: Path) -> None:
    prompter = mine(tmp_path, "{{ r.round }} of {{ round }}")
    with pytest.raises(StratagemError, match=r"mine/round\.j2: 'round' is undefined.*fixed"):
        prompter.decision(obs("sh", 5, ("stag", "hare")))


def test_a_template_setting_a_name_changes_no_other_prompt(tmp_path: Path) -> None:
    """The prompts of one decision share one set of names (built once, not copied per render):
    what a template sets stays in its own rendering."""
    folder = tmp_path / "setter"
    folder.mkdir()
    (folder / "system.j2").write_text("{{ rounds }} rounds, {{ range(2) | list }}.\n")
    (folder / "decision.j2").write_text("{% set rounds = 99 %}{% set range = 0 %}{{ rounds }}.\n")
    (folder / "history.j2").write_text("-\n")
    prompter = Prompter("setter", templates=tmp_path)
    seen = obs("sh", 5, ("stag", "hare"))
    assert prompter.decision(seen) == "99."
    assert prompter.system(seen) == "5 rounds, [0, 1]."
    assert prompter.decision(seen) == "99."
