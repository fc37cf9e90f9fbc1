"""TradeCraft games of the ToM study (seed-002) written into a real store, for the study's tests.

The games are played by the real engine (`TradecraftGame`), step by step as the episode loop
does, and stored with what the ToM-reporting agent records (`studies/tom/extract.py`): a
decision event per acting seat, a `tom` notes event per decision, and one belief row per order
reported ({"turn", "phase", "values"}). Moves and reports come from a seeded generator, so a
store is the same on every run.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from pathlib import Path

from stratagem.experiments.store import ResultStore
from stratagem.games.base import Event
from stratagem.games.tradecraft.game import TradecraftGame, TradecraftState

EXPERIMENT = "tom-exp"
ORDERS = {"V0": 1, "V1": 2, "V2": 3}


def _values(items: Sequence[str], rng: random.Random) -> dict[str, int]:
    return {i: rng.randint(0, 10) for i in items}


def _record(store: ResultStore, eid: str, t: int, events: Sequence[Event]) -> None:
    for e in events:
        visible = None if e.visible_to is None else sorted(e.visible_to)
        store.add_event(eid, e.kind, dict(e.data), round=t, visible_to=visible)


def play(
    store: ResultStore,
    eid: str,
    *,
    model: str = "openai/gpt-test",
    group: str = "V1",
    baseline: tuple[bool, bool] = (False, True),
    seed: int = 0,
    instance: int = 0,
    max_turn: int = 4,
    fail_order: bool = False,
    invalid_first_proposal: bool = False,
    finish: bool = True,
    crafts: Mapping[tuple[int, int], str] | None = None,
) -> None:
    """Play and store one game; seat k reports the orders of its group (the baseline V0).
    `crafts`: the craft move of (turn, seat) where given (no crafts elsewhere)."""
    rng = random.Random(seed)
    chosen = dict(crafts or {})
    game = TradecraftGame(instance=instance, max_turn=max_turn)
    seats = [
        {"name": f"tom:{model}", "kind": "llm", "model": model, "agent": "tom-" + g}
        for g in (("V0" if b else group) for b in baseline)
    ]
    store.add_episode(eid, EXPERIMENT, f"tradecraft/{instance}", seats, seed=seed)
    store.start_episode(eid)
    state: TradecraftState = game.initial_state(seed)
    _record(store, eid, 0, state.opening())
    while not state.is_terminal():
        t, phase = state.turn, state.phase
        acting = state.to_act()
        actions: dict[int, str] = {}
        valid: dict[int, bool] = {}
        for p in acting:
            actions[p], valid[p] = _move(state, p, rng, invalid_first_proposal)
            if phase == "craft" and (t, p) in chosen:
                actions[p] = chosen[(t, p)]
        for p in acting:
            store.add_event(
                eid,
                "decision",
                {"action": actions[p], "valid": valid[p], "attempts": 1, "tokens": 5},
                round=t,
                player=p,
                visible_to=[],
            )
            g = "V0" if baseline[p] else group
            domain = sorted({i for h in state.hands for i in h})
            failed = [1] if fail_order and g != "V0" and phase == "decision" else []
            store.add_event(
                eid,
                "tom",
                {
                    "phase": phase, "turn": t, "group": g, "baseline": baseline[p],
                    "domain": domain, "report_errors": [], "failed_orders": failed,
                    "tool_calls": [], "craft_checks": 2 if phase == "craft" else 0,
                    "craft_errors": 1 if phase == "craft" and t == 1 else 0,
                    "submissions": 0 if phase == "craft" else 1,
                    "invalid_submissions": 0 if valid[p] else 1, "calls": 1,
                },
                round=t,
                player=p,
                visible_to=[],
            )  # fmt: skip
            if phase in ("proposal", "decision"):
                for k in range(ORDERS[g]):
                    if k in failed:
                        continue
                    content = {"turn": t, "phase": phase, "values": _values(domain, rng)}
                    store.add_belief(eid, t, p, k, content, about_player=None if k == 0 else 1 - p)
        played = {p: actions[p] if valid[p] else state.fallback(p) for p in acting}
        state, events = state.apply(played)
        _record(store, eid, t, events)
    if finish:
        store.finish_episode(eid, list(state.payoffs()))


def _move(state: TradecraftState, p: int, rng: random.Random, bad_first: bool) -> tuple[str, bool]:
    if state.phase == "proposal":
        if bad_first and state.turn == 1:
            return '{"offer": {"diamond": 9}}', False
        mine, theirs = state.hands[p], state.hands[1 - p]
        offer = {rng.choice(sorted(mine)): 1} if mine and rng.random() < 0.9 else {}
        request = {rng.choice(sorted(theirs)): 1} if theirs else {}
        return json.dumps({"offer": offer, "request": request, "message": "deal?"}), True
    if state.phase == "decision":
        return ("accept" if rng.random() < 0.5 else "reject"), True
    return "[]", True


def new_store(path: Path) -> ResultStore:
    store = ResultStore(path)
    store.create_experiment(EXPERIMENT, "tom test", {"name": "tom test"})
    return store
