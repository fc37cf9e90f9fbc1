"""The mask checks of tests/test_pettingzoo_masks.py and tests/test_pettingzoo_plugin.py: a
seat acting by number is masked in exactly what the engine accepts now."""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np

from stratagem.experiments.pettingzoo_env import StratagemEnv
from stratagem.experiments.pettingzoo_parallel import StratagemParallelEnv

NEVER = 10**9
"""`max_illegal` for the checks: refusals never reach the game's rule for a missing move."""


def check_aec_masks(make: Callable[[], StratagemEnv], seed: int) -> int:
    """Plays masked-in actions drawn from `seed` to the end; at each decision every masked-out
    action is refused with nothing changed, and every masked-in one is accepted by an
    environment replayed to the same point. The number of decisions checked."""
    env = make()
    env.reset(seed=seed)
    rng, path = random.Random(seed), []
    for agent in env.agent_iter(10_000):
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        mask, state = observation["action_mask"], env.table.state
        assert mask.any(), f"{agent} must act, yet nothing is masked in"
        for action in np.flatnonzero(mask == 0):
            env.step(int(action))
            assert "masked out" in env.infos[agent]["illegal"]
            assert env.table.state is state and env.agent_selection == agent
        for action in np.flatnonzero(mask):
            replay = make()
            replay.reset(seed=seed)
            for earlier in path:
                replay.step(earlier)
            assert replay.agent_selection == agent
            replay.step(int(action))
            assert "illegal" not in replay.infos[agent], replay.infos[agent]
        path.append(int(rng.choice(np.flatnonzero(mask))))
        env.step(path[-1])
        assert "illegal" not in env.infos[agent]
    assert not env.agents and env.table.state.is_terminal()
    return len(path)


def check_parallel_masks(make: Callable[[], StratagemParallelEnv], seed: int, steps: int) -> int:
    """The same for the parallel API: at each of the first `steps` steps, each agent's
    masked-out actions (the others playing legally) leave the step unplayed, and its masked-in
    ones get it played; the number of steps checked."""
    env = make()
    observations, _ = env.reset(seed=seed)
    rng, path = random.Random(seed), []
    while env.agents and len(path) < steps:
        masks = {a: observations[a]["action_mask"] for a in env.agents}
        legal = {a: int(rng.choice(np.flatnonzero(m))) for a, m in masks.items()}
        state, turn = env.table.state, env.table.turn
        for agent, mask in masks.items():
            for action in np.flatnonzero(mask == 0):
                _, rewards, _, _, infos = env.step({**legal, agent: int(action)})
                assert "masked out" in infos[agent]["illegal"] and rewards[agent] == -1.0
                assert env.table.state is state and env.table.turn == turn
                assert all("illegal" not in infos[other] for other in infos if other != agent)
            for action in np.flatnonzero(mask):
                replay = make()
                replay.reset(seed=seed)
                for earlier in path:
                    replay.step(earlier)
                _, _, _, _, infos = replay.step({**legal, agent: int(action)})
                assert all("illegal" not in info for info in infos.values()), infos
                assert replay.table.turn == turn + 1
        observations, *_ = env.step(legal)
        path.append(legal)
    return len(path)
