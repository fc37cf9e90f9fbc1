"""What every command that plays an experiment does around the run: print the plan, ask before
a run above its confirmation bounds, run, and say how it went (or how to continue after Ctrl-C)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import typer

from stratagem.cli.common import _say, err, out
from stratagem.errors import StratagemError
from stratagem.experiments import event_loop

if TYPE_CHECKING:
    from stratagem.experiments.config import ConfirmConfig
    from stratagem.experiments.plan import Plan
    from stratagem.experiments.runner import Runner, RunSummary


def confirm_plan(
    plan: Plan, confirm: ConfirmConfig, where: str, *, dry_run: bool, yes: bool
) -> bool:
    """Print the plan; False for a dry run, True once the run may start: asked first when the
    plan is above the `confirm` bounds (refused without a terminal to ask, unless `yes`).
    Exit 1 when the person declines. `where` names the command or file in errors."""
    _say(out, f"plan: {plan.text()}")
    for line in plan.details():
        _say(out, line)
    if dry_run:
        return False
    reason = plan.above(confirm)
    if reason is not None and not yes:
        if not sys.stdin.isatty():
            raise StratagemError(
                f"{where}: this run needs a confirmation ({reason}) and there is no terminal to "
                "ask; pass --yes to start it"
            )
        if not typer.confirm(f"this run is above its confirmation bounds ({reason}); start it?"):
            _say(err, "not started")
            raise typer.Exit(1)
    return True


def plan_and_run(
    runner: Runner, plan: Plan, confirm: ConfirmConfig, where: str, *, dry_run: bool, yes: bool
) -> RunSummary | None:
    """The run's summary, or None for a dry run. `where` names the command or file in errors.
    Exit 1 when the person declines, 130 on Ctrl-C (finished episodes are kept)."""
    if not confirm_plan(plan, confirm, where, dry_run=dry_run, yes=yes):
        return None
    try:
        summary = event_loop.run(runner.run())
    except KeyboardInterrupt:
        done = runner.summary.skipped + runner.summary.finished
        _say(err, f"interrupted: {done} of {runner.summary.episodes} episodes finished; "
                  "re-run the same command to continue")  # fmt: skip
        raise typer.Exit(130) from None
    _say(
        out,
        f"experiment {summary.experiment}: {summary.episodes} episodes, "
        f"{summary.skipped} already finished, {summary.finished} played, {summary.failed} failed; "
        f"{summary.calls} model calls ({summary.cached_calls} cached, {summary.failed_calls} "
        f"failed), {summary.tokens:,} tokens, ${summary.cost_usd:.4f}"
        f"{summary.prompt_cache.aside()}, {summary.wall_s:.1f} s",
    )
    if summary.replayed:
        _say(
            out,
            f"{len(summary.replayed)} worker(s) died, their unfinished episodes played again "
            f"by others: {'; '.join(summary.replayed)}",
        )
    if summary.unread_answers:
        _say(
            out,
            f"{summary.unread_answers} answers (questions, probes, analyses) could not be read: "
            "each is stored as such (its reply kept, no value read from it)",
        )
    return summary
