"""MAgIC's chat assembly (seed-004 §2): how one seat's prompt is built from what it has seen.

ChatArena, which the study's code forks, keeps one message log per game; a player's call sends

- a system message: the game's global prompt, the `<EOS>` convention, the player's name and role;
- its own past messages as `assistant` turns;
- everything else it may see (the moderator, the other players) merged into `user` turns, each
  as `"\\n\\n[{name}]: {content}<EOS>"`;
- last, the request: `"[System]: {request}"`, or `"Now you speak, {name}.<EOS>"` when the
  environment gives none.

Here the log is the seat's observation: the moderator's and the players' events it may see (the
`games.chat` convention), in order. Texts in it come from the engine (a player's text is the one
its parsed action stands for), so a reply cannot pose as the moderator in anybody's prompt.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from stratagem.agents.magic import texts
from stratagem.games.base import Event
from stratagem.games.chat import seat_name as seat_name  # "Player 1" for seat 0 (§2)
from stratagem.llm.types import Message

MODERATOR_NAME = "Moderator"
SYSTEM_NAME = "System"
EOS = "<EOS>"


def system_message(global_prompt: str, agent_name: str, role_desc: str) -> str:
    """seed-004 §2: the system message of every chat call (the global prompt stripped)."""
    return texts.render(
        "system_message",
        global_prompt=global_prompt.strip(),
        agent_name=agent_name,
        role_desc=role_desc,
    )


def speaker(event: Event) -> tuple[str, int | None, str] | None:
    """(name, seat or None for the moderator, text) of a chat event; None for events that are
    not part of the chat (decisions, outcomes, records)."""
    if event.kind == "moderator":
        return MODERATOR_NAME, None, str(event.data.get("text", ""))
    player, text = event.data.get("player"), event.data.get("text")
    if isinstance(player, int) and isinstance(text, str):
        return seat_name(player), player, text
    return None


def assemble(
    system: str, events: Sequence[Event], me: int, request: str | None = None
) -> list[Message]:
    """The messages of one call by seat `me`: the system message, the chat this seat may see,
    then the request (seed-004 §2)."""
    messages = [Message("system", system)]
    pending = ""
    for event in events:
        if not event.visible(me):
            continue
        said = speaker(event)
        if said is None:
            continue
        name, seat, text = said
        if seat == me:
            if pending:
                messages.append(Message("user", pending))
                pending = ""
            messages.append(Message("assistant", text))
        else:
            pending += texts.render("others_message", name=name, content=text)
    if request is None:
        request = texts.render("default_request", agent_name=seat_name(me))
    # The request is one more message from someone else, merged like the others.
    pending += "\n\n" + texts.render("request_turn", request_msg=request)
    messages.append(Message("user", pending))
    return messages


def strip_reply(text: str, agent_name: str) -> str:
    """seed-004 §2: a leading `[...]:` or `{name}:` and anything from `<EOS>` on are removed
    (the study stops generation at `<EOS>`; a reply that goes on is cut there)."""
    out = text.split(EOS, 1)[0].split("<|endoftext|>", 1)[0].strip()
    out = re.sub(r"^\[[^\]\n]*\]:\s*", "", out)
    if out.startswith(f"{agent_name}:"):
        out = out[len(agent_name) + 1 :]
    return out.strip()
