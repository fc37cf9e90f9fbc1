"""Stores the viewer's tests browse: a Chameleon game played through the runner by scripted PGM
and MAgIC seats (private words, private votes, beliefs, a re-ask), and hand-written stores."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.chameleon_view import chameleon_replier
from support.pgm_play import play, scripted_model


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
