"""The wall-time formula of the plan (`stratagem.experiments.plan_time.wall_time`): the largest
of its lower bounds, and which one it took."""

from __future__ import annotations

import math

import pytest

from stratagem.experiments.plan_time import ModelLoad, duration, wall_time


def test_the_calls_share_the_slots_of_the_episodes_in_flight() -> None:
    """Two models' calls (100 x 1 s + 100 x 3 s) over 10 slots: 40 s, whatever each allows."""
    loads = [ModelLoad("a", 100, 1.0, math.inf), ModelLoad("b", 100, 3.0, 64)]
    wall = wall_time(loads, episode_slots=10, longest_s=5)
    assert wall.seconds == pytest.approx(40) and wall.bound.startswith("10 calls at once")


def test_a_model_that_takes_few_calls_at_once_sets_the_time() -> None:
    loads = [ModelLoad("a", 100, 1.0, math.inf), ModelLoad("b", 100, 3.0, 2)]
    wall = wall_time(loads, episode_slots=10, longest_s=5)
    assert wall.seconds == pytest.approx(150) and wall.bound == "b's 2 calls at once"


def test_rate_limits_and_the_longest_episode_bound_it_below() -> None:
    quota = [ModelLoad("a", 10, 1.0, 10, quota_s=600)]
    assert wall_time(quota, 10, 5).seconds == 600
    assert wall_time(quota, 10, 5).bound == "a's rate limits"
    longest = wall_time([ModelLoad("a", 10, 1.0, 10)], 10, 45)
    assert (longest.seconds, longest.bound) == (45, "the longest episode's calls, made one "
                                                "after another")  # fmt: skip


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0.4, "0 s"), (90, "90 s"), (119, "119 s"), (120, "2 min"), (7140, "119 min"), (7200, "2 h"),
     (8700, "2 h 25 min"), (48 * 3600, "2 d"), (52 * 3600, "2 d 4 h")],
)  # fmt: skip
def test_durations_are_as_precise_as_an_estimate(seconds: float, text: str) -> None:
    assert duration(seconds) == text
