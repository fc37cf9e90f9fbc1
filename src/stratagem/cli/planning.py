"""`stratagem plan`: what the grid's comparisons can detect, and what a difference would need.

`stratagem run --dry-run` prints the same comparisons section under the run's plan. The
command composes the layers (the grid's comparisons from `experiments`, the power arithmetic and
the pilot episodes from `analysis`), since experiments may not import analysis.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from stratagem.cli.common import PluginOption, _say, app, out, use_plugins
from stratagem.errors import StratagemError

if TYPE_CHECKING:
    from stratagem.experiments.config import ExperimentConfig
    from stratagem.experiments.grid import EpisodeSpec


def comparison_lines(
    config: ExperimentConfig,
    specs: Sequence[EpisodeSpec],
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    delta: float | None = None,
    each: bool = False,
    icc: float | None = None,
) -> list[str]:
    """The plan's comparisons section, pilot episodes read from the file's results directory;
    `icc` the intra-cluster correlation assumed where no pilot measures it."""
    from stratagem.analysis.plan_power import DEFAULT_ICC, plan_comparisons
    from stratagem.analysis.plan_text import plan_lines
    from stratagem.experiments.runner import STORE_FILE

    plans = plan_comparisons(
        config, specs, Path(config.output) / STORE_FILE, alpha=alpha, power=power, delta=delta,
        icc=DEFAULT_ICC if icc is None else icc,
    )  # fmt: skip
    return plan_lines(plans, alpha=alpha, power=power, delta=delta, each=each)


@app.command()
def plan(
    file: Annotated[Path, typer.Argument(help="Experiment file (YAML).")],
    episodes_for: Annotated[
        float | None,
        typer.Option(
            "--episodes-for",
            metavar="DELTA",
            help="Also say how many episodes per cell (pairs) a difference of DELTA needs.",
        ),
    ] = None,
    power: Annotated[float, typer.Option(help="The power to plan for (1 - β).")] = 0.8,
    alpha: Annotated[float, typer.Option(help="The two-sided test's level α.")] = 0.05,
    each: Annotated[
        bool, typer.Option("--each", help="One line per compared pair of cells.")
    ] = False,
    icc: Annotated[
        float | None,
        typer.Option(
            metavar="RHO",
            help="The intra-cluster correlation of the pairs of one seed to assume where no "
            "pilot measures it (default 1: each seed counts as one pair).",
        ),
    ] = None,
    plugin: PluginOption = None,
) -> None:
    """The minimum detectable effect of each comparison the experiment is for (its file's
    `analysis.compare`, else its study's own), from pilot episodes when stored, over seeds where
    a seed holds several pairs; nothing is played or sent. docs/statistics.md."""
    from stratagem.experiments.config import load_config
    from stratagem.experiments.grid import expand

    use_plugins(plugin)
    config = load_config(file)
    if episodes_for is not None and not episodes_for > 0:
        raise StratagemError(f"--episodes-for: the difference must be > 0, got {episodes_for:g}")
    if not 0 < alpha < 1:
        raise StratagemError(f"--alpha must be strictly between 0 and 1, got {alpha:g}")
    if not alpha < power < 1:
        raise StratagemError(f"--power must be above --alpha and below 1, got {power:g}")
    if icc is not None and not 0 <= icc <= 1:
        raise StratagemError(f"--icc: the intra-cluster correlation must be in [0, 1], got {icc:g}")
    try:
        specs = expand(config)
        lines = comparison_lines(
            config, specs, alpha=alpha, power=power, delta=episodes_for, each=each, icc=icc
        )
    except StratagemError as exc:
        raise StratagemError(f"{file}: {exc}") from None
    if not lines:
        lines = ["comparisons: none (no analysis.compare in the file, and no counterfactual "
                 "variant with its default game in the grid)"]  # fmt: skip
    for line in lines:
        _say(out, line)
