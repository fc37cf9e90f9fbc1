"""Run the `stratagem` command in-process as a user would, for the tests of its output."""

from __future__ import annotations

import pytest

from stratagem.cli import main


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of `stratagem ARGV...`."""
    try:
        main(list(argv))
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err
