"""Builders of synthetic MAgIC game records for the metric tests (seed-004), with defaults that
keep each test to the fields its arithmetic is about."""

from __future__ import annotations

from collections.abc import Sequence

from stratagem.studies.magic.records import (
    Belief,
    CostSharingOutcome,
    DilemmaOutcome,
    Guess,
    MagicGame,
    PDRound,
    PGRound,
    PublicGoodOutcome,
    SocialOutcome,
    Vote,
)

ENTITY = "m|plain"
DEFENDER = "openai/gpt-4|plain"


def social(
    game: str = "chameleon",
    *,
    spy: int = 2,
    as_spy: bool = False,
    win_flag: int = 0,
    votes: Sequence[Vote] = (),
    guess_right: bool | None = None,
    role_answers: Sequence[Sequence[str | None]] = (),
    beliefs: Sequence[Sequence[Belief | None]] = (),
    challenger: str = ENTITY,
    setting: int = 0,
    repetition: int = 0,
    invalid: Sequence[int] = (0, 0, 0),
    decisions: Sequence[int] = (0, 0, 0),
) -> MagicGame:
    """A Chameleon or Undercover game; the challenger holds the spy seat or both other seats.
    A caught chameleon's guess (flag 0 or 1) is filled in from the flag unless given."""
    spy_role = game
    majority = "non-chameleon" if game == "chameleon" else "civilian"
    roles = tuple(spy_role if k == spy else majority for k in range(3))
    seats = (spy,) if as_spy else tuple(k for k in range(3) if k != spy)
    guess = None
    if game == "chameleon" and win_flag in (0, 1):
        right = win_flag == 1 if guess_right is None else guess_right
        guess = Guess(text="Grape" if right else "Apple", correct=right)
    return MagicGame(
        game=game,
        setting=setting,
        repetition=repetition,
        challenger=challenger,
        defender=DEFENDER,
        challenger_seats=seats,
        roles=roles,
        invalid=tuple(invalid),
        decisions=tuple(decisions),
        social=SocialOutcome(
            win_flag=win_flag,
            votes=tuple(votes),
            guess=guess,
            role_answers=tuple(tuple(a) for a in role_answers),
            beliefs=tuple(tuple(b) for b in beliefs),
        ),
    )


def cost_sharing(
    success: bool,
    agreed: Sequence[float | None] | None = None,
    latest: Sequence[float | None] | None = None,
    *,
    seat: int = 0,
    challenger: str = ENTITY,
    setting: int = 0,
    repetition: int = 0,
) -> MagicGame:
    return MagicGame(
        game="cost-sharing",
        setting=setting,
        repetition=repetition,
        challenger=challenger,
        defender=DEFENDER,
        challenger_seats=(seat,),
        roles=("player",) * 3,
        invalid=(0, 0, 0),
        decisions=(0, 0, 0),
        cost_sharing=CostSharingOutcome(
            success=success,
            agreed=None if agreed is None else tuple(agreed),
            challenger_latest=None if latest is None else tuple(latest),
        ),
    )


def dilemma(
    moves: Sequence[str],
    scores: Sequence[float],
    *,
    seat: int = 0,
    invalid_rounds: Sequence[int] = (),
    challenger: str = ENTITY,
    setting: int = 0,
    repetition: int = 0,
    replies: Sequence[Sequence[str | None]] = (),
) -> MagicGame:
    """A PD game; `moves` are the challenger's per round, the defenders always cooperate;
    `replies[r]`, if given, are round r's first replies per seat."""
    rounds = tuple(
        PDRound(
            moves=tuple(m if k == seat else "C" for k in range(3)),
            invalid=tuple(k == seat and r in invalid_rounds for k in range(3)),
            replies=tuple(replies[r]) if replies else (),
        )
        for r, m in enumerate(moves)
    )
    n_bad = len(invalid_rounds)
    return MagicGame(
        game="npd3",
        setting=setting,
        repetition=repetition,
        challenger=challenger,
        defender=DEFENDER,
        challenger_seats=(seat,),
        roles=("player",) * 3,
        invalid=tuple(n_bad if k == seat else 0 for k in range(3)),
        decisions=tuple(len(moves) for _ in range(3)),
        dilemma=DilemmaOutcome(rounds=rounds, scores=tuple(scores)),
    )


def public_good(
    contributions: Sequence[Sequence[float]],
    scores: Sequence[float],
    multiplier: float,
    *,
    seat: int = 0,
    invalid_rounds: Sequence[int] = (),
    challenger: str = ENTITY,
    setting: int = 0,
    repetition: int = 0,
    replies: Sequence[Sequence[str | None]] = (),
) -> MagicGame:
    rounds = tuple(
        PGRound(
            contributions=tuple(float(x) for x in c),
            invalid=tuple(k == seat and r in invalid_rounds for k in range(3)),
            replies=tuple(replies[r]) if replies else (),
        )
        for r, c in enumerate(contributions)
    )
    return MagicGame(
        game="public-good",
        setting=setting,
        repetition=repetition,
        challenger=challenger,
        defender=DEFENDER,
        challenger_seats=(seat,),
        roles=("player",) * 3,
        invalid=tuple(len(invalid_rounds) if k == seat else 0 for k in range(3)),
        decisions=tuple(len(contributions) for _ in range(3)),
        public_good=PublicGoodOutcome(rounds=rounds, scores=tuple(scores), multiplier=multiplier),
    )


def full_set(challenger: str = ENTITY, *, flip: bool = False) -> list[MagicGame]:
    """Two games of each of the seven competitions with every ability defined; `flip` swaps
    some outcomes so that two entities differ."""
    f = ((0, -1, 1), (1, 0, 0), (0, 0, 0))
    zero = ((0, 0, 0),) * 3
    ans = ("I am Player 1, my role is non-chameleon", "I am Player 2, my role is non-chameleon")
    spy_ans = "I am Player 1, my role is undercover"
    c = challenger
    games: list[MagicGame] = []
    for rep in range(2):
        win = (rep == 0) != flip
        games += [
            social(
                "chameleon", as_spy=True, win_flag=2 if win else 0, challenger=c, repetition=rep
            ),
            social(
                "chameleon",
                win_flag=0 if win else 2,
                votes=[Vote(0, 2), Vote(1, 2 if win else 0)],
                role_answers=[(ans[0], ans[1] if win else None, None)],
                beliefs=[(f, f, zero)],
                challenger=c,
                repetition=rep,
            ),
            social(
                "undercover",
                as_spy=True,
                spy=0,
                win_flag=1 if win else 0,
                role_answers=[(spy_ans, None, None)],
                challenger=c,
                repetition=rep,
            ),
            social(
                "undercover",
                win_flag=0 if win else 1,
                votes=[Vote(0, 2), Vote(1, 2)],
                challenger=c,
                repetition=rep,
            ),
            cost_sharing(
                win, (40, 30, 30) if win else None, (40, 30, 30), challenger=c, repetition=rep
            ),
            dilemma(
                "DDDDD" if win else "CCCCC",
                (10, 0, 0) if win else (0, 5, 5),
                challenger=c,
                repetition=rep,
            ),
            public_good([(0, 10, 10)], (110, 100, 100), 1.5, challenger=c, repetition=rep),
        ]
    return games
