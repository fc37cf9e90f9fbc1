"""The public Python API: thin, like the command. `stratagem.open` reads a results directory as
pandas DataFrames (docs/dataframes.md); the work is done in `analysis.frames` (the stored tables)
and `studies.frames` (each study's per-game table). `stratagem.env` makes a game a PettingZoo
AEC environment and `stratagem.parallel_env` a simultaneous-move game a parallel one
(docs/pettingzoo.md), built in `experiments.pettingzoo_env` and `.pettingzoo_parallel`."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from os import PathLike
from typing import TYPE_CHECKING, Any

import pandas as pd

from stratagem.analysis.frames import StoreFrames, open_store
from stratagem.errors import StratagemError

if TYPE_CHECKING:
    from stratagem.experiments.pettingzoo_env import StratagemEnv
    from stratagem.experiments.pettingzoo_parallel import StratagemParallelEnv

__all__ = ["Results", "env", "open", "parallel_env"]


class Results(StoreFrames):
    """A results directory's tables, one DataFrame attribute each: `episodes`, `seats`,
    `rounds`, `events`, `calls`, `beliefs`, `answers`; `study(name)` gives a study's table."""

    def study(
        self, name: str, settings: Mapping[str, Mapping[str, Any]] | None = None
    ) -> pd.DataFrame:
        """A study's tidy per-game table (counterfactual, thesis, magic, tom): the rows its
        report section is computed from, with the experiment's analysis options, `settings`
        over them (`{"magic": {"code_compat": True}}`, as `report --set`)."""
        from stratagem.studies.frames import study_frame

        return study_frame(self.store, self.experiment_ids, name, settings)


def open(path: str | PathLike[str], experiment: str | None = None) -> Results:
    """A results directory (or its stratagem.db), read-only, optionally one experiment of it."""
    store = open_store(path)
    try:
        return Results(store, experiment)
    except BaseException:
        store.close()
        raise


def env(game: str, **options: Any) -> StratagemEnv:
    """Catalog game `game` (`chameleon/0`, `dilemma`) as a PettingZoo AEC environment; `options`:
    `rounds`, `bots` ({seat: strategy}), `actions` ("auto", "discrete", "text"),
    `illegal_reward`, `max_illegal`, `render_mode`, and the game's own rule options."""
    with _needs_pettingzoo("env"):
        from stratagem.experiments.pettingzoo_env import make_env

    return make_env(game, **options)


def parallel_env(game: str, **options: Any) -> StratagemParallelEnv:
    """Simultaneous-move catalog game `game` (`dilemma`, `public-good/0`) as a PettingZoo
    parallel environment, every agent acting at every step; the options of `env`."""
    with _needs_pettingzoo("parallel_env"):
        from stratagem.experiments.pettingzoo_parallel import make_parallel_env

    return make_parallel_env(game, **options)


@contextmanager
def _needs_pettingzoo(name: str) -> Iterator[None]:
    """A one-line error, not an ImportError, where the `pettingzoo` extra is not installed."""
    try:
        yield
    except ModuleNotFoundError as exc:
        if exc.name not in ("pettingzoo", "gymnasium"):
            raise
        raise StratagemError(
            f"stratagem.{name} needs {exc.name}: pip install 'stratagem[pettingzoo]'"
        ) from None
