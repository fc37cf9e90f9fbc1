"""The report's transcripts: a sample of episodes per setting, readable in the page.

A number in a table is checked by reading the games behind it, so each setting (a row of the
per-setting table, or for games outside it a game and line-up) gets up to `PER_CELL` transcripts,
linked from its row. The sample is bounded so that a report of 10,000 episodes stays small and
quick: at most `MAX_TRANSCRIPTS` in all (settings spread evenly over the table when there are
more), `MAX_ROUNDS` rounds each, prompts and replies cut to their end. Only the sample is read
from the store. Model text is data: the template escapes all of it, and nothing here marks text
as safe HTML.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from stratagem.analysis.cells import NO_ROUNDS, CellKey, cell_key, order_key
from stratagem.analysis.episodes import EpisodeData
from stratagem.analysis.report_data import ReportData, plural
from stratagem.analysis.report_views import (
    Block,
    Note,
    Paragraph,
    Section,
    TranscriptGroup,
    TranscriptLine,
    TranscriptRound,
    TranscriptView,
)
from stratagem.analysis.transcript import PROMPT_LINES, Transcript, build_transcript, excerpt

SECTION_ID = "transcripts"
PER_CELL = 2
"""Transcripts per setting, when the total cap allows; one each otherwise."""
MAX_TRANSCRIPTS = 40
"""Transcripts in one report at most."""
MAX_ROUNDS = 30
"""Rounds shown of one transcript (`stratagem show` prints them all)."""
BODY_CHARS = 1_500
"""Characters shown of one prompt or reply (its end, where the decision is asked)."""


@dataclass(frozen=True)
class Sample:
    """The episodes chosen for transcripts, by setting, and the anchors each setting links to."""

    groups: tuple[tuple[CellKey, tuple[tuple[str, EpisodeData], ...]], ...]
    """(setting, ((anchor, episode), ...)) in the per-setting table's order."""
    settings: int
    """Settings in all, sampled or not."""
    per_cell: int

    def links(self) -> Mapping[CellKey, tuple[str, ...]]:
        return {key: tuple(anchor for anchor, _ in chosen) for key, chosen in self.groups}


def choose_sample(episodes: Sequence[EpisodeData]) -> Sample:
    """Up to `PER_CELL` episodes (the first stored) of each setting, `MAX_TRANSCRIPTS` in all."""
    by_setting: dict[CellKey, list[EpisodeData]] = defaultdict(list)
    for e in episodes:
        if e.seats:
            by_setting[cell_key(e)].append(e)
    keys = sorted(by_setting, key=order_key)
    if not keys:
        return Sample((), 0, 0)
    per_cell = PER_CELL if len(keys) * PER_CELL <= MAX_TRANSCRIPTS else 1
    shown = min(len(keys), MAX_TRANSCRIPTS // per_cell)
    picked = [keys[i * len(keys) // shown] for i in range(shown)]
    groups = []
    n = 0
    for key in picked:
        chosen = []
        for e in by_setting[key][:per_cell]:
            n += 1
            chosen.append((f"transcript-{n}", e))
        groups.append((key, tuple(chosen)))
    return Sample(tuple(groups), len(keys), per_cell)


def setting_title(key: CellKey) -> str:
    model, agent, game, opponent, rounds = key
    who = f"{model} ({agent})" if agent and agent != model else model
    played = "" if rounds == NO_ROUNDS else f", {plural(int(rounds), 'round')}"
    return f"{game}: {who} against {opponent or 'nobody'}{played}"


def transcripts_section(data: ReportData, sample: Sample) -> Section | None:
    if not sample.groups:
        return None
    section = Section(SECTION_ID, "Transcripts")
    total = sum(len(chosen) for _, chosen in sample.groups)
    if len(sample.groups) < sample.settings:
        scope = (
            f"{plural(len(sample.groups), 'setting')} of {sample.settings:,}, spread over the "
            f"table, up to {sample.per_cell} episode(s) each"
        )
    else:
        scope = f"up to {sample.per_cell} episode(s) of each setting"
    blocks: list[Block] = [
        Paragraph(
            f"{plural(total, 'episode')} as transcripts ({scope}): round by round, each seat's "
            "prompt and reply, the engine's decisions and the round's result. Lines marked "
            "hidden were not seen by every seat. Click a transcript to open it; the Transcripts "
            "column of the per-setting table links to them."
        ),
        Note(
            f"To keep this page small, at most {MAX_TRANSCRIPTS} transcripts are shown, "
            f"{MAX_ROUNDS} rounds each, and of each prompt or reply its last {PROMPT_LINES} "
            f"lines and {BODY_CHARS:,} characters. `stratagem show DIR EPISODE` prints any "
            "episode in full."
        ),
    ]
    for key, chosen in sample.groups:
        # A game without rounds numbers its steps (an offer, then its answer).
        word = "Step" if key[4] == NO_ROUNDS else "Round"
        views = tuple(
            _view(anchor, build_transcript(data.store, e.record), word) for anchor, e in chosen
        )
        blocks.append(TranscriptGroup(setting_title(key), views))
    section.blocks.extend(blocks)
    return section


def _view(anchor: str, transcript: Transcript, word: str) -> TranscriptView:
    ep = transcript.episode
    rounds = []
    for part in transcript.sections[:MAX_ROUNDS]:
        lines = tuple(
            TranscriptLine(
                kind=line.kind,
                who="" if line.seat is None else f"seat {line.seat}",
                text=line.text,
                body=excerpt(line.body, PROMPT_LINES, BODY_CHARS) if line.body else "",
                hidden=line.seen_by or "",
            )
            for line in part.lines
        )
        title = "Before the game" if part.round is None else f"{word} {part.round}"
        rounds.append(TranscriptRound(title, lines))
    left = len(transcript.sections) - MAX_ROUNDS
    payoffs = "unfinished" if ep.payoffs is None else ", ".join(f"{x:g}" for x in ep.payoffs)
    outcome = f"Payoffs: {payoffs}."
    if left > 0:
        outcome = f"{plural(left, 'more ' + word.lower())} not shown. " + outcome
    if ep.error:
        outcome += f" Error: {ep.error}"
    return TranscriptView(
        anchor=anchor,
        title=f"episode {ep.id}",
        summary=f"seed {ep.seed}, {ep.status}",
        seats=transcript.seats,
        rounds=tuple(rounds),
        outcome=outcome,
    )
