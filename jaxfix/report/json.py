"""`--output-format json`: a list of findings, one object each, in Ruff's JSON shape where it fits.

    {"code": "JF601", "name": "print-in-traced", "message": "...", "filename": "/abs/path.py",
     "location": {"row": 6, "column": 5}, "end_location": {"row": 6, "column": 13}, "noqa_row": 6,
     "fixable": true, "unsafe": false, "url": "...",
     "fix": {"applicability": "safe", "message": "...", "edits": [{"content": "...", "location": {...},
             "end_location": {...}}]}}

In a notebook, rows count within the cell that `cell` names (1-based, every cell counted, Ruff's key) and
`cell_id` is that cell's id where the notebook has ids; neither key appears for other files. Each edit names
its cell too (a fix may add an import to another cell); a fix whose edit would span cells has no edits.

`fix` is null without a fix; `applicability` is "safe", "unsafe" or "display-only"; `fixable` says an
`apply` could make the fix (safe, or unsafe with --unsafe-fixes); `edits` (rows and columns 1-based, end
exclusive) are given by `check` and empty in what `apply` leaves behind.
"""

from __future__ import annotations

import json
from typing import Sequence

from jaxfix.diagnostics import Diagnostic, Safety
from jaxfix.engine import FileResult
from jaxfix.report.locations import LineIndex, absolute_path, rule_url


def finding(path: str, diagnostic: Diagnostic, lines: LineIndex | None, cell_id: str | None = None, cells=None) -> dict:
    fix = diagnostic.fix
    found = {
        "code": diagnostic.code,
        "name": diagnostic.name,
        "message": diagnostic.message,
        "filename": absolute_path(path),
        "location": _point(diagnostic.start.line, diagnostic.start.column),
        "end_location": _point(diagnostic.end.line, diagnostic.end.column),
        "noqa_row": diagnostic.start.line,
        "fixable": diagnostic.fixable,
        "unsafe": fix is not None and fix.safety is Safety.UNSAFE,
        "url": rule_url(diagnostic.code),
        "fix": None
        if fix is None
        else {
            "applicability": fix.safety.value,
            "message": fix.description,
            "edits": [_edit(edit, lines, cells) for edit in diagnostic.edits] if lines is not None else [],
        },
    }
    if diagnostic.cell is not None:
        found["cell"] = diagnostic.cell
        if cell_id is not None:
            found["cell_id"] = cell_id
    return found


def _point(row: int, column: int) -> dict:
    return {"row": row, "column": column}


def _edit(edit, lines: LineIndex, cells=None) -> dict:
    """An edit in rows and columns of the checked text; in a notebook, of the cell `cell` names (its offsets are
    into the notebook's module, which `cells` maps)."""
    start, end = lines.position(edit.start), lines.position(edit.end)
    if cells is None:
        return {"content": edit.replacement, "location": _point(*start), "end_location": _point(*end)}
    (cell, row), (_, end_row) = cells.locate(start[0]), cells.locate(end[0])
    return {"content": edit.replacement, "location": _point(row, start[1]), "end_location": _point(end_row, end[1]), "cell": cell}


def render(results: Sequence[FileResult], findings: dict[str, list[Diagnostic]] | None = None) -> str:
    """The JSON document for `results` (`findings`: the diagnostics to show per path, default all)."""
    out = []
    for result in results:
        shown = result.diagnostics if findings is None else findings.get(result.path, [])
        lines = LineIndex(result.original) if result.original is not None and any(d.edits for d in shown) else None
        cells = getattr(result, "cells", None)
        out.extend(finding(result.path, d, lines, cells.cell_id(d.cell) if cells and d.cell else None, cells) for d in shown)
    return json.dumps(out, indent=2, ensure_ascii=False)
