"""Where things are, in the client's units: LSP positions count lines from 0 and columns in UTF-16 code units
by default (UTF-8 or UTF-32 when the client and server agree on it), while the engine counts lines from 1 and
columns in characters from 1, and text edits are computed on character offsets."""

from __future__ import annotations

import bisect
import re

from lsprotocol import types

from jaxfix.diagnostics import Position

_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # the LSP's line breaks (str.splitlines knows more of them)


def _units(text: str, encoding: str) -> int:
    if encoding == types.PositionEncodingKind.Utf8:
        return len(text.encode("utf-8"))
    if encoding == types.PositionEncodingKind.Utf32:
        return len(text)
    return len(text.encode("utf-16-le")) // 2


class Lines:
    """One text's lines, to convert offsets and engine positions into LSP positions."""

    def __init__(self, text: str, encoding: str = types.PositionEncodingKind.Utf16) -> None:
        self.text = text
        self.encoding = encoding
        self.starts = [0] + [match.end() for match in _LINE_BREAK.finditer(text)]

    def line(self, index: int) -> str:
        """Line `index` (from 0) without its line break."""
        end = self.starts[index + 1] if index + 1 < len(self.starts) else len(self.text)
        return _LINE_BREAK.sub("", self.text[self.starts[index] : end])

    def at_offset(self, offset: int) -> types.Position:
        offset = max(0, min(offset, len(self.text)))
        index = bisect.bisect_right(self.starts, offset) - 1
        return types.Position(line=index, character=_units(self.text[self.starts[index] : offset], self.encoding))

    def at(self, position: Position) -> types.Position:
        """The engine's 1-based line and character column, clamped to the text."""
        index = max(0, min(position.line - 1, len(self.starts) - 1))
        text = self.line(index)
        return types.Position(line=index, character=_units(text[: max(0, position.column - 1)], self.encoding))

    def range(self, start: Position, end: Position) -> types.Range:
        return types.Range(start=self.at(start), end=self.at(end))
