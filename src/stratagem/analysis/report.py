"""One self-contained HTML report of an experiment: what was played, how, and what came out.

design.md: reports are single HTML files with tables and plots, readable offline, and analysis reads
only from the store. So the report is built from the store alone (episode specs, rounds, events,
answers, call records), embeds its plots as PNG data URIs, loads no script, font or stylesheet from
anywhere, and writes nothing else. It is meant for a reader who never saw the thesis it comes from:
every table and plot has a one-sentence caption, and a methods section lists the settings, the
counts and what each metric means in words.

Sections that do not apply to an experiment (no round data, no comprehension answers, too few games
for a random forest, games outside the Prisoner's Dilemma family) are replaced by one line saying
why, never by an error. Invalid model outputs are counted and shown, never hidden.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from os import PathLike
from pathlib import Path
from typing import Any

import jinja2

from stratagem.analysis import cells as cells_module
from stratagem.analysis import importance, plots, sfem, thesis
from stratagem.analysis.behaviour import BEHAVIOUR_METRICS
from stratagem.analysis.counterfactual_section import counterfactual_section
from stratagem.analysis.report_views import (
    Block,
    CellView,
    Definitions,
    GameCards,
    GameView,
    Heading,
    Note,
    Paragraph,
    PlotGrid,
    PlotView,
    Section,
    Stat,
    TableGrid,
    TableView,
    is_number,
    make_table,
    plot_view,
)
from stratagem.errors import StratagemError
from stratagem.experiments.store import (
    EpisodeRecord,
    EventRecord,
    ExperimentRecord,
    ResultStore,
    RoundRecord,
)
from stratagem.experiments.thesis_import import ARCH_BY_KIND, NO_ATTITUDE, SUMMARY_EVENT

TEMPLATE = "report.html.j2"
TEMPLATES = Path(__file__).parent / "templates"

NO_GAMES = "No finished games yet, so there is nothing to show here."

MIN_IMPORTANCE_GAMES = 8
"""Fewer games than this per architecture and model make a random forest meaningless: skipped."""
TOP_STRATEGIES = 5
"""SFEM strategies listed per group, most frequent first."""
MAX_DATASET_ROWS = 2000
"""The per-game data table is left out above this size (it would dwarf the report)."""
LONG_RESULTS = 150
"""The per-setting results table, the report's main table, folds only above this many rows."""

ARCH_SHORT: dict[str, str] = {
    "Plain_LLM": "Plain LLM",
    "Tool": "Tool-based",
    "Assistant": "Debate-based",
}
"""Readable names of the thesis' architecture codes (seed-001 §6: "Assistant" is the debate)."""

SETTING_NAMES: dict[str, str] = {
    "Att": "attitude",
    "OppStr": "opponent",
    "Game": "game",
    "NR": "rounds",
    "Model": "model",
    "Arch": "architecture",
}

METRIC_NAMES: dict[str, str] = {
    "CR": "cooperation rate",
    "N": "niceness",
    "TM": "troublemaking",
    "Ret": "retaliation",
    "For": "forgiveness",
    "Em": "emulation",
}

QUESTION_COLUMNS: tuple[tuple[str, str], ...] = (
    ("CR1", "Q1\nnext move"),
    ("CR2", "Q2\nrounds"),
    ("CR3M", "Q3\nmax"),
    ("CR3m", "Q3\nmin"),
    ("CR4", "Q4\ntotal"),
)

GLOSSARY: tuple[tuple[str, str], ...] = (
    (
        "Cooperation rate (CR)",
        "The share of rounds in which the agent chose the cooperative action (the first action of "
        "the game, such as “cooperate” or “stag”). 1 means it always cooperated, 0 never.",
    ),
    (
        "Niceness (N)",
        "1 when the agent never defected before its opponent did (a defection in the same round "
        "as the opponent's first one does not count as nice), else 0. Averaged over games it is "
        "the share of games in which the agent was nice.",
    ),
    (
        "Troublemaking (TM)",
        "How often the agent defected without being provoked: defections in the first round or "
        "right after the opponent cooperated, out of all such occasions.",
    ),
    (
        "Retaliation (Ret)",
        "How often the agent answered an unprovoked defection of its opponent by defecting in "
        "the next round.",
    ),
    (
        "Forgiveness (For)",
        "How often the agent went back to cooperating after the opponent defected, out of the "
        "opponent's defections plus the times it kept punishing an opponent that had already "
        "returned to cooperation.",
    ),
    (
        "Emulation (Em)",
        "The share of rounds (after the first) in which the agent copied its opponent's "
        "previous move.",
    ),
    (
        "Comprehension (Q1-Q4)",
        "After every round the agent may be asked four questions: Q1 its opponent's next move, "
        "Q2 how many rounds have been played, Q3 the most and the fewest years in prison one "
        "round can bring, Q4 its total years so far (payoffs are told as years in prison). The "
        "correct rate is the share of rounds answered correctly; the misunderstanding rate is "
        "the share of rounds whose answer did not address the question at all (missing, or no "
        "usable action or number in it).",
    ),
    (
        "Invalid output",
        "A reply from which no legal action could be read, even after the allowed re-asks. The "
        "round is then forfeited or a default move is played, as the agent's settings say, and "
        "it is always counted as invalid.",
    ),
    (
        "SFEM",
        "The Strategy Frequency Estimation Method fits a mixture of 20 classic rule-based "
        "strategies to the agent's moves, allowing for occasional mistakes: each strategy's "
        "estimated frequency is how likely the agent is to be playing it, and the match "
        "percentage is the share of rounds in which the agent did what the most likely strategy "
        "prescribes.",
    ),
    (
        "Feature importance (SHAP)",
        "A random forest of 10 trees predicts a metric from the game's settings (attitude, "
        "opponent, game, number of rounds), and SHAP values split each prediction into the "
        "contribution of each setting: the larger the mean absolute SHAP value, the more that "
        "setting drives the metric.",
    ),
)
"""The metrics in words, for readers who never saw the thesis (seed-001 §7, §9, §10)."""


def _list(values: Iterable[object]) -> str:
    items = [str(v) for v in values]
    return ", ".join(items) if items else "–"


def _ordered(values: Iterable[Any]) -> list[Any]:
    """Distinct values, numbers numerically, then text alphabetically."""
    distinct = list(dict.fromkeys(values))
    return sorted(distinct, key=lambda v: plots.order_key(str(v)))


def _arch_name(arch: str) -> str:
    return ARCH_SHORT.get(arch, arch)


def _date(stamp: str | None) -> str:
    if not stamp:
        return "–"
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return stamp
    return moment.strftime("%Y-%m-%d %H:%M UTC") if moment.tzinfo else moment.isoformat()


def _safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "experiment"


# -- what the store holds --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Episode:
    record: EpisodeRecord
    rounds: tuple[RoundRecord, ...]
    invalid: tuple[EventRecord, ...]
    has_summary: bool

    @property
    def spec(self) -> dict[str, Any]:
        return self.record.spec or {}

    @property
    def agent(self) -> dict[str, Any]:
        agent = self.spec.get("agent")
        return dict(agent) if isinstance(agent, Mapping) else {}

    @property
    def agent_name(self) -> str:
        return str(self.agent.get("name") or self.agent.get("kind") or "")

    @property
    def model(self) -> str:
        me = self.record.players[0] if self.record.players else {}
        return str(self.spec.get("model") or me.get("model") or me.get("name", ""))

    @property
    def llm_first(self) -> bool:
        players = self.record.players
        return bool(players) and players[0].get("kind") == "llm"


def _load(store: ResultStore, experiment_id: str) -> list[_Episode]:
    out = []
    for record in store.episodes(experiment_id, status="finished"):
        events = store.events(record.id)
        out.append(
            _Episode(
                record,
                tuple(store.rounds(record.id)),
                tuple(e for e in events if e.kind == "invalid"),
                any(e.kind == SUMMARY_EVENT for e in events),
            )
        )
    return out


def _labels(record: EpisodeRecord) -> tuple[tuple[str, ...], ...] | None:
    if record.labels is not None:
        return record.labels
    try:
        from stratagem.games.catalog import get_stage

        return tuple(tuple(ls) for ls in get_stage(record.game).labels)
    except StratagemError:
        return None


def _tensor(record: EpisodeRecord) -> Any:
    if record.game_payoffs is not None:
        return record.game_payoffs
    try:
        from stratagem.games.catalog import get_stage

        return get_stage(record.game).payoffs.tolist()
    except StratagemError:
        return None


def _two_by_two(record: EpisodeRecord) -> bool:
    labels = _labels(record)
    return (
        len(record.players) == 2
        and labels is not None
        and len(labels) == 2
        and all(len(ls) == 2 for ls in labels)
    )


def _is_dilemma(record: EpisodeRecord) -> bool:
    """Prisoner's Dilemma payoffs for the agent (T > R > P > S, action 0 = cooperate): the games
    on which the thesis fits SFEM (§10.2), recognised by payoffs rather than by name."""
    if not _two_by_two(record):
        return False
    t = _tensor(record)
    try:
        r, s = float(t[0][0][0]), float(t[0][1][0])
        temptation, p = float(t[1][0][0]), float(t[1][1][0])
    except (TypeError, IndexError, ValueError):
        return False
    return temptation > r > p > s


# -- the report ------------------------------------------------------------------------------------


class _Builder:
    """Gathers the sections of one experiment's report."""

    def __init__(self, store: ResultStore, experiment: ExperimentRecord) -> None:
        self.store = store
        self.experiment = experiment
        self.episodes = _load(store, experiment.id)
        self.with_rounds = [e for e in self.episodes if e.rounds]
        self.imported_only = bool(self.episodes) and not self.with_rounds
        self.dataset: list[dict[str, Any]] = []
        self.dataset_note = ""
        self.sfem_fits: dict[tuple[str, str], sfem.SfemResult] = {}
        self.sfem_games: dict[tuple[str, str], int] = {}

    # -- settings ----------------------------------------------------------------------------------

    def _config(self) -> dict[str, Any]:
        return dict(self.experiment.config or {})

    def models(self) -> list[str]:
        return list(dict.fromkeys(e.model for e in self.episodes if e.llm_first))

    def games(self) -> list[str]:
        return list(dict.fromkeys(e.record.game for e in self.episodes))

    def opponents(self) -> list[str]:
        names = []
        for e in self.episodes:
            opponent = e.spec.get("opponent")
            if opponent is None and len(e.record.players) > 1:
                opponent = e.record.player_names[1]
            names.append(str(opponent))
        return list(dict.fromkeys(names))

    def rounds(self) -> list[int]:
        values = []
        for e in self.episodes:
            n = e.spec.get("rounds")
            values.append(int(n) if isinstance(n, int | float) else len(e.rounds))
        return _ordered(values)

    def source(self) -> str:
        sources = list(dict.fromkeys(e.record.source for e in self.episodes))
        if not sources:
            return "–"
        return _list(
            "played by stratagem" if s == "stratagem" else f"imported ({s})" for s in sources
        )

    # -- sections ----------------------------------------------------------------------------------

    def header(self) -> dict[str, Any]:
        counts = self.store.status_counts(self.experiment.id)
        calls = self.store.call_totals(self.experiment.id)
        decisions, invalid = self._invalid_totals()
        stats = [
            Stat("episodes finished", f"{counts.get('finished', 0):,}"),
            Stat("episodes failed", f"{counts.get('failed', 0):,}", counts.get("failed", 0) > 0),
            Stat("rounds recorded", f"{sum(len(e.rounds) for e in self.episodes):,}"),
            Stat("model calls", f"{calls['calls']:,}"),
            Stat(
                "invalid outputs",
                f"{invalid:,} of {decisions:,}" if decisions else "not recorded",
                invalid > 0,
            ),
            Stat("cost", f"${float(calls['cost_usd']):.4f}"),
        ]
        return {
            "title": self.experiment.name or self.experiment.id,
            "experiment_id": self.experiment.id,
            "created": _date(self.experiment.created_at),
            "generated": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "source": self.source(),
            "summary": self._summary_sentence(),
            "stats": stats,
        }

    def _summary_sentence(self) -> str:
        if not self.episodes:
            return "This experiment has no finished episodes yet, so there is nothing to report."
        models, games, opponents = self.models(), self.games(), self.opponents()
        rounds = self.rounds()
        agents = list(dict.fromkeys(e.agent_name for e in self.episodes if e.agent_name))
        who = (
            f"LLM agents ({len(models)} model{'s' * (len(models) != 1)}: {_list(models)}; "
            f"{len(agents)} agent configuration{'s' * (len(agents) != 1)})"
            if models
            else "Rule-based players"
        )
        what = (
            f"played {len(self.episodes):,} finished games of {len(games)} repeated game"
            f"{'s' * (len(games) != 1)} ({_list(games)}) against {len(opponents)} rule-based "
            f"opponent{'s' * (len(opponents) != 1)} ({_list(opponents)}), for "
            f"{_list(rounds)} rounds."
        )
        sentence = f"{who} {what}"
        if self.imported_only:
            sentence += (
                " The results were imported as per-game summaries (no round-by-round data), so "
                "only the analyses that need per-game metrics are possible."
            )
        return sentence

    def methods(self) -> Section:
        section = Section("methods", "Methods")
        players = (
            "the LLM agent (player 0) and a fixed rule-based opponent (player 1)"
            if self.models() or not self.episodes
            else "the two players"
        )
        section.blocks.append(
            Paragraph(
                f"Each game is a repeated game: {players} choose their actions at the same time "
                "every round, and both see the history of earlier rounds. The settings below come "
                "from the stored experiment; every number in this report is computed from the "
                "stored games."
            )
        )
        section.blocks.append(Definitions(tuple(self._settings()), compact=True))
        agents = self._agents_table()
        if agents is not None:
            section.blocks.append(agents)
        cards = self._game_cards()
        if cards is not None:
            section.blocks.append(Heading("Games"))
            section.blocks.append(
                Paragraph(
                    "Each game's payoffs per round: the agent chooses a row, the opponent a "
                    "column, and the cell gives (agent's payoff, opponent's payoff). A higher "
                    "payoff is better."
                )
            )
            section.blocks.append(cards)
        section.blocks.extend(self._counts_tables())
        section.blocks.extend(self._invalid_blocks())
        section.blocks.extend(self._failures())
        section.blocks.append(Heading("What the metrics mean"))
        section.blocks.append(
            Paragraph(
                "All metrics are computed per game from the two players' moves (or the agent's "
                "answers) and then averaged; all lie between 0 and 1, and a ratio with nothing "
                "to count (say, retaliation against an opponent that never defected) counts as "
                "0, as in the study these tables come from (Cremonini, “The Agent's Dilemma”, "
                "University of Bologna, 2025)."
            )
        )
        section.blocks.append(Definitions(GLOSSARY))
        return section

    def _settings(self) -> list[tuple[str, str]]:
        config = self._config()
        seeds = config.get("seeds")
        if not isinstance(seeds, list):
            seeds = _ordered(e.record.seed for e in self.episodes if e.record.seed is not None)
        repetitions = config.get("repetitions")
        if not is_number(repetitions):
            reps = [e.spec.get("repetition") for e in self.episodes]
            known = [int(r) for r in reps if isinstance(r, int | float)]
            repetitions = max(known) + 1 if known else 1
        items = [
            ("Source", self.source()),
            ("Models", _list(self.models()) if self.models() else "none (rule-based players)"),
            ("Games", _list(self.games())),
            ("Opponents", self._opponents_text()),
            ("Rounds per game", _list(self.rounds())),
            (
                "Seeds",
                _list(seeds) if seeds else "none recorded (each setting was played once)",
            ),
            ("Repetitions per seed", str(repetitions)),
        ]
        budget = config.get("budget")
        if isinstance(budget, Mapping) and any(v is not None for v in budget.values()):
            caps = [f"{k.replace('_', ' ')} {v}" for k, v in budget.items() if v is not None]
            items.append(("Budget", _list(caps)))
        return items

    def _opponents_text(self) -> str:
        from stratagem.strategies.registry import get_strategy

        parts = []
        for name in self.opponents():
            try:
                doc = (type(get_strategy(name)).__doc__ or "").strip().splitlines()[0]
            except (StratagemError, IndexError):
                doc = ""
            doc = re.sub(r"\s*\((?:seed|axelrod)[^)]*\)", "", doc).rstrip(". ")
            parts.append(f"{name} ({doc.lower()})" if doc else name)
        return "; ".join(parts) if parts else "–"

    def _agents_table(self) -> TableView | None:
        groups: dict[str, dict[str, Any]] = {}
        attitudes: dict[str, list[str]] = defaultdict(list)
        for e in self.episodes:
            if not e.llm_first:
                continue
            agent = dict(e.agent)
            attitude = agent.pop("attitude", None)
            key = repr(sorted(agent.items()))
            groups.setdefault(key, agent)
            if attitude not in (None, "") and str(attitude) not in attitudes[key]:
                attitudes[key].append(str(attitude))
        if not groups:
            return None
        shown = ("name", "kind", "framing", "output", "history", "invalid", "max_reasks")
        rows = []
        for key, agent in groups.items():
            kind = str(agent.get("kind") or "plain")
            arch = ARCH_BY_KIND.get(kind, kind)
            invalid = agent.get("invalid")
            unused = _UNUSED_SETTINGS.get(kind, set())
            others = {
                k: v
                for k, v in agent.items()
                if k not in shown and k not in unused and v is not None
            }
            if kind in ("tool", "debate"):  # they always answer in the thesis' JSON (runner)
                agent = {**agent, "output": "json", "history": "prompt"}
            rows.append(
                (
                    str(agent.get("name") or kind),
                    f"{kind} ({_arch_name(arch)})" if arch != kind else kind,
                    agent.get("framing") or "–",
                    agent.get("output") or "–",
                    agent.get("history") or "–",
                    _list(attitudes[key]) if attitudes[key] else "none",
                    (
                        f"{invalid}, up to {agent['max_reasks']} re-asks"
                        if invalid and is_number(agent.get("max_reasks"))
                        else invalid or "–"
                    ),
                    ", ".join(f"{k}={v}" for k, v in sorted(others.items())) or "–",
                )
            )
        return make_table(
            "Agents",
            "Each LLM agent configuration: its architecture, how the game is framed in the "
            "prompt, the output format it must answer in, how the history is given, the "
            "attitude suggested to it, and what happens to an invalid reply.",
            (
                "Agent", "Architecture", "Framing", "Output format", "History", "Attitude",
                "Invalid replies", "Other settings",
            ),
            rows,
            fold=False,
        )  # fmt: skip

    def _game_cards(self) -> GameCards | None:
        from stratagem.games.catalog import GAMES

        views = []
        seen: set[str] = set()
        for e in self.episodes:
            game = e.record.game
            if game in seen:
                continue
            seen.add(game)
            entry = GAMES.get(game)
            description = entry.description if entry is not None else ""
            labels, tensor = _labels(e.record), _tensor(e.record)
            matrix = None
            if labels is not None and tensor is not None and len(labels) == 2:
                try:
                    rows = [
                        (
                            a,
                            *(
                                f"{_short(tensor[i][j][0])}, {_short(tensor[i][j][1])}"
                                for j in range(len(labels[1]))
                            ),
                        )
                        for i, a in enumerate(labels[0])
                    ]
                    matrix = make_table("", "", ("agent \\ opponent", *labels[1]), rows, fold=False)
                except (TypeError, IndexError):
                    matrix = None
            views.append(GameView(game, description, matrix))
        if not views:
            return None
        return GameCards(tuple(views))

    def _counts_tables(self) -> list[Block]:
        counts = self.store.status_counts(self.experiment.id)
        calls = self.store.call_totals(self.experiment.id)
        episodes = make_table(
            "Episodes",
            "How many games finished, failed, or were still running or waiting when the report "
            "was made; only finished games enter the results.",
            ("", "Finished", "Failed", "Running", "Pending"),
            [
                (
                    "Episodes",
                    *(counts.get(s, 0) for s in ("finished", "failed", "running", "pending")),
                )
            ],
            fold=False,
        )
        calls_table = make_table(
            "Model calls",
            "Every request sent to a model, re-asks after invalid replies and comprehension "
            "questions included; calls from cache were answered by the response cache (a resumed "
            "run replays them for free), failed calls got no usable response.",
            ("", "Calls", "From cache", "Failed", "Tokens", "Cost (USD)"),
            [
                (
                    "Model calls",
                    int(calls["calls"]),
                    int(calls["cached"]),
                    int(calls["errors"]),
                    int(calls["tokens"]),
                    CellView(f"${float(calls['cost_usd']):.4f}", "num"),
                )
            ],
            note="" if calls["calls"] else "No model calls are stored for this experiment.",
            fold=False,
        )
        return [episodes, calls_table]

    def _invalid_totals(self) -> tuple[int, int]:
        decisions = invalid = 0
        for e in self.with_rounds:
            for p, player in enumerate(e.record.players):
                if player.get("kind") != "llm":
                    continue
                decisions += len(e.rounds)
                invalid += len({ev.round for ev in e.invalid if ev.player == p})
        return decisions, invalid

    def _invalid_blocks(self) -> list[Block]:
        if not self.with_rounds:
            if self.episodes:
                return [
                    Note(
                        "Invalid outputs: not available — the games were stored as per-game "
                        "summaries without rounds, so invalid replies were not recorded."
                    )
                ]
            return []
        groups: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
        handling: dict[tuple[str, str], str] = {}
        replies: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
        for e in self.with_rounds:
            for p, player in enumerate(e.record.players):
                if player.get("kind") != "llm":
                    continue
                key = (
                    str(e.model if p == 0 else player.get("model", player.get("name", ""))),
                    str(e.agent_name if p == 0 else player.get("agent", "")),
                )
                failed = {ev.round for ev in e.invalid if ev.player == p}
                missing = sum(1 for r in e.rounds if r.actions[p] is None)
                groups[key][0] += len(e.rounds)
                groups[key][1] += len(failed)
                groups[key][2] += missing
                handling.setdefault(key, str(e.agent.get("invalid") or "–"))
                for ev in e.invalid:
                    if ev.player == p:
                        replies[key][_last_reply(ev.data)] += 1
        if not groups:
            return [Note("Invalid outputs: no LLM player in this experiment.")]
        rows = []
        for key in sorted(groups):
            decisions, invalid, missing = groups[key]
            rate = invalid / decisions if decisions else 0.0
            common = replies[key].most_common(1)
            example = common[0][0] if common else "–"
            rows.append(
                (
                    *key,
                    decisions,
                    CellView(f"{invalid:,}", "num warn" if invalid else "num"),
                    CellView(f"{rate:.2f}", "num warn" if invalid else "num"),
                    missing,
                    handling[key],
                    example,
                )
            )
        return [
            make_table(
                "Invalid outputs per model and agent",
                "Decisions are the rounds the agent played; a decision is invalid when no legal "
                "action could be read from the model's reply even after the allowed re-asks "
                "(finished games only).",
                (
                    "Model", "Agent", "Decisions", "Invalid", "Invalid rate", "Forfeited moves",
                    "Handling", "Typical invalid reply",
                ),
                rows,
                legend="Forfeited moves: rounds in which the agent made no move at all (handling "
                "“forfeit”); with “default:<action>” the default action was played instead.",
            )
        ]  # fmt: skip

    def _failures(self) -> list[Block]:
        failed = self.store.episodes(self.experiment.id, status="failed")
        if not failed:
            return []
        reasons = Counter(str(e.error or "no reason stored") for e in failed)
        rows = [(reason, n) for reason, n in reasons.most_common(8)]
        return [
            make_table(
                "Failed episodes",
                "Episodes that stopped with an error; they are left out of every table and "
                "plot below, and a re-run of the experiment retries them.",
                ("Reason", "Episodes"),
                rows,
                fold=False,
            )
        ]

    def cells(self) -> Section:
        section = Section("cells", "Results per setting")
        if not self.episodes:
            section.blocks.append(Note(NO_GAMES))
            return section
        if not self.with_rounds:
            section.blocks.append(
                Note(
                    "No round-by-round data, so scores and per-setting cooperation cannot be "
                    "computed; the per-game metrics below come from the imported summaries."
                )
            )
            return section
        table = cells_module.cell_table(self.store, self.experiment.id)
        rows = [
            (
                c.model, c.agent, c.game, c.opponent, c.rounds, c.episodes, c.score,
                c.opponent_score,
                # No valid move at all: the cooperation rate is undefined, not 0.
                c.cooperation,
                CellView(f"{c.invalid_rate:.2f}", "num warn" if c.invalid_rate > 0 else "num"),
            )
            for c in table
        ]  # fmt: skip
        section.blocks.append(
            make_table(
                "Score, cooperation and invalid outputs per setting",
                "One row per combination of model, agent, game, opponent and number of rounds, "
                "averaged over its episodes (seeds and repetitions).",
                (
                    "Model", "Agent", "Game", "Opponent", "Rounds", "Episodes", "Score",
                    "Opp. score", "Cooperation", "Invalid rate",
                ),
                rows,
                legend="Score: the agent's total payoff per game (opponent's in Opp. score). "
                "Cooperation: share of the agent's valid moves that were the game's first "
                "(cooperative) action, a dash when it made none. Invalid rate: share of its "
                "moves that were invalid.",
                fold=len(rows) > LONG_RESULTS,
            )
        )  # fmt: skip
        return section

    # -- thesis-shaped tables ----------------------------------------------------------------------

    def build_dataset(self) -> None:
        """The per-game metrics (seed-001 §8.2), when every game is a 2x2 game with an LLM agent."""
        if not self.episodes:
            self.dataset_note = NO_GAMES
            return
        if not all(e.llm_first for e in self.episodes):
            self.dataset_note = (
                "The study's metrics describe an LLM agent against a rule-based opponent; some "
                "games here have no LLM agent in seat 0."
            )
            return
        bad = [e.record.game for e in self.episodes if not _two_by_two(e.record)]
        if bad:
            self.dataset_note = (
                "The study's behaviour metrics are defined for two-player games with two actions "
                f"each (cooperate or not); {_list(dict.fromkeys(bad))} "
                f"{'is' if len(set(bad)) == 1 else 'are'} not."
            )
            return
        try:
            rows = thesis.thesis_dataset(self.store, self.experiment.id)
        except StratagemError as exc:
            self.dataset_note = f"The per-game metrics could not be computed: {exc}"
            return
        measured = [e for e in self.episodes if e.rounds or e.has_summary]
        if len(measured) == len(rows):
            # Agent configurations of one architecture that differ in more than the attitude
            # (a setting the tables already split by, as the thesis does) would be pooled by
            # the Arch column; name them apart so no table mixes them.
            kinds: dict[str, set[str]] = defaultdict(set)
            for e, row in zip(measured, rows, strict=True):
                kinds[str(row["Arch"])].add(_configuration(e.agent))
            for e, row in zip(measured, rows, strict=True):
                if len(kinds[str(row["Arch"])]) > 1:
                    row["Arch"] = _agent_arch(str(row["Arch"]), e.agent_name)
        self.dataset = rows

    def build_sfem(self) -> None:
        groups: dict[tuple[str, str], list[tuple[list[int], list[int]]]] = defaultdict(list)
        for e in self.with_rounds:
            if not e.llm_first or not _is_dilemma(e.record):
                continue
            labels = _labels(e.record)
            if labels is None:
                continue
            settings = thesis.episode_settings(e.record, 0, len(e.rounds))
            arch = self._arch_of(e, str(settings["Arch"]))
            # 0 = cooperate, 1 = anything else; a missing (invalid) move counts as not
            # cooperating, as in the behaviour metrics (seed-001 AMBIG-3).
            mine = [0 if r.actions[0] == labels[0][0] else 1 for r in e.rounds]
            theirs = [0 if r.actions[1] == labels[1][0] else 1 for r in e.rounds]
            groups[(arch, str(settings["Model"]))].append((mine, theirs))
        for key, games in groups.items():
            try:
                self.sfem_fits[key] = sfem.estimate(games)
                self.sfem_games[key] = len(games)
            except StratagemError:
                continue

    def _arch_of(self, episode: _Episode, arch: str) -> str:
        relabelled = {str(r["Arch"]) for r in self.dataset}
        candidate = _agent_arch(arch, episode.agent_name)
        return candidate if candidate in relabelled else arch

    def thesis_section(self) -> Section:
        section = Section("study-tables", "Comprehension and behaviour (study tables)")
        if not self.dataset:
            section.blocks.append(Note(self.dataset_note or "No game has metrics to aggregate."))
            return section
        section.blocks.append(
            Paragraph(
                "These tables follow the layout of the study “The Agent's Dilemma” (its Tables "
                "3.1 to 3.8), computed for this experiment's games: per architecture, the mean "
                "comprehension rates, the mean behaviour metrics overall and per model, and the "
                "strategy each model's agent plays most."
            )
        )
        fits = {key: (fit.top_name, fit.match_percentage) for key, fit in self.sfem_fits.items()}
        tables = thesis.thesis_tables(self.dataset, sfem=fits)
        if not tables:
            section.blocks.append(Note("No game has metrics to aggregate."))
        if self._invalid_totals()[1]:
            section.blocks.append(
                Note(
                    "In these tables an invalid (missing) move counts as not cooperating, as in "
                    "the study; the per-setting table above counts valid moves only."
                )
            )
        if tables and not any(key.startswith("comprehension/") for key in tables):
            section.blocks.append(
                Note(
                    "No comprehension answers are stored (the agents were not asked the four "
                    "questions), so the comprehension tables are left out."
                )
            )
        current = None
        for key, table in tables.items():
            kind, _, arch = key.partition("/")
            if arch != current:
                current = arch
                section.blocks.append(Heading(thesis.ARCH_TITLES.get(arch, f"{arch} agent")))
            section.blocks.append(self._thesis_table(kind, table))
        n = len(self.dataset)
        dataset_rows = [[row.get(c) for c in thesis.DATASET_COLUMNS] for row in self.dataset]
        if n <= MAX_DATASET_ROWS:
            section.blocks.append(
                make_table(
                    f"Per-game data ({n:,} games)",
                    "The settings and all 16 metrics of every game, the data behind the tables "
                    "and plots of this report.",
                    thesis.DATASET_COLUMNS,
                    dataset_rows,
                    legend=_DATASET_LEGEND,
                    fold=True,
                )
            )
        else:
            section.blocks.append(
                Note(f"The per-game data ({n:,} games) is too long to include here.")
            )
        return section

    def _thesis_table(self, kind: str, table: thesis.Table) -> TableView:
        title = table.title
        prefix = f"Table {table.number}: "
        if table.number and title.startswith(prefix):
            title = title[len(prefix) :]
        tag = f"as Table {table.number} of the study" if table.number else ""
        captions = {
            "comprehension": (
                "Mean share of rounds in which the agent answered each question correctly (top "
                "row), and in which its answer did not address the question (bottom row)."
            ),
            "comprehension-by-model": (
                "The same rates per model: CR = correct rate, MR = misunderstanding rate, for "
                "questions 1 to 4 (3M / 3m: the maximum / minimum of Q3)."
            ),
            "behaviour": (
                "Mean behaviour metrics over the agent's games, for all models together (Avg) "
                "and per model."
            ),
            "sfem": (
                "The rule-based strategy that best describes each model's play in Prisoner's "
                "Dilemma games, and the share of rounds in which the agent's move matched it."
            ),
        }
        legends = {
            "comprehension": "Q1 next move · Q2 rounds so far · Q3 max / min years one round can "
            "bring · Q4 total years so far.",
            "behaviour": "CR cooperation rate · N niceness · TM troublemaking · Ret retaliation · "
            "For forgiveness · Em emulation.",
        }
        return make_table(
            title,
            captions.get(kind, ""),
            table.columns,
            table.rows,
            note=table.note,
            tag=tag,
            legend=legends.get(kind, ""),
            fold=False,
        )

    # -- plots -------------------------------------------------------------------------------------

    def plots_section(self) -> Section:
        section = Section("plots", "Plots")
        if not self.dataset:
            section.blocks.append(Note(self.dataset_note or "No per-game metrics to plot."))
            return section
        rows = self.dataset
        archs = list(dict.fromkeys(str(r["Arch"]) for r in rows))
        games = _ordered(r["Game"] for r in rows)
        for arch in archs:
            mine = [r for r in rows if r["Arch"] == arch and r.get("CR") is not None]
            if not mine:
                continue
            name = _arch_name(arch)
            grid: list[PlotView] = []
            grid.append(
                self._bars(
                    mine, "OppStr", "CR", "Game",
                    title="Cooperation by opponent and game", context=name,
                    xlabel="opponent strategy", ylabel="cooperation rate (mean ± sd)",
                    hue_order=games, legend="game",
                    caption=f"Mean cooperation rate of the {name} agent against each opponent, "
                    "one bar per game; error bars show the standard deviation over games.",
                )
            )  # fmt: skip
            attitudes = {r["Att"] for r in mine} - {NO_ATTITUDE}
            if len(attitudes) > 1:
                grid.append(
                    self._bars(
                        [r for r in mine if r["Att"] != NO_ATTITUDE], "Att", "CR", "Game",
                        title="Cooperation by attitude and game", context=name,
                        xlabel="attitude suggested to the agent",
                        ylabel="cooperation rate (mean ± sd)", hue_order=games, legend="game",
                        caption=f"Mean cooperation rate of the {name} agent for each suggested "
                        "attitude, one bar per game: how far the suggestion steers its play.",
                    )
                )  # fmt: skip
            models = {r["Model"] for r in mine}
            if len(models) > 1:
                grid.append(
                    self._bars(
                        mine, "Model", "CR", "OppStr",
                        title="Cooperation by model and opponent", context=name,
                        xlabel="model", ylabel="cooperation rate (mean ± sd)", legend="opponent",
                        caption=f"Mean cooperation rate of the {name} agent per model, one bar "
                        "per opponent strategy.",
                    )
                )  # fmt: skip
            section.blocks.append(Heading(thesis.ARCH_TITLES.get(arch, f"{arch} agent")))
            section.blocks.append(PlotGrid(tuple(grid)))
        comparison: list[PlotView] = []
        arch_order = [_arch_name(a) for a in archs]
        long_q = [
            {"Question": label, "Architecture": _arch_name(str(r["Arch"])), "Correct": r[column]}
            for r in rows
            for column, label in QUESTION_COLUMNS
            if r.get(column) is not None
        ]
        if long_q:
            comparison.append(
                self._bars(
                    long_q, "Question", "Correct", "Architecture",
                    title="Comprehension: correct answers per question",
                    xlabel="question", ylabel="correct rate (mean ± sd)",
                    x_order=[label for _, label in QUESTION_COLUMNS], hue_order=arch_order,
                    legend="architecture",
                    caption="Mean share of rounds in which each architecture answered each "
                    "comprehension question correctly (Q1 the opponent's next move, Q2 the rounds "
                    "played, Q3 the most and fewest years one round can bring, Q4 the total "
                    "years so far).",
                )
            )  # fmt: skip
        long_b = [
            {"Metric": m, "Architecture": _arch_name(str(r["Arch"])), "Value": r[m]}
            for r in rows
            for m in BEHAVIOUR_METRICS
            if r.get(m) is not None
        ]
        if long_b:
            comparison.append(
                self._bars(
                    long_b, "Metric", "Value", "Architecture",
                    title="Behaviour metrics per architecture",
                    xlabel="metric", ylabel="value (mean ± sd)",
                    x_order=list(BEHAVIOUR_METRICS), hue_order=arch_order,
                    legend="architecture",
                    caption="The six behaviour metrics side by side for each architecture "
                    "(CR cooperation, N niceness, TM troublemaking, Ret retaliation, For "
                    "forgiveness, Em emulation).",
                )
            )  # fmt: skip
        if comparison:
            section.blocks.append(Heading("Architectures compared"))
            section.blocks.append(PlotGrid(tuple(comparison)))
        if not long_q:
            section.blocks.append(
                Note("No comprehension answers are stored, so there is no comprehension plot.")
            )
        return section

    @staticmethod
    def _bars(
        rows: Sequence[Mapping[str, Any]],
        x: str,
        y: str,
        hue: str,
        *,
        title: str,
        caption: str,
        xlabel: str,
        ylabel: str,
        legend: str,
        context: str = "",
        x_order: Sequence[str] | None = None,
        hue_order: Sequence[str] | None = None,
    ) -> PlotView:
        figure = plots.grouped_bar_figure(
            rows, x, y, hue, title=title, xlabel=xlabel, ylabel=ylabel, x_order=x_order,
            hue_order=hue_order, ylim=(0.0, 1.08), size=(6.4, 3.9),
        )  # fmt: skip
        for ax in figure.axes:
            handle = ax.get_legend()
            if handle is not None:
                handle.set_title(legend)
        shown = f"{context}: {title[0].lower()}{title[1:]}" if context else title
        return plot_view(plots.figure_png(figure, dpi=130), shown, caption)

    # -- SFEM --------------------------------------------------------------------------------------

    def sfem_section(self) -> Section:
        section = Section("sfem", "Which strategy does the agent play? (SFEM)")
        if not self.episodes:
            section.blocks.append(Note(NO_GAMES))
            return section
        if not self.with_rounds:
            section.blocks.append(
                Note(
                    "SFEM is not possible here: it needs the agent's round-by-round moves, and "
                    "this experiment has per-game summaries only."
                )
            )
            return section
        if not self.sfem_fits:
            section.blocks.append(
                Note(
                    "SFEM is not possible here: it is fitted on Prisoner's Dilemma games "
                    "(payoffs T > R > P > S) played by an LLM agent, and this experiment has none."
                )
            )
            return section
        section.blocks.append(
            Paragraph(
                "For each architecture and model, all its Prisoner's Dilemma games are pooled and "
                "20 classic strategies are fitted to the agent's moves. The frequency φ is the "
                "estimated probability that the agent plays that strategy; β is how often it "
                "carries out the strategy's move without a slip; the match is the share of rounds "
                "in which its move equals the strategy's. A missing (invalid) move counts as not "
                "cooperating."
            )
        )
        overview = []
        for (arch, model), fit in sorted(self.sfem_fits.items()):
            same = [k for k in fit.equivalent if k != fit.top]
            overview.append(
                (
                    _arch_name(arch), model, self.sfem_games[(arch, model)], sum(fit.rounds),
                    f"{fit.top_name}" + (f" (= {', '.join(same)})" if same else ""),
                    fit.frequencies()[fit.top], fit.match_percentage, fit.beta,
                )
            )  # fmt: skip
        section.blocks.append(
            make_table(
                "Assigned strategies",
                "The most likely strategy of each architecture and model over its Prisoner's "
                "Dilemma games, with its estimated frequency and match percentage.",
                ("Architecture", "Model", "Games", "Rounds", "Assigned strategy", "φ", "Match",
                 "β"),
                overview,
                legend=(
                    "Strategies after “=” make exactly the same moves on these games, so the "
                    "data cannot tell them apart."
                    if any(len(fit.equivalent) > 1 for fit in self.sfem_fits.values())
                    else ""
                ),
                fold=False,
            )
        )  # fmt: skip
        details = []
        for (arch, model), fit in sorted(self.sfem_fits.items()):
            names = dict(zip(fit.keys, fit.names, strict=True))
            top = [(k, p) for k, p in fit.ranking() if p > 1e-4][:TOP_STRATEGIES]
            details.append(
                make_table(
                    f"{_arch_name(arch)} / {model}: most frequent strategies",
                    (
                        f"The {len(top)} strategies with the largest estimated frequency, out "
                        "of 20."
                        if len(top) > 1
                        else "The only strategy with a non-zero estimated frequency, out of 20."
                    ),
                    ("Strategy", "Key", "Frequency φ", "Match"),
                    [(names[k], k, p, fit.match_rate(k)) for k, p in top],
                    fold=False,
                )
            )
        section.blocks.append(TableGrid(tuple(details)))
        return section

    # -- feature importance ------------------------------------------------------------------------

    def importance_section(self) -> Section:
        section = Section("importance", "Which settings drive behaviour? (feature importance)")
        if not self.dataset:
            section.blocks.append(
                Note(self.dataset_note or "No per-game metrics for feature importance.")
            )
            return section
        groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        for row in self.dataset:
            groups[(str(row["Arch"]), str(row["Model"]))].append(row)
        summary = []
        grids: list[Block] = []
        skipped = []
        flat: list[str] = []
        arch_order = list(dict.fromkeys(str(r["Arch"]) for r in self.dataset))
        ordered = sorted(
            groups.items(),
            key=lambda item: (arch_order.index(item[0][0]), plots.order_key(item[0][1])),
        )
        for (arch, model), rows in ordered:
            label = f"{_arch_name(arch)} / {model}"
            cells: list[object] = [_arch_name(arch), model]
            cr_result = None
            for metric in BEHAVIOUR_METRICS:
                usable = [r for r in rows if r.get(metric) is not None]
                if len(usable) < MIN_IMPORTANCE_GAMES:
                    cells.append(None)
                    continue
                try:
                    result = importance.feature_importance(usable, metric, label=label)
                except StratagemError:
                    cells.append(None)
                    continue
                setting, value = max(result.by_setting().items(), key=lambda item: item[1])
                # A metric that never changes leaves every SHAP value at zero: no setting wins.
                name = SETTING_NAMES.get(setting, setting) if value >= 0.005 else "none"
                cells.append(CellView(f"{name} {value:.2f}", "num"))
                if metric == "CR":
                    cr_result = result
            if all(c is None for c in cells[2:]):
                skipped.append(label)
                continue
            summary.append(cells)
            if cr_result is not None and max(cr_result.mean_abs_shap().values()) >= 0.005:
                grids.append(Heading(label))
                grids.append(PlotGrid(self._shap_plots(cr_result, label)))
            elif cr_result is not None:
                flat.append(label)
        if not summary:
            section.blocks.append(
                Note(
                    "Feature importance skipped: it needs at least "
                    f"{MIN_IMPORTANCE_GAMES} games per architecture and model whose settings "
                    "(attitude, opponent, game, rounds) vary."
                )
            )
            return section
        section.blocks.append(
            Paragraph(
                "For each architecture and model, a random forest of 10 trees predicts each "
                "behaviour metric from the game's settings, encoded one-hot (one yes/no column "
                "per value), and SHAP values measure how much each setting moves the "
                "prediction. Settings that never vary within a group cannot explain anything "
                "and are left out."
            )
        )
        section.blocks.append(
            make_table(
                "The most influential setting per metric",
                "For each metric, the setting with the largest mean absolute SHAP value "
                "(summed over its values), and that value in the metric's units.",
                ("Architecture", "Model", *BEHAVIOUR_METRICS),
                summary,
                legend="CR cooperation rate · N niceness · TM troublemaking · Ret retaliation · "
                "For forgiveness · Em emulation. A dash: too few games, or nothing varies.",
                fold=False,
            )
        )
        section.blocks.append(
            Paragraph(
                "The plots explain the cooperation rate. Left: the mean absolute SHAP value of "
                "each setting value, the longer the bar the more it matters. Right: one dot per "
                "game; orange dots are games that have that value, and dots right of the zero "
                "line mean the setting raised the cooperation rate in that game."
            )
        )
        section.blocks.extend(grids)
        if flat:
            section.blocks.append(
                Note(
                    f"No plots for {_list(flat)}: the cooperation rate hardly changes with the "
                    "settings, so every SHAP value is close to zero."
                )
            )
        if skipped:
            section.blocks.append(
                Note(
                    f"Skipped ({_list(skipped)}): fewer than {MIN_IMPORTANCE_GAMES} games, or "
                    "no setting varies."
                )
            )
        return section

    @staticmethod
    def _shap_plots(result: importance.ImportanceResult, label: str) -> tuple[PlotView, ...]:
        bar = importance.shap_bar_figure(result, title="Importance for the cooperation rate")
        violin = importance.shap_violin_figure(result, title="SHAP values for the cooperation rate")
        for figure in (bar, violin):
            _, height = figure.get_size_inches()
            figure.set_size_inches(6.2, max(height, 3.2))
        for ax in violin.axes:
            # The legend goes under the plot, so the half-width panel keeps its plotting area.
            legend = ax.get_legend()
            if legend is not None:
                handles = [h for h in legend.legend_handles if h is not None]
                labels = [text.get_text() for text in legend.get_texts()]
                legend.remove()
                ax.legend(
                    handles, labels, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=2,
                    frameon=False, fontsize=9,
                )  # fmt: skip
        return (
            plot_view(
                plots.figure_png(bar, dpi=130),
                f"{label}: importance for CR",
                f"Mean absolute SHAP value of each setting value for the cooperation rate "
                f"(in-sample R² of the forest: {result.r2:.2f}).",
            ),
            plot_view(
                plots.figure_png(violin, dpi=130),
                f"{label}: SHAP values for CR",
                "Per game, how much each setting value moved the predicted cooperation rate "
                "up (right) or down (left).",
            ),
        )

    def render(self) -> str:
        self.build_dataset()
        self.build_sfem()
        counterfactual = counterfactual_section(self.store, self.experiment.id)
        sections = [
            self.methods(),
            self.cells(),
            *([counterfactual] if counterfactual is not None else []),
            self.thesis_section(),
            self.plots_section(),
            self.sfem_section(),
            self.importance_section(),
        ]
        environment = jinja2.Environment(
            loader=jinja2.FileSystemLoader(TEMPLATES),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        return environment.get_template(TEMPLATE).render(header=self.header(), sections=sections)


def _last_reply(data: Any) -> str:
    """The model's last reply in an invalid decision, shortened, for the invalid-output table."""
    texts = data.get("texts") if isinstance(data, Mapping) else None
    if not isinstance(texts, list) or not texts:
        return "(not stored)"
    text = " ".join(str(texts[-1]).split())
    if not text:
        return "(empty reply)"
    return f"“{text[:70]}…”" if len(text) > 70 else f"“{text}”"


_UNUSED_SETTINGS: dict[str, set[str]] = {
    "plain": {"max_tool_calls", "max_turns", "memory"},
    "tool": {"max_turns"},
    "debate": {"max_tool_calls"},
}
"""Agent settings an architecture ignores, left out of the agents table."""


def _configuration(agent: Mapping[str, Any]) -> str:
    """An agent configuration apart from its name and attitude."""
    return repr(sorted((k, repr(v)) for k, v in agent.items() if k not in ("name", "attitude")))


def _agent_arch(arch: str, agent: str) -> str:
    """An architecture code made specific to one agent configuration, for display."""
    return f"{_arch_name(arch)} “{agent}”"


def _short(value: Any) -> str:
    number = float(value)
    return f"{number:g}"


_DATASET_LEGEND = (
    "Model, Arch(itecture), OppStr (opponent), Att(itude), NR (rounds), Game; CR1-CR4 correct "
    "and MR1-MR4 misunderstanding rates of questions 1-4 (3M / 3m: Q3's maximum / minimum); "
    "CR, N, TM, Ret, For, Em: the behaviour metrics."
)

# -- entry points ----------------------------------------------------------------------------------


def _open(source: ResultStore | str | PathLike[str]) -> tuple[ResultStore, bool, Path | None]:
    """The store, whether we opened it (and must close it), and the folder a report goes to."""
    if isinstance(source, ResultStore):
        home = None if source.path == ":memory:" else Path(source.path).parent
        return source, False, home
    from stratagem.experiments.runner import STORE_FILE

    path = Path(source)
    if path.is_dir():
        file = path / STORE_FILE
        if not file.is_file():
            raise StratagemError(f"{path}: no result store ({STORE_FILE}) in this directory")
    elif path.is_file():
        file = path
    else:
        raise StratagemError(f"{path}: no such directory or result store")
    # Opening a missing path would create an empty store: checked above, so this only reads.
    return ResultStore(file), True, file.parent


def _choose(store: ResultStore, experiment_id: str | None) -> ExperimentRecord:
    experiments = store.experiments()
    if experiment_id is not None:
        found = store.experiment(experiment_id)
        if found is None:
            known = _list(e.id for e in experiments) if experiments else "none"
            raise StratagemError(f"unknown experiment '{experiment_id}' (stored: {known})")
        return found
    if not experiments:
        raise StratagemError(f"{store.path}: the store holds no experiment")
    if len(experiments) > 1:
        raise StratagemError(
            f"{store.path} holds {len(experiments)} experiments "
            f"({_list(e.id for e in experiments)}): choose one with --experiment"
        )
    return experiments[0]


def render_report(store: ResultStore, experiment_id: str) -> str:
    """The report of one stored experiment as an HTML string."""
    experiment = store.experiment(experiment_id)
    if experiment is None:
        raise StratagemError(f"unknown experiment '{experiment_id}'")
    return _Builder(store, experiment).render()


def build_report(
    store_path_or_store: ResultStore | str | PathLike[str],
    experiment_id: str | None = None,
    out_path: str | PathLike[str] | None = None,
) -> Path:
    """Write one experiment's self-contained HTML report and return its path.

    The store is a `ResultStore`, an experiment directory holding `stratagem.db`, or the .db file.
    Without `experiment_id` the store must hold exactly one experiment. Without `out_path` the
    report goes next to the store, as `report-<experiment id>.html`.
    """
    store, owned, home = _open(store_path_or_store)
    try:
        experiment = _choose(store, experiment_id)
        html = _Builder(store, experiment).render()
    finally:
        if owned:
            store.close()
    if out_path is not None:
        target = Path(out_path)
    elif home is not None:
        target = home / f"report-{_safe_name(experiment.id)}.html"
    else:
        raise StratagemError("an in-memory store has no folder: give the report's path")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(html, encoding="utf-8")
    except OSError as exc:
        raise StratagemError(f"{target}: cannot write the report ({exc.strerror or exc})") from None
    return target
