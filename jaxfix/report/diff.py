"""Unified diffs of original against rewritten files, coloured when the output is a terminal."""

from __future__ import annotations

import difflib

_COLOURS = {"+": "\033[32m", "-": "\033[31m", "@": "\033[36m"}
_RESET = "\033[0m"


def unified_diff(path: str, original: str, fixed: str, *, colour: bool = False) -> str:
    """git's `a/` and `b/` prefixes on a relative path (so that `git apply` takes the diff); an absolute path as
    it is."""
    old, new = (path, path) if path.startswith("/") else (f"a/{path}", f"b/{path}")
    lines = difflib.unified_diff(original.splitlines(keepends=True), fixed.splitlines(keepends=True), fromfile=old, tofile=new)
    out = []
    for line in lines:
        if not line.endswith("\n"):
            line += "\n\\ No newline at end of file\n"
        if colour and line[:1] in _COLOURS and not line.startswith(("+++", "---")):
            line = f"{_COLOURS[line[0]]}{line.rstrip(chr(10))}{_RESET}\n"
        out.append(line)
    return "".join(out)


def result_diff(result, *, colour: bool = False) -> str:
    """The diff of a FileResult: of the file, or for a notebook one diff per changed cell."""
    if result.cells is None:
        return unified_diff(result.path, result.original, result.fixed, colour=colour)
    return cell_diffs(result.path, result.cell_changes, colour=colour)


def cell_diffs(path: str, changes, *, colour: bool = False) -> str:
    """One diff per changed cell of a notebook, headed `a/nb.ipynb:cell 7`, of the cell's source as the
    notebook's editor shows it. `changes`: (cell, old source, new source)."""
    def lines(text: str) -> str:
        return text if text.endswith("\n") or not text else text + "\n"

    return "".join(unified_diff(f"{path}:cell {number}", lines(old), lines(new), colour=colour) for number, old, new in changes)


def text_diff(path: str, original: str, fixed: str, *, colour: bool = False) -> str:
    """The diff of a rewrite of `path` held as text: for a notebook, `original` and `fixed` are its module
    (jaxfix/notebook.py) and the diff is per cell."""
    from jaxfix import notebook

    if not notebook.is_notebook(path):
        return unified_diff(path, original, fixed, colour=colour)
    try:
        with open(path, "rb") as handle:
            changes = notebook.rewritten(handle.read(), fixed)[1]
    except (OSError, notebook.NotebookError) as error:
        return f"{path}: cannot show the diff: {error}\n"
    return cell_diffs(path, changes, colour=colour)
