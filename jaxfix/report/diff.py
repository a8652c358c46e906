"""Unified diffs of original against rewritten files, coloured when the output is a terminal."""

from __future__ import annotations

import difflib

_COLOURS = {"+": "\033[32m", "-": "\033[31m", "@": "\033[36m"}
_RESET = "\033[0m"


def unified_diff(path: str, original: str, fixed: str, *, colour: bool = False) -> str:
    lines = difflib.unified_diff(
        original.splitlines(keepends=True), fixed.splitlines(keepends=True), fromfile=f"a/{path}", tofile=f"b/{path}"
    )
    out = []
    for line in lines:
        if not line.endswith("\n"):
            line += "\n\\ No newline at end of file\n"
        if colour and line[:1] in _COLOURS and not line.startswith(("+++", "---")):
            line = f"{_COLOURS[line[0]]}{line.rstrip(chr(10))}{_RESET}\n"
        out.append(line)
    return "".join(out)
