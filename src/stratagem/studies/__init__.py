"""One package per study (design.md): its metrics, tables, report sections and file formats,
registered in `studies.registry` so the report composes the sections that apply.

Importing this package registers the built-in studies (`registry.BUILTIN_MODULES`), in the order
their sections appear in a report: seed-003's counterfactual study, seed-004's MAgIC, seed-001's
thesis, then seed-002's ToM. A plugin's studies register when their plugin loads.
"""

from __future__ import annotations

from stratagem.analysis.report import build_report, render_report
from stratagem.studies import counterfactual, magic, thesis, tom
from stratagem.studies.registry import STUDIES, Study, get_exporter, get_importer, register

__all__ = [
    "STUDIES",
    "Study",
    "build_report",
    "counterfactual",
    "get_exporter",
    "get_importer",
    "magic",
    "register",
    "render_report",
    "thesis",
    "tom",
]
