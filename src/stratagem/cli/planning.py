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
) -> list[str]:
    """The plan's comparisons section, pilot episodes read from the file's results directory."""
    from stratagem.analysis.plan_power import plan_comparisons, plan_lines
    from stratagem.experiments.runner import STORE_FILE

    plans = plan_comparisons(
        config, specs, Path(config.output) / STORE_FILE, alpha=alpha, power=power, delta=delta
    )
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
    plugin: PluginOption = None,
) -> None:
    """The minimum detectable effect of each comparison the experiment is for (its file's
    `analysis.compare`, else its study's own), from pilot episodes when stored; nothing is
    played or sent. docs/statistics.md."""
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
    try:
        specs = expand(config)
        lines = comparison_lines(
            config, specs, alpha=alpha, power=power, delta=episodes_for, each=each
        )
    except StratagemError as exc:
        raise StratagemError(f"{file}: {exc}") from None
    if not lines:
        lines = ["comparisons: none (no analysis.compare in the file, and no counterfactual "
                 "variant with its default game in the grid)"]  # fmt: skip
    for line in lines:
        _say(out, line)
