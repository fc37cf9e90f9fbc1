"""A step's model calls as the inspector shows them: each decision with its re-asks, its
total spend over every attempt, and the tools it called with what each returned.

A tool call's reply has no text: what the model asked for is the response's `tool_calls`,
and what the tool returned is the `tool` message answering that call's id in the seat's next
request. Results are looked up among the same seat's requests only, so a seat's perspective
never shows what another seat's tool said.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from stratagem.analysis.transcript_calls import PlacedCall

ToolResults = dict[int, dict[str, Any]]
"""What each call's tools returned: by the call's row id, each answer by its tool call id."""


def tool_results(placed: Sequence[PlacedCall]) -> ToolResults:
    """Each call's tools' answers: the last `tool` message answering its id in the same seat's
    next request (a history repeats earlier answers, and a model may reuse an id)."""
    out: ToolResults = {}
    following: dict[int | None, int] = {}
    for k in range(len(placed) - 1, -1, -1):
        call = placed[k].call
        later = following.get(call.player)
        following[call.player] = k
        response = call.response if isinstance(call.response, dict) else {}
        if later is None or not response.get("tool_calls"):
            continue
        for m in _messages(placed[later].call.request):
            if isinstance(m, dict) and m.get("role") == "tool" and m.get("tool_call_id"):
                out.setdefault(call.id, {})[str(m["tool_call_id"])] = m.get("content")
    return out


def call_dicts(
    placed: Sequence[PlacedCall], results: ToolResults, names: Mapping[int, str]
) -> list[dict[str, Any]]:
    """Calls in the order made; a re-ask joins the seat's last call of the same purpose, and
    the call's `attempts`, `total_tokens` and `total_cost_usd` count it. `names`: each seat's
    model as the experiment names it (the provider's id goes beside it, as `provider`)."""
    out: list[dict[str, Any]] = []
    last: dict[tuple[int | None, str], dict[str, Any]] = {}
    for p in placed:
        key = (p.call.player, p.purpose)
        parent = last.get(key)
        attempt = _attempt(p, results.get(p.call.id, {}))
        if p.reask and parent is not None:
            parent["reasks"].append(attempt)
        else:
            call = p.call
            parent = {
                "seat": call.player,
                "purpose": p.purpose,
                "messages": list(_messages(call.request)),
                **attempt,
                "reasks": [attempt] if p.reask else [],
                "model": names.get(call.player, call.model)
                if call.player is not None
                else call.model,
                "provider": call.model,
                "attempts": 0,
                "total_tokens": 0,
                "total_cost_usd": None,
            }
            last[key] = parent
            out.append(parent)
        parent["attempts"] += 1
        parent["total_tokens"] += attempt["tokens"]
        if attempt["cost_usd"] is not None:
            parent["total_cost_usd"] = (parent["total_cost_usd"] or 0.0) + attempt["cost_usd"]
    return out


def _attempt(placed: PlacedCall, results: Mapping[str, Any]) -> dict[str, Any]:
    """One attempt: the correction it was shown (a re-ask's last message), what it said, the
    tools it called and what they returned, and what it cost."""
    call = placed.call
    messages = _messages(call.request)
    last = messages[-1] if messages and isinstance(messages[-1], dict) else {}
    response: dict[str, Any] = call.response if isinstance(call.response, dict) else {}
    tools = [
        {
            "name": t.get("name"),
            "arguments": t.get("arguments"),
            "result": results.get(str(t.get("id"))),
        }
        for t in response.get("tool_calls") or ()
        if isinstance(t, dict)
    ]
    return {
        "shown": last.get("content") if placed.reask else None,
        "reply": call.text,
        "tools": tools,
        "reasoning": response.get("reasoning"),
        "error": call.error,
        "tokens": (call.input_tokens or 0) + (call.output_tokens or 0),
        "cost_usd": call.cost_usd,
        "latency_s": call.latency_s,
        "cached": call.cached,
    }


def _messages(request: Any) -> list[Any]:
    messages = request.get("messages") if isinstance(request, dict) else None
    return list(messages) if isinstance(messages, list | tuple) else []
