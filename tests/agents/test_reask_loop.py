"""The re-ask loop: exact attempt counts, the conversation it builds, tokens, and giving up."""

from __future__ import annotations

import asyncio

import pytest
from agent_fakes import NO_CONTEXT, ScriptedClient

from stratagem.agents import ChoiceParser, Decision, MoveTagParser, decide_with_reasks
from stratagem.errors import StratagemError
from stratagem.llm.pipeline import CallContext
from stratagem.llm.types import Message, Request, Response

LABELS = ("cooperate", "defect")
BASE = [Message("system", "rules"), Message("user", "decide")]
CONTEXT = CallContext("ep", 0, 3)


def hint(error: str) -> str:
    return f"HINT: {error}"


def run(client: ScriptedClient, max_reasks: int = 5) -> Decision:
    return asyncio.run(
        decide_with_reasks(
            client, BASE, {"choices": LABELS, "seed": 7}, ChoiceParser(), LABELS, max_reasks,
            CONTEXT, hint,
        )
    )  # fmt: skip


def test_valid_first_time() -> None:
    client = ScriptedClient(["defect"])
    decision = run(client)
    assert (decision.action, decision.valid, decision.attempts) == ("defect", True, 1)
    assert decision.tokens == 12
    assert decision.raw == ("defect",) and decision.errors == () and decision.error is None
    assert client.requests[0] == Request(tuple(BASE), choices=LABELS, seed=7)
    assert decision.messages == (
        {"role": "system", "content": "rules"},
        {"role": "user", "content": "decide"},
        {"role": "assistant", "content": "defect"},
    )


@pytest.mark.parametrize("failures", [1, 2, 5])
def test_fails_k_times_then_succeeds(failures: int) -> None:
    client = ScriptedClient(["I think so"] * failures + ["Cooperate"])
    decision = run(client, max_reasks=5)
    assert decision.valid and decision.action == "cooperate"
    assert decision.attempts == failures + 1
    assert len(client.requests) == failures + 1
    assert decision.tokens == 12 * (failures + 1)
    assert len(decision.errors) == failures
    # Each re-ask carries the failed reply and the hint with the parser's error.
    last = client.requests[-1].messages
    assert len(last) == 2 + 2 * failures
    assert last[2] == Message("assistant", "I think so")
    assert last[3].role == "user" and last[3].content.startswith("HINT: reply with exactly one")
    assert [c.purpose for c in client.contexts] == ["decision"] + ["reask"] * failures
    assert all((c.episode_id, c.player, c.round) == ("ep", 0, 3) for c in client.contexts)


def test_gives_up_after_max_reasks() -> None:
    client = ScriptedClient(["no"] * 10)
    decision = run(client, max_reasks=5)
    assert decision.action is None and not decision.valid
    assert decision.attempts == 6 == len(client.requests)
    assert decision.tokens == 72
    assert decision.error == decision.errors[-1] and len(decision.errors) == 6
    assert decision.raw == ("no",) * 6


def test_zero_reasks_is_one_attempt() -> None:
    decision = run(ScriptedClient(["no", "defect"]), max_reasks=0)
    assert (decision.valid, decision.attempts) == (False, 1)


def test_max_reasks_must_be_a_count() -> None:
    with pytest.raises(StratagemError, match="max_reasks"):
        run(ScriptedClient([]), max_reasks=-1)


def test_echo_changes_what_goes_back_to_the_model() -> None:
    client = ScriptedClient(["oops", "[move] defect"])
    decision = asyncio.run(
        decide_with_reasks(
            client, BASE, {}, MoveTagParser(), LABELS, 4, CONTEXT, hint,
            echo=lambda t: t + "\n",
        )
    )  # fmt: skip
    assert decision.action == "defect"
    assert client.requests[1].messages[2] == Message("assistant", "oops\n")


def test_no_response_counts_as_an_empty_reply() -> None:
    class Silent(ScriptedClient):
        async def generate(
            self, request: Request, context: CallContext = NO_CONTEXT
        ) -> list[Response]:
            self.requests.append(request)
            return []

    decision = run(Silent([]), max_reasks=1)
    assert decision.raw == ("", "") and not decision.valid
    assert "empty reply" in (decision.error or "")
