"""seed-003, "Evaluating Counterfactual Strategic Reasoning in Large Language Models": LLMs in
repeated Prisoner's Dilemma and rock-paper-scissors games and their counterfactual variants
(relabelled actions, changed payoffs, both), against LLM prompts and seed-003's bots."""

from __future__ import annotations

from stratagem.analysis.episodes import EpisodeData
from stratagem.studies.counterfactual.section import counterfactual_sections
from stratagem.studies.counterfactual.tidy import game_rows
from stratagem.studies.registry import Study, register


def applies(episode: EpisodeData) -> bool:
    """A two-player matrix game with rounds: the study's metrics are defined for it. Its section
    keeps the games that form a counterfactual family (seed-003's catalog games, as `pd/sh` in
    its logs too, or a matrix game played together with variants of it)."""
    return len(episode.seats) == 2 and bool(episode.rounds) and episode.stage is not None


STUDY = register(
    Study(
        name="counterfactual",
        title="Evaluating Counterfactual Strategic Reasoning in Large Language Models",
        spec="seed-003",
        applies=applies,
        sections=counterfactual_sections,
        table=game_rows,
    )
)
