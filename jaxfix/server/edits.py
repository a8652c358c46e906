"""A rewritten text as the few small text edits that turn the original into it, rather than one replacement of
the whole buffer: an editor keeps the cursor, folds and marks outside what a fix really changed."""

from __future__ import annotations

import difflib
import re

from lsprotocol import types

from jaxfix.diagnostics import TextEdit
from jaxfix.server.positions import Lines

_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def _split(text: str) -> list[str]:
    return _LINES.findall(text)


def differences(old: str, new: str) -> list[TextEdit]:
    """Non-overlapping edits of `old` (character offsets, in order) that give `new`: changed line blocks from
    difflib, each trimmed to the characters that differ."""
    old_lines, new_lines = _split(old), _split(new)
    offsets = [0]
    for line in old_lines:
        offsets.append(offsets[-1] + len(line))
    edits = []
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        before, after = "".join(old_lines[i1:i2]), "".join(new_lines[j1:j2])
        prefix = 0
        limit = min(len(before), len(after))
        while prefix < limit and before[prefix] == after[prefix]:
            prefix += 1
        suffix = 0
        while suffix < limit - prefix and before[len(before) - 1 - suffix] == after[len(after) - 1 - suffix]:
            suffix += 1
        edits.append(TextEdit(offsets[i1] + prefix, offsets[i2] - suffix, after[prefix : len(after) - suffix]))
    return edits


def lsp_edits(old: str, new: str, encoding: str) -> list[types.TextEdit]:
    """`differences` as LSP text edits, their ranges in `old`."""
    lines = Lines(old, encoding)
    return [
        types.TextEdit(range=types.Range(start=lines.at_offset(e.start), end=lines.at_offset(e.end)), new_text=e.replacement)
        for e in differences(old, new)
    ]

