"""Stores the viewer's tests browse: a Chameleon game played through the runner by scripted PGM
and MAgIC seats (private words, private votes, beliefs, a re-ask), and hand-written stores."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.chameleon_view import chameleon_replier
from support.pgm_play import NAME, play, scripted_model

from stratagem.experiments.config import config_from_dict
from stratagem.experiments.runner import Runner


@pytest.fixture(scope="module")
def chameleon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """A results directory with one Chameleon game (seat 2 the chameleon), and its episode id."""
    models = scripted_model()
    slot = next(models)
    slot[0] = chameleon_replier()
    try:
        store, episode = play(
            tmp_path_factory.mktemp("chameleon"), "chameleon/0", ["pgm", "magic", "pgm"]
        )
        store.close()
        yield Path(store.path).parent, episode
    finally:
        models.close()


MAGIC_MODEL = "m<b>x</b>"


@pytest.fixture(scope="session")
def magic_model() -> str:
    """The model id of `magic_results` (markup): its entities are `<id>|pgm` and `<id>|magic`."""
    return MAGIC_MODEL


@pytest.fixture(scope="session")
def magic_results(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A small MAgIC results directory for the viewer's analysis: Chameleon settings 0 and 1,
    each under two line-ups of PGM (`pgm`) and plain (`magic`) seats of one scripted model, so
    two entities to rate, a spy role each holds in some games only, PGM beliefs to calibrate,
    and every cell played again (`replicates: 1`) for a noise floor: 8 episodes. The model's
    id is markup, which every page must show as text."""
    models = scripted_model()
    next(models)[0] = chameleon_replier()
    out = tmp_path_factory.mktemp("magic-analysis") / "out"
    agents = [
        {"name": "pgm", "kind": "pgm", "max_reasks": 1, "options": {"probes": False}},
        {"name": "magic", "kind": "magic", "max_reasks": 1, "options": {"probes": False}},
    ]
    config = config_from_dict(
        {
            "name": "magic-analysis", "output": str(out), "replicates": 1,
            "models": [{"model": f"scripted/{NAME}", "id": MAGIC_MODEL}], "agents": agents,
            "games": ["chameleon/0", "chameleon/1"],
            "lineups": [["pgm", "magic", "pgm"], ["magic", "pgm", "magic"]],
            "retry": {"base_delay": 0},
        },
        "test",
    )  # fmt: skip
    try:
        summary = asyncio.run(Runner(config, show_progress=False).run())
        assert (summary.finished, summary.failed) == (8, 0), summary.errors
        yield out
    finally:
        models.close()
