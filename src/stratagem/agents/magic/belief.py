"""The PGM-aware agent's numeric belief: a row-stochastic matrix M and its update (seed-004 §7.2).

Row r of M is the owner's estimate of "who player r thinks is the spy" (the chameleon or the
undercover); column j is how suspicious player j looks, from each perspective. The owner turns
each text analysis into a factor matrix F (`analysis_parse`) and updates

    M <- softmax_row(M * (1 + factor_scale * F)),   factor_scale = 0.1.

What M decides (§7.2): the Chameleon vote (argmax of the own row), the Chameleon clue target (from
the column of the owner), and the Undercover self-diagnosis that picks the clue prompt.

Seats are 0-based (as in `games.magic.social_deduction`). Every function returns a new array.

Ties. The study's code picks its winners with `np.argsort`, whose sort of three values is stable,
so an exact tie for the largest value goes to the highest seat (`argsort()[-1]`) and one for the
smallest to the lowest seat; `np.argmax` (used for the diagnosis) takes the lowest. Ties are not
rare: a non-chameleon's column starts as [0, 1/3, 1/3]. `ties="code"` reproduces the code;
`ties="lowest"` breaks every tie towards the lowest seat, as the "argmax"/"argmin" §7.2 writes
would (numpy's, the first index). The PGM player plays "lowest" in the paper variant and "code"
with `code_compat` (`pgm_player.PgmOptions.tie_rule`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

N_PLAYERS = 3
FACTOR_SCALE = 0.1
"""seed-004 §7.2 [C]: `factor_scale = 0.1`."""
NOT_SURE_STD = 1e-4
"""seed-004 §7.2 [C]: std(own row) <= 1e-4 means "not sure"."""

Ties = Literal["code", "lowest"]
Verdict = Literal["yes", "no", "not sure"]

Matrix = NDArray[np.float64]


def softmax_rows(x: ArrayLike) -> Matrix:
    """Softmax of each row (numerically stable)."""
    a = np.asarray(x, dtype=np.float64)
    e = np.exp(a - a.max(axis=-1, keepdims=True))
    out: Matrix = e / e.sum(axis=-1, keepdims=True)
    return out


# -- initialisation (seed-004 §7.2) ----------------------------------------------------------------


def init_chameleon(owner: int, owner_is_chameleon: bool, n: int = N_PLAYERS) -> Matrix:
    """The belief of a Chameleon player.

    A non-chameleon knows it is not the chameleon: its own row is 1/(n-1) on each other player
    and 0 on itself; it knows nothing of the others' views (rows of 1/n). The chameleon knows it
    is the spy (own row one-hot on itself) and that each other player r, a non-chameleon, suspects
    everyone but r equally (row r: 1/(n-1) off r, 0 on r).
    """
    _check_seat(owner, n)
    m = np.full((n, n), 1.0 / n)
    if owner_is_chameleon:
        m = np.full((n, n), 1.0 / (n - 1))
        np.fill_diagonal(m, 0.0)
        m[owner] = 0.0
        m[owner, owner] = 1.0
    else:
        m[owner] = 1.0 / (n - 1)
        m[owner, owner] = 0.0
    return m


def init_undercover(n: int = N_PLAYERS) -> Matrix:
    """The belief of an Undercover player: nobody is told their role, so every row is 1/n."""
    return np.full((n, n), 1.0 / n)


# -- the update (seed-004 §7.2) --------------------------------------------------------------------


def update(m: ArrayLike, factor: ArrayLike, factor_scale: float = FACTOR_SCALE) -> Matrix:
    """M <- softmax_row(M * (1 + factor_scale * F)).

    The update is multiplicative, so an entry at 0 (a non-chameleon's own entry) stays the smallest
    input of its row; the softmax then spreads every row towards uniform. F is usually in
    {-1, 0, +1} (`analysis_parse`); any real values are accepted.
    """
    belief = np.asarray(m, dtype=np.float64)
    f = np.asarray(factor, dtype=np.float64)
    if belief.ndim != 2 or belief.shape[0] != belief.shape[1]:
        raise ValueError(f"a belief is a square matrix, got shape {belief.shape}")
    if f.shape != belief.shape:
        raise ValueError(f"factor shape {f.shape} does not match the belief's {belief.shape}")
    return softmax_rows(belief * (1.0 + factor_scale * f))


# -- what the belief decides -----------------------------------------------------------------------


def _pick(values: Matrix, exclude: int | None, largest: bool, ties: Ties) -> int:
    """The seat with the largest (or smallest) value, `exclude` left out, ties broken by `ties`."""
    return _pick_among(values, [i for i in range(len(values)) if i != exclude], largest, ties)


def _pick_among(values: Matrix, seats: Sequence[int], largest: bool, ties: Ties) -> int:
    """The seat of `seats` with the largest (or smallest) value, ties broken by `ties`."""
    best = max(values[i] for i in seats) if largest else min(values[i] for i in seats)
    tied = [i for i in seats if values[i] == best]
    if ties == "code" and largest:
        return tied[-1]  # the last of a stable ascending argsort
    return tied[0]


def chameleon_vote(
    m: ArrayLike,
    owner: int,
    owner_is_chameleon: bool,
    ties: Ties = "code",
    allowed: Sequence[int] | None = None,
) -> int:
    """The PGM vote in Chameleon (seed-004 §7.2, `use_text_vote=False`): argmax of the own row.

    Only the chameleon skips itself (§7.2); a non-chameleon does not (its own entry starts at 0
    and rarely becomes the largest). `allowed` are the seats the game lets the owner vote for
    (all when None): a game that refuses self-votes leaves the owner out, so the argmax never
    picks a vote the game would refuse.

    Note: the chameleon's analysis template has no first-person block (§6.3), so its own row
    normally gets zero factors only, and its two other entries (0 at first) stay equal: its vote
    is then the tie rule's pick (the higher other seat under `ties="code"`), whatever it wrote.
    """
    own = _row(m, owner)
    seats = range(len(own)) if allowed is None else allowed
    candidates = [i for i in seats if not (owner_is_chameleon and i == owner)]
    if not candidates or any(not 0 <= i < len(own) for i in candidates):
        raise ValueError(
            f"the seats to vote for must be some of 0..{len(own) - 1}, the chameleon's own left "
            f"out, got {list(seats)}"
        )
    return _pick_among(own, candidates, largest=True, ties=ties)


def chameleon_clue_target(
    m: ArrayLike, owner: int, owner_is_chameleon: bool, ties: Ties = "code"
) -> int:
    """The player named in the Chameleon clue prompt (seed-004 §7.2).

    c = M[:, owner] is how much each player suspects the owner. A non-chameleon targets the one
    who suspects it most, argmax c, and is told to "increase the suspiciousness of the
    {target_player}"; the chameleon targets the one who suspects it least, argmin c, and is told
    to "defraud trust from the {target_player}". The owner itself is excluded.
    """
    column = _column(m, owner)
    return _pick(column, owner, largest=not owner_is_chameleon, ties=ties)


@dataclass(frozen=True)
class Diagnosis:
    """An Undercover PGM player's view of its own role; `target` is set only for "no"."""

    verdict: Verdict
    target: int | None = None


def undercover_diagnosis(
    m: ArrayLike, owner: int, threshold: float = NOT_SURE_STD, ties: Ties = "code"
) -> Diagnosis:
    """seed-004 §7.2: the self-diagnosis that picks the Undercover clue prompt.

    - std(own row) <= threshold: "not sure" (nothing has separated the players yet);
    - argmax of the own row is the owner: "yes", it thinks it is the undercover;
    - otherwise "no", and the target is the argmax of the own row excluding the owner.

    The "yes" test is `np.argmax` (a tie goes to the lowest seat) under either `ties`; the target
    follows `ties` (the code's argsort rule gives the highest seat).
    """
    own = _row(m, owner)
    if float(np.std(own)) <= threshold:
        return Diagnosis("not sure")
    if int(np.argmax(own)) == owner:
        return Diagnosis("yes")
    return Diagnosis("no", _pick(own, owner, largest=True, ties=ties))


def undercover_clue_target_code(m: ArrayLike, owner: int, ties: Ties = "code") -> int:
    """The target the study's code names in the Undercover "no" clue prompt (`get_target`).

    The code chooses the clue *template* from the text self-diagnosis (its helper's reading of
    the is_undercover answer, `analysis_parse.parse_self_diagnosis` here) but the *target* from
    the numeric diagnosis, so the two can disagree: numeric "no" gives `Diagnosis.target`;
    numeric "yes" gives the player who suspects the owner most (argmax of the owner's column,
    self excluded); numeric "not sure" gives -1, which the code's `player_names[-1]` turns into
    the last seat. `undercover_diagnosis` is the spec's §7.2 reading, where one diagnosis picks
    both; this is for reproducing the code.
    """
    found = undercover_diagnosis(m, owner, ties=ties)
    if found.verdict == "no":
        assert found.target is not None
        return found.target
    if found.verdict == "yes":
        return _pick(_column(m, owner), owner, largest=True, ties=ties)
    return int(np.asarray(m).shape[0]) - 1


# -- helpers ---------------------------------------------------------------------------------------


def _check_seat(seat: int, n: int) -> None:
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < n:
        raise ValueError(f"seat must be an integer 0..{n - 1}, got {seat!r}")
    if n < 2:
        raise ValueError(f"a belief needs at least 2 players, got {n}")


def _row(m: ArrayLike, owner: int) -> Matrix:
    belief = np.asarray(m, dtype=np.float64)
    _check_seat(owner, belief.shape[0])
    row: Matrix = belief[owner]
    return row


def _column(m: ArrayLike, owner: int) -> Matrix:
    belief = np.asarray(m, dtype=np.float64)
    _check_seat(owner, belief.shape[0])
    column: Matrix = belief[:, owner]
    return column
