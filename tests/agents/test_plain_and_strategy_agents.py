"""The plain LLM agent in both history modes and all output formats, and the strategy agent."""

from __future__ import annotations

import asyncio
import random

import pytest
from agent_fakes import ScriptedClient, play

from stratagem.agents import PlainLLMAgent, Prompter, StrategyAgent, decision_schema
from stratagem.errors import StratagemError
from stratagem.games.catalog import get_stage
from stratagem.games.matrix.repeated import RepeatedGame
from stratagem.llm.types import Message
from stratagem.strategies import AlwaysDefect, Pattern, TitForTat
from stratagem.strategies import Random as RandomStrategy


def dilemma(rounds: int = 3) -> RepeatedGame:
    return RepeatedGame(get_stage("dilemma"), rounds)


# -- history in the prompt (seed-001) --------------------------------------------------------------


def test_prompt_mode_with_choice_output_is_constrained() -> None:
    client = ScriptedClient(["Defect", "cooperate", "Defect"])
    agent = PlainLLMAgent(client, Prompter("prisoner", output="choice"), seed=11)
    final = asyncio.run(play(dilemma(), [agent, StrategyAgent(TitForTat())]))
    assert [r.actions for r in final.history] == [(1, 0), (0, 1), (1, 0)]
    first, last = client.requests[0], client.requests[-1]
    assert first.choices == ("Cooperate", "Defect") and first.json_schema is None
    assert first.seed == 11
    assert [m.role for m in last.messages] == ["system", "user"]  # a fresh conversation
    assert "Round 2 - Suspect chose: Cooperate, Suspect's partner chose: Defect" in (
        last.messages[1].content
    )
    assert [c.round for c in client.contexts] == [1, 2, 3]
    assert all(c.episode_id == "ep" and c.player == 0 for c in client.contexts)


def test_json_output_sends_a_schema_and_parses_the_thesis_format() -> None:
    client = ScriptedClient(["{'DECISION': 'cooperate'}"])
    agent = PlainLLMAgent(client, Prompter("prisoner", output="json"))
    decision = asyncio.run(agent.act(dilemma().initial_state().observation(0)))
    assert (decision.action, decision.valid, decision.attempts, decision.tokens) == (
        "cooperate", True, 1, 12,
    )  # fmt: skip
    assert client.requests[0].json_schema == decision_schema(("Cooperate", "Defect"))
    assert client.requests[0].choices == ()
    assert decision.extra["output"] == "json"
    assert decision.messages[-1] == {"role": "assistant", "content": "{'DECISION': 'cooperate'}"}


def test_unconstrained_outputs_send_no_constraint() -> None:
    for prompter, reply in [
        (Prompter("prisoner", output="choice"), "Defect"),
        (Prompter("neutral", output="tag"), "[move] defect"),
    ]:
        client = ScriptedClient([reply])
        agent = PlainLLMAgent(client, prompter, constrain=False)
        asyncio.run(agent.act(dilemma().initial_state().observation(0)))
        assert client.requests[0].choices == () and client.requests[0].json_schema is None


def test_constrained_tag_output_allows_the_shortest_move_message() -> None:
    client = ScriptedClient(["[move] defect"])
    agent = PlainLLMAgent(client, Prompter("neutral", output="tag"))
    decision = asyncio.run(agent.act(dilemma().initial_state().observation(0)))
    assert decision.action == "defect" and decision.valid
    assert client.requests[0].choices == ("[move] cooperate", "[move] defect")


def test_reasks_then_valid() -> None:
    client = ScriptedClient(["", "hmm", "Defect"])
    agent = PlainLLMAgent(client, Prompter("prisoner", output="choice"))
    decision = asyncio.run(agent.act(dilemma().initial_state().observation(0)))
    assert (decision.action, decision.valid, decision.attempts) == ("defect", True, 3)
    assert decision.tokens == 36 and decision.raw == ("", "hmm", "Defect")
    hint = client.requests[2].messages[-1]
    assert hint.role == "user" and hint.content.startswith("Your previous answer could not be used")


def test_invalid_forfeit_and_default_policies_keep_valid_false() -> None:
    obs = dilemma().initial_state().observation(0)
    forfeit = PlainLLMAgent(ScriptedClient(["?"] * 6), Prompter("prisoner"), max_reasks=5)
    decision = asyncio.run(forfeit.act(obs))
    assert (decision.action, decision.valid, decision.attempts) == (None, False, 6)
    assert decision.extra["invalid_policy"] == "forfeit"
    default = PlainLLMAgent(
        ScriptedClient(["?"] * 3), Prompter("prisoner"), max_reasks=2, invalid="default:defect"
    )
    decision = asyncio.run(default.act(obs))
    assert (decision.action, decision.valid, decision.attempts) == ("defect", False, 3)
    assert decision.error is not None and decision.extra["invalid_policy"] == "default:defect"


def test_bad_settings_are_user_errors() -> None:
    with pytest.raises(StratagemError, match="max_reasks"):
        PlainLLMAgent(ScriptedClient([]), Prompter(), max_reasks=-1)
    with pytest.raises(StratagemError, match="invalid-output policy"):
        PlainLLMAgent(ScriptedClient([]), Prompter(), invalid="coinflip")
    agent = PlainLLMAgent(ScriptedClient([]), Prompter())
    with pytest.raises(StratagemError, match="repeated matrix games"):
        asyncio.run(agent.act(get_stage("pd").initial_state().observation(0)))
    over = (
        RepeatedGame(get_stage("pd"), 1).initial_state().apply({0: "cooperation", 1: "defection"})
    )
    with pytest.raises(StratagemError, match="no move to make"):
        asyncio.run(agent.act(over[0].observation(0)))


# -- history as a chat (seed-003) ------------------------------------------------------------------


def test_chat_mode_reproduces_seed003_turns() -> None:
    game = RepeatedGame(get_stage("pd"), 3)
    client = ScriptedClient(["[move] cooperation", "no tag here", "[move] (grim) defection",
                             "[move] defection"])  # fmt: skip
    agent = PlainLLMAgent(
        client, Prompter("counterfactual", output="tag", history="chat"), max_reasks=4
    )
    asyncio.run(play(game, [agent, StrategyAgent(AlwaysDefect())]))
    # Round 2's first ask: everything so far, merged (seed-003 §3.3).
    sent = client.requests[1].messages
    assert [m.role for m in sent] == ["system", "user", "assistant", "user"]
    assert sent[1].content == (
        "[hint] Let's play this game. You are playing against a fresh player. "
        "Please choose your move.\n"
    )
    assert sent[2] == Message("assistant", "[move] cooperation\n")
    assert sent[3].content == (
        "[hint] Move made. Waiting for the game to end.\n\n"
        "The round ended. You choose the move: cooperation. Your opponent choose the move: "
        "defection.\nYou scored 1 points.\n\n"
        "Let's play another round. Please choose your move.\n"
    )
    # The re-ask of round 2 carries the failed reply and seed-003's verbatim correction.
    reask = client.requests[2].messages
    assert reask[4] == Message("assistant", "no tag here\n")
    assert reask[5].content.startswith("[hint] An error occurred. Please resend")
    assert "end with a valid move: 'cooperation' or 'defection'." in reask[5].content
    # Round 3 sees the failed attempt too, and the re-ask hint merges with later hints.
    last = client.requests[3].messages
    assert [m.role for m in last] == ["system", "user", "assistant", "user", "assistant", "user",
                                      "assistant", "user"]  # fmt: skip
    assert last[6] == Message("assistant", "[move] (grim) defection\n")
    assert last[7].content.startswith(
        "[hint] Move made. Waiting for the game to end.\n\nThe "
        "round ended. Both players choose the same move: defection."
    )


def test_chat_mode_invalid_round_gets_the_abnormal_hint() -> None:
    game = RepeatedGame(get_stage("pd"), 2)
    client = ScriptedClient(["x", "y", "[move] defection"])
    agent = PlainLLMAgent(
        client, Prompter("counterfactual", output="tag", history="chat"), max_reasks=1
    )
    agent.reset(0)
    state = game.initial_state()
    decision = asyncio.run(agent.act(state.observation(0)))
    assert decision.action is None and not decision.valid
    # The engine scores a forfeited round (0, 0) (seed-003 §3.2 step 4).
    after, _ = state.forfeit({0: None, 1: "defection"})
    asyncio.run(agent.observe(after.observation(0), ()))
    asyncio.run(agent.act(after.observation(0)))
    final_user = client.requests[-1].messages[-1].content
    assert final_user.startswith("[hint] An error occurred.")
    assert final_user.endswith(
        "Nested parentheses or markdown formatting are not allowed.\nFormat: [move] (Optional "
        'explanation here) Your move here"\n\nThe round ended abnormally. You scored 0 points.\n'
        "\nLet's play another round. Please choose your move.\n"
    )
    # system, round hint, 2 x (reply, correction), result, round hint, reply, "move made"
    assert len(agent.conversation) == 10


def test_reset_starts_a_new_conversation() -> None:
    client = ScriptedClient(["cooperation"] * 2)
    agent = PlainLLMAgent(client, Prompter("neutral", history="chat"))
    obs = RepeatedGame(get_stage("pd"), 2).initial_state().observation(0)
    asyncio.run(agent.act(obs))
    agent.reset(1)
    asyncio.run(agent.act(obs))
    assert len(client.requests[1].messages) == 2 and client.requests[1].seed == 1


# -- the strategy agent ----------------------------------------------------------------------------


@pytest.mark.parametrize("seat", [0, 1])
def test_strategy_agent_plays_tit_for_tat_through_observations(seat: int) -> None:
    opponent_moves = [1, 0, 1, 1, 0]
    scripted = StrategyAgent(Pattern(opponent_moves))
    tft = StrategyAgent(TitForTat())
    agents = [tft, scripted] if seat == 0 else [scripted, tft]
    final = asyncio.run(play(dilemma(6), agents))
    tft_moves = [r.actions[seat] for r in final.history]
    other = [r.actions[1 - seat] for r in final.history]
    assert other == [*opponent_moves, opponent_moves[0]]
    assert tft_moves == [0, *other[:-1]]
    assert tft.name == "TitForTat"


def test_strategy_agent_is_reproducible_and_resets_between_matches() -> None:
    def moves(seed: int) -> list[int]:
        agent = StrategyAgent(RandomStrategy(0.5))
        final = asyncio.run(play(dilemma(20), [agent, StrategyAgent(TitForTat())], seed=seed))
        return [r.actions[0] for r in final.history]

    assert moves(3) == moves(3)
    assert moves(3) != moves(4)
    # The agent's randomness comes from reset's seed only.
    expected_rng = random.Random(3)
    assert moves(3) == [0 if expected_rng.random() < 0.5 else 1 for _ in range(20)]


def test_strategy_agent_ignores_forfeited_rounds() -> None:
    from stratagem.games.matrix.repeated import FORFEIT

    game = dilemma(4)
    state = game.initial_state()
    state, _ = state.forfeit({0: "cooperate", 1: "defect"})
    state, _ = state.forfeit({0: "cooperate", 1: None})  # the opponent's move was invalid
    agent = StrategyAgent(TitForTat())
    agent.reset(0)
    assert state.history[-1].actions == (0, FORFEIT)
    # TitForTat answers the last move actually played: the defection of round 1.
    assert asyncio.run(agent.act(state.observation(0))).action == "defect"


def test_strategy_agent_rejects_other_games() -> None:
    agent = StrategyAgent(TitForTat())
    with pytest.raises(StratagemError, match="repeated matrix games"):
        asyncio.run(agent.act(get_stage("pd").initial_state().observation(0)))
    with pytest.raises(StratagemError, match="2-action"):
        asyncio.run(agent.act(RepeatedGame(get_stage("eq1"), 2).initial_state().observation(0)))
