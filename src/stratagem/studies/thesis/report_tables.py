"""The thesis' study tables in the report: Tables 3.1-3.8 (seed-001 §12) for this experiment's
games, the per-game data behind them, and the metrics in words, citing the thesis."""

from __future__ import annotations

from stratagem.analysis.report_views import (
    Definitions,
    Heading,
    Note,
    Paragraph,
    Section,
    TableView,
    make_table,
)
from stratagem.studies.thesis.dataset import DATASET_COLUMNS
from stratagem.studies.thesis.report_comparisons import comparison_blocks
from stratagem.studies.thesis.report_data import ThesisData
from stratagem.studies.thesis.tables import ARCH_TITLES, Table, thesis_tables

MAX_DATASET_ROWS = 2000
"""The per-game data table is left out above this size (it would dwarf the report)."""

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
"""The thesis' metrics in words, for readers who never saw it (seed-001 §7, §9, §10)."""


def tables_section(data: ThesisData) -> Section:
    section = Section("study-tables", "Comprehension and behaviour (study tables)")
    if not data.dataset:
        section.blocks.append(Note(data.dataset_note or "No game has metrics to aggregate."))
        return section
    section.blocks.append(
        Paragraph(
            "These tables follow the layout of the study “The Agent's Dilemma” (its Tables "
            "3.1 to 3.8), computed for this experiment's games: per architecture, the mean "
            "comprehension rates, the mean behaviour metrics overall and per model, and the "
            "strategy each model's agent plays most."
        )
    )
    if data.scope_note():
        section.blocks.append(Note(data.scope_note()))
    fits = {key: (fit.top_name, fit.match_percentage) for key, fit in data.sfem_fits.items()}
    tables = thesis_tables(data.dataset, sfem=fits)
    if not tables:
        section.blocks.append(Note("No game has metrics to aggregate."))
    if data.invalid_moves():
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
            section.blocks.append(Heading(ARCH_TITLES.get(arch, f"{arch} agent")))
        section.blocks.append(_thesis_table(kind, table))
    section.blocks.extend(comparison_blocks(data))
    n = len(data.dataset)
    dataset_rows = [[row.get(c) for c in DATASET_COLUMNS] for row in data.dataset]
    if n <= MAX_DATASET_ROWS:
        section.blocks.append(
            make_table(
                f"Per-game data ({n:,} games)",
                "The settings and all 16 metrics of every game, the data behind the tables "
                "and plots of this report.",
                DATASET_COLUMNS,
                dataset_rows,
                legend=_DATASET_LEGEND,
                fold=True,
            )
        )
    else:
        section.blocks.append(Note(f"The per-game data ({n:,} games) is too long to include here."))
    section.blocks.extend(glossary_blocks())
    return section


def _thesis_table(kind: str, table: Table) -> TableView:
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


_DATASET_LEGEND = (
    "Model, Arch(itecture), OppStr (opponent), Att(itude), NR (rounds), Game; CR1-CR4 correct "
    "and MR1-MR4 misunderstanding rates of questions 1-4 (3M / 3m: Q3's maximum / minimum); "
    "CR, N, TM, Ret, For, Em: the behaviour metrics."
)


def glossary_blocks() -> list[Heading | Paragraph | Definitions]:
    return [
        Heading("What the metrics mean"),
        Paragraph(
            "All metrics are computed per game from the two players' moves (or the agent's "
            "answers) and then averaged; all lie between 0 and 1, and a ratio with nothing "
            "to count (say, retaliation against an opponent that never defected) counts as "
            "0, as in the study these tables come from (Cremonini, “The Agent's Dilemma”, "
            "University of Bologna, 2025)."
        ),
        Definitions(GLOSSARY),
    ]
