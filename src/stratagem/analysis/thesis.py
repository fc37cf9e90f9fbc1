"""seed-001's outputs from stored episodes: the per-game dataset of Appendix A (§8.2), the per-game
raw CSVs (§8.1), and the result Tables 3.1-3.8 (§12) for any grid.

Everything is computed from the store (design.md: analysis reads only from the store). An episode
with rounds is scored from its moves and answers (§7, §9); an episode without rounds, such as an
imported Appendix-A row (`experiments.thesis_import`), contributes the metrics of its stored
"summary" event. So the thesis' tables are recomputed from its own appendix by the same code that
serves new runs.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from statistics import mean
from typing import Any, Literal

from stratagem.analysis.behaviour import BEHAVIOUR_METRICS, behaviour_profile, cooperation_flags
from stratagem.analysis.comprehension import (
    COMPREHENSION_COLUMNS,
    DEFAULT_OPTIONS,
    QUESTION_IDS,
    ComprehensionOptions,
    GameFacts,
    comprehension_scores,
    years,
)
from stratagem.errors import StratagemError
from stratagem.experiments.store import (
    AnswerRecord,
    EpisodeRecord,
    EventRecord,
    ResultStore,
    RoundRecord,
)
from stratagem.experiments.thesis_import import (
    ARCH_BY_KIND,
    GAME_BY_NAME,
    METRIC_COLUMNS,
    NO_ATTITUDE,
    SUMMARY_EVENT,
    THESIS_COLUMNS,
)
from stratagem.games.catalog import get_stage
from stratagem.strategies.registry import get_strategy

DATASET_COLUMNS: tuple[str, ...] = THESIS_COLUMNS
"""idx, the 6 settings and the 16 metrics: the columns of Appendix A (§8.2)."""

if METRIC_COLUMNS != COMPREHENSION_COLUMNS + BEHAVIOUR_METRICS:  # pragma: no cover
    raise ImportError("seed-001 metric columns disagree between the importer and the metrics")

# seed-001 §8.1: round, both actions, both cumulative scores, the 4 raw answers, 6 settings.
# The thesis names no columns; these names follow §8.2's.
GAME_CSV_COLUMNS: tuple[str, ...] = (
    "Round", "Action", "OppAction", "Score", "OppScore", "Q1", "Q2", "Q3", "Q4",
    "Att", "NR", "Arch", "OppStr", "Scenario", "Model",
)  # fmt: skip

DEFAULT_SCENARIO = "classic"
"""The §8.1 scenario column when the agent has no framing (the thesis only used "classic")."""

Row = dict[str, Any]

# -- settings ---------------------------------------------------------------------------------


def _model_name(model: str) -> str:
    # The thesis names models without a provider ("gpt-4o-mini"); stratagem's are provider/model.
    return model.split("/", 1)[1] if "/" in model else model


def _opponent_name(name: str) -> str:
    try:
        return get_strategy(name).label
    except StratagemError:
        return name


def episode_settings(episode: EpisodeRecord, player: int = 0, n_rounds: int = 0) -> Row:
    """Model, Arch, OppStr, Att, NR, Game of an episode, in the thesis' vocabulary (§8.2).

    From the episode spec ("model", "agent" {name, kind, attitude}, "opponent", "rounds"): kinds
    plain/tool/debate become Plain_LLM/Tool/Assistant and games dilemma/delight/confusion
    Dilemma/Delight/Confusion; other names pass through unchanged.
    """
    spec = episode.spec or {}
    agent = spec.get("agent")
    kind, attitude = "plain", None
    if isinstance(agent, Mapping):
        kind = str(agent.get("kind") or "plain")
        attitude = agent.get("attitude")
    me = episode.players[player] if player < len(episode.players) else {}
    model = str(spec.get("model") or me.get("model") or me.get("name", ""))
    other = [p for i, p in enumerate(episode.player_names) if i != player]
    opponent = str(spec.get("opponent") or (other[0] if other else ""))
    rounds = spec.get("rounds")
    return {
        "Model": _model_name(model),
        "Arch": ARCH_BY_KIND.get(kind, kind),
        "OppStr": _opponent_name(opponent),
        "Att": NO_ATTITUDE if attitude in (None, "") else str(attitude),
        "NR": int(rounds) if isinstance(rounds, int) and not isinstance(rounds, bool) else n_rounds,
        "Game": GAME_BY_NAME.get(episode.game, episode.game),
    }


# -- one game ---------------------------------------------------------------------------------


def _stage(episode: EpisodeRecord) -> tuple[tuple[tuple[str, ...], ...] | None, Any]:
    """Labels and payoff tensor: as stored, else from the game catalog, else unknown."""
    labels, tensor = episode.labels, episode.game_payoffs
    if labels is None or tensor is None:
        try:
            stage = get_stage(episode.game)
        except StratagemError:
            return labels, tensor
        labels = labels or tuple(tuple(ls) for ls in stage.labels)
        tensor = tensor if tensor is not None else stage.payoffs.tolist()
    return labels, tensor


def _facts(episode: EpisodeRecord, rounds: Sequence[RoundRecord], player: int) -> GameFacts | None:
    labels, tensor = _stage(episode)
    if labels is None or tensor is None:
        return None
    other = 1 - player
    cells = [tensor[i][j] for i in range(len(labels[0])) for j in range(len(labels[1]))]

    def payoff(r: RoundRecord) -> float | None:
        if r.payoffs is not None:
            return float(r.payoffs[player])
        a, b = r.actions
        if a in labels[0] and b in labels[1]:
            return float(tensor[labels[0].index(a)][labels[1].index(b)][player])
        return None

    return GameFacts(
        opponent_actions=tuple(r.actions[other] for r in rounds),
        round_payoffs=tuple(payoff(r) for r in rounds),
        stage_payoffs=tuple(float(cell[player]) for cell in cells),
        labels=tuple(labels[other]),
    )


def game_row(
    episode: EpisodeRecord,
    rounds: Sequence[RoundRecord],
    answers: Sequence[AnswerRecord] = (),
    summary: Mapping[str, Any] | None = None,
    *,
    player: int = 0,
    options: ComprehensionOptions = DEFAULT_OPTIONS,
) -> Row:
    """One Appendix-A row (without idx) for one game of `player` against its opponent.

    With rounds, the behaviour metrics come from the moves (§9; a missing move counts as not
    cooperating, AMBIG-3) and the comprehension rates from the player's answers (§7; answers are
    re-scored from their text, so the options apply, and a game without any answer has empty
    comprehension cells). Without rounds, the metrics are those of `summary` (a stored summary
    event's data); missing ones are None.
    """
    if len(episode.players) != 2:
        raise StratagemError(
            f"episode '{episode.id}': seed-001's metrics are for 2-player games, "
            f"it has {len(episode.players)} players"
        )
    row: Row = episode_settings(episode, player, len(rounds))
    if not rounds:
        data = summary or {}
        for column in METRIC_COLUMNS:
            value = data.get(column)
            number = isinstance(value, int | float) and not isinstance(value, bool)
            row[column] = float(value) if number and value is not None else None
        return row
    labels, _ = _stage(episode)
    cooperative = (labels[0][0], labels[1][0]) if labels else ("cooperate", "cooperate")
    other = 1 - player
    mine = cooperation_flags([r.actions[player] for r in rounds], cooperative[player])
    theirs = cooperation_flags([r.actions[other] for r in rounds], cooperative[other])
    own = [a for a in answers if a.player == player and a.question_id in QUESTION_IDS]
    if own:
        facts = _facts(episode, rounds, player)
        if facts is None:
            raise StratagemError(
                f"episode '{episode.id}': game '{episode.game}' has no stored payoffs and is not "
                "in the catalog, so its comprehension answers cannot be scored"
            )
        texts = {(a.question_id, a.round): a.answer for a in own if a.round is not None}
        parsed = {(a.question_id, a.round): a.parsed for a in own if a.round is not None}
        row.update(comprehension_scores(texts, facts, options, parsed))
    else:
        row.update(dict.fromkeys(COMPREHENSION_COLUMNS))
    row.update(behaviour_profile(mine, theirs))
    return row


def _summary(events: Iterable[EventRecord], player: int) -> Mapping[str, Any] | None:
    found = [
        e.data
        for e in events
        if e.kind == SUMMARY_EVENT and e.player in (None, player) and isinstance(e.data, Mapping)
    ]
    return found[-1] if found else None


def thesis_dataset(
    store: ResultStore,
    experiment_id: str,
    *,
    player: int = 0,
    options: ComprehensionOptions = DEFAULT_OPTIONS,
) -> list[Row]:
    """The aggregated per-game dataset (§8.2) of an experiment's finished episodes, in store order.

    Episodes without rounds and without a summary event are left out (there is nothing to measure).
    """
    if store.experiment(experiment_id) is None:
        raise StratagemError(f"unknown experiment '{experiment_id}'")
    rows: list[Row] = []
    for episode in store.episodes(experiment_id, status="finished"):
        rounds = store.rounds(episode.id)
        summary = None if rounds else _summary(store.events(episode.id, SUMMARY_EVENT), player)
        if not rounds and summary is None:
            continue
        row = game_row(
            episode,
            rounds,
            store.answers(episode.id),
            summary,
            player=player,
            options=options,
        )
        rows.append({"idx": len(rows), **row})
    return rows


def _format(value: Any, decimals: int | None) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and decimals is not None:
        return f"{value:.{decimals}f}"
    return str(value)


def write_dataset_csv(
    rows: Sequence[Mapping[str, Any]], path: str | PathLike[str], decimals: int | None = 2
) -> Path:
    """Write the dataset with Appendix A's header; metrics with 2 decimals as printed (§8.2), or
    in full with decimals=None. Empty cells are metrics that could not be measured."""
    file = Path(path)
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        with file.open("w", encoding="utf-8", newline="") as stream:
            writer = csv.writer(stream)
            writer.writerow(DATASET_COLUMNS)
            for i, row in enumerate(rows):
                values = {"idx": row.get("idx", i), **row}
                writer.writerow(
                    [
                        _format(values.get(c), decimals if c in METRIC_COLUMNS else None)
                        for c in DATASET_COLUMNS
                    ]
                )
    except OSError as exc:
        raise StratagemError(f"{file}: cannot write ({exc.strerror or exc})") from None
    return file


# -- per-game raw CSV (§8.1) ------------------------------------------------------------------


def game_csv_rows(
    store: ResultStore,
    episode_id: str,
    *,
    player: int = 0,
    scores: Literal["points", "years"] = "points",
) -> list[Row]:
    """The 15-column per-round rows of one game (§8.1).

    Scores are cumulative, in payoff points or in years (AMBIG-8; years = max payoff - payoff).
    """
    bundle = store.load_episode(episode_id)
    if bundle is None:
        raise StratagemError(f"unknown episode '{episode_id}'")
    episode, other = bundle.episode, 1 - player
    settings = episode_settings(episode, player, len(bundle.rounds))
    agent = episode.spec.get("agent") if episode.spec else None
    framing = agent.get("framing") if isinstance(agent, Mapping) else None
    _, tensor = _stage(episode)
    caps: dict[int, float] = {}
    if tensor is not None:
        caps = {p: max(float(cell[p]) for row in tensor for cell in row) for p in (0, 1)}
    answers = {(a.question_id, a.round): a.answer for a in bundle.answers if a.player == player}
    totals = [0.0, 0.0]
    out: list[Row] = []
    for r in bundle.rounds:
        for p in (player, other):
            if r.payoffs is not None:
                value = float(r.payoffs[p])
                in_years = scores == "years" and p in caps
                totals[p] += years(value, caps[p]) if in_years else value
        out.append(
            {
                "Round": r.round,
                "Action": r.actions[player],
                "OppAction": r.actions[other],
                "Score": totals[player],
                "OppScore": totals[other],
                **{q: answers.get((q, r.round)) for q in QUESTION_IDS},
                "Att": settings["Att"],
                "NR": settings["NR"],
                "Arch": settings["Arch"],
                "OppStr": settings["OppStr"],
                "Scenario": framing or DEFAULT_SCENARIO,
                "Model": settings["Model"],
            }
        )
    return out


def _safe(name: Any) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", str(name)) or "_"


def write_game_csvs(
    store: ResultStore,
    experiment_id: str,
    directory: str | PathLike[str],
    *,
    player: int = 0,
    scores: Literal["points", "years"] = "points",
) -> list[Path]:
    """One CSV per finished game with rounds, in a tree that branches on the settings (§8.1):
    Model/Arch/OppStr/Att/NR/Game.csv, so a run's three payoff variants share a folder (the
    thesis does not give the level order, AMBIG-9)."""
    root = Path(directory)
    written: list[Path] = []
    for episode in store.episodes(experiment_id, status="finished"):
        rows = game_csv_rows(store, episode.id, player=player, scores=scores)
        if not rows:
            continue
        s = episode_settings(episode, player, len(rows))
        folder = root.joinpath(*(_safe(s[c]) for c in ("Model", "Arch", "OppStr", "Att", "NR")))
        file = folder / f"{_safe(s['Game'])}.csv"
        if file in written:  # repetitions or seeds of one cell
            file = folder / f"{_safe(s['Game'])}-{episode.id}.csv"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            with file.open("w", encoding="utf-8", newline="") as stream:
                writer = csv.DictWriter(stream, fieldnames=GAME_CSV_COLUMNS)
                writer.writeheader()
                writer.writerows(rows)
        except OSError as exc:
            raise StratagemError(f"{file}: cannot write ({exc.strerror or exc})") from None
        written.append(file)
    return written


# -- tables (§12) -----------------------------------------------------------------------------

Cell = str | float | None


@dataclass(frozen=True)
class Table:
    """A result table as the thesis prints it: a header and rows whose first cell is the label."""

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    number: str | None = None
    """The thesis' table number ("3.1") when the table is one of its own."""
    note: str = ""

    def value(self, row: str, column: str) -> Cell:
        """The cell at a row label and a column name."""
        j = self.columns.index(column)
        for r in self.rows:
            if r[0] == row:
                return r[j]
        raise KeyError(f"{self.title}: no row '{row}'")

    def to_markdown(self, decimals: int = 2) -> str:
        """A plain-text rendering; numbers rounded to `decimals` (the thesis prints 2)."""

        def show(c: Cell) -> str:
            return "" if c is None else f"{c:.{decimals}f}" if isinstance(c, float) else str(c)

        lines = [f"**{self.title}**", ""]
        lines.append("| " + " | ".join(self.columns) + " |")
        lines.append("|" + "---|" * len(self.columns))
        lines += ["| " + " | ".join(show(c) for c in r) + " |" for r in self.rows]
        if self.note:
            lines += ["", self.note]
        return "\n".join(lines)


ARCH_TITLES: dict[str, str] = {
    "Plain_LLM": "Plain LLM agent",
    "Tool": "Tool-based agent",
    "Assistant": "Debate-based agent",
}
THESIS_TABLE_KEYS: dict[str, str] = {
    "3.1": "comprehension/Plain_LLM",
    "3.2": "behaviour/Plain_LLM",
    "3.3": "comprehension/Tool",
    "3.4": "behaviour/Tool",
    "3.5": "sfem/Tool",
    "3.6": "comprehension/Assistant",
    "3.7": "behaviour/Assistant",
    "3.8": "sfem/Assistant",
}
"""The thesis' table numbers and the keys of `thesis_tables`."""
_NUMBERS = {v: k for k, v in THESIS_TABLE_KEYS.items()}

QUESTION_HEADERS: tuple[str, ...] = ("Q1", "Q2", "Q3-max", "Q3-min", "Q4")
BY_MODEL_COLUMNS: tuple[str, ...] = (
    "CR1", "CR2", "CR3M", "CR3m", "CR4", "MR1", "MR2", "MR3", "MR4",
)  # fmt: skip
"""§12.4's per-model comprehension table; MR3 is MR3M (= MR3m: one relevance judgement)."""

StrategyFit = tuple[str, float]
"""(strategy name, match percentage), as Tables 3.5 / 3.8 print an SFEM result."""


def _mean(rows: Iterable[Mapping[str, Any]], column: str) -> float | None:
    values = [float(r[column]) for r in rows if r.get(column) is not None]
    return mean(values) if values else None


def _distinct(rows: Iterable[Mapping[str, Any]], column: str) -> list[Any]:
    return list(dict.fromkeys(r[column] for r in rows))


def group_means(
    rows: Sequence[Mapping[str, Any]],
    metric: str,
    by: Sequence[str],
    where: Mapping[str, Any] | None = None,
) -> dict[tuple[Any, ...], float]:
    """Mean of a metric per group (the values behind the thesis' grouped bar plots, §10.1)."""
    chosen = [r for r in rows if all(r.get(k) == v for k, v in (where or {}).items())]
    out: dict[tuple[Any, ...], float] = {}
    for key in dict.fromkeys(tuple(r[c] for c in by) for r in chosen):
        value = _mean((r for r in chosen if tuple(r[c] for c in by) == key), metric)
        if value is not None:
            out[key] = value
    return out


def unconditional_match(
    rows: Sequence[Mapping[str, Any]], arch: str, model: str, game: str = "Dilemma"
) -> dict[str, float] | None:
    """Pooled match rates of Always Cooperate / Always Defect over a group's games.

    These two need no round sequences: AD matches every defection, so its pooled match is
    sum((1 - CR) * NR) / sum(NR) [CHECKED in §10.2 against Tables 3.5 / 3.8].
    """
    chosen = [
        r
        for r in rows
        if r["Arch"] == arch
        and r["Model"] == model
        and r["Game"] == game
        and r.get("CR") is not None
    ]
    total = sum(int(r["NR"]) for r in chosen)
    if not total:
        return None
    cooperate = sum(float(r["CR"]) * int(r["NR"]) for r in chosen) / total
    return {"Always Cooperate": cooperate, "Always Defect": 1.0 - cooperate}


def _title(number: str | None, what: str, arch: str, plural: bool = False) -> str:
    name = ARCH_TITLES.get(arch, f"{arch} agent")
    text = f"{what} to {name}s" if plural else f"{what}, {name}"
    return f"Table {number}: {text}" if number else text


def thesis_tables(
    rows: Sequence[Mapping[str, Any]],
    *,
    sfem: Mapping[tuple[str, str], StrategyFit] | None = None,
    sfem_game: str = "Dilemma",
) -> dict[str, Table]:
    """Tables shaped like Tables 3.1-3.8 (§12) for every architecture in `rows`, any grid.

    Per architecture: average comprehension scores, average behaviour scores (overall and per
    model), per-model comprehension (§12.4), and, except for the Plain LLM (the thesis applies no
    SFEM to it, §10.3), the SFEM strategy per model. `sfem` maps (Arch, Model) to the strategy
    an SFEM fit assigned and its match percentage; without it the table can only use what the
    aggregates determine, the better of Always Cooperate / Always Defect, and says so. Cells
    without data are omitted: no row, no table.
    Keys are "<kind>/<Arch>"; THESIS_TABLE_KEYS maps the thesis' numbers to them.
    """
    archs = [a for a in ARCH_TITLES if any(r["Arch"] == a for r in rows)]
    archs += [a for a in _distinct(rows, "Arch") if a not in archs]
    tables: dict[str, Table] = {}
    for arch in archs:
        mine = [r for r in rows if r["Arch"] == arch]
        models = _distinct(mine, "Model")

        key = f"comprehension/{arch}"
        correct = [_mean(mine, c) for c in ("CR1", "CR2", "CR3M", "CR3m", "CR4")]
        misread = [_mean(mine, c) for c in ("MR1", "MR2", "MR3M", "MR3m", "MR4")]
        if any(v is not None for v in correct + misread):
            tables[key] = Table(
                _title(_NUMBERS.get(key), "Average comprehension scores", arch),
                ("", *QUESTION_HEADERS),
                (("Avg. Correct Rate", *correct), ("Avg. Misunderstand Rate", *misread)),
                _NUMBERS.get(key),
            )
            by_model = []
            for model in models:
                group = [r for r in mine if r["Model"] == model]
                cells = [_mean(group, "MR3M" if c == "MR3" else c) for c in BY_MODEL_COLUMNS]
                if any(v is not None for v in cells):
                    by_model.append((model, *cells))
            tables[f"comprehension-by-model/{arch}"] = Table(
                _title(None, "Comprehension scores per model", arch),
                ("", *BY_MODEL_COLUMNS),
                tuple(by_model),
            )

        key = f"behaviour/{arch}"
        avg = [_mean(mine, c) for c in BEHAVIOUR_METRICS]
        if any(v is not None for v in avg):
            body: list[tuple[Cell, ...]] = [("Avg", *avg)]
            for model in models:
                group = [r for r in mine if r["Model"] == model]
                body.append((model, *(_mean(group, c) for c in BEHAVIOUR_METRICS)))
            tables[key] = Table(
                _title(_NUMBERS.get(key), "Average behaviour scores", arch),
                ("", *BEHAVIOUR_METRICS),
                tuple(body),
                _NUMBERS.get(key),
            )

        if arch == "Plain_LLM":
            continue
        key = f"sfem/{arch}"
        fits: list[tuple[Cell, ...]] = []
        fallback = False
        for model in models:
            if sfem is not None and (arch, model) in sfem:
                strategy, match = sfem[(arch, model)]
                fits.append((model, strategy, float(match)))
                continue
            rates = unconditional_match(rows, arch, model, sfem_game)
            if rates is not None:
                # Ties go to Always Defect, listed last.
                best = max(rates, key=lambda s: (rates[s], s == "Always Defect"))
                fits.append((model, best, rates[best]))
                fallback = True
        if fits:
            note = (
                "Rows without an SFEM fit show the better of Always Cooperate / Always Defect, "
                f"the only strategies whose match the per-game aggregates determine ({sfem_game} "
                "games, pooled over rounds)."
                if fallback
                else ""
            )
            tables[key] = Table(
                _title(_NUMBERS.get(key), "SFEM strategies assigned", arch, plural=True),
                ("", "Assigned Strategy", "Match Percentage"),
                tuple(fits),
                _NUMBERS.get(key),
                note,
            )
    return tables
