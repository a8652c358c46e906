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
