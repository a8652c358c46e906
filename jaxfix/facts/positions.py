"""Where a node of the `ast` lies, as findings give it: LibCST's positions (1-based columns in characters), from
`ast`'s (0-based columns in UTF-8 bytes). The one position helper: the facts, the rules' `check` and the screens'
answers read it, so a finding found on `ast` sits exactly where the LibCST run put it."""

from __future__ import annotations

import ast
import re

from jaxfix.diagnostics import Position

_LINE_END = re.compile(rb"\r\n|\r|\n")  # where Python's tokenizer and LibCST end a line


class Positions:
    """A module's text in UTF-8 (what `ast` offsets count) and the offset where each line starts, made on first
    use: lines end at "\\r\\n", "\\r" or "\\n", as Python's tokenizer and LibCST both count them."""

    __slots__ = ("text", "_data", "_starts")

    def __init__(self, text: str) -> None:
        self.text = text
        self._data: bytes | None = None
        self._starts: list[int] = []

    def _encoded(self) -> tuple[bytes, list[int]]:
        if self._data is None:
            self._data = self.text.encode("utf-8", "surrogatepass")
            self._starts = [0, *(match.end() for match in _LINE_END.finditer(self._data))]
        return self._data, self._starts

    def point(self, line: int, column: int) -> tuple[int, int]:
        """(line, column) as LibCST's PositionProvider gives it, 1-based, for `ast`'s (line, byte offset)."""
        data, starts = self._encoded()
        start = starts[line - 1]
        return line, len(data[start : start + column].decode("utf-8", "surrogatepass")) + 1

    def span(self, node: ast.AST) -> tuple[tuple[int, int], tuple[int, int]]:
        """(line, column) of the start and the end of `node` as `Codemod.report` gives them from LibCST."""
        return self.point(node.lineno, node.col_offset), self.point(node.end_lineno, node.end_col_offset)

    def positions(self, node: ast.AST) -> tuple[Position, Position]:
        """`span` as the Positions a Diagnostic holds."""
        start, end = self.span(node)
        return Position(*start), Position(*end)

    def source_bytes(self, start: tuple[int, int], end: tuple[int, int]) -> bytes:
        """The module's UTF-8 text between two `ast` positions, (line, byte offset) each."""
        data, starts = self._encoded()
        return data[starts[start[0] - 1] + start[1] : starts[end[0] - 1] + end[1]]

    def segment(self, node: ast.AST) -> str:
        """The source text of `node` (what LibCST's `code_for` gives of a node without parentheses of its own)."""
        found = self.source_bytes((node.lineno, node.col_offset), (node.end_lineno, node.end_col_offset))
        return found.decode("utf-8", "surrogatepass")
