"""seed-001's outputs from stored episodes: the per-game dataset of Appendix A (§8.2) and the
per-game raw CSVs (§8.1); the result tables built from the dataset are in `studies.thesis.tables`.

Everything is computed from the store (design.md: analysis reads only from the store). An episode
with rounds is scored from its moves and answers (§7, §9); an episode without rounds, such as an
imported Appendix-A row (`studies.thesis.importer`), contributes the metrics of its stored
"summary" event. So the thesis' tables are recomputed from its own appendix by the same code that
serves new runs.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import Any, Literal

from stratagem.analysis.games import try_resolve
from stratagem.errors import StratagemError
from stratagem.experiments.store import (
    AnswerRecord,
    EpisodeRecord,
    EventRecord,
    ResultStore,
    RoundRecord,
)
from stratagem.strategies.registry import get_strategy
from stratagem.studies.thesis.behaviour import (
    BEHAVIOUR_METRICS,
    behaviour_profile,
    cooperation_flags,
)
from stratagem.studies.thesis.comprehension import (
    COMPREHENSION_COLUMNS,
    DEFAULT_OPTIONS,
    QUESTION_IDS,
    ComprehensionOptions,
    GameFacts,
    comprehension_scores,
    years,
)
from stratagem.studies.thesis.importer import (
    ARCH_BY_KIND,
    GAME_BY_NAME,
    METRIC_COLUMNS,
    NO_ATTITUDE,
    SUMMARY_EVENT,
    THESIS_COLUMNS,
)

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
    model = str(spec.get("model_id") or spec.get("model") or me.get("model") or me.get("name", ""))
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
    """Labels and payoff tensor of the episode's resolved stage game (`analysis.games`), or
    (None, None) when it has none."""
    game = try_resolve(episode)
    if isinstance(game, str):
        return None, None
    return game.labels, game.table


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
    episodes = (
        (episode, store.rounds(episode.id), store.events(episode.id, SUMMARY_EVENT))
        for episode in store.episodes(experiment_id, status="finished")
    )
    return dataset_rows(store, episodes, player=player, options=options)


def dataset_rows(
    store: ResultStore,
    episodes: Iterable[tuple[EpisodeRecord, Sequence[RoundRecord], Sequence[EventRecord]]],
    *,
    player: int = 0,
    options: ComprehensionOptions = DEFAULT_OPTIONS,
) -> list[Row]:
    """`thesis_dataset` over episodes whose rounds and events are already read (the report reads
    them once for all its sections); answers are read from the store."""
    rows: list[Row] = []
    for episode, rounds, events in episodes:
        summary = None if rounds else _summary(events, player)
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
