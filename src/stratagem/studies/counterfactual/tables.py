"""seed-003's result tables, from the store (the paired analysis: `paired_analysis`).

The study's tables (spec §5.8, §7) have one row per model and prompt of player 0 (zs, cot, spp,
sc-zs, sc-cot, sc-spp) and one column per opponent (the LLM opponents zs, spp, cot, then the bots
SREP, PP, MF or AP, TFT); a cell is mean ± sample sd over the runs, 1 decimal, and the best mean of
each column is bold (the highest; for m, the lowest). Efficiency (Tables 13, 23) pools the
opponents per game; validity (Tables 14, 24) pools everything per model.

Episodes played by stratagem and imported ones (docs/episode-format.md) alike: row = the agent's
(or player 0's) name, column = the opponent's, run = the spec's seed and repetition (or
`iteration`, or the seed).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from stratagem.analysis.episodes import EpisodeData, load_episodes
from stratagem.analysis.games import catalog_name
from stratagem.errors import StratagemError
from stratagem.experiments.store import EpisodeRecord, ResultStore
from stratagem.games.catalog import GAMES, get_entry
from stratagem.strategies.counterfactual_bots import (
    BestResponseToLast,
    BestResponseToMode,
    Pattern,
    SingleRoundEquilibrium,
)
from stratagem.strategies.registry import get_strategy
from stratagem.studies.counterfactual.game import CounterfactualGame
from stratagem.studies.counterfactual.metrics import game_metrics, mean_sd

ROW_ORDER = ("zs", "cot", "spp", "sc-zs", "sc-cot", "sc-spp")
"""seed-003 §3.1: the row order of every table."""
COLUMN_ORDER = ("zs", "spp", "cot", "srep", "pp", "mf", "ap", "tft")
"""seed-003 §3.1: the column order (MF in the PD family, AP in RPS)."""

TABLE_NUMBERS: dict[str, dict[str, int]] = {
    # seed-003 §1.2-1.3: the table of each metric for each game (PD captions are wrong, §0.1,
    # but the numbers are the tables these games' data are printed in).
    "points": {"pd": 1, "pd-alt": 2, "sh": 3, "sh-alt": 4,
               "eq1": 15, "eq1-alt": 16, "ba3": 17, "ba3-alt": 18},
    "m": {"pd": 5, "pd-alt": 6, "sh": 7, "sh-alt": 8,
          "eq1": 19, "eq1-alt": 20, "ba3": 21, "ba3-alt": 22},
    "cooperation": {"pd": 9, "pd-alt": 10, "sh": 11, "sh-alt": 12},
    "efficiency": {"pd": 13, "eq1": 23},
    "validity": {"pd": 14, "eq1": 24},
}  # fmt: skip

LOWER_IS_BETTER = {"m", "equilibrium_distance"}

_CATALOG_ORDER = {name: i for i, name in enumerate(GAMES)}
"""Catalog games in the catalog's order (seed-003's: pd, pd-alt, sh, sh-alt), then the rest."""


# -- the games of an experiment --------------------------------------------------------------------


@dataclass(frozen=True)
class StudyGame:
    """One stored game, placed in the study's tables."""

    model: str
    prompt: str
    """The table row: player 0's agent (zs, cot, sc-zs, ...)."""
    opponent: str  # the table column (zs, srep, mf, ...)
    opponent_spec: str
    """The opponent as stored (a strategy spec, for the bot ceilings)."""
    game: str
    default: str
    """The default game this one is a variant of (itself for a default game)."""
    variant: str
    """default, label-based, payoff-based, joint, or the game's name for other variants."""
    run: str
    data: CounterfactualGame
    metrics: Mapping[str, float | None]  # `counterfactual.game_metrics`, computed once
    episode_id: str = ""
    seed: str = ""
    """The run's seed: the runs of one seed share its chance moves (a cluster of the paired
    analysis)."""


def _default_and_variant(record: EpisodeRecord) -> tuple[str, str]:
    name = record.game
    declared = (record.spec or {}).get("variant")
    if isinstance(declared, Mapping) and isinstance(declared.get("base"), str):
        base = str(declared["base"])
        default, _ = _default_and_variant_of(base)
        return default, name
    return _default_and_variant_of(name)


def _default_and_variant_of(name: str) -> tuple[str, str]:
    try:
        entry = get_entry(name)
    except StratagemError:
        return name, "default"
    if entry.variant_of is not None:
        return entry.variant_of, entry.counterfactual or name
    return name, entry.counterfactual or "default"


def _opponent_column(spec: str, kind: str | None, n_actions: int) -> str:
    """The study's column name of an opponent: an LLM agent's name, or the bot's short name."""
    if spec.startswith("agent:"):
        return spec[len("agent:") :]
    if kind == "llm":
        return spec.split(":", 1)[0]
    try:
        strategy = get_strategy(spec)
    except StratagemError:
        return spec
    if isinstance(strategy, SingleRoundEquilibrium):
        return "srep"
    if isinstance(strategy, Pattern):
        return "pp"
    if isinstance(strategy, BestResponseToMode):
        return "mf" if n_actions == 2 else "ap"  # seed-003 §2.2: one bot, two names
    if isinstance(strategy, BestResponseToLast):
        return "tft"
    return spec


def _seed(record: EpisodeRecord) -> str:
    return str((record.spec or {}).get("seed", record.seed))


def _run(record: EpisodeRecord) -> str:
    spec = record.spec or {}
    for key in ("repetition", "iteration"):
        if key in spec:
            return f"{_seed(record)}:{spec[key]}"
    return str(record.seed)


@dataclass
class Skipped:
    """Episodes left out of the study's tables, by precise reason."""

    reasons: dict[str, list[str]] = field(default_factory=dict)
    """Reason (with the episode id taken out) -> the episodes it applies to."""

    def add(self, episode_id: str, reason: str) -> None:
        general = reason.replace(f"episode '{episode_id}': ", "").replace(
            f"episode '{episode_id}' ", ""
        )
        self.reasons.setdefault(general, []).append(episode_id)

    def __len__(self) -> int:
        return sum(len(ids) for ids in self.reasons.values())


def load_study_games(
    store: ResultStore, experiment_id: str, *, tp: float = 0.9
) -> tuple[list[StudyGame], int]:
    """The finished 2-player matrix games of an experiment, and how many episodes were skipped
    (not 2-player matrix games, or not readable as one; `study_games` says why). `tp` is m's
    threshold (§5.2)."""
    games, skipped = study_games(load_episodes(store, experiment_id, event_kinds=()), tp=tp)
    return games, len(skipped)


def study_games(
    episodes: Iterable[EpisodeData], *, tp: float = 0.9
) -> tuple[list[StudyGame], Skipped]:
    """`load_study_games` over episodes already read (the report reads them once)."""
    out: list[StudyGame] = []
    skipped = Skipped()
    for episode in episodes:
        record, rounds = episode.record, episode.rounds
        if len(record.players) != 2:
            skipped.add(record.id, f"{len(record.players)} players, not 2")
            continue
        if not rounds:
            skipped.add(record.id, "no rounds recorded")
            continue
        # A seed-003 log's `pd/sh` is the catalog's `sh` (its labels and payoffs).
        record = replace(record, game=catalog_name(record.game))
        try:
            data = CounterfactualGame.from_records(record, rounds)
        except StratagemError as exc:
            skipped.add(record.id, str(exc))
            continue
        spec = record.spec or {}
        agent = spec.get("agent")
        me, them = record.players
        prompt = agent.get("name") if isinstance(agent, Mapping) else None
        prompt = str(prompt or me.get("agent") or me.get("name", "")).split(":", 1)[0]
        opponent_spec = str(spec.get("opponent") or them.get("name", ""))
        default, variant = _default_and_variant(record)
        out.append(
            StudyGame(
                model=episode.model,
                prompt=prompt,
                opponent=_opponent_column(opponent_spec, them.get("kind"), data.n_actions[1]),
                opponent_spec=opponent_spec,
                game=record.game,
                default=default,
                variant=variant,
                run=_run(record),
                data=data,
                metrics=game_metrics(data, opponent_spec, tp=tp),
                episode_id=record.id,
                seed=_seed(record),
            )
        )
    return out, skipped


# -- tables ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cell:
    text: str
    best: bool = False
    """Bold in the study's layout (the column's best mean)."""


@dataclass(frozen=True)
class StudyTable:
    key: str
    title: str
    caption: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    table_number: int | None = None


def rank(value: str, order: Sequence[str]) -> tuple[int, str]:
    """Sort key: the study's order first, then the other names alphabetically."""
    return (order.index(value) if value in order else len(order), value)


def _ordered(values: Iterable[str], order: Sequence[str]) -> list[str]:
    return sorted(dict.fromkeys(values), key=lambda v: rank(v, order))


def families(games: Sequence[StudyGame]) -> dict[str, list[str]]:
    """Default game -> its games in the study's order (default, label, payoff, joint, others)."""
    out: dict[str, list[StudyGame]] = defaultdict(list)
    for g in games:
        out[g.default].append(g)
    return {
        default: list(
            dict.fromkeys(
                g.game
                for g in sorted(
                    members,
                    key=lambda g: (_CATALOG_ORDER.get(g.game, len(_CATALOG_ORDER)), g.game),
                )
            )
        )
        for default, members in out.items()
    }


def _metric_values(games: Iterable[StudyGame], metric: str) -> list[float]:
    return [v for g in games if (v := g.metrics[metric]) is not None]


def _format(values: Sequence[float], decimals: int) -> tuple[str, float | None]:
    if not values:
        return "–", None
    mean, sd, _ = mean_sd(values)
    spread = "" if sd is None else f" ± {sd:.{decimals}f}"
    return f"{mean:.{decimals}f}{spread}", mean


def _with_best(
    grid: list[list[tuple[str, float | None]]], lower: bool
) -> tuple[tuple[Cell, ...], ...]:
    """Cells, the best mean of each column marked (seed-003 §5.8)."""
    marked = [[Cell(text) for text, _ in row] for row in grid]
    for j in range(len(grid[0]) if grid else 0):
        means = [mean for row in grid if (mean := row[j][1]) is not None]
        if len(means) < 2:
            continue
        best = min(means) if lower else max(means)
        for i, row in enumerate(grid):
            text, mean = row[j]
            if mean is not None and abs(mean - best) < 1e-9:
                marked[i][j] = Cell(text, best=True)
    return tuple(tuple(row) for row in marked)


def opponent_table(
    games: Sequence[StudyGame], game: str, metric: str, title: str, caption: str
) -> StudyTable:
    """Rows model × prompt, columns the opponents, for one game (Tables 1-12, 15-22)."""
    mine = [g for g in games if g.game == game]
    columns = _ordered((g.opponent for g in mine), COLUMN_ORDER)
    decimals = 2 if metric in ("cooperation", "efficiency") else 1
    return _model_prompt_table(
        mine, lambda g: g.opponent, columns, metric, decimals, game, title, caption
    )


def game_table(
    games: Sequence[StudyGame],
    family: Sequence[str],
    metric: str,
    title: str,
    caption: str,
    *,
    decimals: int = 2,
) -> StudyTable:
    """Rows model × prompt, columns the family's games, opponents pooled (Tables 13, 23)."""
    mine = [g for g in games if g.game in family]
    return _model_prompt_table(
        mine, lambda g: g.game, list(family), metric, decimals, family[0], title, caption
    )


def _model_prompt_table(
    games: Sequence[StudyGame],
    column_of: Callable[[StudyGame], str],
    columns: Sequence[str],
    metric: str,
    decimals: int,
    game: str,
    title: str,
    caption: str,
) -> StudyTable:
    """The study's layout: a row per model and prompt, mean ± sd cells, best of each column."""
    rows = sorted({(g.model, g.prompt) for g in games}, key=_row_key)
    cells: dict[tuple[str, str, str], list[StudyGame]] = defaultdict(list)
    for g in games:
        cells[(g.model, g.prompt, column_of(g))].append(g)
    grid = [
        [_format(_metric_values(cells[(m, p, c)], metric), decimals) for c in columns]
        for m, p in rows
    ]
    body = _with_best(grid, metric in LOWER_IS_BETTER)
    return StudyTable(
        f"{metric}/{game}",
        title,
        caption,
        ("model", "prompt", *columns),
        tuple((Cell(m), Cell(p), *row) for (m, p), row in zip(rows, body, strict=True)),
        TABLE_NUMBERS.get(metric, {}).get(game),
    )


def validity_table(games: Sequence[StudyGame], groups: Mapping[str, Sequence[str]]) -> StudyTable:
    """Valid-outcome % per model, everything pooled per family (Tables 14, 24)."""
    models = sorted({g.model for g in games})
    defaults = list(groups)
    grid = [
        [
            _format(
                _metric_values(
                    [g for g in games if g.model == model and g.game in groups[d]], "validity"
                ),
                1,
            )
            for d in defaults
        ]
        for model in models
    ]
    body = _with_best(grid, lower=False)
    return StudyTable(
        "validity",
        "Valid outcomes (%)",
        "The share of rounds with a valid outcome, per model, over all its prompts, opponents "
        "and games of each family (mean ± sd over games).",
        ("model", *(f"{d} family" for d in defaults)),
        tuple((Cell(m), *row) for m, row in zip(models, body, strict=True)),
    )


def exploitability_table(games: Sequence[StudyGame], family: Sequence[str]) -> StudyTable:
    """Ours: total points minus the best any policy can score against each bot."""
    mine = [g for g in games if g.game in family]
    bots = [c for c in _ordered((g.opponent for g in mine), COLUMN_ORDER) if c in _BOTS]
    rows = sorted({(g.model, g.prompt, g.game) for g in mine}, key=lambda r: (
        r[0], rank(r[1], ROW_ORDER), family.index(r[2])))  # fmt: skip
    cells: dict[tuple[str, str, str, str], list[StudyGame]] = defaultdict(list)
    for g in mine:
        cells[(g.model, g.prompt, g.game, g.opponent)].append(g)
    grid = [
        [_format(_metric_values(cells[(m, p, game, b)], "exploitability"), 1) for b in bots]
        for m, p, game in rows
    ]
    body = _with_best(grid, lower=False)
    return StudyTable(
        f"exploitability/{family[0]}",
        "Exploitability of the bots (ours)",
        "Total points minus the most any policy can expect against the bot over the game "
        "(computed from the bot's rule, its realised opening and the payoffs): 0 means the bot "
        "was fully exploited, more negative means more points left on the table. Against SREP, "
        "which draws its moves at random, the ceiling is an expectation, so a lucky game can "
        "exceed it.",
        ("model", "prompt", "game", *bots),
        tuple(
            (Cell(m), Cell(p), Cell(game), *row)
            for (m, p, game), row in zip(rows, body, strict=True)
        ),
    )


_BOTS = ("srep", "pp", "mf", "ap", "tft")


def _row_key(row: tuple[str, str]) -> tuple[str, tuple[int, str]]:
    return row[0], rank(row[1], ROW_ORDER)


def action_shares(
    games: Sequence[StudyGame], game: str
) -> dict[tuple[str, str], tuple[float, ...]]:
    """Player 0's action distribution per (model, prompt) in one game, its valid moves pooled over
    opponents and runs (seed-003 §5.3: the RPS "action distribution")."""
    totals: dict[tuple[str, str], list[int]] = {}
    for g in games:
        if g.game != game:
            continue
        counts = totals.setdefault((g.model, g.prompt), [0] * len(g.data.labels))
        for own, _ in g.data.moves:
            if own is not None:
                counts[own] += 1
    return {key: tuple(c / sum(cs) for c in cs) for key, cs in totals.items() if sum(cs)}
