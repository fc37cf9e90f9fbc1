"""Saved KV-cache states of the embedded model, so interleaved conversations each keep theirs.

llama.cpp keeps one KV cache, so by itself only a prompt that extends the *previous* one is
cheap. The studies interleave conversations: a debate alternates between the suspect's and the
lawyer's transcripts, each opening with its own long system prompt; seed-001's agents ask a
decision and four questions per round, each a different prompt over the same history. Each
finished call's state is saved here (about 16 KB per token for Gemma 3 270M, a few ms to copy),
and a new prompt restores the saved state it shares the longest prefix with, when that beats
what the live cache holds. Restoring is exact: the logits are bit-identical to those of the
live cache that was saved.
"""

from __future__ import annotations

import ctypes
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from llama_cpp import Llama

MIN_GAIN = 16
"""Tokens a saved state must save over the live cache to be worth restoring."""


def common_prefix(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any]) -> int:
    n = min(len(a), len(b))
    differ = np.flatnonzero(a[:n] != b[:n])
    return int(differ[0]) if len(differ) else n


class KVSlots:
    """Up to `capacity` saved sequence states, least recently used evicted first."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._slots: OrderedDict[int, tuple[np.ndarray[Any, Any], Any]] = OrderedDict()
        self._next = 0
        self.restored = 0
        """How many prompts started from a saved state."""

    def __len__(self) -> int:
        return len(self._slots)

    def restore_best(self, llm: Llama, prompt: np.ndarray[Any, Any], live: int) -> None:
        """Load the saved state sharing the longest prefix with `prompt` into the one-call
        context (sequence 0), if it beats the `live` cache."""
        tokens = self.restore(llm._ctx.ctx, 0, prompt, live)
        if tokens is None:
            return
        if not len(tokens):
            llm.reset()  # type: ignore[no-untyped-call]
            return
        llm.input_ids[: len(tokens)] = tokens
        llm.n_tokens = len(tokens)

    def restore(
        self, ctx: Any, seq: int, prompt: np.ndarray[Any, Any], live: int
    ) -> np.ndarray[Any, Any] | None:
        """Load the saved state sharing the longest prefix with `prompt` into sequence `seq` of
        the llama.cpp context `ctx`, if it beats the `live` tokens `seq` holds: the tokens it
        now holds, None if nothing was restored, empty if restoring failed (`seq` is cleared)."""
        best_key, best_len = None, live + MIN_GAIN - 1
        for key, (tokens, _) in self._slots.items():
            shared = common_prefix(tokens, prompt)
            if shared > best_len:
                best_key, best_len = key, shared
        if best_key is None:
            return None
        import llama_cpp

        tokens, data = self._slots[best_key]
        self._slots.move_to_end(best_key)
        llama_cpp.llama_memory_seq_rm(llama_cpp.llama_get_memory(ctx), seq, -1, -1)
        if llama_cpp.llama_state_seq_set_data(ctx, data, len(data), seq) == 0:
            return tokens[:0]
        self.restored += 1
        return tokens

    def save(self, llm: Llama) -> None:
        """Keep the one-call context's live state."""
        self.save_seq(llm._ctx.ctx, 0, np.array(llm.input_ids[: llm.n_tokens], dtype=np.int32))

    def save_seq(self, ctx: Any, seq: int, tokens: np.ndarray[Any, Any]) -> None:
        """Keep the state of sequence `seq`, which holds `tokens`; it replaces a saved one it
        extends (the same conversation)."""
        if self.capacity <= 0 or not len(tokens):
            return
        import llama_cpp

        for key, (saved, _) in list(self._slots.items()):
            if len(saved) <= len(tokens) and common_prefix(saved, tokens) == len(saved):
                del self._slots[key]
        size = llama_cpp.llama_state_seq_get_size(ctx, seq)
        data = (ctypes.c_uint8 * size)()
        if llama_cpp.llama_state_seq_get_data(ctx, data, size, seq) == 0:
            return
        self._slots[self._next] = (tokens, data)
        self._next += 1
        while len(self._slots) > self.capacity:
            self._slots.popitem(last=False)

    def clear(self) -> None:
        self._slots.clear()
