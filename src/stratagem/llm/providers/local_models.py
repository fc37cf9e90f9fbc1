"""The GGUF models loaded in this process, shared by every `local/` provider using them.

Loading a model takes seconds and its weights hundreds of MB, so one `Llama` object is loaded per
process for each (file, context size, threads) and kept for later providers; llama.cpp is
synchronous, so each carries the lock its one-call generations take turns under, its saved KV
states (`local_slots`) and its batch engines (`local_batch`).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from stratagem.llm.errors import PermanentError
from stratagem.llm.providers.local_batch import BatchEngine
from stratagem.llm.providers.local_slots import KVSlots

if TYPE_CHECKING:
    from llama_cpp import Llama

DEFAULT_KV_SLOTS = 16
"""Saved KV states kept per loaded model (local_slots): about 10 MB each for a 600-token prompt."""


@dataclass
class Loaded:
    llm: Llama
    lock: threading.Lock
    slots: KVSlots
    engines: dict[int, BatchEngine] = field(default_factory=dict)
    """The batch engines over this model, by their number of sequences."""

    def engine(self, n_seq: int, n_ctx: int) -> BatchEngine:
        with self.lock:
            engine = self.engines.get(n_seq)
            if engine is None:
                with quiet_stderr():  # llama.cpp's notice of a full-size SWA cache
                    engine = BatchEngine(
                        self.llm, n_seq=n_seq, n_ctx=n_ctx, kv_slots=DEFAULT_KV_SLOTS
                    )
                self.engines[n_seq] = engine
            return engine


_LOADED: dict[tuple[str, int, int], Loaded] = {}
_LOADED_LOCK = threading.Lock()


def load(path: Path, n_ctx: int, n_threads: int) -> Loaded:
    """Load a GGUF once per process and configuration; later providers share it."""
    key = (str(path.resolve()), n_ctx, n_threads)
    with _LOADED_LOCK:
        loaded = _LOADED.get(key)
        if loaded is None:
            from llama_cpp import Llama

            try:
                with quiet_stderr() as log:
                    llm = Llama(
                        model_path=str(path), n_ctx=n_ctx, n_threads=n_threads, verbose=False,
                        seed=0,
                    )  # fmt: skip
            except (ValueError, RuntimeError) as exc:
                detail = "".join(log).strip().splitlines()[-1:] or [""]
                raise PermanentError(f"cannot load GGUF model {path}: {exc} {detail[0]}") from None
            loaded = Loaded(llm, threading.Lock(), KVSlots(DEFAULT_KV_SLOTS))
            _LOADED[key] = loaded
        return loaded


@contextlib.contextmanager
def quiet_stderr() -> Iterator[list[str]]:
    """Catch what llama.cpp's C code writes to stderr while loading (it ignores verbose=False for
    some notices); the caller shows it only if the load fails."""
    captured: list[str] = []
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile("w+") as log:
        os.dup2(log.fileno(), 2)
        try:
            yield captured
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            log.seek(0)
            captured.append(log.read())


def unload_all() -> None:
    """Free every loaded model; providers reload theirs on their next call."""
    with _LOADED_LOCK:
        models = list(_LOADED.values())
        _LOADED.clear()
    for loaded in models:
        with loaded.lock:
            for engine in loaded.engines.values():
                engine.close()
            loaded.llm.close()


# Closing before interpreter shutdown: llama-cpp-python's finaliser fails noisily once the
# modules it calls into are torn down.
atexit.register(unload_all)
