"""llama-cpp-python's OpenAI-compatible server (`python -m llama_cpp.server`) serving the embedded
Gemma GGUF on a free port of 127.0.0.1, for the tests that need a real model server."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from stratagem.llm.providers.local import embedded_model_path

ALIAS = "gemma-3-270m"
"""The name its `/v1/models` gives the model (an endpoint pool's health check looks for it)."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def llama_server(log_path: Path) -> Iterator[str]:
    """Its base URL once it answers; always stopped, even when a test fails."""
    port = free_port()
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [
                sys.executable, "-m", "llama_cpp.server",
                "--model", str(embedded_model_path()), "--model_alias", ALIAS,
                "--host", "127.0.0.1", "--port", str(port),
                "--n_ctx", "2048", "--n_threads", "2",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            base_url = f"http://127.0.0.1:{port}/v1"
            wait_ready(process, base_url + "/models", log_path)
            yield base_url
        finally:
            stop(process)


def stop(process: subprocess.Popen[bytes]) -> None:
    """Terminate a server, killing it if it does not exit within 10 s."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def wait_ready(process: subprocess.Popen[bytes], url: str, log_path: Path) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"llama_cpp.server exited early:\n{log_path.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(url, timeout=1) as reply:
                if reply.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    pytest.fail(f"llama_cpp.server not ready after 90 s:\n{log_path.read_text()[-2000:]}")
