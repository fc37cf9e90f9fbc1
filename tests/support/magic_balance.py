"""A scripted model that plays seed-004's social games with known outcomes, for the tests of the
balance filter (`stratagem magic balance`).

Every seat gives the same clue; Player 1 votes for Player 2 and the others for Player 1, so Player 1
is always accused; a caught chameleon guesses "Volleyball". So:

- Chameleon: a Player-1 chameleon is caught, and wins 1 credit (right guess) only in a Volleyball
  setting, else 0; any other chameleon wins 2 (wrong accusation). Shipped settings: chameleon/4
  (Sports: Volleyball, Player 1) has rate 1/2, chameleon/5 and /12 (Player 1) 0, the rest 1.
- Undercover: a Player-1 undercover is caught (0 credits), any other wins 3 (rate 1).

`failing` names the topics or words whose games raise a call failure, to fail those episodes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from stratagem.llm.errors import CallFailed
from stratagem.llm.providers.scripted import _REGISTERED, register_script
from stratagem.llm.types import Request

_NAME = re.compile(r"Your name: Player (\d)")


def speaker(request: Request) -> int:
    """The asking seat's player number (1..3), from its system prompt."""
    found = _NAME.search(request.messages[0].content)
    assert found is not None, "no player name in the system prompt"
    return int(found.group(1))


def replier(failing: tuple[str, ...] = ()) -> Callable[[Request, int], str]:
    def reply(request: Request, sample: int) -> str:
        chat = "\n".join(m.content for m in request.messages)
        if any(word in chat for word in failing):
            raise CallFailed("scripted outage [/x]", 0)
        last = [m.content for m in request.messages if m.role == "user"][-1]
        if "Now vote" in last:
            return "I vote for Player 2." if speaker(request) == 1 else "I vote for Player 1."
        if "guess the secret code" in last:
            return 'I guess the code is "Volleyball"'
        return "It is nice."

    return reply


@contextmanager
def balance_model(name: str = "balance", failing: tuple[str, ...] = ()) -> Iterator[str]:
    """`scripted/<name>` answering as described above, registered for the block."""
    register_script(name, replier(failing))
    try:
        yield f"scripted/{name}"
    finally:
        _REGISTERED.pop(name, None)
