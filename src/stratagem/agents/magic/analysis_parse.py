"""From a PGM analysis or belief-probe answer to the factor matrix F of seed-004 §6.3 / §7.2.

F[a][b] is what the respondent says player a thinks of player b: +1 "more suspicious", -1 "less
suspicious", 0 "no change" (or nothing said). Row a = the respondent's own row holds its own view.
The same F feeds the PGM update (`belief.update`) and the Reasoning metric (§6.3), so both parse
alike; `studies/` imports these functions rather than re-implementing them.

A parse reports how many entries it read (`matched`), so that an answer nobody could read is
distinguishable from "no change everywhere" and can be counted invalid (§10.10).

Also here: the w.ProPGM matrix answer (§7.1, §10.13) and the Undercover self-diagnosis (§7.3,
whose study code asked a gpt-3.5-turbo helper; §10.8 asks for deterministic parsing instead).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from stratagem.games.magic.social_deduction import SEATS

Verdict = Literal["yes", "no", "not sure"]
LineStart = Literal["exact", "lenient"]

_PLAYER = re.compile(r"Player \d+")
_PLAYER_ANY_CASE = re.compile(r"player\s*(\d+)", re.IGNORECASE)


@dataclass(frozen=True)
class ParsedFactor:
    """F as nested tuples (loggable as is), with how many entries were read and skipped."""

    factor: tuple[tuple[int, ...], ...]
    matched: int
    """Entries set from a recognised statement."""
    unmatched: int
    """Statements that looked like entries but gave nothing usable (no phrase, unknown player)."""

    @property
    def parsed(self) -> bool:
        """Whether the answer said anything readable; False means count it invalid (§10.10)."""
        return self.matched > 0

    @property
    def matrix(self) -> NDArray[np.int64]:
        return np.array(self.factor, dtype=np.int64)


def _result(f: list[list[int]], matched: int, unmatched: int) -> ParsedFactor:
    return ParsedFactor(tuple(tuple(row) for row in f), matched, unmatched)


def _seat(name: str, players: Sequence[str]) -> int | None:
    return players.index(name) if name in players else None


# -- Chameleon: seed-004 §7.3 [C] ------------------------------------------------------------------

CHAMELEON_PHRASES: tuple[tuple[str, int], ...] = (
    ("no change", 0),
    ("more suspicious", 1),
    ("less suspicious", -1),
)
"""Checked in this order and the last one present wins, as in the code: a line naming both
"more" and "less suspicious" reads as "less"."""

_LENIENT_PREFIX = re.compile(r"^[\s>#*_\-•]*(?:\d+[.)]\s*)?[\s*_]*")


def parse_chameleon_analysis(
    text: str,
    respondent: int,
    players: Sequence[str] = SEATS,
    line_start: LineStart = "exact",
) -> ParsedFactor:
    """A Chameleon view analysis or belief-probe answer, read line by line (seed-004 §7.3).

    - The perspective starts as the respondent's own row.
    - A line starting "As Player k" or "I think now Player k" moves it to row k.
    - A line starting "Player j" sets F[perspective][j] from the phrase in the line (0 when the
      line has none, as the code does; such a line counts as unmatched).

    `line_start="exact"` (the default, the code's rule) tests the raw line, case-sensitively.
    `"lenient"` first strips indentation, list markers and markdown emphasis ("- **Player 2**
    is ...") and ignores case. A perspective or player outside `players` (the code crashed) is
    skipped: entries under an unknown perspective count as unmatched until a known one.
    """
    n = len(players)
    f = [[0] * n for _ in range(n)]
    perspective: int | None = respondent
    matched = unmatched = 0
    for raw in text.split("\n"):
        line = raw if line_start == "exact" else _LENIENT_PREFIX.sub("", raw).replace("**", "")
        folded = line if line_start == "exact" else line.casefold()
        name = _first_player(line, line_start)
        if _starts(folded, "As Player", line_start) or _starts(
            folded, "I think now Player", line_start
        ):
            if name is not None:
                perspective = _seat(name, players)
            continue
        if not _starts(folded, "Player", line_start) or name is None:
            continue
        target = _seat(name, players)
        value: int | None = None
        for phrase, score in CHAMELEON_PHRASES:
            if phrase in folded:
                value = score
        if perspective is None or target is None:
            unmatched += 1
            continue
        f[perspective][target] = 0 if value is None else value
        if value is None:
            unmatched += 1
        else:
            matched += 1
    return _result(f, matched, unmatched)


def _starts(line: str, prefix: str, line_start: LineStart) -> bool:
    return line.startswith(prefix if line_start == "exact" else prefix.casefold())


def _first_player(line: str, line_start: LineStart) -> str | None:
    if line_start == "exact":
        found = _PLAYER.search(line)
        return found.group(0) if found else None
    loose = _PLAYER_ANY_CASE.search(line)
    return f"Player {int(loose.group(1))}" if loose else None


# -- Undercover: seed-004 §6.3 [C] -----------------------------------------------------------------

_UNDERCOVER = re.compile(
    r"I think (Player \d+) (?:thinks (Player \d+) )?is (?:the |an |a )?undercover\b"
)
# The code's two patterns, verbatim: `[undercover|the undercover]` is a character class, so any
# word starting with one of its letters passes ("is not the undercover" reads as "is undercover").
_CODE_SELF = re.compile(r"I think Player \d+ is *[undercover|the undercover]")
_CODE_OTHER = re.compile(r"I think Player \d+ thinks Player \d+ is *[undercover|the undercover]")


def parse_undercover_analysis(
    text: str,
    respondent: int,
    players: Sequence[str] = SEATS,
    code_compat: bool = False,
) -> ParsedFactor:
    """An Undercover analysis or belief-probe answer (seed-004 §6.3).

    "I think Player b is undercover" gives +1 in the respondent's own row; "I think Player a thinks
    Player b is undercover" gives +1 in row a. Nothing gives -1: the template only names suspects.

    Default: every such statement of every line counts; "the"/"an" before "undercover" is allowed;
    "is not the undercover" and "is non-undercover" are not statements of suspicion.
    `code_compat=True` reproduces the code exactly: per line only the first match, the
    first-order pattern before the second-order one, with the character-class quirk above.
    Statements naming a player outside `players` count as unmatched.
    """
    n = len(players)
    f = [[0] * n for _ in range(n)]
    matched = unmatched = 0
    for line in text.split("\n"):
        pairs: list[tuple[str | None, str]] = []
        if code_compat:
            own = _CODE_SELF.search(line)
            other = None if own else _CODE_OTHER.search(line)
            if own:
                pairs.append((None, _PLAYER.findall(own.group(0))[0]))
            elif other:
                a, b = _PLAYER.findall(other.group(0))[:2]
                pairs.append((a, b))
        else:
            for found in _UNDERCOVER.finditer(line):
                first, second = found.group(1), found.group(2)
                pairs.append((None, first) if second is None else (first, second))
        for holder, suspect in pairs:
            row = respondent if holder is None else _seat(holder, players)
            column = _seat(suspect, players)
            if row is None or column is None:
                unmatched += 1
                continue
            f[row][column] = 1
            matched += 1
    return _result(f, matched, unmatched)


# -- w.ProPGM: seed-004 §7.1, §10.13 [I] -----------------------------------------------------------

_MATRIX = re.compile(r"\[\s*\[[^\[\]]*\](?:\s*,?\s*\[[^\[\]]*\])*\s*\]")
_ROW = re.compile(r"\[([^\[\]]*)\]")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def parse_probability_matrix(text: str, n: int = 3) -> NDArray[np.float64] | None:
    """The one n x n matrix of an answer such as "[[0.3,0.2,0.5],[0.1,0.4,0.5],[0.3,0.3,0.4]]"
    (numpy's space-separated printout, "[[0.237 0.372 0.391] [...] [...]]", reads too).

    Row j is player j's probabilities of each player being the spy (§7.1). Nothing is repaired:
    None unless the answer holds exactly one such matrix, with n rows of n plain numbers each
    ("0.2.0.5", the spec's own typo, is not a number), all finite and >= 0, no row summing to 0.
    Normalise with `row_stochastic`.
    """
    blocks = _MATRIX.findall(text)
    if len(blocks) != 1:
        return None
    rows = _ROW.findall(blocks[0])
    if len(rows) != n:
        return None
    values: list[list[float]] = []
    for row in rows:
        tokens = [t for t in re.split(r"[,\s]+", row.strip()) if t]
        if len(tokens) != n or not all(_NUMBER.fullmatch(t) for t in tokens):
            return None
        numbers = [float(t) for t in tokens]
        if not all(math.isfinite(x) and x >= 0 for x in numbers) or sum(numbers) <= 0:
            return None
        values.append(numbers)
    return np.array(values, dtype=np.float64)


def row_stochastic(m: ArrayLike) -> NDArray[np.float64]:
    """Each row divided by its sum; rows must be non-negative with a positive sum."""
    a = np.asarray(m, dtype=np.float64)
    sums = a.sum(axis=-1, keepdims=True)
    if (a < 0).any() or (sums <= 0).any() or not np.isfinite(a).all():
        raise ValueError("a probability matrix needs finite, non-negative rows with positive sums")
    out: NDArray[np.float64] = a / sums
    return out


# -- the Undercover self-diagnosis: seed-004 §7.3, §10.8 [I] ---------------------------------------

_NOT_SURE = re.compile(
    r"\bnot sure\b|\bunsure\b|\buncertain\b|\bcannot (?:decide|tell|be sure)\b", re.IGNORECASE
)
_ARTICLE = r"(?:the |an |a )?"
_NO = re.compile(
    rf"^\W*no\b|\bi am not {_ARTICLE}undercover\b|\bi am {_ARTICLE}non-undercover\b"
    rf"|\bmy role is {_ARTICLE}non-undercover\b|\bi am {_ARTICLE}civilian\b",
    re.IGNORECASE,
)
_YES = re.compile(
    rf"^\W*yes\b|\bi am {_ARTICLE}undercover\b|\bmy role is {_ARTICLE}undercover\b", re.IGNORECASE
)


def parse_self_diagnosis(text: str) -> Verdict | None:
    """The role an Undercover PGM player gives itself in answer to the is_undercover question.

    The study's code asked gpt-3.5-turbo to map the answer to undercover / non-undercover / unsure
    ("yes" / "no" / "not sure"), defaulting to "not sure". This reads the answer's own words
    instead (§10.8): any "not sure"-type phrase gives "not sure"; otherwise a first-person "no"
    (a leading "No", "I am not the undercover", "I am a non-undercover") or "yes" (a leading
    "Yes", "I am the undercover"), when only one of them is said. None when the answer says
    neither or both: the caller logs it and applies its fallback (the code's was "not sure").
    """
    normal = text.replace("’", "'").replace("I'm", "I am").replace("i'm", "i am").strip()
    if _NOT_SURE.search(normal):
        return "not sure"
    no, yes = bool(_NO.search(normal)), bool(_YES.search(normal))
    if no and not yes:
        return "no"
    if yes and not no:
        return "yes"
    return None
