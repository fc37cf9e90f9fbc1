"""MAgIC's Cost Sharing ("Airport Fee Allocation", seed-004 §3.3): three airlines negotiate how to
split a fixed airport fee, in rounds of public proposals and public votes.

Seats 0, 1, 2 are "Player 1..3" representing Airline A, B, C. In each round every player, in turn
order 1→2→3 (§2), proposes a split (a `Shares` action, stride 5%); the moderator calls for votes;
then every player, in turn, votes for one player's proposal, its own included (the moderator's
verbatim call says "including yourself"). The round succeeds when all three votes go to one
proposal or to identical ones (§3.3 step 3, §10.11; `agreed_vote`); otherwise a new round starts,
and after `max_turns` rounds (5, §3.3 [C]) the negotiation fails.

Win and payoffs: the challenger wins when the negotiation succeeds, whatever its seat (§3.3, §5
w_cost), so every seat scores 1 on success and 0 on failure: the game is purely cooperative in
its outcome; what a seat pays is its share in the agreed proposal (`shares`, §6.7 "Cost").

Every proposal and vote is public (§2). The moderator's messages are verbatim: the vote call, the
retry and the opening are from §3.3 and the code [C] (`chatarena/environments/airportfee.py`),
typos included. A player's utterance is rendered from its parsed action in the §3.3 template, so
nothing a model writes reaches the chat or the state except a legal proposal or vote.

A seat whose reply stays invalid (§2 says nothing; the code would store an unparsed proposal as
empty) makes no proposal (None), or abstains, that round. An abstention agrees with nothing. All
three votes for a seat without a proposal agree, as the code's check compares votes first (§3.3
"all 3 votes go to one proposal"): the game succeeds with no agreed proposal, which §6.7 costs
at 30 (the study's `unparsed_share`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from stratagem.errors import StratagemError
from stratagem.games.base import Event, Game, Observation, State
from stratagem.games.bounds import Bounds, Rounds, bounded
from stratagem.games.chat import HIDDEN, OUTCOME, moderator, seat_name, utterance
from stratagem.games.settings_data import setting as load_setting
from stratagem.games.spaces import Action, ActionSpace, Choice, IllegalAction, Shares

PARTIES: tuple[str, ...] = ("Airline A", "Airline B", "Airline C")
SEATS: tuple[str, ...] = tuple(seat_name(p) for p in range(3))
PROPOSE, VOTE = "propose", "vote"
"""The phases, and the kinds of their utterances ("proposal", "vote")."""

# seed-004 §3.3 and [C] `airportfee.py`: the moderator's words, verbatim (typos included).
VOTE_CALL = (
    "Now vote which proposal of the other player (including yourself) is the suitable one you "
    'agree with. You must use the template "I vote for Player xx\'s proposal".(dont include '
    "explanation)"
)
RETRY = (
    "At {k}'s round, you all haven't achieve the consistency. Please continue a new round of "
    "negotiation. "
)
AGREED = "You all already agree the same proposal "
FAILED = "You have negotiated for {max_turns} turn, no consistency achieved, negotiation failed."
OPENING = "Now the game starts! The background is: {background}"
FIRST_CALL = "Now everyone propose the cost distribution.We will start with Player 1."


def describe_airline(airline: Mapping[str, Any]) -> str:
    """One airline's description as the setting's topic writes it (§3.3 [C] settings/0.json)."""
    return (
        f"Number of Flights: {airline['flights']:,}/month\n"
        f"Number of Passengers: {airline['passengers']:,}/month\n"
        f"Average Flight Duration: {airline['hours']:g} hours\n"
        f"Flight Size: {airline['aircraft']}"
    )


def background(fee: str, descriptions: Sequence[str]) -> str:
    """The setting's topic, which the moderator announces at the start (§3.3 [C])."""
    blocks = "".join(f"{party}:\n{d}\n\n" for party, d in zip(PARTIES, descriptions, strict=True))
    return f"Fixed Airport Fee: {fee}\n\nAirline Usage Frequency Data: \n\n{blocks}"


def proposal_text(player: int, proposal: str) -> str:
    """A proposal in the template the players are asked to use (§3.3 step 1)."""
    lines = "\n".join(
        f"{party}: {share}%" for party, share in zip(PARTIES, proposal.split("/"), strict=True)
    )
    return (
        f"As {seat_name(player)}, representing {PARTIES[player]}, I propose the following cost "
        f"distribution:\n{lines}"
    )


def vote_text(seat: int) -> str:
    """A vote in the template of the moderator's call (§3.3 step 2)."""
    return f"I vote for {seat_name(seat)}'s proposal"


Agreement = Literal["numeric", "strings"]
AGREEMENTS: tuple[Agreement, ...] = ("numeric", "strings")
"""How votes for different seats agree: "numeric", the paper's "numerically identical
proposals" (§3.3); "strings", the code's comparison (§10.11): the shares as written, captured by
`Airline (\\S+): (\\d.+)%`, so "40" and "40.0" differ, and a failed parse gives None."""


def agreed_vote(
    proposals: Sequence[str | None], votes: Sequence[int | None], rule: Agreement = "numeric"
) -> int | None:
    """The seat whose proposal all votes agree on, the first voter's choice (§6.7, §10.11), or
    None. seed-004 §3.3 step 3 and the code's check: every other vote is for the first voter's
    seat or for an identical proposal.

    An abstention agrees with nothing. Votes for one seat agree whatever its proposal, even none
    (the code compares votes first). Proposals of different seats are identical by `rule`:
    "numeric" when their numbers are (proposals are canonical `Shares` strings then), a seat
    without a proposal matching none; "strings" when their shares are written alike, and two
    seats without a proposal alike (the code's all-None parses compare equal).
    """
    if not votes or any(v is None for v in votes):
        return None
    first = votes[0]
    assert first is not None
    for vote in votes[1:]:
        assert vote is not None
        mine, theirs = proposals[vote], proposals[first]
        if vote != first and (mine != theirs or (mine is None and rule == "numeric")):
            return None
    return first


def check_agreement(value: object) -> Agreement:
    for rule in AGREEMENTS:
        if value == rule:
            return rule
    raise StratagemError(f"cost sharing: agreement must be 'numeric' or 'strings', got {value!r}")


Step = Annotated[int, Bounds(1, 100)]
"""A share's stride in percent: at most the whole (`Shares` checks that it divides 100)."""


class CostSharingGame(Game):
    """`setting` picks the airlines, fee and recorded first proposals (`games/data/
    cost-sharing.json`, made by `scripts/magic_theory_settings.py`); `max_turns` is the number of
    rounds (§3.3 [C] 5); `step` the stride of a share in percent (§3.3 "5%"); `agreement` how
    proposals of different seats agree (`Agreement`: "numeric", the paper's, or "strings", the
    code's, for which proposals are kept as written, "40.0/30/30")."""

    n_players = 3
    name = "cost-sharing"

    @bounded("cost sharing")
    def __init__(
        self,
        setting: int = 0,
        max_turns: Rounds = 5,
        step: Step = 5,
        agreement: Agreement = "numeric",
    ) -> None:
        data = load_setting("cost-sharing", setting)
        self.setting = setting
        self.max_turns = max_turns
        self.agreement = check_agreement(agreement)
        self.space = Shares(PARTIES, step, 100, written=self.agreement == "strings")
        self.votes = Choice(SEATS)
        self.fee: str = data["fee"]
        self.airlines: tuple[str, ...] = tuple(describe_airline(a) for a in data["airlines"])
        self.background = background(self.fee, self.airlines)
        self.challenger_seat: int | None = data.get("challenger_seat")
        """The seat the code's setting names as the "test player" (§3.3), where it names one."""
        self.recorded: tuple[str | None, ...] = self._recorded(data.get("proposals"))

    def _recorded(self, proposals: Sequence[Sequence[int]] | None) -> tuple[str | None, ...]:
        if proposals is None:
            return (None,) * self.n_players
        out: list[str | None] = []
        for p, shares in enumerate(proposals):
            try:
                out.append(self.space.validate(self.space.format(list(shares))))
            except IllegalAction as exc:
                raise StratagemError(
                    f"cost sharing setting {self.setting}: {seat_name(p)}'s recorded proposal "
                    f"is not legal here ({exc})"
                ) from None
        return tuple(out)

    def description(self) -> str:
        return (
            f"Cost sharing (airport fee): 3 airlines propose and vote on a split of the fee for up "
            f"to {self.max_turns} rounds; success needs all 3 votes on one proposal"
        )

    def initial_state(self, seed: int = 0) -> CostSharingState:
        opening = (
            moderator(OPENING.format(background=self.background)),
            moderator(FIRST_CALL),
        )
        return CostSharingState(self, (Negotiation(),), opening)


@dataclass(frozen=True)
class Negotiation:
    """One round: the proposals made so far in seat order (None: none made), then the votes (the
    seat voted for, or None: abstained)."""

    proposals: tuple[str | None, ...] = ()
    votes: tuple[int | None, ...] = ()


@dataclass(frozen=True)
class CostSharingObservation(Observation):
    """A seat's view: who it is, the public setting, and every proposal and vote so far."""

    seat: str = ""
    """"Player 1".. ."""
    airline: str = ""
    """"Airline A".. ."""
    fee: str = ""
    airlines: tuple[str, ...] = ()
    """Every airline's description, A first (public: the moderator announces them all)."""
    background: str = ""
    """The setting's text as the moderator announces it."""
    phase: str = PROPOSE
    round: int = 1
    max_turns: int = 0
    proposals: tuple[tuple[str | None, ...], ...] = ()
    """Per round, the proposals made so far in seat order (None: that seat made none)."""
    votes: tuple[tuple[int | None, ...], ...] = ()
    """Per round, the votes cast so far in seat order: the seat voted for (None: abstained)."""
    recorded_proposal: str | None = None
    """This seat's first proposal as the setting stores it, when about to make its first
    proposal: what a fixed defender replays (§2 "gpt-4-fix"). None otherwise."""


@dataclass(frozen=True)
class CostSharingState(State):
    game: CostSharingGame
    rounds: tuple[Negotiation, ...]
    """Every round so far, the current one last."""
    log: tuple[Event, ...] = field(default=(), repr=False)

    def opening(self) -> tuple[Event, ...]:
        """The background (every airline's usage) and the call for proposals (seed-004 §3.3)."""
        return self.log if self.round == 1 and not self.current.proposals else ()

    @property
    def current(self) -> Negotiation:
        return self.rounds[-1]

    @property
    def round(self) -> int:
        return len(self.rounds)

    @property
    def phase(self) -> str:
        return PROPOSE if len(self.current.proposals) < self.game.n_players else VOTE

    def is_terminal(self) -> bool:
        # A round that is fully voted and still current ended the game (else a new one is open).
        return len(self.current.votes) == self.game.n_players

    def to_act(self) -> tuple[int, ...]:
        if self.is_terminal():
            return ()
        done = self.current.proposals if self.phase == PROPOSE else self.current.votes
        return (len(done),)

    def legal(self, player: int) -> ActionSpace:
        if player not in self.to_act():
            raise IllegalAction(f"player {player} does not act now in the cost sharing game")
        return self.game.space if self.phase == PROPOSE else self.game.votes

    # -- the outcome ----------------------------------------------------------------------------

    def agreed_with(self) -> int | None:
        """The seat whose proposal the first voter chose, on success (§6.7, §10.11 [C]); else
        None."""
        if not self.is_terminal():
            return None
        return agreed_vote(self.current.proposals, self.current.votes, self.game.agreement)

    def agreed_proposal(self) -> str | None:
        """The proposal agreed on, once the game is over and succeeded; None otherwise, and when
        the votes agreed on a seat that made no proposal (module docstring)."""
        seat = self.agreed_with()
        return None if seat is None else self.current.proposals[seat]

    @property
    def success(self) -> bool:
        return self.agreed_with() is not None

    def latest_proposals(self) -> tuple[str | None, ...]:
        """Each seat's proposal of the latest round it proposed in (§6.7: the challenger's
        "latest"; the code keeps the last one, unparsed or not); None where none yet."""
        out: list[str | None] = []
        for p in range(self.game.n_players):
            made = [r.proposals[p] for r in self.rounds if len(r.proposals) > p]
            out.append(made[-1] if made else None)
        return tuple(out)

    def shares(self) -> tuple[int, ...] | None:
        """Each seat's share, in percent, of the agreed proposal (§6.7 "Cost"); None on failure
        or when the agreed seat made no proposal."""
        agreed = self.agreed_proposal()
        return None if agreed is None else self.game.space.values(agreed)

    def payoffs(self) -> tuple[float, ...]:
        """1 for every seat once the negotiation succeeded, else 0 (module docstring)."""
        return (1.0 if self.success else 0.0,) * self.game.n_players

    # -- what each seat sees --------------------------------------------------------------------

    def observation(self, player: int) -> CostSharingObservation:
        if not 0 <= player < self.game.n_players:
            raise StratagemError(f"the cost sharing game has players 0..2, got {player}")
        acting = player in self.to_act()
        first = acting and self.round == 1 and self.phase == PROPOSE
        return CostSharingObservation(
            player=player,
            legal=self.legal(player) if acting else None,
            events=tuple(e for e in self.log if e.visible(player)),
            seat=seat_name(player),
            airline=PARTIES[player],
            fee=self.game.fee,
            airlines=self.game.airlines,
            background=self.game.background,
            phase=self.phase,
            round=self.round,
            max_turns=self.game.max_turns,
            proposals=tuple(r.proposals for r in self.rounds),
            votes=tuple(r.votes for r in self.rounds),
            recorded_proposal=self.game.recorded[player] if first else None,
        )

    # -- moves ----------------------------------------------------------------------------------

    def forfeit(self, actions: Mapping[int, Action | None]) -> tuple[CostSharingState, list[Event]]:
        """A seat without a valid reply makes no proposal, or abstains (module docstring)."""
        if self.is_terminal():
            raise IllegalAction("the game is over: no further actions are accepted")
        if set(actions) != set(self.to_act()):
            raise IllegalAction(
                f"expected actions from players {list(self.to_act())}, got {sorted(actions)}"
            )
        (player,) = self.to_act()
        action = actions[player]
        if action is None:
            return self._advance(player, None)
        nxt, events = self.apply({player: action})
        assert isinstance(nxt, CostSharingState)
        return nxt, events

    def _next(self, actions: Mapping[int, Action]) -> tuple[CostSharingState, list[Event]]:
        (player,) = self.to_act()
        return self._advance(player, str(actions[player]))

    def _advance(self, player: int, action: str | None) -> tuple[CostSharingState, list[Event]]:
        k, n = self.round, self.game.n_players
        events: list[Event]
        if self.phase == PROPOSE:
            text = "" if action is None else proposal_text(player, action)
            events = [utterance("proposal", player, text, PROPOSE, k, proposal=action)]
            now = Negotiation((*self.current.proposals, action))
            if len(now.proposals) == n:
                events.append(moderator(VOTE_CALL))
            rounds = (*self.rounds[:-1], now)
        else:
            seat = None if action is None else SEATS.index(action)
            text = "" if seat is None else vote_text(seat)
            events = [utterance("vote", player, text, VOTE, k, vote=seat)]
            now = Negotiation(self.current.proposals, (*self.current.votes, seat))
            rounds = (*self.rounds[:-1], now)
            if len(now.votes) == n:
                if agreed_vote(now.proposals, now.votes, self.game.agreement) is not None:
                    events.append(moderator(AGREED))
                elif k >= self.game.max_turns:
                    events.append(moderator(FAILED.format(max_turns=self.game.max_turns)))
                else:
                    events.append(moderator(RETRY.format(k=k)))
                    rounds = (*rounds, Negotiation())
        nxt = CostSharingState(self.game, rounds, (*self.log, *events))
        if nxt.is_terminal():
            events.append(nxt._outcome())
            nxt = CostSharingState(self.game, rounds, (*self.log, *events))
        return nxt, events

    def _outcome(self) -> Event:
        """The negotiation's result for the record: what cooperation, coordination and cost are
        computed from (§6.6, §6.7), without replaying the game."""
        shares = self.shares()
        return Event(
            OUTCOME,
            {
                "success": self.success,
                "rounds": self.round,
                "agreed_proposal": self.agreed_proposal(),
                "agreed_with": self.agreed_with(),
                "latest_proposals": list(self.latest_proposals()),
                "shares": None if shares is None else list(shares),
            },
            HIDDEN,
        )
