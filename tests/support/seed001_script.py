"""A scripted model for seed-001's tool and debate agents over the cooperation mechanisms: it
calls the lawyer once when the tool is offered, speaks as the lawyer when it is the lawyer,
and otherwise picks the most cooperative of the options the prompt offers."""

from __future__ import annotations

import re
from collections.abc import Sequence

from stratagem.llm.types import Request, Response, ToolCall, Usage

PREFERRED = (
    "cooperate/cooperate",
    "stag/stag",
    "remove defect",
    "remove hare",
    "accept",
    "cooperate",
    "stag",
)
LAWYER_SAYS = "As your lawyer, I would suggest you to keep to the cooperative choice."


def options(request: Request) -> tuple[str, ...]:
    """The labels the request allows: its schema's, its choices, or the prompt's last
    "<YOUR_DECISION> is one of ..." line."""
    schema = request.json_schema
    if schema is not None:
        return tuple(schema["properties"]["DECISION"]["enum"])
    if request.choices:
        return tuple(request.choices)
    text = "\n".join(m.content for m in request.messages)
    lines = [line for line in text.splitlines() if "<YOUR_DECISION> is one of" in line]
    assert lines, "the prompt names no options"
    return tuple(re.findall(r"'([^']*)'", lines[-1].split("is one of", 1)[1]))


def pick(labels: Sequence[str]) -> str:
    return next((label for label in PREFERRED if label in labels), labels[0])


def seed001_reply(request: Request, sample: int = 0) -> str | Response:
    """One reply of the script (the signature of a `scripted/<name>` script)."""
    if request.tools and not any(m.role == "tool" for m in request.messages):
        call = ToolCall("c1", request.tools[0].name, {})
        return Response("", tool_calls=(call,), usage=Usage(5, 1))
    if request.messages[0].content.startswith("You are a lawyer."):
        return LAWYER_SAYS
    label = pick(options(request))
    return label if request.choices else "{'DECISION': '" + label + "'}"
