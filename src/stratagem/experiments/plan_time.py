"""How long a run will take, said in its plan (issue 26 item 3): people size a cluster job, and
decide whether to start it, by the wall time as much as by the dollars.

The estimate needs each model's seconds per call: MEASURED (the median of the calls this
directory already paid for with that model) or else STATED (the model entry's `latency_s`).
Without one for every model in the plan there is no estimate; the plan says which model lacks it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Latency:
    """A model's seconds per call and where the figure comes from."""

    seconds: float
    measured: int = 0
    """The paid calls whose median it is; 0 when stated (`latency_s`)."""

    def source(self) -> str:
        """'2.5 s (stated: latency_s)': the figure and where it comes from."""
        if self.measured:
            why = f"measured: median of {self.measured:,} paid calls"
        else:
            why = "stated: latency_s"
        return f"{self.seconds:.3g} s ({why})"


@dataclass(frozen=True)
class ModelLoad:
    """What one model entry has to answer in the run, and how fast it can."""

    name: str
    calls: float
    latency_s: float
    at_once: float
    """Its calls in flight at most: its `max_concurrency`, and a pool's servers' caps summed."""
    quota_s: float = 0.0
    """The least time its rate limits (`limits:`) let it make its calls and tokens in."""
    source: str = ""
    """Where `latency_s` comes from (`Latency.source`)."""

    def line(self, width: int) -> str:
        """The plan's line of this model's share of the wall time."""
        cap = "no cap" if math.isinf(self.at_once) else f"{_n(self.at_once)} at once"
        limited = ", rate limits" if self.quota_s else ""
        calls = f"about {_n(self.calls)} calls x {self.source}"
        return f"    {self.name:<{width}}  {calls}, {cap}{limited}"


@dataclass(frozen=True)
class WallTime:
    seconds: float
    bound: str
    """What sets it: the bound the estimate took."""


def wall_time(loads: Sequence[ModelLoad], episode_slots: float, longest_s: float) -> WallTime:
    """The run's wall time: the largest of these lower bounds, each exact if work packs
    perfectly, so the estimate is optimistic by the run's ramp-up and tail:
    - every call holds a slot of the episodes in flight (`concurrency` x the most LLM seats that
      act at once in an episode: an episode makes its calls one after another, its acting seats
      side by side), so all calls' seconds over those slots;
    - each model's calls hold its own slots (`ModelLoad.at_once`): its calls' seconds over them;
    - each model's rate limits (`ModelLoad.quota_s`);
    - an episode's calls are made one after another: the longest episode's seconds.
    A call is taken to last its latency whatever the load; a measured latency was measured under
    the load of the run that paid for it."""
    work = sum(load.calls * load.latency_s for load in loads)
    bounds = [(longest_s, "the longest episode's calls, made one after another")]
    if episode_slots > 0:
        bounds.append((work / episode_slots, f"{_n(episode_slots)} calls at once (episodes in "
                       "flight x their seats acting at once)"))  # fmt: skip
    for load in loads:
        if load.at_once > 0 and not math.isinf(load.at_once):
            bounds.append((load.calls * load.latency_s / load.at_once,
                           f"{load.name}'s {_n(load.at_once)} calls at once"))  # fmt: skip
        bounds.append((load.quota_s, f"{load.name}'s rate limits"))
    seconds, bound = max(bounds, key=lambda b: b[0])
    return WallTime(seconds, bound)


def duration(seconds: float) -> str:
    """'45 s', '12 min', '3 h 20 min', '2 d 4 h': as precise as an estimate deserves."""
    if seconds < 119.5:
        return f"{max(seconds, 0):.0f} s"
    minutes = round(seconds / 60)
    if minutes < 120:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours} h" if hours else f"{days} d"


def _n(count: float) -> str:
    return f"{count:,.0f}"
