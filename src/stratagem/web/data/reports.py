"""An experiment's HTML report, where `stratagem report` wrote it next to the store: the viewer
links each cell table to the report's study sections (issue 25 item 2).

Only the section list is read here (ids and titles, from the report's own `<section id>` and
`<h2>`); the file is served as it is written, or copied into an export, under a policy that lets
it run nothing (the report has no script: its styles are inline, its plots data: images).
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

from stratagem.analysis.report import report_file_name

REPORT_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox"
"""The report's own policy: its inline styles and data: plots, no script, no request."""
MAX_REPORT_BYTES = 256 * 1024 * 1024
"""A report larger than this is not offered (a bound on what one request reads)."""
_SECTION = re.compile(r'<section id="([^"<>]{1,200})">\s*<h2>([^<]{0,500})</h2>')


def report_path(store_file: Path, experiment_id: str) -> Path | None:
    """The experiment's report next to `store_file`, if one was written there (and is bounded)."""
    path = store_file.parent / report_file_name(experiment_id)
    try:
        return path if path.is_file() and path.stat().st_size <= MAX_REPORT_BYTES else None
    except OSError:
        return None


def report_sections(path: Path) -> list[dict[str, Any]]:
    """The report's study sections in order: [{"id": ..., "title": ...}]."""
    text = path.read_text(encoding="utf-8", errors="replace")
    return [{"id": html.unescape(i), "title": html.unescape(t).strip()}
            for i, t in _SECTION.findall(text)]  # fmt: skip


def report_url(source: str, experiment_id: str) -> str:
    """Where the pages find it, live and in an export alike: a path relative to the site, the
    source's name and the id as hex (one segment each, whatever they hold)."""
    return f"report/{source.encode().hex()}/{experiment_id.encode().hex()}.html"
