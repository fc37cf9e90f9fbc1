"""The MAgIC section's comparisons: is each step of the leaderboard, and each PGM gain, more than
chance? Beyond the paper, which ranks challengers without a test (seed-004 §9.4) and tests the
PGM twins uncorrected (§9.2).

**What is compared.** Each challenger with the one ranked next below it on the leaderboard
(B = the higher-ranked, so B − A is its lead), and each PGM agent with its vanilla twin (B = PGM,
`section.VANILLA_ARCH` vs `PGM_ARCH`), on the win rates: each of the seven competitions' role
win rate (seed-004 §5) and W, their mean.

**Pairs.** Two challengers' games are paired by `MagicGame.pair_key`: the same game, setting,
challenger seats, seed and repetition, so the two met the same defenders' fixed openings and
the same chance moves. A game's value is the challenger's share of its credits in that game
(credits / 2 in Chameleon, / 3 in Undercover, a success or a win 1 or 0 in the game-theory
games), so the mean over a competition's games is its role win rate as §5 counts it with
`game_count="played"`; two games of one entity with one key (not made by a grid) are averaged.
The pairs of one **setting** (its seats, seeds and repetitions, and both sides of a social
game) share it, so they are a cluster. Each competition is compared by
`analysis.cell_comparison.compare_cells`: the cluster-robust t by setting when a setting holds
several pairs, McNemar's test for one win-or-lose pair per setting, the paired t otherwise, and
Welch's unpaired t when the two played no game in common.

**W** is compared only when both played paired games in all seven competitions: pair i of
competition c (n_c pairs of N in all) weighs N / (7 · n_c), so the mean weighted value is the mean
of the seven role win rates over the paired games (§5, eq. 1) and the mean weighted difference
their difference; the interval is the cluster-robust t by setting (CR1), computed around the
overall mean difference and so conservative where the competitions' differences differ.

The p-values are Holm-adjusted across the whole table (`analysis.comparison_table`).
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Hashable, Sequence
from functools import partial

import numpy as np

from stratagem.analysis.cell_comparison import compare_cells, settled
from stratagem.analysis.comparison_table import ComparedRow, compared_row, comparison_table
from stratagem.analysis.comparisons import Comparison, compare_paired
from stratagem.analysis.report_data import listing
from stratagem.analysis.report_views import Block, Heading, Note
from stratagem.errors import StratagemError
from stratagem.studies.magic.leaderboard import EntityMetrics, by_entity
from stratagem.studies.magic.options import MetricOptions
from stratagem.studies.magic.pgm_gain import PairKey, architecture_pairs
from stratagem.studies.magic.records import COMPETITIONS, MagicGame
from stratagem.studies.magic.tallies import CREDIT_TOTAL, INDEX, tally_matrix

PAIRED_BY = "game, setting, challenger seats, seed and repetition"
CLUSTER_BY = "setting"
LEVEL = 0.95
NEXT, PGM = "next in rank", "PGM vs vanilla"

COMPETITION_LABELS: dict[str, str] = {
    "chameleon": "Chameleon (spy)",
    "non-chameleon": "Non-chameleon",
    "undercover": "Undercover (spy)",
    "civilian": "Civilian",
    "cost-sharing": "Cost Sharing",
    "pd": "PD",
    "pg": "Public Good",
}

Shares = dict[str, dict[PairKey, float]]
"""Competition -> pairing key -> the challenger's share of that game's credits."""


def _credits(competition: str) -> int:
    """Credits a game of the competition hands out (1: a win or a success)."""
    game = {"non-chameleon": "chameleon", "civilian": "undercover"}.get(competition, competition)
    return CREDIT_TOTAL.get(game, 1)


def win_shares(games: Sequence[MagicGame], options: MetricOptions) -> Shares:
    """One entity's per-game win shares by competition and pairing key (module docstring)."""
    tallies = tally_matrix(games, options)
    found: dict[str, dict[PairKey, list[float]]] = defaultdict(lambda: defaultdict(list))
    for g, row in zip(games, tallies, strict=True):
        comp = g.competition
        found[comp][g.pair_key].append(float(row[INDEX[f"wins:{comp}"]]) / _credits(comp))
    return {c: {k: float(np.mean(v)) for k, v in keys.items()} for c, keys in found.items()}


def win_share_values(games: Sequence[MagicGame], options: MetricOptions) -> dict[str, float]:
    """Each game's challenger share of its credits, by episode id: the per-episode values of the
    comparisons' win rates, for their noise floor (`analysis.noise_floor`)."""
    tallies = tally_matrix(games, options)
    return {
        g.episode_id: float(row[INDEX[f"wins:{g.competition}"]]) / _credits(g.competition)
        for g, row in zip(games, tallies, strict=True)
        if g.episode_id
    }


def _setting(key: PairKey) -> Hashable:
    return (key[0], key[1])


def compare_w(a: Shares, b: Shares, level: float = LEVEL) -> Comparison:
    """W of B minus W of A over the games both played (module docstring); raises when a
    competition has no pair."""
    shared = {c: [k for k in a.get(c, {}) if k in b.get(c, {})] for c in COMPETITIONS}
    missing = [COMPETITION_LABELS[c] for c, keys in shared.items() if not keys]
    if missing:
        raise StratagemError(f"no paired game in {listing(missing)}")
    total = sum(len(keys) for keys in shared.values())
    wa: dict[tuple[str, PairKey], float] = {}
    wb: dict[tuple[str, PairKey], float] = {}
    clusters: dict[tuple[str, PairKey], Hashable] = {}
    for c, keys in shared.items():
        weight = total / (len(COMPETITIONS) * len(keys))
        for k in keys:
            wa[(c, k)], wb[(c, k)] = weight * a[c][k], weight * b[c][k]
            clusters[(c, k)] = _setting(k)
    return settled(
        compare_paired(
            wa, wb, paired_by=PAIRED_BY, clusters=clusters, cluster_by=CLUSTER_BY, level=level
        )
    )


def compared_pairs(
    rows: Sequence[EntityMetrics], vanilla: str, pgm: str
) -> list[tuple[str, str, str]]:
    """(why, A, B): each leaderboard row after the first against the row above it (B), then each
    PGM twin against its vanilla one (B = PGM); twins next in rank are listed once, as both."""
    entities = [r.entity for r in rows]
    twins = {frozenset(pair) for pair in architecture_pairs(entities, vanilla, pgm)}
    out: list[tuple[str, str, str]] = []
    for higher, lower in itertools.pairwise(entities):
        twin = frozenset((lower, higher)) in twins
        out.append((f"{NEXT}; {PGM}" if twin else NEXT, lower, higher))
        twins.discard(frozenset((lower, higher)))
    for v, p in architecture_pairs(entities, vanilla, pgm):
        if frozenset((v, p)) in twins:
            out.append((PGM, v, p))
    return out


def comparison_rows(
    games: Sequence[MagicGame],
    rows: Sequence[EntityMetrics],
    options: MetricOptions,
    *,
    vanilla: str,
    pgm: str,
    level: float = LEVEL,
) -> list[ComparedRow]:
    """W and each competition's win rate for every compared pair (unadjusted)."""
    groups = by_entity(games)
    shares = {e: win_shares(gs, options) for e, gs in groups.items()}
    out: list[ComparedRow] = []
    for why, a, b in compared_pairs(rows, vanilla, pgm):
        sa, sb = shares[a], shares[b]
        labels = (b, a, why)
        out.append(compared_row((*labels, "W"), partial(compare_w, sa, sb, level)))
        for comp in COMPETITIONS:
            if comp not in sa or comp not in sb:
                continue
            clusters = {k: _setting(k) for k in (*sa[comp], *sb[comp])}
            compare = partial(
                compare_cells, sa[comp], sb[comp], paired_by=PAIRED_BY, clusters=clusters,
                cluster_by=CLUSTER_BY, level=level,
            )  # fmt: skip
            out.append(compared_row((*labels, COMPETITION_LABELS[comp]), compare))
    return out


def comparison_blocks(
    games: Sequence[MagicGame],
    rows: Sequence[EntityMetrics],
    options: MetricOptions,
    *,
    vanilla: str,
    pgm: str,
) -> list[Block]:
    """The "Comparisons" heading and its table (or why there is none)."""
    blocks: list[Block] = [Heading("Comparisons")]
    if len(rows) < 2:
        only = rows[0].entity if rows else "none"
        return [
            *blocks,
            Note(f"One challenger here ({only}): there is no other to compare it with."),
        ]
    found = comparison_rows(games, rows, options, vanilla=vanilla, pgm=pgm)
    caption = (
        "Each challenger against the one ranked next below it on the leaderboard (B − A: its "
        f"lead), and each PGM agent against its vanilla twin ('{pgm}' vs '{vanilla}'), in win "
        "rates in %: each competition's role win rate over the games both played with the "
        f"same {PAIRED_BY} (a game's value: the challenger's share of its credits, so options "
        "that change the count of games do not apply), and W, the mean of the seven (each "
        "competition weighted equally, as eq. 1). Pairs of one setting are a cluster: "
        "cluster-robust t by setting where a setting holds several pairs, McNemar's test "
        "for one win-or-lose pair per setting, the paired t otherwise, Welch's unpaired t "
        "for two challengers without a game in common; W by the cluster-robust t over all "
        f"the paired games. {LEVEL:.0%} intervals. Metric options: {options.describe()}."
    )
    table = comparison_table(
        "MAgIC comparisons",
        caption,
        ["B", "A", "Compared as", "Win rate"],
        found,
        scale=100.0,
        decimals=1,
        unit="game",
        level=LEVEL,
        tag="beyond the paper",
    )
    return [*blocks, table]
