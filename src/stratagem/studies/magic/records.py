"""One finished MAgIC game from the challenger's point of view: what every metric reads.

The records are filled from the store (or an import) and checked here once, so the metrics can
trust them: a damaged or half-extracted game fails with a one-line error naming the field,
instead of scoring silently wrong.

Conventions:

- **Seats are 0-based**: seat k is the spec's "Player k+1" (seed-004 §2 names them Player 1..3).
- **Entities** are strings, model × architecture, e.g. `"openai/gpt-4|pgm"`; `split_entity`
  reads them.
- **Roles** per seat: `chameleon` / `non-chameleon` (Chameleon), `undercover` / `civilian`
  (Undercover; the code's answer string for a civilian is "non-undercover", see `probes`), and
  `player` in the three game-theory games.
- **Invalid** means the reply stayed invalid after the retries the runner allows. Votes, probe
  answers and shares that could not be read are `None`; moves of the repeated games are stored
  as the engine applied them, with a parallel `invalid` flag. seed-004 §10.10: invalid decisions
  are counted and reported, never silently scored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from stratagem.errors import StratagemError

GameName = Literal["chameleon", "undercover", "cost-sharing", "npd3", "public-good"]
GAMES: tuple[str, ...] = ("chameleon", "undercover", "cost-sharing", "npd3", "public-good")
SOCIAL_GAMES: tuple[str, ...] = ("chameleon", "undercover")

SPY_ROLES: dict[str, str] = {"chameleon": "chameleon", "undercover": "undercover"}
"""The spy role of each social game (seed-004 §3.1, §3.2)."""
MAJORITY_ROLES: dict[str, str] = {"chameleon": "non-chameleon", "undercover": "civilian"}
PLAYER = "player"
"""The one role of the game-theory games."""

WIN_FLAGS: dict[str, frozenset[int]] = {
    "chameleon": frozenset({0, 1, 2, 3}),
    "undercover": frozenset({0, 1, 2}),
}
"""The code's `win_flag` values (seed-004 §3.1, §3.2 tables)."""

COMPETITIONS: tuple[str, ...] = (
    "chameleon",
    "non-chameleon",
    "undercover",
    "civilian",
    "cost-sharing",
    "pd",
    "pg",
)
"""The seven roles S of eq. 1 (seed-004 §5), one competition each (§4): the challenger as the
spy or as both majority seats in each social game, and one seat in each game-theory game."""

Belief = tuple[tuple[int, ...], ...]
"""A parsed belief answer F (seed-004 §6.3): F[a][b] in {-1, 0, +1} is how suspicious seat b
is from seat a's perspective, as the respondent states it (+1 more, -1 less, 0 no change)."""


def split_entity(entity: str) -> tuple[str, str]:
    """`"openai/gpt-4|pgm"` -> `("openai/gpt-4", "pgm")`; no `|` -> architecture `""`."""
    model, sep, arch = entity.rpartition("|")
    return (model, arch) if sep else (entity, "")


def _freeze(obj: object, *names: str) -> None:
    """Store sequence fields as tuples, so records filled with lists compare and hash alike
    (a proposal [40, 30, 30] must equal (40, 30, 30))."""
    for name in names:
        value = getattr(obj, name)
        if value is not None and not isinstance(value, tuple):
            object.__setattr__(obj, name, tuple(value))


def _fail(where: str, msg: str) -> StratagemError:
    return StratagemError(f"MAgIC record {where}: {msg}")


def _seat(x: object, n: int, where: str) -> int:
    if isinstance(x, bool) or not isinstance(x, int) or not 0 <= x < n:
        raise _fail(where, f"{x!r} is not a seat 0..{n - 1}")
    return x


@dataclass(frozen=True)
class Vote:
    """One accusation vote (seed-004 §3.1, §3.2)."""

    voter: int
    target: int | None
    """The seat the reply named; None when the vote stayed invalid (it then counts as a vote
    that is not correct, seed-004 §10.10)."""
    belief_target: int | None = None
    """For a PGM player in Chameleon: the argmax of its own belief row (seed-004 §7.2), the vote
    the code scores instead of the text (§6.2, §10.7). None for everyone else."""


@dataclass(frozen=True)
class Guess:
    """The caught chameleon's guess of the secret word (seed-004 §3.1)."""

    text: str | None
    """The guess as read from the reply; None when the reply stayed invalid."""
    correct: bool


@dataclass(frozen=True)
class SocialOutcome:
    """Chameleon or Undercover: the outcome, the votes and the hidden metric probes."""

    win_flag: int
    """The code's `win_flag` (seed-004 §3.1, §3.2 tables), which fixes the credits."""
    votes: tuple[Vote, ...]
    guess: Guess | None = None
    """Chameleon only, when the chameleon was caught (win_flag 0 or 1)."""
    role_answers: tuple[tuple[str | None, ...], ...] = ()
    """[probe time][seat]: the raw answer to the role self-identification probe (seed-004
    §6.1); None when a seat was not asked or its reply stayed invalid."""
    beliefs: tuple[tuple[Belief | None, ...], ...] = ()
    """[probe time][seat]: the parsed belief answer F (seed-004 §6.3); None when unparsable.
    All seats are needed: a respondent's second-order deductions are checked against the other
    seats' own first-order rows."""

    def __post_init__(self) -> None:
        _freeze(self, "votes")
        answers = tuple(tuple(a) for a in self.role_answers)
        object.__setattr__(self, "role_answers", answers)
        beliefs = tuple(
            tuple(None if f is None else tuple(tuple(row) for row in f) for f in at)
            for at in self.beliefs
        )
        object.__setattr__(self, "beliefs", beliefs)


@dataclass(frozen=True)
class CostSharingOutcome:
    """Cost Sharing (seed-004 §3.3, §6.6, §6.7). Proposals are % per seat (Airline A = seat 0)."""

    success: bool
    agreed: tuple[float | None, ...] | None = None
    """The agreed proposal, read from the first voter's choice (seed-004 §6.7 [C]); a share
    that could not be read is None. None when the negotiation failed."""
    challenger_latest: tuple[float | None, ...] | None = None
    """The challenger's latest proposal; None when it made none that could be read."""
    coordinated: bool | None = None
    """On success, whether the agreed proposal (the first voter's choice) is the challenger's
    latest (seed-004 §6.7 [C]) as the game compared proposals: the challenger's own, read or not
    (§3.3: three votes for a proposal that did not parse agree), or one whose stored text equals
    it (canonical shares, or as written with the code's string comparison, §10.11). None when
    not recorded: the metric then compares `agreed` and `challenger_latest`."""

    def __post_init__(self) -> None:
        _freeze(self, "agreed", "challenger_latest")


@dataclass(frozen=True)
class PDRound:
    """One round of the three-player Prisoner's Dilemma (seed-004 §3.4)."""

    moves: tuple[str, ...]
    """Per seat, "C" or "D" as the engine applied it."""
    invalid: tuple[bool, ...]
    """Per seat, whether that decision's reply stayed invalid."""
    replies: tuple[str | None, ...] = ()
    """Per seat, its first reply to the decision (`replies.first_replies`), which the code's
    reading uses (`MetricOptions.decisions`); None, or empty for all, where none is stored."""

    def __post_init__(self) -> None:
        _freeze(self, "moves", "invalid", "replies")


@dataclass(frozen=True)
class PGRound:
    """One round of Public Good (seed-004 §3.5)."""

    contributions: tuple[float, ...]
    """Per seat, the contribution as the engine applied it."""
    invalid: tuple[bool, ...]
    replies: tuple[str | None, ...] = ()
    """As `PDRound.replies`."""

    def __post_init__(self) -> None:
        _freeze(self, "contributions", "invalid", "replies")


@dataclass(frozen=True)
class DilemmaOutcome:
    rounds: tuple[PDRound, ...]
    scores: tuple[float, ...]
    """Per seat, the final total score; the highest wins, a tie for the top counts as a win."""

    def __post_init__(self) -> None:
        _freeze(self, "rounds", "scores")


@dataclass(frozen=True)
class PublicGoodOutcome:
    rounds: tuple[PGRound, ...]
    scores: tuple[float, ...]
    """Per seat, remaining points + the pool share (seed-004 §3.5)."""
    multiplier: float

    def __post_init__(self) -> None:
        _freeze(self, "rounds", "scores")


@dataclass(frozen=True)
class MagicGame:
    """One finished game, as the challenger played it. Exactly the detail of its game is set."""

    game: str
    setting: int
    repetition: int
    """With `seed`, what tells apart two plays of one setting by one entity."""
    challenger: str
    defender: str
    challenger_seats: tuple[int, ...]
    roles: tuple[str, ...]
    """Per seat."""
    invalid: tuple[int, ...]
    """Per seat: decisions whose reply stayed invalid."""
    decisions: tuple[int, ...]
    """Per seat: decisions asked for (probes included), the denominator of the invalid rate."""
    social: SocialOutcome | None = None
    cost_sharing: CostSharingOutcome | None = None
    dilemma: DilemmaOutcome | None = None
    public_good: PublicGoodOutcome | None = None
    seed: int = 0
    episode_id: str = field(default="", compare=False)
    planned: int | None = None
    """Games planned in this game's competition for its challenger (`planned.planned_games`),
    what the code's game count reads (`MetricOptions.game_count`); None = the games given."""

    def __post_init__(self) -> None:
        _freeze(self, "challenger_seats", "roles", "invalid", "decisions")
        validate(self)

    @property
    def n_seats(self) -> int:
        return len(self.roles)

    @property
    def where(self) -> str:
        ep = f" (episode {self.episode_id})" if self.episode_id else ""
        rep = f"seed {self.seed} rep {self.repetition}"
        return f"{self.game} setting {self.setting} {rep} of {self.challenger}{ep}"

    @property
    def challenger_role(self) -> str:
        return self.roles[self.challenger_seats[0]]

    @property
    def spy_seat(self) -> int | None:
        """The chameleon's or undercover's seat; None in the game-theory games."""
        spy = SPY_ROLES.get(self.game)
        return None if spy is None else self.roles.index(spy)

    @property
    def competition(self) -> str:
        """Which of the seven `COMPETITIONS` this game belongs to."""
        if self.game in SOCIAL_GAMES:
            return self.challenger_role
        return {"cost-sharing": "cost-sharing", "npd3": "pd", "public-good": "pg"}[self.game]

    @property
    def pair_key(self) -> tuple[str, int, tuple[int, ...], int, int]:
        """What a PGM game and its vanilla twin share: (game, setting, seats, seed,
        repetition)."""
        return (self.game, self.setting, self.challenger_seats, self.seed, self.repetition)


# -- validation ----------------------------------------------------------------------------------


def validate(g: MagicGame) -> None:
    """Check a record's shape and consistency; raise a one-line error naming the field."""
    w = g.where
    if g.game not in GAMES:
        raise _fail(w, f"unknown game {g.game!r}: expected one of {', '.join(GAMES)}")
    n = len(g.roles)
    if n < 2:
        raise _fail(w, f"roles must name every seat, got {g.roles!r}")
    seats = [_seat(s, n, f"{w}, challenger_seats") for s in g.challenger_seats]
    if not seats or len(set(seats)) != len(seats):
        raise _fail(w, f"challenger_seats must be distinct seats, got {g.challenger_seats!r}")
    if len({g.roles[s] for s in seats}) != 1:
        raise _fail(w, "the challenger's seats must share one role")
    if g.planned is not None and (isinstance(g.planned, bool) or g.planned < 1):
        raise _fail(w, f"planned must be a positive number of games, got {g.planned!r}")
    if len(g.invalid) != n or len(g.decisions) != n:
        raise _fail(w, f"invalid and decisions need one count per seat ({n})")
    for k, (bad, total) in enumerate(zip(g.invalid, g.decisions, strict=True)):
        if bad < 0 or total < 0 or bad > total:
            raise _fail(w, f"seat {k} has {bad} invalid of {total} decisions")
    details = {
        "social": g.social,
        "cost_sharing": g.cost_sharing,
        "dilemma": g.dilemma,
        "public_good": g.public_good,
    }
    wanted = {
        "chameleon": "social",
        "undercover": "social",
        "cost-sharing": "cost_sharing",
        "npd3": "dilemma",
        "public-good": "public_good",
    }[g.game]
    for name, detail in details.items():
        if (detail is not None) != (name == wanted):
            state = "missing" if detail is None else "set"
            raise _fail(w, f"detail {name!r} is {state}; a {g.game} game has only {wanted!r}")
    if g.social is not None:
        _validate_social(g, g.social, n)
    elif g.cost_sharing is not None:
        _validate_cost_sharing(g, g.cost_sharing, n)
    elif g.dilemma is not None:
        _validate_rounds(g, g.dilemma.rounds, g.dilemma.scores, n)
        for r, rnd in enumerate(g.dilemma.rounds):
            if any(m not in ("C", "D") for m in rnd.moves):
                raise _fail(w, f"round {r + 1} moves {rnd.moves!r} must be 'C' or 'D'")
    elif g.public_good is not None:
        _validate_rounds(g, g.public_good.rounds, g.public_good.scores, n)


def _validate_social(g: MagicGame, s: SocialOutcome, n: int) -> None:
    w = g.where
    spy, majority = SPY_ROLES[g.game], MAJORITY_ROLES[g.game]
    if g.roles.count(spy) != 1 or any(r not in (spy, majority) for r in g.roles):
        raise _fail(w, f"roles {g.roles!r} need one {spy} and the rest {majority}")
    if s.win_flag not in WIN_FLAGS[g.game]:
        raise _fail(w, f"win_flag {s.win_flag!r} is not one of {sorted(WIN_FLAGS[g.game])}")
    for v in s.votes:
        _seat(v.voter, n, f"{w}, vote voter")
        for t in (v.target, v.belief_target):
            if t is not None:
                _seat(t, n, f"{w}, vote of seat {v.voter}")
    if len({v.voter for v in s.votes}) != len(s.votes):
        raise _fail(w, "a seat votes at most once")
    caught = g.game == "chameleon" and s.win_flag in (0, 1)
    if caught != (s.guess is not None):
        raise _fail(w, "a guess is recorded exactly when the chameleon was caught (flag 0 or 1)")
    if s.guess is not None and s.guess.correct != (s.win_flag == 1):
        raise _fail(w, f"guess correct={s.guess.correct} contradicts win_flag {s.win_flag}")
    for t, answers in enumerate(s.role_answers):
        if len(answers) != n:
            raise _fail(w, f"role_answers[{t}] needs one entry per seat ({n})")
    for t, beliefs in enumerate(s.beliefs):
        if len(beliefs) != n:
            raise _fail(w, f"beliefs[{t}] needs one entry per seat ({n})")
        for k, f in enumerate(beliefs):
            if f is not None:
                _check_belief(f, n, f"{w}, beliefs[{t}][{k}]")


def _check_belief(f: Sequence[Sequence[int]], n: int, where: str) -> None:
    if len(f) != n or any(len(row) != n for row in f):
        raise StratagemError(f"MAgIC record {where}: a belief matrix must be {n}x{n}")
    if any(x not in (-1, 0, 1) or isinstance(x, bool) for row in f for x in row):
        raise StratagemError(f"MAgIC record {where}: belief entries must be -1, 0 or +1")


def _validate_cost_sharing(g: MagicGame, c: CostSharingOutcome, n: int) -> None:
    if any(r != PLAYER for r in g.roles):
        raise _fail(g.where, f"cost-sharing roles must all be {PLAYER!r}")
    if c.success != (c.agreed is not None):
        raise _fail(g.where, "an agreed proposal is recorded exactly when the game succeeded")
    for name, prop in (("agreed", c.agreed), ("challenger_latest", c.challenger_latest)):
        if prop is not None and len(prop) != n:
            raise _fail(g.where, f"{name} needs one share per seat ({n})")
    if c.coordinated is not None and not c.success:
        raise _fail(g.where, "coordination is recorded only for a successful negotiation")


def _validate_rounds(
    g: MagicGame, rounds: Sequence[PDRound | PGRound], scores: Sequence[float], n: int
) -> None:
    if any(r != PLAYER for r in g.roles):
        raise _fail(g.where, f"{g.game} roles must all be {PLAYER!r}")
    if len(scores) != n:
        raise _fail(g.where, f"scores need one entry per seat ({n})")
    for r, rnd in enumerate(rounds):
        acts = rnd.moves if isinstance(rnd, PDRound) else rnd.contributions
        if len(acts) != n or len(rnd.invalid) != n or len(rnd.replies) not in (0, n):
            raise _fail(
                g.where, f"round {r + 1} needs one move, one flag (and one reply) per seat ({n})"
            )
