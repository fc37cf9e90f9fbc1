"""A run keeps the collector off its set-up and collects less often, and leaves the process's
collector as it found it (the speed itself is measured by benchmarks/throughput.py)."""

from __future__ import annotations

import gc

import pytest

from stratagem.experiments.heap import RUN_THRESHOLDS, frozen_setup


def test_the_collector_is_restored_after_a_run_even_a_failed_one() -> None:
    before = gc.get_threshold()
    with frozen_setup():
        assert gc.get_threshold() == RUN_THRESHOLDS
        assert gc.get_freeze_count() > 0  # what existed before the run is out of sight
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
    with pytest.raises(RuntimeError), frozen_setup():
        raise RuntimeError("an episode failed")
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
