"""The embedded model's decoding loop: llama.cpp evaluates, stratagem samples.

Why not `Llama.create_completion`: on a 262k-token vocabulary (Gemma 3) it is slow exactly where
stratagem needs it most, the short grammar-constrained replies of the studies.

- It runs the grammar over the whole vocabulary before every sampled token: about 50 ms per
  token on 2 cores, twice the model's own forward pass. Here the grammar only tests candidates
  in descending logit order until the sampling chain's window is settled (usually the first few
  dozen), which gives the same candidate set (see `_grammar_window`).
- A constrained JSON reply does not end when its object closes: the grammar still allows
  whitespace, and a base model keeps writing it up to `max_tokens`. Here a reply ends as soon as
  it is complete (`Completion.done`) and the grammar accepts the end of the text.

The sampling chain is llama-cpp-python's default one, in its order: repeat penalty, grammar,
top-k, top-p, min-p, temperature, then a draw (`numpy` generator seeded per call), or the
argmax at temperature 0. The KV cache of the previous call is reused up to the longest common
prefix, as llama-cpp-python does.
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from stratagem.llm.providers.local_slots import KVSlots, common_prefix

if TYPE_CHECKING:
    from llama_cpp import Llama

_TOKEN_DATA = np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)])
"""The layout of llama.cpp's `llama_token_data` (12 bytes, no padding)."""

_FIRST_WINDOW = 64
"""Candidates tested against the grammar first; later ones in chunks of `_CHUNK`."""
_CHUNK = 4096

PENALTY_LAST_N = 64
"""Tokens the repeat penalty looks back over (llama-cpp-python's default)."""


@dataclass(frozen=True)
class Sampling:
    temperature: float
    top_k: int
    top_p: float
    min_p: float
    repeat_penalty: float
    seed: int


@dataclass
class Generation:
    tokens: list[int]
    text: str
    prompt_tokens: int
    evaluated: int
    """Prompt tokens actually evaluated (the rest came from the KV cache)."""
    finish: str
    """stop (end of text, complete reply or stop string) or length (max_tokens)."""


class GrammarChecker:
    """A llama.cpp grammar, used to test candidate tokens and to follow the accepted ones."""

    def __init__(self, llm: Llama, grammar: str) -> None:
        import llama_cpp

        self._lib = llama_cpp
        self._vocab = llm._model.vocab
        self._ptr = llama_cpp.llama_sampler_init_grammar(
            self._vocab, grammar.encode("utf-8"), b"root"
        )
        if not self._ptr:
            raise ValueError("llama.cpp rejected the grammar")

    def allowed(self, ids: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        """Which of the token ids may come next (a boolean mask aligned with `ids`)."""
        data = np.zeros(len(ids), dtype=_TOKEN_DATA)
        data["id"] = ids
        lib = self._lib
        array = lib.llama_token_data_array(
            data.ctypes.data_as(ctypes.POINTER(lib.llama_token_data)), len(ids), -1, False
        )
        lib.llama_sampler_apply(self._ptr, ctypes.byref(array))
        mask: np.ndarray[Any, Any] = np.isfinite(data["logit"])
        return mask

    def accept(self, token: int) -> None:
        self._lib.llama_sampler_accept(self._ptr, token)

    def close(self) -> None:
        if self._ptr:
            self._lib.llama_sampler_free(self._ptr)
            self._ptr = None


class Decoder:
    """One reply being decoded, fed one logits vector at a time: sampling, grammar window, forced
    text, early completion and stop texts. Both the one-call loop (`generate`) and the batch of
    several calls (`local_batch`) drive it, so a reply is decoded the same way in both.

    After each `feed`, `pending` holds the tokens to evaluate before the next one (the sampled
    token and any forced text), and `finish` is set once the reply is over.
    """

    def __init__(
        self,
        llm: Llama,
        prompt: Sequence[int],
        *,
        max_tokens: int,
        sampling: Sampling,
        grammar: str | None = None,
        done: Callable[[str], bool] | None = None,
        stop: Sequence[str] = (),
    ) -> None:
        import llama_cpp

        self._llm = llm
        self._prompt = list(prompt)
        self._max_tokens = max_tokens
        self._sampling = sampling
        self._done = done
        self._stop = stop
        self._vocab = llm._model.vocab
        self._eos = llama_cpp.llama_vocab_eos(self._vocab)
        self._rng = np.random.default_rng(sampling.seed)
        self._checker = GrammarChecker(llm, grammar) if grammar is not None else None
        self._probe = _ascii_tokens(llm) if grammar is not None and grammar.isascii() else None
        self.tokens: list[int] = []
        self.pending: list[int] = []
        self.text = ""
        self.finish: str | None = None if max_tokens > 0 else "length"
        """stop (end of text, complete reply or stop string) or length (max_tokens)."""

    def feed(self, logits: np.ndarray[Any, Any]) -> None:
        """Sample the next token from `logits` (which this may change) and what follows it."""
        import llama_cpp

        llm, checker = self._llm, self._checker
        self.pending = []
        recent = (self._prompt + self.tokens)[-PENALTY_LAST_N:]
        token = _sample(logits, recent, self._sampling, checker, self._rng)
        if llama_cpp.llama_vocab_is_eog(self._vocab, token):
            self.finish = "stop"
            return
        self.tokens.append(token)
        self.pending.append(token)
        if checker is not None:
            checker.accept(token)
        self.text = llm.detokenize(self.tokens).decode("utf-8", errors="ignore")
        cut = _first_stop(self.text, self._stop)
        if cut is not None:
            self.text, self.finish = self.text[:cut], "stop"
            return
        if self._finished():
            self.finish = "stop"
            return
        if self._probe is not None and checker is not None:
            forced = _forced_text(checker, self._probe, self._eos)
            if forced:
                more = llm.tokenize(forced.encode("utf-8"), add_bos=False, special=False)
                more = more[: self._max_tokens - len(self.tokens)]
                self.tokens += more
                self.pending += more
                self.text = llm.detokenize(self.tokens).decode("utf-8", errors="ignore")
                if self._finished():
                    self.finish = "stop"
                    return
        if len(self.tokens) >= self._max_tokens:
            self.finish = "length"

    def _finished(self) -> bool:
        checker = self._checker
        return (
            self._done is not None
            and checker is not None
            and self._done(self.text)
            and bool(checker.allowed(np.array([self._eos]))[0])
        )

    def result(self, evaluated: int) -> Generation:
        return Generation(
            self.tokens, self.text, len(self._prompt), evaluated, self.finish or "length"
        )

    def close(self) -> None:
        if self._checker is not None:
            self._checker.close()


def generate(
    llm: Llama,
    prompt: Sequence[int],
    *,
    max_tokens: int,
    sampling: Sampling,
    grammar: str | None = None,
    done: Callable[[str], bool] | None = None,
    stop: Sequence[str] = (),
    slots: KVSlots | None = None,
) -> Generation:
    """Continue `prompt` (token ids) with at most `max_tokens` tokens, one call alone.

    `done(text)` says that a constrained reply is complete; it ends the reply only where the
    grammar also accepts the end of text. `stop` strings end an unconstrained reply and are cut.
    Where an ASCII grammar allows exactly one next character, the text it forces is appended
    without sampling (`_forced_text`) and evaluated in one batch with the token before it.
    With `slots`, the prompt may start from a saved KV state, and the final state is saved.
    """
    evaluated = _eval_prompt(llm, prompt, slots)
    decoder = Decoder(
        llm, prompt, max_tokens=max_tokens, sampling=sampling, grammar=grammar, done=done,
        stop=stop,
    )  # fmt: skip
    try:
        while decoder.finish is None:
            if decoder.pending:
                llm.eval(decoder.pending)
            decoder.feed(_logits(llm))
    finally:
        decoder.close()
    if slots is not None:
        slots.save(llm)
    return decoder.result(evaluated)


@dataclass(frozen=True)
class _Probe:
    ids: np.ndarray[Any, Any]
    chars: tuple[str, ...]


_PROBES: dict[int, _Probe] = {}


def _ascii_tokens(llm: Llama) -> _Probe:
    """The tokens that are one printable ASCII character (or a newline), once per model."""
    probe = _PROBES.get(id(llm))
    if probe is None:
        ids: list[int] = []
        chars: list[str] = []
        for char in [chr(c) for c in range(32, 127)] + ["\n"]:
            found = llm.tokenize(char.encode(), add_bos=False, special=False)
            if len(found) == 1 and llm.detokenize(found).decode("utf-8", "ignore") == char:
                ids.append(found[0])
                chars.append(char)
        probe = _PROBES[id(llm)] = _Probe(np.array(ids, dtype=np.int32), tuple(chars))
    return probe


def _forced_text(checker: GrammarChecker, probe: _Probe, eos: int) -> str:
    """The characters the grammar forces from here (it allows exactly one character next and
    not the end of text), accepted into the grammar as they are found.

    Only used for pure-ASCII grammars (literals, enums, JSON structure): there, a state that
    allows exactly one ASCII character is inside a literal and allows nothing else either.
    """
    forced: list[str] = []
    ids = np.append(probe.ids, np.int32(eos))
    while True:
        mask = checker.allowed(ids)
        if mask[-1] or np.count_nonzero(mask) != 1:
            return "".join(forced)
        index = int(np.flatnonzero(mask)[0])
        checker.accept(int(ids[index]))
        forced.append(probe.chars[index])


def _eval_prompt(llm: Llama, prompt: Sequence[int], slots: KVSlots | None) -> int:
    """Evaluate what the KV cache does not already hold; returns how many tokens that was.

    The last prompt token is always evaluated again, since its logits are what the first
    sample needs and the cache keeps no logits.
    """
    wanted = np.asarray(prompt, dtype=np.int32)
    held = llm.input_ids[: llm.n_tokens]
    if slots is not None:
        slots.restore_best(llm, wanted, common_prefix(held, wanted))
        held = llm.input_ids[: llm.n_tokens]
    keep = min(common_prefix(held, wanted), len(prompt) - 1)
    if keep <= 0 or not llm._ctx.kv_cache_seq_rm(-1, keep, -1):
        llm.reset()  # type: ignore[no-untyped-call]
        keep = 0
    llm.n_tokens = keep
    llm.eval(prompt[keep:])
    return len(prompt) - keep


def _logits(llm: Llama) -> np.ndarray[Any, Any]:
    import llama_cpp

    pointer = llama_cpp.llama_get_logits_ith(llm._ctx.ctx, -1)
    return np.ctypeslib.as_array(pointer, shape=(llm.n_vocab(),)).astype(np.float32, copy=True)


def _sample(
    logits: np.ndarray[Any, Any],
    recent: Sequence[int],
    sampling: Sampling,
    checker: GrammarChecker | None,
    rng: np.random.Generator,
) -> int:
    if sampling.repeat_penalty != 1.0:
        _penalise(logits, np.asarray(recent, dtype=np.int64), sampling.repeat_penalty)
    greedy = sampling.temperature <= 0
    if checker is None:
        if greedy:
            return int(np.argmax(logits))
        ids = _top(logits, sampling.top_k if sampling.top_k > 0 else len(logits))
    else:
        ids = _grammar_window(logits, sampling, checker, greedy)
        if greedy:
            return int(ids[0])
    return _draw(logits[ids], ids, sampling, rng)


def _grammar_window(
    logits: np.ndarray[Any, Any], sampling: Sampling, checker: GrammarChecker, greedy: bool
) -> np.ndarray[Any, Any]:
    """The grammar-allowed candidates that top-k and min-p can keep, best first.

    Candidates are tested in descending logit order. The search stops once `top_k` are found
    (top-k keeps no more), or once the untested logits fall below the best allowed one by
    log(1 / min_p) (min-p would drop them: it keeps p >= min_p * p_max, and the best allowed
    token is p_max), or at the first allowed one when greedy. That is the candidate set the
    grammar-first chain would reach, at the cost of testing a few dozen tokens, not 262k.
    """
    want = sampling.top_k if sampling.top_k > 0 else len(logits)
    floor_gap = -math.log(sampling.min_p) if sampling.min_p > 0 else math.inf
    found: list[np.ndarray[Any, Any]] = []
    count = 0
    best = -math.inf
    order = _top(logits, min(_FIRST_WINDOW, len(logits)))
    start, end = 0, len(order)
    while start < len(logits):
        if end > len(order):  # past the first window: sort the whole vocabulary once
            order = _top(logits, len(logits))
        chunk = order[start:end]
        if count and logits[chunk[0]] < best - floor_gap:
            break
        ok = chunk[checker.allowed(chunk)]
        if len(ok):
            if not count:
                best = float(logits[ok[0]])
            ok = ok[logits[ok] >= best - floor_gap]
            found.append(ok)
            count += len(ok)
            if greedy or count >= want:
                break
        start, end = end, end + _CHUNK
    if not count:
        raise ValueError("the grammar allows no token here")
    return np.concatenate(found)[:want]


def _top(logits: np.ndarray[Any, Any], k: int) -> np.ndarray[Any, Any]:
    """The ids of the k largest logits, best first."""
    if k >= len(logits):
        return np.argsort(-logits, kind="stable")
    part = np.argpartition(-logits, k - 1)[:k]
    return part[np.argsort(-logits[part], kind="stable")]


def _draw(
    logits: np.ndarray[Any, Any],
    ids: np.ndarray[Any, Any],
    sampling: Sampling,
    rng: np.random.Generator,
) -> int:
    """top-p, min-p, temperature and the draw, on candidates sorted best first."""
    probs = np.exp(logits - logits[0])
    probs /= probs.sum()
    if sampling.top_p < 1.0:
        keep = int(np.searchsorted(np.cumsum(probs), sampling.top_p) + 1)
        logits, ids, probs = logits[:keep], ids[:keep], probs[:keep]
    if sampling.min_p > 0:
        keep = int(np.count_nonzero(probs >= sampling.min_p * probs[0]))
        logits, ids = logits[:keep], ids[:keep]
    scaled = np.exp((logits - logits[0]) / sampling.temperature)
    return int(rng.choice(ids, p=scaled / scaled.sum()))


def _penalise(logits: np.ndarray[Any, Any], recent: np.ndarray[Any, Any], penalty: float) -> None:
    ids = np.unique(recent)
    values = logits[ids]
    logits[ids] = np.where(values > 0, values / penalty, values * penalty)


def _first_stop(text: str, stop: Sequence[str]) -> int | None:
    cuts = [i for i in (text.find(s) for s in stop) if i >= 0]
    return min(cuts) if cuts else None
