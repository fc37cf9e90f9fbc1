"""The ToM study's stored reports as forecasts (`analysis.forecasts`), for the report's
calibration section. An addition: seed-002 §4 scores V1 only by its KL from the opponent's V0.

A V report scores every item 0–10 for its usefulness (§3.1): a utility, not a probability, so
it yields no Brier score or log loss, and none is made up for it. What can be checked is the
guess a V1 report makes about the opponent's hidden target: the item(s) it scores highest are
the ones it thinks the opponent needs most. Each such top item is a point guess, right when the
item is relevant to the opponent's real target (the outcome event records it), relevant as
the study's own calibration table defines it (`calibration.rules_relevance`: it feeds a recipe
of the target within three crafting steps, fuel included). Tied top items are each a guess.

Not scored, each counted: a V1 report that scores every item the same (it singles out none), V2
reports (what the opponent believes of the agent: the baseline opponent never reports V1, so
there is no ground truth, §4 [P]), V0 reports (the agent's view of its own target, which it is
told: no hidden outcome; they are V1's truth in §4) and reports that could not be read.
"""

from __future__ import annotations

from collections.abc import Sequence

from stratagem.analysis.episodes import EpisodeData
from stratagem.analysis.forecasts import Forecast, ForecastSet
from stratagem.analysis.report_data import ReportData
from stratagem.games.tradecraft.rules import load_rules
from stratagem.studies.tom.calibration import Relevance, rules_relevance
from stratagem.studies.tom.extract import GAME, tom_data
from stratagem.studies.tom.options import TomOptions
from stratagem.studies.tom.records import TomGame

FLAT = "V1 report scoring every item the same: no item singled out"
NO_TRUTH_V2 = "V2 report: no ground truth, the opponent never reports V1 (seed-002 §4)"
OWN_V0 = "V0 report: the agent's own target, which it is told (no hidden outcome)"
UNREAD = "V report that could not be read"


def kind(group: str) -> str:
    """The belief kind of a game's V1 top items; the group says which orders were asked."""
    return f"V1 top items feed the opponent's target ({group} group)"


def game_forecasts(game: TomGame, agent: str, relevant: Relevance) -> ForecastSet:
    """One game's point guesses and the reports it could not score (module docstring)."""
    out = ForecastSet()
    out.skip(UNREAD, sum(c.report_failures for c in game.counts))
    for r in game.reports:
        out.skip(OWN_V0, int(r.v0 is not None))
        out.skip(NO_TRUTH_V2, int(r.v2 is not None))
        if r.v1 is None or r.seat != game.focal:
            continue
        domain = sorted(r.v1)
        best = max(r.v1.values(), default=0)
        if all(score == best for score in r.v1.values()):
            out.skip(FLAT)
            continue
        needed = relevant(game.targets[game.opponent], domain)
        for item in domain:
            if r.v1[item] == best:
                out.forecasts.append(
                    Forecast.point(
                        game.episode_id,
                        game.model,
                        agent,
                        GAME,
                        kind(game.group),
                        item in needed,
                        seat=r.seat,
                        when=f"turn {r.turn} ({r.phase}): {item}",
                    )
                )
    return out


def tom_forecasts(report: ReportData, episodes: Sequence[EpisodeData]) -> ForecastSet:
    """Every ToM game's forecasts, under the focal seat's model and agent."""
    data = tom_data(episodes, report.store.beliefs, report.study_options("tom", TomOptions))
    out = ForecastSet()
    if not data.games:
        return out
    relevant = rules_relevance(load_rules())
    seats = {e.record.id: e.seats for e in episodes}
    for game in data.games:
        focal = seats[game.episode_id]
        agent = focal[game.focal].agent if game.focal < len(focal) else ""
        out.extend(game_forecasts(game, agent, relevant))
    return out
