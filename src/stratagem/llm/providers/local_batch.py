"""Several calls of the embedded model decoded together: one llama.cpp sequence each, one batch
per step.

Why: llama.cpp evaluates several sequences in one batch for little more than one (issue 38: 74
tokens/s at 1 sequence, 181 at 8 on 2 cores), while the one-call path (`local_decoding.generate`)
makes a grid's concurrent episodes queue behind one sequence.

Continuous batching: a call joins at the next step and leaves when its reply is over. Each step
evaluates, in one `llama_decode`, what every call in flight has to evaluate next: the part of its
prompt the KV cache lacks (a long prompt over several steps, `N_BATCH` tokens a step in all), or
the token it sampled plus any forced text. Each reply is decoded by the same `Decoder` as a call
alone (sampling, grammar window, forced text, early completion, stop texts), on its own logits.

A reply does not depend on which calls share its batch: each sequence has its own stream of KV
cells (`kv_unified` off), so its attention runs over the same cells as alone, and the engine's
copy of the weights is not repacked (`use_extra_bufts` off): llama.cpp's repacked CPU kernels
compute a row of a batch in groups of four rows (gemm) or alone (gemv), so a row's last digits
depended on its neighbours and 2 of 8 greedy replies changed; with plain dot products they do
not (in a quick check on 2 loaded cores, 32 short calls batched also took 27-32 s unrepacked
against 45-47 s repacked). The one-call path keeps its repacked weights, so a reply batched may
differ from the same call made with `batch: 1` in a near-tie (1 of 8 greedy prompts in that
check).

KV reuse, per sequence: a free sequence keeps what its last call left, a joining call takes the
free sequence sharing the longest prefix with its prompt, and the engine's own `KVSlots` keep the
final states of recent calls, restored into whichever sequence a call takes when that saves more.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from stratagem.llm.providers.local_decoding import Decoder, Generation, Sampling
from stratagem.llm.providers.local_slots import KVSlots, common_prefix

if TYPE_CHECKING:
    from llama_cpp import Llama

N_BATCH = 512
GAVE_UP = RuntimeError("the caller gave up")
"""How a cancelled call leaves: as after an error, its partial cache is cleared."""
"""Tokens evaluated per step at most, all sequences together (llama-cpp-python's n_batch)."""


@dataclass
class _Call:
    prompt: list[int]
    decoder: Decoder
    future: Future[tuple[Generation, float]]
    started: float
    kv_reuse: bool
    seq: int = -1
    todo: list[int] = field(default_factory=list)
    """Tokens to evaluate before the next sample."""
    evaluated: int = 0
    """Prompt tokens evaluated (the rest came from the KV cache)."""
    over: bool = False
    """Left the engine: its sequence freed, its decoder closed."""


class BatchEngine:
    """A llama.cpp context of `n_seq` sequences over a loaded model, stepped by its own thread."""

    def __init__(self, llm: Llama, *, n_seq: int, n_ctx: int, kv_slots: int) -> None:
        import llama_cpp
        from llama_cpp._internals import LlamaContext, LlamaModel

        self.llm = llm
        weights = llama_cpp.llama_model_default_params()
        weights.use_extra_bufts = False  # no repacked weights: see the module docstring
        self._model = LlamaModel(path_model=llm.model_path, params=weights, verbose=False)
        self.n_seq = n_seq
        params = llama_cpp.llama_context_params.from_buffer_copy(llm.context_params)
        params.n_ctx = n_ctx * n_seq  # one cache for all sequences, each up to n_ctx
        params.n_seq_max = n_seq
        params.n_batch = params.n_ubatch = N_BATCH
        params.kv_unified = False  # a stream of cells per sequence, laid out as if alone
        self._ctx = LlamaContext(model=self._model, params=params, verbose=False)
        self._batch = llama_cpp.llama_batch_init(N_BATCH, 0, 1)
        self._n_vocab = llm.n_vocab()
        self.slots = KVSlots(kv_slots)
        self._held: list[list[int]] = [[] for _ in range(n_seq)]
        """The tokens each sequence's KV cache holds."""
        self._free = list(range(n_seq))
        self._active: list[_Call] = []
        self._waiting: deque[_Call] = deque()
        self._cond = threading.Condition()
        self._closed = False
        self.widest = 0
        """The most calls sampled after one step."""
        self._thread = threading.Thread(target=self._run, name="stratagem-llama-batch", daemon=True)
        self._thread.start()

    def submit(
        self,
        prompt: Sequence[int],
        *,
        max_tokens: int,
        sampling: Sampling,
        grammar: str | None,
        done: Callable[[str], bool] | None,
        stop: Sequence[str],
        kv_reuse: bool = True,
    ) -> Future[tuple[Generation, float]]:
        """Queue a call; its future gives the generation and the seconds it took. A grammar
        llama.cpp rejects raises ValueError here. Without `kv_reuse` the call evaluates its
        whole prompt and leaves no saved state."""
        decoder = Decoder(
            self.llm, prompt, max_tokens=max_tokens, sampling=sampling, grammar=grammar,
            done=done, stop=stop,
        )  # fmt: skip
        call = _Call(list(prompt), decoder, Future(), time.perf_counter(), kv_reuse)
        with self._cond:
            if self._closed:
                decoder.close()
                raise RuntimeError("the batch engine is closed")
            self._waiting.append(call)
            self._cond.notify()
        return call.future

    def close(self) -> None:
        """Stop the thread, fail what is still queued, free the context."""
        import llama_cpp

        with self._cond:
            self._closed = True
            self._cond.notify()
        self._thread.join()
        for call in [*self._active, *self._waiting]:
            if not call.over:
                call.decoder.close()
            if not call.future.done():  # a caller that gave up was cancelled already
                call.future.set_exception(RuntimeError("the local model was unloaded"))
        llama_cpp.llama_batch_free(self._batch)
        self._ctx.close()  # type: ignore[no-untyped-call]
        self._model.close()  # type: ignore[no-untyped-call]

    # --- the engine's thread --------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._closed and not self._active and not self._waiting:
                    self._cond.wait()
                if self._closed:
                    return
                joining: list[_Call] = []
                while self._waiting and len(joining) < len(self._free):
                    joining.append(self._waiting.popleft())
            try:
                for call in joining:
                    self._join(call)
                if self._active:
                    self._step()
            except Exception as exc:  # never leave a caller waiting on a dead thread
                for call in [*self._active, *(c for c in joining if c.seq < 0)]:
                    self._leave(call, exc)

    def _join(self, call: _Call) -> None:
        """Give the call the free sequence whose cache (live or saved) shares most with its
        prompt, and trim that cache to the shared prefix."""
        import llama_cpp

        if call.decoder.finish is not None or call.future.cancelled():  # max_tokens 0, gave up
            self._leave(call, None)
            return
        wanted = np.asarray(call.prompt, dtype=np.int32)
        shared = {
            s: common_prefix(np.asarray(self._held[s], dtype=np.int32), wanted) for s in self._free
        }
        seq = max(self._free, key=lambda s: (shared[s], -s))
        self._free.remove(seq)
        keep = shared[seq] if call.kv_reuse else 0
        if call.kv_reuse:
            restored = self.slots.restore(self._ctx.ctx, seq, wanted, keep)
            if restored is not None:
                self._held[seq] = restored.tolist()
                keep = common_prefix(restored, wanted)
        keep = min(keep, len(call.prompt) - 1)  # the last prompt token's logits start the reply
        memory = llama_cpp.llama_get_memory(self._ctx.ctx)
        if keep <= 0 or not llama_cpp.llama_memory_seq_rm(memory, seq, keep, -1):
            llama_cpp.llama_memory_seq_rm(memory, seq, -1, -1)
            keep = 0
        del self._held[seq][keep:]
        call.seq = seq
        call.todo = call.prompt[keep:]
        call.evaluated = len(call.todo)
        self._active.append(call)

    def _step(self) -> None:
        """One llama_decode over every active call's next tokens, then a sample for each call
        whose tokens are all evaluated."""
        import llama_cpp

        for call in [c for c in self._active if c.future.cancelled()]:
            self._leave(call, GAVE_UP)  # its caller gave up (a run stopped): free its sequence
        batch = self._batch
        sampled: list[tuple[_Call, int]] = []
        n = 0
        for call in self._active:
            take = call.todo[: N_BATCH - n]
            if not take:
                continue
            held = self._held[call.seq]
            for token in take:
                batch.token[n] = token
                batch.pos[n] = len(held)
                batch.n_seq_id[n] = 1
                batch.seq_id[n][0] = call.seq
                batch.logits[n] = False
                held.append(token)
                n += 1
            del call.todo[: len(take)]
            if not call.todo:
                batch.logits[n - 1] = True
                sampled.append((call, n - 1))
        if n == 0:  # every active call gave up
            return
        batch.n_tokens = n
        self.widest = max(self.widest, len(sampled))
        if llama_cpp.llama_decode(self._ctx.ctx, batch) != 0:
            error = RuntimeError("llama.cpp could not decode the batch (context full?)")
            for call in list(self._active):
                self._leave(call, error)
            return
        for call, index in sampled:
            pointer = llama_cpp.llama_get_logits_ith(self._ctx.ctx, index)
            logits = np.ctypeslib.as_array(pointer, shape=(self._n_vocab,)).astype(np.float32)
            try:
                call.decoder.feed(logits)
            except ValueError as exc:  # the grammar allows nothing
                self._leave(call, exc)
                continue
            if call.decoder.finish is not None:
                self._leave(call, None)
            else:
                call.todo = list(call.decoder.pending)

    def _leave(self, call: _Call, error: BaseException | None) -> None:
        """Free the call's sequence (its cache saved for reuse after a reply, cleared after an
        error), then answer it unless its caller gave up."""
        if call.over:
            return
        call.over = True
        call.decoder.close()
        if call.seq >= 0:
            self._active.remove(call)
            if error is None and call.kv_reuse:
                held = np.asarray(self._held[call.seq], dtype=np.int32)
                self.slots.save_seq(self._ctx.ctx, call.seq, held)
            elif error is not None:
                import llama_cpp

                llama_cpp.llama_memory_seq_rm(
                    llama_cpp.llama_get_memory(self._ctx.ctx), call.seq, -1, -1
                )
                self._held[call.seq] = []
            self._free.append(call.seq)
        if call.future.done():
            return
        if error is not None:
            call.future.set_exception(error)
        else:
            result = call.decoder.result(call.evaluated)
            call.future.set_result((result, time.perf_counter() - call.started))
