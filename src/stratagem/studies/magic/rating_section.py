"""The ratings of the MAgIC section, beyond the paper: a Bradley-Terry rating of every entity over
every game, deviation ratings beside it (clone-invariant), ratings by role in the two social
games, and each entity's profile across the five games with how unevenly its advantage varies.

Every number comes from `analysis` (`rating`, `deviation_rating`, `role_ratings`,
`capability_profile`) on what `extract` reads from the store; this module lays them out and says
how each was made. Each is built once as a leaderboard (`analysis.leaderboards`) whose rows carry
the ids of the episodes behind them: the report links each row into the viewer, and the viewer
(`leaderboards.magic_leaderboards`) shows the same rows, each opening its episodes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from stratagem.analysis.capability_profile import (
    Advantage,
    CapabilityProfile,
    capability_profile,
    episode_advantages,
)
from stratagem.analysis.deviation_rating import CITATION, pairwise_game, symmetric_ratings
from stratagem.analysis.deviation_rating import task_ratings as deviation_task_ratings
from stratagem.analysis.leaderboards import EMPTY, Leaderboard, LeaderboardRow, table_view
from stratagem.analysis.rating import PairResult, Rating, RatingTable, bradley_terry
from stratagem.analysis.rating_inputs import episodes_by_entity
from stratagem.analysis.report_data import listing, plural
from stratagem.analysis.report_views import Block, Heading, Note
from stratagem.analysis.role_ratings import RoleResult, role_ratings, role_seat_pairs
from stratagem.studies.magic.extract import MagicData, base_game, rating_results, rating_scores
from stratagem.studies.magic.leaderboard import EntityMetrics
from stratagem.studies.magic.metrics import ROLE_RATES
from stratagem.studies.magic.records import GAMES, SPY_ROLES

GAME_LABELS: dict[str, str] = {
    "chameleon": "Chameleon",
    "undercover": "Undercover",
    "cost-sharing": "Cost Sharing",
    "npd3": "PD",
    "public-good": "Public Good",
}
FAMILY = "MAgIC's five games"
BRADLEY_TERRY, DEVIATION, ROLES, PROFILE = (
    "magic/bradley-terry",
    "magic/deviation",
    "magic/roles",
    "magic/profile",
)
"""The rating leaderboards' ids (`analysis.leaderboards`)."""


def _money(value: float | None) -> str:
    return EMPTY if value is None else f"${value:.4f}"


def _points(value: float | None, low: float | None = None, high: float | None = None) -> str:
    """A fraction in points of 100, with its interval when there is one."""
    if value is None:
        return EMPTY
    text = f"{100 * value:+.1f}"
    if low is not None and high is not None:
        text += f" ({100 * low:+.1f} to {100 * high:+.1f})"
    return text


def _deviation(value: float | None) -> str:
    """A deviation rating (≤ 0, in units of the payoff) in points of 100."""
    if value is None:
        return EMPTY
    points = 100 * value
    return f"{0.0 if abs(points) < 0.05 else points:.1f}"


def _rating(r: Rating) -> str:
    return f"{r.rating:.0f}" + ("" if r.ci_low is None else f" ({r.ci_low:.0f}–{r.ci_high:.0f})")


def rating_episodes(data: MagicData) -> dict[str, tuple[str, ...]]:
    """Each rated entity's episode ids: the games behind its Bradley-Terry row."""
    return episodes_by_entity(rating_results(data)[0])


# -- Bradley-Terry -------------------------------------------------------------------------------


def bradley_terry_board(
    results: Sequence[PairResult],
    costs: dict[str, float] | None,
    *,
    n_boot: int,
    level: float,
    seed: int,
) -> tuple[RatingTable, Leaderboard]:
    table = bradley_terry(
        results, balance_types=True, n_boot=n_boot, level=level, seed=seed, cost_per_game=costs
    )
    episodes = episodes_by_entity(results)
    rows = [
        LeaderboardRow(
            r.entity,
            (
                _rating(r),
                f"{r.games:,}",
                f"{r.wins} / {r.ties} / {r.losses}",
                _money(r.cost_per_game),
            ),
            episodes.get(r.entity, ()),
        )
        for r in table.ratings
    ]
    types = listing(sorted({r.game_type for r in results}))
    return table, Leaderboard(
        BRADLEY_TERRY,
        "Bradley-Terry rating",
        "Every MAgIC game of the experiment, each reduced to the pairs of its seats held by "
        "different entities (model|architecture), the higher score winning: credits in "
        "Chameleon and Undercover, final scores in the Prisoner's Dilemma and Public Good, "
        "the share of the fee left unpaid in Cost Sharing (equal shares tie; a failed "
        f"negotiation is a tie). Game types ({types}) weigh equally and each game's pairs "
        "share one game's weight. Elo-like scale: mean 1500, 400 points = odds of 10 to 1; "
        f"{level:.0%} intervals from {n_boot:,} bootstrap refits over games. W / T / L "
        "count pairwise comparisons; Cost is per game over all of the entity's seats.",
        ("Entity", "Rating", "Games", "W / T / L", "Cost / game"),
        tuple(rows),
        numeric=(False, True, True, True, True),
    )


# -- deviation ratings ---------------------------------------------------------------------------


def competition_scores(rows: Sequence[EntityMetrics]) -> dict[str, dict[str, float]]:
    """Each challenger's win rate in each of the seven competitions it has one for."""
    return {
        r.entity: {
            comp: est.value
            for name, comp in ROLE_RATES.items()
            if (est := r.metrics.get(name)) is not None and est.value is not None
        }
        for r in rows
    }


def deviation_board(
    results: Sequence[PairResult], table: RatingTable, rows: Sequence[EntityMetrics]
) -> Leaderboard:
    """Deviation ratings of the who-beats-whom game (when every two entities met) and of the
    challengers over the competitions they all played (when there are two or more)."""
    notes: list[str] = []
    game = pairwise_game(results)
    pairwise: dict[str, float] = {}
    if game.missing:
        notes.append(
            f"Pairwise: {plural(len(game.missing), 'pair')} of entities never met (e.g. "
            f"{game.missing[0][0]} and {game.missing[0][1]}), so there is no payoff table."
        )
    else:
        pairwise = symmetric_ratings(game.payoff, game.names)
    scores = competition_scores(rows)
    shared = sorted(set.intersection(*(set(v) for v in scores.values()))) if scores else []
    over: dict[str, float] = {}
    if len(scores) < 2:
        notes.append("Over competitions: needs two challengers or more.")
    elif not shared:
        notes.append("Over competitions: no competition has a win rate of every challenger.")
    else:
        tasks = deviation_task_ratings({e: {c: s[c] for c in shared} for e, s in scores.items()})
        over = tasks.models
        top = [c for c, v in tasks.tasks.items() if v > -1e-9]
        notes.append(
            f"Over competitions ({listing(shared)}): the ones at 0 for the competition player, "
            f"{listing(top)}, are those that best separate the challengers."
        )
    episodes = episodes_by_entity(results)
    lines = [
        LeaderboardRow(
            r.entity,
            (
                _deviation(pairwise.get(r.entity)),
                _deviation(over.get(r.entity)),
                f"{len(episodes.get(r.entity, ())):,}",
            ),
            episodes.get(r.entity, ()),
        )
        for r in table.ratings
    ]
    return Leaderboard(
        DEVIATION,
        "Deviation ratings",
        f"Deviation ratings ({CITATION}): each entity's gain from switching to it in the "
        "strictest coarse correlated equilibrium of a rating game, in points of 100; 0 is "
        "the best, and no mix of the others does better against the equilibrium. They are "
        "clone-invariant: adding a copy of an entity (another name for the same model, a "
        "near-identical prompt) changes no other entity's rating, which Bradley-Terry's "
        "does. Pairwise: the zero-sum game of who beats whom, payoff = share of the "
        "comparisons won minus 50. Over competitions: two challengers and a competition "
        "player, payoff = the difference of the two challengers' win rates in the chosen "
        "competition, the competition player paid for telling them apart. Episodes: the "
        "games behind the row.",
        ("Entity", "Pairwise", "Over competitions", "Episodes"),
        tuple(lines),
        numeric=(False, True, True, True),
        note=" ".join(notes),
    )


# -- ratings by role -----------------------------------------------------------------------------


def role_results(data: MagicData) -> list[RoleResult]:
    """The spy against the majority seats in every Chameleon and Undercover competition game,
    each compared by credits."""
    episodes = {e.record.id: e for e in data.episodes}
    out: list[RoleResult] = []
    for g in data.games:
        episode = episodes.get(g.episode_id)
        if g.game not in SPY_ROLES or episode is None:
            continue
        scores = rating_scores(episode)
        if scores is None:
            continue
        out += role_seat_pairs(
            data.entities[g.episode_id], g.roles, scores, game_type=g.game, game_id=g.episode_id
        )
    return out


def _role_episodes(results: Sequence[RoleResult]) -> dict[tuple[str, str, str], tuple[str, ...]]:
    """(game type, role, entity) -> the ids of the games behind the unit's rating."""
    found: dict[tuple[str, str, str], set[str]] = {}
    for r in results:
        for entity, role in ((r.a, r.a_role), (r.b, r.b_role)):
            found.setdefault((r.game_type, role, entity), set()).add(r.game_id)
    return {k: tuple(sorted(v)) for k, v in found.items()}


def role_board(data: MagicData, *, n_boot: int, level: float, seed: int) -> Leaderboard | None:
    """Each entity in each role of Chameleon and Undercover; None without such a game."""
    results = role_results(data)
    if not results:
        return None
    episodes = _role_episodes(results)
    lines = []
    notes = []
    for t in role_ratings(results, n_boot=n_boot, level=level, seed=seed):
        game = GAME_LABELS.get(t.game_type, t.game_type)
        for r in t.rows:
            lines.append(
                LeaderboardRow(
                    r.entity,
                    (
                        game,
                        r.role,
                        _rating(r.rating),
                        f"{r.group:,}",
                        _deviation(r.deviation),
                        f"{r.rating.games:,}",
                    ),
                    episodes.get((t.game_type, r.role, r.entity), ()),
                    key=f"{t.game_type}/{r.role}/{r.entity}",
                )
            )
        if t.deviation_note:
            notes.append(f"{game}: {t.deviation_note}.")
    return Leaderboard(
        ROLES,
        "Ratings by role",
        "Bradley-Terry per game, each entity rated separately in each role: the spy's "
        "seat against each majority seat, by credits (majority seats are teammates and are "
        "not compared). Same scale and bootstrap as the rating above. Ratings compare only "
        "within a Group: entities in one group are linked by the opponents they shared "
        "(the challengers as the spy, through the defender's majority seats); across "
        "groups nothing links them. Deviation: the deviation rating of the spy-against-"
        "majority game, where every spy met every majority entity. Games: the episodes "
        "behind the row.",
        ("Entity", "Game", "Role", "Rating", "Group", "Deviation", "Games"),
        tuple(lines),
        numeric=(False, False, False, True, True, True, True),
        note=(
            " ".join([*notes, "Deviation ratings per role need a full payoff table."])
            if notes
            else ""
        ),
    )


# -- capability profile --------------------------------------------------------------------------


def profile_advantages(data: MagicData) -> list[Advantage]:
    """Per entity and episode of two or more entities: the share of its seats' comparisons
    with other entities' seats it won, minus ½ (`capability_profile.episode_advantages`)."""
    out: list[Advantage] = []
    for e in data.episodes:
        entities = data.entities[e.record.id]
        scores = rating_scores(e)
        if scores is None or len(set(entities)) < 2:
            continue
        out += episode_advantages(
            entities, scores, game=base_game(e.record.game), episode_id=e.record.id
        )
    return out


def profile_board(data: MagicData, *, level: float) -> Leaderboard | None:
    """Each entity's advantage per game and its unevenness; None without a game of two
    entities."""
    obs = profile_advantages(data)
    if not obs:
        return None
    present = [g for g in GAMES if any(o.game == g for o in obs)]
    profile: CapabilityProfile = capability_profile(obs, {FAMILY: present}, level=level)
    lines = []
    left_out = [
        f"{u.entity} ({listing(GAME_LABELS.get(g, g) for g in u.left_out)})"
        for u in profile.unevenness
        if u.left_out
    ]
    for u in profile.unevenness:
        cells: list[str] = []
        episodes: set[str] = set()
        for g in present:
            a = profile.advantage(u.entity, g)
            cells.append(EMPTY if a is None else _points(a.mean, a.ci_low, a.ci_high))
            episodes.update(a.episodes if a is not None else ())
        h = u.heterogeneity
        cells += [
            EMPTY if u.spread is None else f"{100 * u.spread:.1f}",
            EMPTY if h is None else f"{100 * h.tau:.1f}",
            EMPTY if h is None else f"{h.i2:.0%}",
            f"{sum(a.n for a in profile.advantages if a.entity == u.entity):,}",
        ]
        lines.append(LeaderboardRow(u.entity, tuple(cells), tuple(sorted(episodes))))
    return Leaderboard(
        PROFILE,
        "Capability profile across the five games",
        "Each entity's advantage per game: the share of its seats' comparisons with other "
        "entities' seats that it won (ties half), minus 50, averaged over its episodes, "
        f"with {level:.0%} Student-t intervals over episodes. Spread: the standard "
        "deviation of those means, noise included. τ: the standard deviation of the "
        "advantage between games with the sampling noise taken out (DerSimonian-Laird "
        "1986, method of moments), over the games with a standard error; I²: the share of "
        "the spread that is real (Higgins-Thompson 2002). Episodes: the games behind the "
        "row.",
        ("Entity", *(GAME_LABELS[g] for g in present), "Spread", "τ", "I²", "Episodes"),
        tuple(lines),
        numeric=(False, *(True,) * (len(present) + 4)),
        note=(
            "Left out of τ and I² for want of a standard error (fewer than two episodes, "
            f"or all alike): {'; '.join(left_out)}."
            if left_out
            else ""
        ),
    )


# -- the whole ------------------------------------------------------------------------------------


PARTS: tuple[tuple[str, str, str], ...] = (
    (BRADLEY_TERRY, "Bradley-Terry rating", ""),
    (DEVIATION, "Deviation ratings", ""),
    (ROLES, "Ratings by role", "No Chameleon or Undercover competition game to rate by role."),
    (PROFILE, "Capability profile", "No MAgIC game has seats of two entities: no profile to show."),
)
"""Each rating leaderboard's id, its heading in the report, and the note when it has none."""


def rating_boards(
    data: MagicData,
    rows: Sequence[EntityMetrics],
    *,
    n_boot: int,
    level: float,
    seed: int,
) -> list[Leaderboard]:
    """Bradley-Terry, the deviation ratings beside it, ratings by role and the profile: none
    when no game has seats of two entities."""
    results, costs = rating_results(data)
    if not results:
        return []
    table, board = bradley_terry_board(results, costs, n_boot=n_boot, level=level, seed=seed)
    found = [
        board,
        deviation_board(results, table, rows),
        role_board(data, n_boot=n_boot, level=level, seed=seed),
        profile_board(data, level=level),
    ]
    return [b for b in found if b is not None]


def rating_blocks(
    data: MagicData,
    rows: Sequence[EntityMetrics],
    *,
    n_boot: int,
    level: float,
    seed: int,
    link: Callable[[str], str] | None = None,
) -> list[Block]:
    """The rating leaderboards as the report shows them, each row's entity linked to its games
    with `link` (a group key -> its URL)."""
    boards = {b.id: b for b in rating_boards(data, rows, n_boot=n_boot, level=level, seed=seed)}
    if not boards:
        return [
            Heading("Bradley-Terry rating"),
            Note("No MAgIC game has seats of two different entities, so there is nothing to rate."),
        ]
    blocks: list[Block] = []
    for board_id, heading, missing in PARTS:
        board = boards.get(board_id)
        blocks += [Heading(heading), table_view(board, link) if board else Note(missing)]
    return blocks
