"""Every example config validates and expands to the grid its comments promise."""

from __future__ import annotations

from pathlib import Path

import pytest

from stratagem.experiments.config import load_config
from stratagem.experiments.grid import expand

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.mark.parametrize(
    ("name", "episodes"),
    [
        ("quickstart.yaml", 9),
        ("openai-compatible.yaml", 18),
        ("anthropic.yaml", 18),
        ("thesis.yaml", 252),  # seed-001 §4.6: the thesis' 252 games
        ("thesis-local.yaml", 21),
        # seed-003 §3.1: 8 games x (3x7x5 + 3x7x2) = 1,176 games per model, the study's 8 models.
        ("counterfactual.yaml", 9408),
        ("counterfactual-local.yaml", 128),
        # seed-004 §4: 143 games per challenger and architecture, 4 models x 2 architectures.
        ("magic.yaml", 1144),
        ("magic-cluster.yaml", 1144),  # the same competition, one model on a cluster's servers
        ("magic-local.yaml", 26),
        # seed-002 §10: 4 models x 3 groups x 20 instances = 240 games.
        ("tom.yaml", 240),
        ("tom-local.yaml", 12),
        # 2 opponents x 6 prompt variants (base, 3 paraphrases, 2 history views) x 3 seeds.
        ("prompt-variants.yaml", 36),
        # 2 games x 2 bots x 3 seeds, and a replicate of each (`replicates: 1`).
        ("noise-floor.yaml", 24),
        # 5 mechanisms x 2 stage games (the PD and the Stag Hunt) x TitForTat x 3 seeds.
        ("mechanisms.yaml", 30),
        # 3 OpenSpiel games x 4 line-ups (2 agents, either seat) x 10 seeds.
        ("openspiel-rules.yaml", 120),
    ],
)
def test_example_expands(name: str, episodes: int) -> None:
    assert len(expand(load_config(EXAMPLES / name))) == episodes


def test_tom_study_seats_the_focal_agent_first_against_the_baseline() -> None:
    """seed-002 §3.3: each group's focal agent in seat 0 against the same-model V0 baseline, on
    the first 20 instances (§12.1) and 15 turns (§2.7) of the study set."""
    specs = expand(load_config(EXAMPLES / "tom.yaml"))
    lineups = {tuple(s.seats[i].label for i in (0, 1)) for s in specs}
    assert lineups == {("tom-v0", "base"), ("tom-v1", "base"), ("tom-v2", "base")}
    assert {s.game for s in specs} == {f"tradecraft/{k}" for k in range(20)}
    assert {s.rounds for s in specs} == {15}


def test_the_tom_plan_prices_the_growing_conversation() -> None:
    """The plan of tom-local before any call is paid: every call at `tom`'s token estimate for a
    4-turn game, not the generic 600 tokens."""
    from stratagem.experiments.plan import estimate

    config = load_config(EXAMPLES / "tom-local.yaml")
    specs = expand(config)
    plan = estimate(iter(specs), len(specs), 0, config.models, None)
    assert plan.calls > 0 and plan.tokens == plan.calls * 2750


def test_the_mechanisms_example_compares_each_mechanism_with_repetition_by_seed() -> None:
    """Each stated comparison pairs its two cells on every seed (docs/mechanisms.md)."""
    from stratagem.experiments.comparisons import planned_comparisons

    config = load_config(EXAMPLES / "mechanisms.yaml")
    planned = planned_comparisons(config, expand(config))
    assert [(p.entry.a, p.entry.b) for p in planned] == [
        (f"repetition/{stage}", f"{mechanism}/{stage}")
        for stage in ("dilemma", "sh")
        for mechanism in ("reputation", "mediation", "contracting", "disarmament")
    ]
    assert all(len(p.cells) == 1 and len(p.cells[0].pairs) == 3 for p in planned)
