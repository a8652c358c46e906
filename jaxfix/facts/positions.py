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

    def text_line(self, line: int) -> str:
        """The text of line `line` (1-based), without its line ending."""
        data, starts = self._encoded()
        end = starts[line] if line < len(starts) else len(data)
        return data[starts[line - 1]:end].decode("utf-8", "surrogatepass").rstrip("\r\n")

    def segment(self, node: ast.AST) -> str:
        """The source text of `node` (what LibCST's `code_for` gives of a node without parentheses of its own)."""
        found = self.source_bytes((node.lineno, node.col_offset), (node.end_lineno, node.end_col_offset))
        return found.decode("utf-8", "surrogatepass")

    def parenthesized(self, node: ast.AST, before: tuple[int, int]) -> str:
        """The source of `node` with the parentheses of its own (`( [1, 2] )`), as LibCST's `code_for` gives it:
        `ast` spans a node without them. `before`: where what precedes the node ends, (line, byte offset) (the
        callee of a call's first argument, the argument before it); the parentheses of its own are those opened
        after the last `,`, `=` or `)` there, less the call's own where that is a callee."""
        start, end = (node.lineno, node.col_offset), (node.end_lineno, node.end_col_offset)
        between = _COMMENT.sub(b"", self.source_bytes(before, start))
        cut = max(between.rfind(b","), between.rfind(b"="), between.rfind(b")"))
        opened = between[cut + 1 :].count(b"(") - (0 if cut >= 0 and between[cut : cut + 1] in (b",", b"=") else 1)
        return self._widened(node, opened)

    def callee(self, call: ast.Call) -> str:
        """The source of `call.func` as LibCST's `code_for` gives it, with the parentheses of its own (`(f)(x)`:
        `ast` starts the call at the first of them)."""
        func = call.func
        before = _COMMENT.sub(b"", self.source_bytes((call.lineno, call.col_offset), (func.lineno, func.col_offset)))
        return self._widened(func, before.count(b"("))

    def _widened(self, node: ast.AST, opened: int) -> str:
        """The source of `node` with `opened` parentheses of its own around it."""
        start, end = (node.lineno, node.col_offset), (node.end_lineno, node.end_col_offset)
        text = self.source_bytes(start, end)
        if opened <= 0:
            return text.decode("utf-8", "surrogatepass")
        data, starts = self._encoded()
        first = starts[start[0] - 1] + start[1]
        last = starts[end[0] - 1] + end[1]
        for _ in range(opened):
            first = data.rindex(b"(", 0, first)
            last = _after_comments(data, last)
            if data[last : last + 1] != b")":
                return text.decode("utf-8", "surrogatepass")
            last += 1
        return data[first:last].decode("utf-8", "surrogatepass")


    def name_of(self, definition: ast.AST) -> ast.AST:
        """A node placed where a def's or class's name is spelled (LibCST's `FunctionDef.name`), for a finding or
        a decline there; the definition itself where the name cannot be found."""
        data, starts = self._encoded()
        start = starts[definition.lineno - 1] + definition.col_offset
        found = _DEF_NAME.match(data, start)
        if found is None or b"\r" in data[start : found.end()] or not data.startswith(definition.name.encode("utf-8"), found.end()):
            return definition
        line = definition.lineno + data.count(b"\n", start, found.end())
        column = found.end() - starts[line - 1]
        end = column + len(definition.name.encode("utf-8"))
        return ast.Name(definition.name, ast.Load(), lineno=line, col_offset=column, end_lineno=line, end_col_offset=end)

    def with_parentheses(self, node: ast.AST, parent: ast.AST | None) -> str:
        """The source of `node` with the parentheses of its own around it (`(f)` of `(f)(x)`, `(x)` of `g((x))`), as
        LibCST's `code_for` gives it; `parent`: the node holding it, whose own parentheses (a call's, around its
        one argument) are not the node's."""
        data, starts = self._encoded()
        first = starts[node.lineno - 1] + node.col_offset
        last = starts[node.end_lineno - 1] + node.end_col_offset
        pairs, before, after = 0, first, last
        while True:
            opening = len(data[:before].rstrip(b" \t\f\r\n\\"))
            closing = _after_comments(data, after)
            if not (opening and data[opening - 1 : opening] == b"(" and data[closing : closing + 1] == b")"):
                break
            pairs, before, after = pairs + 1, opening - 1, closing + 1
        if pairs and type(parent) is ast.Call and parent.func is not node and len(parent.args) + len(parent.keywords) == 1:
            pairs -= 1  # the call's own parentheses
        if not pairs:
            return self.segment(node)
        for _ in range(pairs):
            first = len(data[:first].rstrip(b" \t\f\r\n\\")) - 1
            last = _after_comments(data, last) + 1
        return data[first:last].decode("utf-8", "surrogatepass")

_COMMENT = re.compile(rb"#[^\r\n]*")
_DEF_NAME = re.compile(rb"(?:async(?:[ \t\f]|\\\r?\n)+)?(?:def|class)(?:[ \t\f]|\\\r?\n)+")
_SKIPPED = re.compile(rb"(?:[ \t\f]|\\\r?\n|\r\n|\r|\n|#[^\r\n]*)*")  # whitespace, continuations, comments


def _after_comments(data: bytes, offset: int) -> int:
    return _SKIPPED.match(data, offset).end()
