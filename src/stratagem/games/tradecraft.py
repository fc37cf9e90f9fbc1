"""TradeCraft, 1-vs-1 (seed-002 §2): two players trade and craft Minecraft items until one of them
crafts its private target item, or the turn limit runs out.

A turn (§2.5) is three steps of the engine:

1. proposal: the turn's proposer (seats alternate, from `first_proposer`) offers items for items,
   with an optional message (`tradecraft_actions.ProposalSpace`);
2. decision: the partner accepts or rejects, with a reply message sent privately to the proposer
   ([R]); an accepted trade is executed and broadcast; a rejection broadcasts only that the
   proposer's proposal was rejected, and the proposal itself stays seen only by the two (§2.5:
   "invisible to any other players"; with two seats that is nobody else, §12.14);
3. craft: both players craft at once (one list of crafts each, checked in order by the exact
   Fraction rules, `tradecraft_rules`), and the hands are floored at `craft_done` (§2.3) before
   anyone sees the other's changes.

Hands are public and targets private (§2.1). After the craft phase the win check runs (§2.7 [R]):
any player holding its target wins; one such player is a "win", two a "tie"; when turn
`max_turn` ends without one, a "timeout". Scoring follows §2.7's option (`SCORING`).

Nothing a player writes changes the state except through a parsed, legal action: messages are
stored as fields of utterances and never read by the engine. Invalid replies fall back to passes
(§2.6 [A]): an empty proposal, a rejection, and finishing crafting with no crafts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

from stratagem.errors import StratagemError
from stratagem.games.base import Event, Game, Observation, State
from stratagem.games.chat import HIDDEN, OUTCOME, moderator, seat_name, utterance
from stratagem.games.spaces import Action, ActionSpace, IllegalAction
from stratagem.games.tradecraft_actions import (
    EMPTY_PROPOSAL,
    REJECT,
    CraftSpace,
    DecisionSpace,
    Items,
    Proposal,
    ProposalSpace,
    describe,
)
from stratagem.games.tradecraft_rules import CraftOptions, floor_hand, load_rules, to_fraction

PROPOSAL, DECISION, CRAFT, OVER = "proposal", "decision", "craft", "over"
WIN, TIE, TIMEOUT = "win", "tie", "timeout"
DEFAULT_MAX_TURN = 15  # §2.7 [R] server/config/game.py; logged games use 30

SCORING: dict[str, dict[str, tuple[float, float]]] = {
    # §2.7 [R] game_init.txt (the [A] default): a sole winner 3; several winners 1 each; a
    # timeout: "all lose".
    "game_init": {WIN: (3.0, 0.0), TIE: (1.0, 1.0), TIMEOUT: (0.0, 0.0)},
    # §2.7 [R] game_setting.txt: win 3, loss 0; simultaneous crafting or a timeout is a draw, 1.
    "game_setting": {WIN: (3.0, 0.0), TIE: (1.0, 1.0), TIMEOUT: (1.0, 1.0)},
}
"""Per outcome: (a winner's points, a non-winner's points)."""

TURN_BEGINS = "### Turn {turn} of {max_turn} begins."  # §2.5 [R], verbatim


def _whole(hand: Mapping[str, Any]) -> dict[str, int]:
    out: dict[str, int] = {}
    for item, amount in hand.items():
        value = to_fraction(amount)
        if value.denominator != 1 or value < 0:
            raise StratagemError(f"tradecraft: instance amount {item}={amount!r} is not whole")
        if value:
            out[item] = int(value)
    return dict(sorted(out.items()))


class TradecraftGame(Game):
    """`instance` picks one of the 10 published 1v1 instances (§2.4 [R]); `max_turn` the turn
    limit (§2.7: 15, 30 as a sensitivity check); `scoring` a key of `SCORING`; `first_proposer`
    the seat proposing in turn 1 (§12.3: unspecified); `fuel_per_craft` the fuel one smelt
    needs (§2.2: 1/8 coal)."""

    n_players = 2
    name = "tradecraft"

    def __init__(
        self,
        instance: int = 0,
        max_turn: int = DEFAULT_MAX_TURN,
        scoring: str = "game_init",
        first_proposer: int = 0,
        fuel_per_craft: str | int = "1/8",
    ) -> None:
        self.rules = load_rules(CraftOptions(fuel_per_craft=to_fraction(fuel_per_craft)))
        instances = self.rules.instances_1v1()
        if isinstance(instance, bool) or not isinstance(instance, int):
            raise StratagemError(f"tradecraft: instance must be an integer, got {instance!r}")
        if not 0 <= instance < len(instances):
            raise StratagemError(f"tradecraft: instance must be 0..{len(instances) - 1}")
        if isinstance(max_turn, bool) or not isinstance(max_turn, int) or max_turn < 1:
            raise StratagemError(f"tradecraft: max_turn must be an integer >= 1, got {max_turn!r}")
        if scoring not in SCORING:
            raise StratagemError(f"tradecraft: scoring must be one of {sorted(SCORING)}")
        if first_proposer not in (0, 1):
            raise StratagemError(
                f"tradecraft: first_proposer must be 0 or 1, got {first_proposer!r}"
            )
        data = instances[instance]
        self.instance, self.max_turn, self.scoring = instance, max_turn, scoring
        self.first_proposer = first_proposer
        self.hands: tuple[dict[str, int], ...] = tuple(_whole(h) for h in data["hands"])
        self.targets: tuple[dict[str, int], ...] = tuple(_whole(t) for t in data["targets"])
        if len(self.hands) != 2 or len(self.targets) != 2:
            raise StratagemError(f"tradecraft: instance {instance} is not a 1v1 instance")

    def description(self) -> str:
        return (
            f"TradeCraft 1v1 (instance {self.instance}): trade one proposal a turn, then craft; "
            f"first to craft its private target wins within {self.max_turn} turns"
        )

    def initial_state(self, seed: int = 0) -> TradecraftState:
        opening: list[Event] = [moderator(TURN_BEGINS.format(turn=1, max_turn=self.max_turn))]
        opening.append(Event("hands", {"hands": [dict(h) for h in self.hands], "round": 1}))
        for p, target in enumerate(self.targets):  # §2.1: targets are private
            text = f"Your target is to craft {describe(target)}."
            opening.append(moderator(text, frozenset({p})))
        return TradecraftState(self, 1, PROPOSAL, self.hands, log=tuple(opening))


@dataclass(frozen=True)
class TradecraftObservation(Observation):
    """A seat's view: every hand (public), its own target (private), the turn and phase, and the
    pending proposal when it is one of the two it concerns."""

    seat: str = ""
    phase: str = PROPOSAL
    round: int = 1
    """The turn index (§2.5 [R] turn_index, 1-based)."""
    max_turn: int = DEFAULT_MAX_TURN
    proposer: int = 0
    hands: tuple[dict[str, int], ...] = ()
    target: dict[str, int] = field(default_factory=dict)
    proposal: dict[str, Any] | None = None
    """The pending proposal ({"from", "to", "offer", "request", "message"}), in the decision."""
    outcome: str | None = None
    winners: tuple[int, ...] = ()


@dataclass(frozen=True)
class TradecraftState(State):
    game: TradecraftGame
    turn: int
    phase: str
    hands: tuple[dict[str, int], ...]
    pending: Proposal | None = None
    outcome: str | None = None
    winners: tuple[int, ...] = ()
    log: tuple[Event, ...] = field(default=(), repr=False)

    def opening(self) -> tuple[Event, ...]:
        """The turn-1 announcement, the public hands and each player's private target."""
        return self.log if self.turn == 1 and self.phase == PROPOSAL else ()

    @property
    def proposer(self) -> int:
        """§2.5: the proposer alternates in a fixed order."""
        return (self.game.first_proposer + self.turn - 1) % 2

    @property
    def partner(self) -> int:
        return 1 - self.proposer

    def is_terminal(self) -> bool:
        return self.phase == OVER

    def to_act(self) -> tuple[int, ...]:
        if self.phase == PROPOSAL:
            return (self.proposer,)
        if self.phase == DECISION:
            return (self.partner,)
        return (0, 1) if self.phase == CRAFT else ()

    def legal(self, player: int) -> ActionSpace:
        if player not in self.to_act():
            raise IllegalAction(f"phase_error: player {player} does not act in the {self.phase}")
        if self.phase == PROPOSAL:
            own, other = self.hands[player], self.hands[1 - player]
            return ProposalSpace(own=tuple(own.items()), partner=tuple(other.items()))
        if self.phase == DECISION:
            return DecisionSpace()
        hand = tuple((i, Fraction(a)) for i, a in self.hands[player].items())
        return CraftSpace(hand=hand, rules=self.game.rules)

    def holds_target(self, player: int) -> bool:
        """§2.7 [R]: `hand[t] >= amount` for every target item."""
        hand = self.hands[player]
        return all(hand.get(i, 0) >= n for i, n in self.game.targets[player].items())

    def payoffs(self) -> tuple[float, ...]:
        if self.outcome is None:
            return (0.0, 0.0)
        win, lose = SCORING[self.game.scoring][self.outcome]
        if self.outcome == TIMEOUT:
            return (lose, lose)
        return tuple(win if p in self.winners else lose for p in range(2))

    def fallback(self, player: int) -> Action:
        """A pass (§2.6 [A]): an empty proposal, a rejection, or no crafts."""
        if self.phase == PROPOSAL:
            return EMPTY_PROPOSAL.canonical()
        return REJECT if self.phase == DECISION else "[]"

    def observation(self, player: int) -> TradecraftObservation:
        if player not in (0, 1):
            raise StratagemError(f"tradecraft has players 0 and 1, got {player}")
        acting = player in self.to_act()
        pending = None
        if self.pending is not None:
            pending = {
                "from": self.proposer,
                "to": self.partner,
                "offer": dict(self.pending.offer),
                "request": dict(self.pending.request),
                "message": self.pending.message,
            }
        return TradecraftObservation(
            player=player,
            legal=self.legal(player) if acting else None,
            events=tuple(e for e in self.log if e.visible(player)),
            seat=seat_name(player),
            phase=self.phase,
            round=self.turn,
            max_turn=self.game.max_turn,
            proposer=self.proposer,
            hands=tuple(dict(h) for h in self.hands),
            target=dict(self.game.targets[player]),
            proposal=pending,
            outcome=self.outcome,
            winners=self.winners,
        )

    # -- moves ----------------------------------------------------------------------------------

    def _next(self, actions: Mapping[int, Action]) -> tuple[TradecraftState, list[Event]]:
        if self.phase == PROPOSAL:
            return self._propose(str(actions[self.proposer]))
        if self.phase == DECISION:
            return self._decide(str(actions[self.partner]))
        return self._craft({p: str(a) for p, a in actions.items()})

    def _step(self, events: list[Event], **changes: Any) -> tuple[TradecraftState, list[Event]]:
        nxt = replace(self, log=(*self.log, *events), **changes)
        return nxt, events

    def _propose(self, action: str) -> tuple[TradecraftState, list[Event]]:
        space = self.legal(self.proposer)
        assert isinstance(space, ProposalSpace)
        proposal = space.parse(action)
        p, q = self.proposer, self.partner
        text = (
            f"{seat_name(p)} makes a proposal to {seat_name(q)}: wants to exchange "
            f"{seat_name(q)}'s {describe(proposal.request)} with {describe(proposal.offer)}."
        )
        if proposal.message:
            text += f" Message: {proposal.message}"
        event = utterance(
            "proposal",
            p,
            text,
            PROPOSAL,
            self.turn,
            frozenset({p, q}),  # §2.5: a rejected proposal is seen by no one else
            partner=q,
            offer=dict(proposal.offer),
            request=dict(proposal.request),
            message=proposal.message,
        )
        return self._step([event], phase=DECISION, pending=proposal)

    def _decide(self, action: str) -> tuple[TradecraftState, list[Event]]:
        decision = DecisionSpace().parse(action)
        p, q = self.proposer, self.partner
        assert self.pending is not None
        word = "accepts" if decision.accept else "rejects"
        text = f"{seat_name(q)} {word} the proposal."
        if decision.message:
            text += f" Message: {decision.message}"
        events = [
            utterance(
                "reply",
                q,
                text,
                DECISION,
                self.turn,
                frozenset({p, q}),  # [R]: the reply message goes privately to the proposer
                accept=decision.accept,
                message=decision.message,
            )
        ]
        hands = self.hands
        if decision.accept:
            hands = _trade(self.hands, p, self.pending.offer, self.pending.request)
            offer, request = dict(self.pending.offer), dict(self.pending.request)
            events.append(
                Event(
                    "trade",
                    {
                        "proposer": p,
                        "partner": q,
                        "offer": offer,
                        "request": request,
                        "round": self.turn,
                    },
                )
            )
            events.append(
                moderator(
                    f"Trade: {seat_name(p)} gave {describe(offer)} to {seat_name(q)} for "
                    f"{describe(request)}."
                )
            )
            events.append(Event("hands", {"hands": [dict(h) for h in hands], "round": self.turn}))
        else:  # [R]: only "proposal_rejected" with the proposer's name is broadcast
            events.append(Event("proposal_rejected", {"proposer": p, "round": self.turn}))
            events.append(moderator(f"{seat_name(p)}'s proposal was rejected."))
        events.append(moderator("The craft phase begins: both players craft at the same time."))
        return self._step(events, phase=CRAFT, pending=None, hands=hands)

    def _craft(self, actions: Mapping[int, str]) -> tuple[TradecraftState, list[Event]]:
        events: list[Event] = []
        after: list[dict[str, int]] = []
        for player in (0, 1):
            space = self.legal(player)
            assert isinstance(space, CraftSpace)
            crafts, hand = space.run(actions[player])
            floored = dict(sorted(floor_hand(hand).items()))  # §2.3: leftovers are lost
            lost = {
                i: str(a - floored.get(i, 0)) for i, a in hand.items() if a != floored.get(i, 0)
            }
            text = f"{seat_name(player)} finishes crafting ({len(crafts)} crafts)."
            events.append(
                utterance(
                    "craft",
                    player,
                    text,
                    CRAFT,
                    self.turn,
                    frozenset({player}),  # §2.5: not revealed until all are done
                    crafts=json.loads(space.validate(actions[player])),
                    floored_away=lost,
                )
            )
            after.append(floored)
        hands = tuple(after)
        events.append(Event("hands", {"hands": [dict(h) for h in hands], "round": self.turn}))
        nxt = replace(self, hands=hands)
        winners = tuple(p for p in (0, 1) if nxt.holds_target(p))
        if winners:
            outcome = WIN if len(winners) == 1 else TIE
            names = " and ".join(seat_name(p) for p in winners)
            events.append(moderator(f"{names} crafted the target item. The game is over."))
            return self._end(events, hands, outcome, winners)
        if self.turn >= self.game.max_turn:
            events.append(moderator(f"The {self.game.max_turn} turns are over: nobody won."))
            return self._end(events, hands, TIMEOUT, ())
        turn = self.turn + 1
        events.append(moderator(TURN_BEGINS.format(turn=turn, max_turn=self.game.max_turn)))
        return self._step(events, phase=PROPOSAL, turn=turn, hands=hands)

    def _end(
        self,
        events: list[Event],
        hands: tuple[dict[str, int], ...],
        outcome: str,
        winners: tuple[int, ...],
    ) -> tuple[TradecraftState, list[Event]]:
        end = replace(self, phase=OVER, hands=hands, outcome=outcome, winners=winners)
        record = {
            "outcome": outcome,
            "winners": list(winners),
            "turns": self.turn,
            "payoffs": list(end.payoffs()),
            "hands": [dict(h) for h in hands],
            "targets": [dict(t) for t in self.game.targets],
        }
        events.append(Event(OUTCOME, record, HIDDEN))
        return end._step(events)


def _trade(
    hands: tuple[dict[str, int], ...], proposer: int, offer: Items, request: Items
) -> tuple[dict[str, int], ...]:
    """Both hands after an accepted trade (§2.5): the proposer gives `offer`, gets `request`."""
    new = [dict(h) for h in hands]
    for giver, items in ((proposer, offer), (1 - proposer, request)):
        for item, n in items:
            new[giver][item] -= n
            new[1 - giver][item] = new[1 - giver].get(item, 0) + n
    return tuple(dict(sorted((i, a) for i, a in h.items() if a > 0)) for h in new)
