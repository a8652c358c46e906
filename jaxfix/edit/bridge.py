"""From an `ast` node to the LibCST node of the same code, and back, by source position.

`ast` is the analysis tree and LibCST the editing tree (DESIGN.md): a rule finds a place on `ast` and builds its
fix on LibCST, so it needs the CST node that spells the `ast` node it found. Both trees place a node by where its
code starts and ends; they differ in three ways, which the bridge absorbs:
- `ast` counts columns in UTF-8 bytes, LibCST in characters (`"é"` is two bytes, one character);
- a parenthesised tuple and a generator expression span their parentheses in `ast` (`(1, 2)`, the call's own
  parentheses of `f(x for x in y)`), not in LibCST, which holds them as `lpar`/`rpar` or as the call's;
- a LibCST `Param` spans its name (and star) only, while its annotation and default lie outside that span, and
  a decorated def or class starts at `def`/`class` with its decorators before it (`ast` starts it there too).
Several nodes may share a span (a statement `f(x)` and its call): the node types that spell the same construct
(`_SPELLINGS`) decide which one answers.
"""

from __future__ import annotations

import ast
import bisect
import re
from typing import Callable, Iterator, Mapping, Sequence

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from jaxfix.analysis.metadata import children, paired_blocks, parent_map

Point = tuple[int, int]  # (line from 1, column in characters from 0), as LibCST's PositionProvider gives it

# The LibCST node types that may spell each `ast` node type.
_SPELLINGS: dict[type, tuple[type, ...]] = {
    ast.Module: (cst.Module,),
    ast.FunctionDef: (cst.FunctionDef,),
    ast.AsyncFunctionDef: (cst.FunctionDef,),
    ast.ClassDef: (cst.ClassDef,),
    ast.Return: (cst.Return,),
    ast.Delete: (cst.Del,),
    ast.Assign: (cst.Assign,),
    ast.AugAssign: (cst.AugAssign,),
    ast.AnnAssign: (cst.AnnAssign,),
    ast.For: (cst.For,),
    ast.AsyncFor: (cst.For,),
    ast.While: (cst.While,),
    ast.If: (cst.If,),  # an `elif` too: both trees nest it in the `if`'s else branch
    ast.With: (cst.With,),
    ast.AsyncWith: (cst.With,),
    ast.Raise: (cst.Raise,),
    ast.Try: (cst.Try,),
    ast.Assert: (cst.Assert,),
    ast.Import: (cst.Import,),
    ast.ImportFrom: (cst.ImportFrom,),
    ast.Global: (cst.Global,),
    ast.Nonlocal: (cst.Nonlocal,),
    ast.Expr: (cst.Expr,),
    ast.Pass: (cst.Pass,),
    ast.Break: (cst.Break,),
    ast.Continue: (cst.Continue,),
    ast.BoolOp: (cst.BooleanOperation,),  # `a and b and c`: the outermost of LibCST's nested pairs
    ast.NamedExpr: (cst.NamedExpr,),
    ast.BinOp: (cst.BinaryOperation,),
    ast.UnaryOp: (cst.UnaryOperation,),
    ast.Lambda: (cst.Lambda,),
    ast.IfExp: (cst.IfExp,),
    ast.Dict: (cst.Dict,),
    ast.Set: (cst.Set,),
    ast.ListComp: (cst.ListComp,),
    ast.SetComp: (cst.SetComp,),
    ast.DictComp: (cst.DictComp,),
    ast.GeneratorExp: (cst.GeneratorExp,),
    ast.Await: (cst.Await,),
    ast.Yield: (cst.Yield,),
    ast.YieldFrom: (cst.Yield,),
    ast.Compare: (cst.Comparison,),
    ast.Call: (cst.Call,),
    ast.FormattedValue: (cst.FormattedStringExpression,),
    ast.JoinedStr: (cst.FormattedString, cst.ConcatenatedString),
    ast.Constant: (
        cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString, cst.Name, cst.Ellipsis,
    ),  # `True`, `False` and `None` are names in LibCST
    ast.Attribute: (cst.Attribute,),
    ast.Subscript: (cst.Subscript,),
    ast.Starred: (cst.StarredElement, cst.Arg),  # `[*xs]`; `f(*xs)`
    ast.Name: (cst.Name,),
    ast.List: (cst.List,),
    ast.Tuple: (cst.Tuple,),
    ast.Slice: (cst.Slice,),
    ast.keyword: (cst.Arg,),
    ast.alias: (cst.ImportAlias, cst.ImportStar),
    ast.ExceptHandler: (cst.ExceptHandler, cst.ExceptStarHandler),
    **{getattr(ast, name): (getattr(cst, name),) for name in ("Match", "TryStar") if hasattr(ast, name)},
}

# The children that may lie outside their node's span, by node type: a def's decorators (before `def`), a
# parameter's annotation and default (after its name), a block's first statement (whose decorators precede it).
_OUTLYING: dict[type, Callable[[cst.CSTNode], Sequence[cst.CSTNode]]] = {
    cst.FunctionDef: lambda node: node.decorators,
    cst.ClassDef: lambda node: node.decorators,
    cst.Param: children,
    cst.IndentedBlock: lambda node: node.body[:1],
}
_WHOLE_STRING_PARTS = (ast.JoinedStr, ast.Constant, ast.FormattedValue)
_COMPOUND = (
    ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.AsyncFor, ast.While, ast.With,
    ast.AsyncWith, ast.Try, *(getattr(ast, name) for name in ("TryStar", "Match") if hasattr(ast, name)),
)  # fmt: skip

_LINE_END = re.compile(r"\r\n|\r|\n")  # where Python's tokenizer and LibCST end a line
_SKIPPED = re.compile(r"(?:[ \t\f]|\\\r?\n|\r\n|\r|\n|#[^\r\n]*)*")  # whitespace, continuations, comments


class Bridge:
    """The `ast` and LibCST trees of one text, mapped to each other by position. `positions`: a node's CodeRange
    (ModuleContext.positions, which computes them a statement at a time); LibCST's PositionProvider by default."""

    def __init__(
        self, module: cst.Module, tree: ast.Module, positions: Mapping[cst.CSTNode, CodeRange] | None = None,
        text: str | None = None,
    ) -> None:
        """`text`: the module's code, where the caller has it (`module.code` generates it again)."""
        self.module, self.tree = module, tree
        if positions is None:
            positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        self._positions = positions
        text = module.code if text is None else text
        self._tops: list[int] | None = None  # the first line of each top-level statement, or [] where unknown
        self._starts = [0, *(match.end() for match in _LINE_END.finditer(text))]  # offset of each line
        self._text = text
        self._lines_bytes: dict[int, bytes] = {}
        self._extents: dict[cst.CSTNode, tuple[Point, Point]] = {}
        self._child_extents: dict[cst.CSTNode, tuple[list, list, list]] = {}
        self._by_start: dict[Point, list[ast.AST]] | None = None
        self._parenthesised: dict[cst.CSTNode, ast.AST] | None = None
        self._parents: dict[cst.CSTNode, cst.CSTNode] | None = None

    # ---- ast -> LibCST -------------------------------------------------------------------------------------------

    def required_cst(self, node: ast.AST) -> cst.CSTNode:
        """`cst_of`, for a fix that cannot be built without the node: a missing one raises (the engine reports
        the rule's internal error and keeps the finding without a fix)."""
        found = self.cst_of(node)
        if found is None:
            raise ValueError(f"no LibCST node for the {type(node).__name__} at line {node.lineno}")
        return found

    def required_line(self, statement: ast.stmt) -> cst.SimpleStatementLine:
        """`line_of`, raising where the statement has no LibCST line (as `required_cst`)."""
        line = self.line_of(statement)
        if line is None:
            raise ValueError(f"no LibCST line for the statement at line {statement.lineno}")
        return line

    def cst_of(self, node: ast.AST) -> cst.CSTNode | None:
        """The LibCST node that spells `node`, or None (a node LibCST has no node for, such as an f-string's
        literal part before Python 3.12, or a type the bridge does not know)."""
        if isinstance(node, ast.Module):
            return self.module
        if isinstance(node, ast.arg):  # LibCST's Param spans its name, `ast`'s arg its annotation too
            start = self.point(node.lineno, node.col_offset)
            end = (start[0], start[1] + len(node.arg))
            found = self._find(start, lambda n, at: isinstance(n, cst.Name) and at == end, within=cst.Param)
            return found if isinstance(found, cst.Param) else None
        spellings = _SPELLINGS.get(type(node))
        if spellings is None or getattr(node, "end_lineno", None) is None:
            return None
        start = self.point(node.lineno, node.col_offset)
        end = self.point(node.end_lineno, node.end_col_offset)
        close = self._skip(self._offset(end), comma=False)  # LibCST's slice `1:  # c` spans what follows `:`
        found = self._find(
            start, lambda n, at: isinstance(n, spellings) and self._skip(self._offset(at), comma=False) == close
        )
        if found is None and self._char(start) == "(" and self._char((end[0], end[1] - 1)) == ")":
            # `ast` spans the parentheses (a tuple's, a generator's): LibCST's node starts after the `(` and
            # whitespace, and ends where only whitespace, comments and a comma remain before the `)`
            close = self._offset(end) - 1
            found = self._find(
                self._point_at(self._skip(self._offset(start) + 1)),
                lambda n, at: isinstance(n, spellings) and self._skip(self._offset(at)) == close,
            )
        if found is not None and isinstance(node, _WHOLE_STRING_PARTS) and self.ast_of(found) is not node:
            return None  # before Python 3.12, an f-string's parts span the whole string in `ast`
        return found

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """`node`'s parent in the module (the statement line of a simple statement), from one map of the module
        made on first use."""
        if self._parents is None:
            self._parents = parent_map(self.module)
        return self._parents.get(node)

    def line_at(self, node: cst.CSTNode) -> int | None:
        """The line where `node` starts, where its position is known."""
        where = self._positions.get(node)
        return None if where is None else where.start.line

    def line_of(self, statement: ast.stmt) -> cst.SimpleStatementLine | None:
        """The LibCST line (a `SimpleStatementLine`: simple statements joined by `;`) that the simple statement
        `statement` starts, or None (it is not the first of its line, or stands in a one-line suite)."""
        start = self.point(statement.lineno, statement.col_offset)
        found = self._find(start, lambda n, at: isinstance(n, cst.SimpleStatementLine))
        return found if isinstance(found, cst.SimpleStatementLine) else None

    def _find(
        self, start: Point, accept: Callable[[cst.CSTNode, Point], bool], within: type | None = None
    ) -> cst.CSTNode | None:
        """The outermost node that starts at `start` and that `accept(node, its end)` takes, found by walking down
        the nodes whose extent holds `start`; with `within`, the node of that type whose `name` it is instead."""
        parent: cst.CSTNode = self.module
        top = self._top_statement(start)
        if top is not None:  # the module's level, found without the positions of every top-level statement
            where = self._positions.get(top)
            if where is not None and (where.start.line, where.start.column) == start:
                if accept(top, (where.end.line, where.end.column)):
                    return top if within is None else None
            parent = top
        while True:
            lows, highs, nodes = self._children(parent)
            position = bisect.bisect_right(lows, start) - 1
            while position >= 0 and not start < highs[position]:
                if highs[position] == lows[position] == start and within is None and accept(nodes[position], start):
                    return nodes[position]  # `()`: LibCST's empty tuple spans nothing, between its parentheses
                position -= 1
            if position < 0:
                return None
            child = nodes[position]
            where = self._positions.get(child)
            if where is not None and (where.start.line, where.start.column) == start:
                if accept(child, (where.end.line, where.end.column)):
                    if within is None:
                        return child
                    return parent if isinstance(parent, within) and getattr(parent, "name", None) is child else None
            parent = child

    def _top_statement(self, start: Point) -> cst.CSTNode | None:
        """The top-level LibCST statement that holds `start`, read off the `ast`: LibCST holds the module's
        statements in the same order, those joined by `;` in one line, each starting in column 0 (its
        decorators first), so only that statement's positions are computed (the positions of every top-level
        statement cost as much as generating the module's code). None where the two do not pair up."""
        if self._tops is None:
            self._tops = []
            groups: list[int] = []
            previous: ast.stmt | None = None
            for statement in self.tree.body:
                joined = previous is not None and not isinstance(previous, _COMPOUND) and not isinstance(
                    statement, _COMPOUND) and previous.end_lineno == statement.lineno  # fmt: skip
                if not joined:
                    decorators = getattr(statement, "decorator_list", ())
                    groups.append(min([statement.lineno, *(d.lineno for d in decorators)]))
                previous = statement
            if len(groups) == len(self.module.body):
                self._tops = groups
        if not self._tops or start[0] < self._tops[0]:
            return None
        return self.module.body[bisect.bisect_right(self._tops, start[0]) - 1]

    def _children(self, parent: cst.CSTNode) -> tuple[list[Point], list[Point], list[cst.CSTNode]]:
        """The extents of `parent`'s children (their starts, their ends) and the children, by where they start
        (the fields' order is not the text's: `del x` visits `x` before the space after `del`)."""
        found = self._child_extents.get(parent)
        if found is None:
            spans = sorted(((*self._extent(child), index) for index, child in enumerate(children(parent))))
            nodes = children(parent)
            found = self._child_extents[parent] = (
                [low for low, _, _ in spans], [high for _, high, _ in spans], [nodes[index] for _, _, index in spans]
            )
        return found

    def _extent(self, node: cst.CSTNode) -> tuple[Point, Point]:
        """Where `node`'s code starts and ends, the children that lie outside its span included."""
        found = self._extents.get(node)
        if found is None:
            where = self._positions.get(node)
            if where is None:
                found = ((0, 0), (0, 0))
            else:
                found = ((where.start.line, where.start.column), (where.end.line, where.end.column))
            outlying = _OUTLYING.get(type(node))
            if outlying is not None:
                spans = [found, *(self._extent(child) for child in outlying(node))]
                spans = [span for span in spans if span[0] < span[1]]
                if spans:
                    found = (min(low for low, _ in spans), max(high for _, high in spans))
            self._extents[node] = found
        return found

    # ---- LibCST -> ast -------------------------------------------------------------------------------------------

    def ast_of(self, node: cst.CSTNode) -> ast.AST | None:
        """The `ast` node that `node` spells, or None (LibCST's inner pair of `a and b and c`, its whitespace and
        punctuation, a node of another module)."""
        if isinstance(node, cst.Module):
            return self.tree
        where = self._positions.get(node.name if isinstance(node, cst.Param) else node)
        if where is None:
            return None
        start, end = (where.start.line, where.start.column), (where.end.line, where.end.column)
        if isinstance(node, cst.Param):  # found by where its name starts (`*args`: after the star)
            return next((n for n in self._starting().get(start, ()) if isinstance(n, ast.arg)), None)
        close = self._skip(self._offset(end), comma=False)
        for candidate in self._starting().get(start, ()):
            if isinstance(node, _SPELLINGS.get(type(candidate), ())) and close == self._skip(
                self._offset(self.point(candidate.end_lineno, candidate.end_col_offset)), comma=False
            ):
                return candidate
        if isinstance(node, (cst.Tuple, cst.GeneratorExp)):
            if self._parenthesised is None:
                self._parenthesised = {}
                for candidate in ast.walk(self.tree):
                    if isinstance(candidate, (ast.Tuple, ast.GeneratorExp)):
                        spelled = self.cst_of(candidate)
                        if spelled is not None:
                            self._parenthesised.setdefault(spelled, candidate)
            return self._parenthesised.get(node)
        return None

    def _starting(self) -> dict[Point, list[ast.AST]]:
        """The `ast` nodes by where they start (an arg: its name), each list in `ast.walk`'s order, outer first."""
        if self._by_start is None:
            self._by_start = {}
            for node in ast.walk(self.tree):
                if getattr(node, "end_lineno", None) is not None:
                    self._by_start.setdefault(self.point(node.lineno, node.col_offset), []).append(node)
        return self._by_start

    # ---- positions -----------------------------------------------------------------------------------------------

    def point(self, line: int, column: int) -> Point:
        """LibCST's (line, character column) of an `ast` (line, UTF-8 byte column)."""
        if line > len(self._starts):
            return (line, column)
        start = self._starts[line - 1]
        stop = self._starts[line] if line < len(self._starts) else len(self._text)
        text = self._text[start:stop]
        if text.isascii():
            return (line, column)
        data = self._lines_bytes.get(line)
        if data is None:
            data = self._lines_bytes[line] = text.encode("utf-8", "surrogatepass")
        return (line, len(data[:column].decode("utf-8", "surrogatepass")))

    def _offset(self, point: Point) -> int:
        line, column = point
        return self._starts[line - 1] + column if line <= len(self._starts) else len(self._text)

    def _point_at(self, offset: int) -> Point:
        line = bisect.bisect_right(self._starts, offset)
        return (line, offset - self._starts[line - 1])

    def _char(self, point: Point) -> str:
        offset = self._offset(point)
        return self._text[offset] if 0 <= offset < len(self._text) else ""

    def _skip(self, offset: int, comma: bool = True) -> int:
        """The offset after the whitespace, line continuations and comments from `offset` (and one comma)."""
        offset = _SKIPPED.match(self._text, offset).end()
        if comma and self._text.startswith(",", offset):
            offset = _SKIPPED.match(self._text, offset + 1).end()
        return offset


# ---- names and attributes, without positions --------------------------------------------------------------------

# The LibCST names that no `ast.Name` spells (an attribute's, a def's, a keyword's...), by their parent: the fields
# that hold them, or None where no name in the parent's whole subtree is an `ast.Name` (an import, `global`).
_NOT_AST_NAMES: dict[type, tuple[str, ...] | None] = {
    cst.Attribute: ("attr",),
    cst.FunctionDef: ("name",),
    cst.ClassDef: ("name",),
    cst.Param: ("name",),
    cst.Arg: ("keyword",),
    cst.ExceptHandler: ("name",),
    cst.ExceptStarHandler: ("name",),
    cst.MatchAs: ("name",),
    cst.MatchStar: ("name",),
    cst.MatchMapping: ("rest",),
    cst.MatchKeywordElement: ("key",),
    cst.Import: None,
    cst.ImportFrom: None,
    cst.Global: None,
    cst.Nonlocal: None,
    **{getattr(cst, kind): ("name",) for kind in ("TypeVar", "TypeVarTuple", "ParamSpec", "TypeAlias")
       if hasattr(cst, kind)},
}
_CONSTANT_NAMES = frozenset({"True", "False", "None"})  # `ast.Constant`s
_READ_PARENTS = frozenset({  # nodes whose every child name is an expression's
    cst.BinaryOperation, cst.UnaryOperation, cst.BooleanOperation, cst.Comparison, cst.ComparisonTarget, cst.Expr,
    cst.Return, cst.Index, cst.Element, cst.StarredElement, cst.DictElement, cst.IfExp, cst.Await, cst.If, cst.While,
    cst.Decorator, cst.Annotation, cst.AssignTarget, cst.Assign,
})


class NameTwins:
    """From a LibCST name or attribute chain on a name to the `ast` node that spells it, with no positions (which
    cost LibCST a code generation per statement): in the innermost statement that holds it (a simple statement
    line, or a compound statement's header: its blocks, paired with the `ast`'s by `metadata.paired_blocks`,
    left out), the LibCST names that are `ast` names, in the order LibCST visits them (the text's), pair
    with its `ast.Name`s in the order of the text, their spellings checked; an attribute is found from its
    chain's first name, `parents` (ModuleContext.parents) up. A statement where the two do not pair (none met on
    the examples, the corpus or the 10 real trees) is answered by position, through `fallback()` (a Bridge)."""

    def __init__(self, module: cst.Module, tree: ast.Module, parents: Mapping[cst.CSTNode, cst.CSTNode],
                 ast_parents: Mapping[ast.AST, ast.AST], fallback: Callable[[], Bridge]) -> None:
        self.module, self.tree = module, tree
        self._parents, self._ast_parents = parents, ast_parents
        self._fallback, self._bridge = fallback, None
        self._bodies: dict[cst.CSTNode, dict[cst.CSTNode, list[ast.stmt]]] = {}  # suite: its statements' twins
        self._names: dict[cst.Name, ast.Name] = {}
        self._paired: set[cst.CSTNode] = set()  # the statements whose names (header's, if compound) are in `_names`
        self.unpaired = 0  # statements answered by position: what tests/test_binder.py counts

    def ast_of(self, node: cst.CSTNode) -> ast.AST | None:
        """The `ast.Name` or `ast.Attribute` that `node` spells, or None (a LibCST name no `ast.Name` spells)."""
        base, depth = node, 0
        while type(base) is cst.Attribute:
            base, depth = base.value, depth + 1
        if type(base) is not cst.Name:
            return None  # an attribute of a value (`f(x).y`): no name of the binder's
        found: ast.AST | None = self._names.get(base)
        if found is None:
            if not self._pair_around(base):
                return self._by_position(node)
            found = self._names.get(base)
        cursor = base
        for _ in range(depth):  # up the attributes of the chain, as long as both trees have them
            outer = self._parents.get(cursor)
            above = self._ast_parents.get(found) if found is not None else None
            if type(above) is not ast.Attribute or above.value is not found or above.attr != outer.attr.value:
                return None
            found, cursor = above, outer
        return found

    def is_read(self, node: cst.Name) -> bool:
        """Whether `node` is surely an expression's name (an `ast.Name`), from its parent alone: the callee of a
        call, an argument's value, an operand (False where it takes more than the parent to tell)."""
        parent = self._parents.get(node)
        kind = type(parent)
        if kind is cst.Call:
            return parent.func is node
        if kind is cst.Arg:
            return parent.value is node
        return kind in _READ_PARENTS

    def _by_position(self, node: cst.CSTNode) -> ast.AST | None:
        if self._bridge is None:
            self._bridge = self._fallback()
        return self._bridge.ast_of(node)

    def _pair_around(self, name: cst.Name) -> bool:
        """Pair the names of the innermost statement around `name` (True), or say it cannot (False; None of it
        outside the module's statements)."""
        chain = [name]
        while (parent := self._parents.get(chain[-1])) is not None:
            chain.append(parent)
        if chain[-1] is not self.module:
            return False
        position = len(chain) - 1  # chain[position] is the suite (or module) whose statement list is walked
        twins = self._twins_in(self.module, self.tree.body)
        while True:
            statement = chain[position - 1]
            statements = twins.get(statement) if twins is not None else None
            if not statements or position < 2:
                self.unpaired += 1
                return False
            blocks = paired_blocks(statement, statements[0]) if len(statements) == 1 else []
            inner = {id(suite): body for suite, body in blocks}
            for below in range(position - 2, 0, -1):  # the innermost block of `statement` that holds `name`
                if id(chain[below]) in inner:
                    suite = chain[below]
                    twins = self._twins_in(suite, inner[id(suite)])
                    position = below
                    break
            else:
                return statement in self._paired or self._pair(statement, statements, blocks)

    def _twins_in(self, suite: cst.CSTNode, body: list[ast.stmt]) -> dict[cst.CSTNode, list[ast.stmt]] | None:
        """The statements of a suite (the module, an indented block, `if x: a; b`) → their `ast` statements."""
        found = self._bodies.get(suite)
        if found is None:
            found = {}
            at = 0
            for line in suite.body:
                count = len(line.body) if isinstance(line, cst.SimpleStatementLine) else 1
                found[line] = body[at:at + count]
                at += count
            if at != len(body):
                found = {}
            self._bodies[suite] = found
        return found

    def _pair(self, statement: cst.CSTNode, statements: list[ast.stmt], blocks) -> bool:
        left_out = {id(suite) for suite, _ in blocks}
        bodies = {id(body) for _, body in blocks}
        ours = [n for s in statements for n in _ast_names(s, bodies)]
        ours.sort(key=_START)
        theirs: list[cst.Name] = []
        _cst_names(statement, theirs, left_out)
        if len(ours) != len(theirs) or any(a.id != b.value for a, b in zip(ours, theirs)):
            self.unpaired += 1
            return False
        self._names.update(zip(theirs, ours))
        self._paired.add(statement)
        return True


def _ast_names(node: ast.AST, left_out: set[int]) -> Iterator[ast.Name]:
    """The `ast.Name`s under `node`, but in the statement lists whose id is in `left_out`."""
    stack = [node]
    while stack:
        node = stack.pop()
        if type(node) is ast.Name:
            yield node
            continue
        for field in node._fields:
            value = getattr(node, field, None)
            if type(value) is list:
                if id(value) not in left_out:
                    stack.extend(item for item in value if isinstance(item, ast.AST))
            elif isinstance(value, ast.AST):
                stack.append(value)


def _START(node: ast.AST) -> tuple[int, int]:
    return (node.lineno, node.col_offset)


def _cst_names(node: cst.CSTNode, found: list[cst.Name], left_out: set[int] = frozenset()) -> None:
    """The names under `node` that `ast.Name`s spell, in the order LibCST visits them, but in the suites whose id
    is in `left_out`."""
    stack = [node]
    add, pop, push = found.append, stack.pop, stack.extend
    while stack:
        node = pop()
        kind = type(node)
        if kind is cst.Name:
            if node.value not in _CONSTANT_NAMES:
                add(node)
            continue
        skipped = _NOT_AST_NAMES.get(kind, ())
        if skipped is None:
            continue
        inner = children(node)
        if left_out:
            inner = [child for child in inner if id(child) not in left_out]
        if skipped:
            fields = [getattr(node, f, None) for f in skipped]
            inner = [child for child in inner if not any(child is other for other in fields)]
        push(reversed(inner))
