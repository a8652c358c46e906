"""Cheaper equivalents of LibCST's own tree facts, giving the same answers: a node's children, each node's
parent, positions, and the traversal of a visitor (qualified names are the `ast` binder's: analysis/names.py).

LibCST computes each through its visitor machinery. On real code (261 files of eight JAX libraries that the
screens pass) ParentNodeProvider took 25.3 s where walking the nodes' dataclass fields takes 2.1 s;
`CSTNode.children` runs a visitor over the node (7.1 s for the 1.3 M nodes of the corpus, flax and optax, 2.7 s
here). `CSTNode.visit` rebuilds every node it passes (`_visit_and_replace_children`
constructs a new node even for a read-only visitor, only to throw it away): `fast_visits()` makes read-only
visits call the same methods in the same order without that (LibCST work on 117 real files 25.3 s -> 15.6 s of
CPU). PositionProvider generates the code of the whole module to place every node (0.05 s per 1,000 lines), where
the codemods ask where a handful of nodes are: `StatementPositions` generates the code of the innermost statement
(in indented blocks from the top level) that holds a node asked for. tests/test_metadata.py compares each with LibCST's.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import operator
import re
import threading
from contextlib import contextmanager
from typing import Callable, Iterator, Sequence

import libcst as cst
from libcst.metadata import CodePosition, CodeRange, MetadataWrapper, PositionProvider
from libcst.metadata.position_provider import PositionProvidingCodegenState

# The node types that hold only whitespace, comments and punctuation: no name, expression or statement lies
# under them, yet they are most of a module's nodes (85k of the 134k of numpyro's test_distributions.py).
# tests/test_syntax.py checks that their fields hold nothing else.
TRIVIA = frozenset(
    {
        cst.SimpleWhitespace, cst.ParenthesizedWhitespace, cst.TrailingWhitespace, cst.EmptyLine, cst.Newline,
        cst.Comment, cst.Comma, cst.Dot, cst.Colon, cst.Semicolon, cst.AssignEqual, cst.LeftParen, cst.RightParen,
        cst.LeftSquareBracket, cst.RightSquareBracket, cst.LeftCurlyBrace, cst.RightCurlyBrace,
    }
)  # fmt: skip
_TRIVIA_METHODS = frozenset(f"{verb}_{kind.__name__}" for kind in TRIVIA for verb in ("visit", "leave"))

# The fields a node type's `_visit_and_replace_children` visits, in the order it visits them (its source reads
# `visit_required(self, "func", ...)`, `visit_sequence(self, "args", ...)`): the order `CSTNode.children` has.
_VISITED = re.compile(r'visit_\w+\(\s*self,\s*"(\w+)"')
_CHILD_FIELDS: dict[type, tuple[str, ...] | None] = {}


def _child_fields(kind: type) -> tuple[str, ...] | None:
    try:
        source = inspect.getsource(kind._visit_and_replace_children)
    except (OSError, TypeError):  # no source (a compiled LibCST): use LibCST's own `children`
        return None
    return tuple(dict.fromkeys(_VISITED.findall(source)))


def visited_fields(kind: type) -> tuple[str, ...] | None:
    try:
        return _CHILD_FIELDS[kind]
    except KeyError:
        names = _CHILD_FIELDS[kind] = _child_fields(kind)
        return names


def children(node: cst.CSTNode) -> Sequence[cst.CSTNode]:
    """`node.children`: the nodes in its visited fields, in lexical order."""
    get = CHILD_GETTERS[type(node)]
    if get is None:
        return node.children
    found: list[cst.CSTNode] = []
    is_node = IS_NODE_TYPE
    for value in get(node):
        if is_node[type(value)]:
            found.append(value)
        elif type(value) in (list, tuple):
            for item in value:
                if is_node[type(item)]:
                    found.append(item)
    return found


def parent_map(module: cst.Module) -> dict[cst.CSTNode, cst.CSTNode]:
    """Each node's parent, as ParentNodeProvider gives it: every CSTNode held in a field (or in a list or tuple
    in a field) of a node is that node's child."""
    parents: dict[cst.CSTNode, cst.CSTNode] = {}
    is_node, getters = IS_NODE_TYPE, _FIELD_GETTERS
    stack: list[cst.CSTNode] = [module] if getters[type(module)] is not None else []
    while stack:
        node = stack.pop()
        for value in getters[type(node)](node):
            kind = type(value)
            if is_node[kind]:
                parents[value] = node
                if getters[kind] is not None:
                    stack.append(value)
            elif kind is list or kind is tuple:
                for item in value:
                    kind = type(item)
                    if is_node[kind]:
                        parents[item] = node
                        if getters[kind] is not None:
                            stack.append(item)
    return parents


def field_getter(names: tuple[str, ...]) -> Callable[[cst.CSTNode], tuple]:
    """A function giving the tuple of a node's values of `names`: one `attrgetter` call instead of a getattr per
    field (with `IS_NODE_TYPE`, children() of 336k real nodes: 0.163 -> 0.103 s of CPU)."""
    if len(names) > 1:
        return operator.attrgetter(*names)
    if names:
        one = operator.attrgetter(names[0])
        return lambda node: (one(node),)
    return lambda node: ()


class _ChildGetters(dict):
    """node type → `field_getter` of its visited fields, None where they are unknown (`visited_fields`)."""

    def __missing__(self, kind: type) -> Callable[[cst.CSTNode], tuple] | None:
        names = visited_fields(kind)
        found = self[kind] = None if names is None else field_getter(names)
        return found


class _FieldGetters(dict):
    """node type → `field_getter` of its dataclass fields that LibCST visits, in the dataclass's order; None where it
    has none (SimpleWhitespace, Newline, Comment: nearly half of the nodes of real modules). The fields left out
    hold strings and flags (`Name.value`, `EmptyLine.indent`), never a node: ParentNodeProvider, whose map is the
    visited fields', gives none of them children (tests/test_metadata.py)."""

    def __missing__(self, kind: type) -> Callable[[cst.CSTNode], tuple] | None:
        visited = visited_fields(kind)
        names = tuple(f.name for f in dataclasses.fields(kind) if visited is None or f.name in visited)
        found = self[kind] = field_getter(names) if names else None
        return found


CHILD_GETTERS = _ChildGetters()
_FIELD_GETTERS = _FieldGetters()


# ---- positions, one top-level statement at a time -----------------------------------------------------------------


class StatementPositions:
    """PositionProvider's map (node → CodeRange), computed per statement on first use. A top-level statement's
    code starts in column 0 of some line, and a statement of an indented block (a method, a line of a loop) at
    the blocks' indentation, so generating it alone at that indentation places its nodes as generating the whole
    module does, lines shifted; the shift comes from the `ast` of the same text, whose statements LibCST places
    where `ast` does. Where that does not hold (the first and last small statements of the statement must land
    on the `ast`'s lines, at the indentation's column), an enclosing statement is generated; where a node is
    outside every statement (the module, its header and footer comments), the whole PositionProvider answers."""

    def __init__(self, wrapper: MetadataWrapper, tree: ast.Module | None, parents: dict[cst.CSTNode, cst.CSTNode]) -> None:
        self._wrapper = wrapper
        self._module = wrapper.module
        self._parents = parents
        self._lines = _paired(self._module.body, tree.body) if tree is not None else None
        self._computed: dict[cst.CSTNode, CodeRange] = {}
        self._whole: dict | None = None

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        found = self._computed.get(node)
        if found is not None:
            return found
        if self._whole is None and self._place(node):
            return self._computed[node]
        return self._everything()[node]

    def __contains__(self, node: object) -> bool:
        try:
            self[node]
        except KeyError:
            return False
        return True

    def get(self, node: cst.CSTNode, default=None):
        try:
            return self[node]
        except KeyError:
            return default

    def _everything(self) -> dict:
        if self._whole is None:
            self._whole = self._wrapper.resolve(PositionProvider)
        return self._whole

    def _place(self, node: cst.CSTNode) -> bool:
        """Compute the positions of the innermost statement holding `node` that lies in a chain of indented
        blocks from the top level (a line of a loop in a method), generated alone at the blocks' indentation, as
        the whole module would generate it: a finding in one line of a 500-line function used to generate the
        function (the findings of a cold check of the 10 real trees: 0.32 -> 0.09 s of CPU). Where that
        statement's lines do not match the `ast`'s, an enclosing one is tried. False where only the whole
        module's code can tell (or `node` is not of this module)."""
        chain = [node]
        while (parent := self._parents.get(chain[-1])) is not None and parent is not self._module:
            chain.append(parent)
        lines = self._lines.get(id(chain[-1])) if self._lines is not None and parent is self._module else None
        if lines is None:
            return False
        inside = {id(n) for n in chain}
        indents: list[str] = []
        nested = [(chain[-1], lines, "")]  # (statement, its `ast` lines, the indentation it is generated at)
        while (found := _block_holding(*nested[-1][:2], inside)) is not None:
            block, body = found
            inner = next((statement for statement in block.body if id(statement) in inside), None)
            paired = _paired(block.body, body) if inner is not None else None
            if paired is None:  # `node` is in the block's header or footer, or the bodies differ
                break
            indents.append(self._module.default_indent if block.indent is None else block.indent)
            nested.append((inner, paired[id(inner)], "".join(indents)))
        for statement, lines, indent in reversed(nested):
            if self._generate(statement, lines, indent):
                return node in self._computed
        return False

    def _generate(self, statement: cst.BaseStatement, lines: tuple[int, int, ast.stmt], indent: str) -> bool:
        """Place the nodes of `statement`, generated alone at `indent`, on the `ast`'s `lines`; False where its
        first and last small statements do not land there."""
        relative = _Collected()
        state = PositionProvidingCodegenState(
            default_indent=self._module.default_indent, default_newline=self._module.default_newline, provider=relative
        )
        if indent:
            state.increase_indent(indent)
        statement._codegen(state)
        placed = relative._computed
        first, last = _anchors(statement)
        shift = lines[0] - placed[first].start.line
        column = len(indent)
        if placed[last].end.line + shift != lines[1] or placed[first].start.column != column or lines[2].col_offset != column:
            return False
        for key, where in placed.items():
            self._computed[key] = CodeRange(
                CodePosition(where.start.line + shift, where.start.column),
                CodePosition(where.end.line + shift, where.end.column),
            )
        return True


def _block_holding(
    statement: cst.BaseStatement, lines: tuple[int, int, ast.stmt], inside: set[int]
) -> tuple[cst.IndentedBlock, list[ast.stmt]] | None:
    """The indented block of compound `statement` whose id is in `inside`, with the `ast` body it pairs with."""
    for block, body in paired_blocks(statement, lines[2]):
        if id(block) in inside:
            return (block, body) if isinstance(block, cst.IndentedBlock) else None
    return None


def paired_blocks(statement: cst.CSTNode, tree: ast.AST) -> list[tuple[cst.BaseSuite, list[ast.stmt]]]:
    """The bodies of a compound statement paired with those of its `ast` statement (an `elif`'s among its `if`'s);
    none where their kinds differ."""
    if isinstance(statement, cst.FunctionDef) and isinstance(tree, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return [(statement.body, tree.body)]
    if isinstance(statement, cst.ClassDef) and isinstance(tree, ast.ClassDef):
        return [(statement.body, tree.body)]
    if isinstance(statement, cst.With) and isinstance(tree, (ast.With, ast.AsyncWith)):
        return [(statement.body, tree.body)]
    if isinstance(statement, cst.If) and isinstance(tree, ast.If):
        orelse = statement.orelse
        if isinstance(orelse, cst.If):
            elif_blocks = paired_blocks(orelse, tree.orelse[0]) if len(tree.orelse) == 1 else []
            return [(statement.body, tree.body), *elif_blocks]
        return [(statement.body, tree.body), *_else(orelse, tree.orelse)]
    if (isinstance(statement, cst.For) and isinstance(tree, (ast.For, ast.AsyncFor))) or (
        isinstance(statement, cst.While) and isinstance(tree, ast.While)
    ):
        return [(statement.body, tree.body), *_else(statement.orelse, tree.orelse)]
    if (isinstance(statement, cst.Try) and isinstance(tree, ast.Try)) or (
        isinstance(statement, cst.TryStar) and type(tree).__name__ == "TryStar"
    ):
        if len(statement.handlers) != len(tree.handlers):
            return []
        handlers = [(h.body, t.body) for h, t in zip(statement.handlers, tree.handlers)]
        final = [(statement.finalbody.body, tree.finalbody)] if statement.finalbody is not None else []
        return [(statement.body, tree.body), *handlers, *_else(statement.orelse, tree.orelse), *final]
    return []  # `match` too: its cases are indented by the `match` and their bodies again


def _else(orelse: cst.Else | None, body: list[ast.stmt]) -> list[tuple[cst.BaseSuite, list[ast.stmt]]]:
    return [(orelse.body, body)] if orelse is not None else []


class _Collected:
    """What a PositionProvidingCodegenState writes its positions into."""

    def __init__(self) -> None:
        self._computed: dict[cst.CSTNode, CodeRange] = {}


def _anchors(statement: cst.CSTNode) -> tuple[cst.CSTNode, cst.CSTNode]:
    """The nodes of a top-level statement that `ast` places too: its first and last small statements, or itself."""
    if isinstance(statement, cst.SimpleStatementLine):
        return statement.body[0], statement.body[-1]
    return statement, statement


def _paired(statements: Sequence[cst.BaseStatement], body: list[ast.stmt]) -> dict[int, tuple[int, int, ast.stmt]] | None:
    """id() of each statement of a LibCST body → the `ast`'s first line of its first small statement, the last
    line of its last, and its first `ast` statement; None where the two bodies do not pair up."""
    lines: dict[int, tuple[int, int, ast.stmt]] = {}
    index = 0
    for statement in statements:
        count = len(statement.body) if isinstance(statement, cst.SimpleStatementLine) else 1
        paired = body[index : index + count]
        if len(paired) != count:
            return None
        lines[id(statement)] = (paired[0].lineno, paired[-1].end_lineno, paired[0])
        index += count
    return lines if index == len(body) else None


# ---- visits without rebuilding -----------------------------------------------------------------------------------

_LIBCST_VISIT = cst.CSTNode.visit
_ATTRIBUTE_HOOK = re.compile(r"^(visit|leave)_[A-Za-z0-9]+_\w+$")  # `visit_ClassDef_bases`: around one field
_CLASS_HOOKS: dict[type, frozenset[str] | None] = {}
_HOOKED_FIELDS: dict[tuple[frozenset[str], type], frozenset[str]] = {}
_installed = 0
_install_lock = threading.Lock()


def _own_methods(visitor: cst.CSTVisitor) -> list[str] | None:
    """The names in the visitor's own dict that LibCST's lookups could take for methods (`visit_*`, `leave_*`,
    `on_*`): usually none. None where it has no dict."""
    state = getattr(visitor, "__dict__", None)
    return None if state is None else [name for name in state if name.startswith(_METHOD_PREFIXES)]


_METHOD_PREFIXES = ("visit_", "leave_", "on_")


def _hooks(visitor: cst.CSTVisitor, own_methods: list[str] | None) -> frozenset[str] | None:
    """The `visit_<Node>_<field>`/`leave_<Node>_<field>` methods that LibCST's `on_visit_attribute` and
    `on_leave_attribute` would call on `visitor` (its class's, its own, or, for the codemods' batch, those in its
    dict); None where the visitor overrides those two methods, which must then be called around every field."""
    kind = type(visitor)
    if _BatchedVisitor is not None and kind is _BatchedVisitor:  # `get_visitors` has left the stubs out
        return frozenset(name for name in visitor.visitor_methods if _ATTRIBUTE_HOOK.match(name))
    if kind not in _CLASS_HOOKS:
        default = (
            kind.on_visit_attribute is cst.CSTVisitor.on_visit_attribute
            and kind.on_leave_attribute is cst.CSTVisitor.on_leave_attribute
        )
        _CLASS_HOOKS[kind] = frozenset(n for n in dir(kind) if _is_hook(getattr(kind, n), n)) if default else None
    hooks = _CLASS_HOOKS[kind]
    own = [n for n in own_methods if _is_hook(getattr(visitor, n), n)] if hooks is not None and own_methods else ()
    return hooks.union(own) if own else hooks


def _is_hook(method: object, name: str) -> bool:
    """A `visit_<Node>_<field>`/`leave_<Node>_<field>` method that does something: every visitor inherits an empty
    stub of each (marked `_is_no_op`), which LibCST's attribute calls find and call for nothing."""
    return _ATTRIBUTE_HOOK.match(name) is not None and callable(method) and not getattr(method, "_is_no_op", False)


def _hooked_fields(kind: type, hooks: frozenset[str]) -> frozenset[str]:
    """The fields of a node type that some hook is around."""
    key = (hooks, kind)
    found = _HOOKED_FIELDS.get(key)
    if found is None:
        name = kind.__name__
        found = _HOOKED_FIELDS[key] = frozenset(
            field for field in visited_fields(kind) or () if {f"visit_{name}_{field}", f"leave_{name}_{field}"} & hooks
        )
    return found


class _NodeTypes(dict):
    """type → whether it is a CSTNode type, filled on first sight: CSTNode is an abstract class, and its
    isinstance is slow; a dict lookup inline costs less than a call (7 M values in a cold check of 10 real trees)."""

    def __missing__(self, kind: type) -> bool:
        found = self[kind] = issubclass(kind, cst.CSTNode)
        return found


IS_NODE_TYPE = _NodeTypes()


def _walk(node: cst.CSTNode, visitor: cst.CSTVisitor, hooks: frozenset[str] | None, calls: dict) -> None:
    """LibCST's traversal of `node` for a read-only visitor: `on_visit`, then each visited field in order (the
    attribute calls around it where a hook may answer, or around all with `hooks` None), then `on_leave`.
    `calls`: what to call for each node type (`_calls_of`)."""
    kind = type(node)
    entry = calls.get(kind)
    if entry is None:
        entry = calls[kind] = _calls(type(visitor), kind, hooks, type(calls) is _Generic)
    if entry is _SKIP:
        return
    fields, on_visit, visit_method, on_leave, leave_method, hooked, get_fields = entry
    if fields is None:  # no source to read the fields from: LibCST's own traversal
        _LIBCST_VISIT(node, visitor)
        return
    if on_visit(visitor, node) if on_visit is not None else visit_method is None or visit_method(visitor, node) is not False:
        if get_fields is not None:  # no attribute call around any field
            for value in get_fields(node):
                if IS_NODE_TYPE[type(value)]:
                    _walk(value, visitor, hooks, calls)
                elif type(value) in (list, tuple):
                    for item in value:
                        if IS_NODE_TYPE[type(item)]:
                            _walk(item, visitor, hooks, calls)
        else:
            _walk_fields(node, visitor, hooks, calls, fields, hooked)
    if on_leave is not None:
        on_leave(visitor, node)
    elif leave_method is not None:
        leave_method(visitor, node)


def _walk_fields(
    node: cst.CSTNode, visitor: cst.CSTVisitor, hooks: frozenset[str] | None, calls: dict, fields: tuple[str, ...],
    hooked: frozenset[str] | tuple[str, ...],
) -> None:
    """`_walk`'s visit of the children of a node with attribute calls around some of its fields (`hooked`)."""
    kind = type(node)
    for name in fields:
        value = getattr(node, name)
        around = name in hooked and not (value is None and name in sequences_only(kind))
        if around:
            visitor.on_visit_attribute(node, name)
        if IS_NODE_TYPE[type(value)]:
            _walk(value, visitor, hooks, calls)
        elif type(value) in (list, tuple):
            for item in value:
                if IS_NODE_TYPE[type(item)]:
                    _walk(item, visitor, hooks, calls)
        if around:
            visitor.on_leave_attribute(node, name)


class _Generic(dict):
    """The table of a visitor with methods in its own dict (`_calls_of`): its entries call its bound `on_visit`
    and `on_leave`, never shared."""


def _calls_of(visitor: cst.CSTVisitor, hooks: frozenset[str] | None, own_methods: list[str] | None) -> dict:
    """The table of what to call for each node type, shared by every visitor of a class (ExpressionContextProvider
    makes a new visitor for each attribute's value: 577 k tables for 2.1 M nodes of 118 real files, when built per
    visitor). A visitor with `visit_`/`leave_`/`on_` methods in its own dict gets a fresh table whose entries call
    its `on_visit`/`on_leave`, which find them."""
    kind = type(visitor)
    if own_methods is None or own_methods:
        return _Generic()
    key = (kind, hooks)
    table = _CLASS_CALLS.get(key)
    if table is None:
        table = _CLASS_CALLS[key] = {}
        quiet = _override(kind, "on_visit") is None and _override(kind, "on_leave") is None and hooks is not None
        if quiet and not any(_function(kind, name) for name in _TRIVIA_METHODS) and not _hooks_trivia(hooks):
            table.update(dict.fromkeys(TRIVIA, _SKIP))
    return table


_SKIP = ()  # the entry of a node type that no call reaches, nor any under it (TRIVIA, for a visitor without methods for it)
_TRIVIA_NAMES = frozenset(kind.__name__ for kind in TRIVIA)


def _hooks_trivia(hooks: frozenset[str]) -> bool:
    """Whether an attribute hook (`visit_<Node>_<field>`) is about a TRIVIA node's field."""
    return any(name.split("_", 2)[1] in _TRIVIA_NAMES for name in hooks)


_CLASS_CALLS: dict[tuple, dict] = {}


def _calls(visitor_kind: type, kind: type, hooks: frozenset[str] | None, generic: bool) -> tuple:
    """For nodes of type `kind`, each called with (visitor, node): the visitor class's own `on_visit` where it
    overrides LibCST's, else the `visit_<Node>` function LibCST's would call (None: none); the same for `on_leave`;
    with the visited fields first and the fields with attribute calls around them last. LibCST's `on_visit`
    formats and looks up the method's name at every node. `generic` (or a method that is no plain function):
    the visitor's bound `on_visit` and `on_leave`, which look up as LibCST does."""
    fields = visited_fields(kind)
    hooked = (fields if hooks is None else _hooked_fields(kind, hooks) if hooks else ()) if fields is not None else ()
    get_fields = CHILD_GETTERS[kind] if fields is not None and not hooked else None
    if not generic:
        on_visit = _override(visitor_kind, "on_visit")
        on_leave = _override(visitor_kind, "on_leave")
        visit_method = _function(visitor_kind, f"visit_{kind.__name__}") if on_visit is None else None
        leave_method = _function(visitor_kind, f"leave_{kind.__name__}") if on_leave is None else None
        if _NOT_PLAIN not in (on_visit, on_leave, visit_method, leave_method):
            return fields, on_visit, visit_method, on_leave, leave_method, hooked, get_fields
    return fields, _bound_on_visit, None, _bound_on_leave, None, hooked, get_fields


def _bound_on_visit(visitor: cst.CSTVisitor, node: cst.CSTNode) -> bool:
    return visitor.on_visit(node)


def _bound_on_leave(visitor: cst.CSTVisitor, node: cst.CSTNode) -> None:
    visitor.on_leave(node)


_NOT_PLAIN = object()


def _override(visitor_kind: type, name: str):
    """The class's own `on_visit`/`on_leave` (`name`), None where it keeps LibCST's."""
    found = _function(visitor_kind, name)
    return None if found is getattr(cst.CSTVisitor, name) else found


def _function(visitor_kind: type, name: str):
    """The plain function a class defines as method `name`, None where it has none, _NOT_PLAIN for anything
    else (a staticmethod, a descriptor): those are left to LibCST's own lookup."""
    found = inspect.getattr_static(visitor_kind, name, None)
    if found is None:
        return None
    return found if inspect.isfunction(found) else _NOT_PLAIN


def sequences_only(kind: type) -> frozenset[str]:
    """The fields that `_visit_and_replace_children` visits only as sequences: where such a field is None (an
    f-string's absent `format_spec`) LibCST skips it, attribute calls included."""
    found = _SEQUENCES_ONLY.get(kind)
    if found is None:
        visits = _VISIT_KINDS.findall(inspect.getsource(kind._visit_and_replace_children))
        sequences = {name for helper, name in visits if "sequence" in helper or "iterable" in helper}
        found = _SEQUENCES_ONLY[kind] = frozenset(sequences - {name for helper, name in visits if helper in _SINGLE})
    return found


_VISIT_KINDS = re.compile(r'(visit_\w+)\(\s*self,\s*"(\w+)"')
_SINGLE = {"visit_required", "visit_optional", "visit_sentinel"}
_SEQUENCES_ONLY: dict[type, frozenset[str]] = {}


def _walk_batch(node: cst.CSTNode, batch: cst.CSTVisitor, table: dict) -> None:
    """`_walk` for the codemods' batch without field hooks: each node type's visit_ and leave_ methods looked up
    once (`_BatchedCSTVisitor.on_visit` formats and looks up the names at every node), then called in order."""
    kind = type(node)
    entry = table.get(kind)
    if entry is _SKIP:
        return
    if entry is None:
        methods = batch.visitor_methods
        entry = table[kind] = (
            methods.get(f"visit_{kind.__name__}", ()), methods.get(f"leave_{kind.__name__}", ()), CHILD_GETTERS[kind]
        )
    visits, leaves, get_fields = entry
    if get_fields is None:
        _LIBCST_VISIT(node, batch)
        return
    for method in visits:
        method(node)
    for value in get_fields(node):
        if IS_NODE_TYPE[type(value)]:
            _walk_batch(value, batch, table)
        elif type(value) in (list, tuple):
            for item in value:
                if IS_NODE_TYPE[type(item)]:
                    _walk_batch(item, batch, table)
    for method in leaves:
        method(node)


def visit(node: cst.CSTNode, visitor):
    """`node.visit(visitor)`: for a read-only visitor (a CSTVisitor, which always gets `node` back) the same calls
    of `on_visit`, `on_visit_attribute`, `on_leave_attribute` and `on_leave` in the same order, without building
    the new nodes LibCST builds and discards (and without the attribute calls that no method answers); a
    transformer gets LibCST's own traversal."""
    kind = type(visitor)
    state = getattr(visitor, "__dict__", None)
    prologue = _PROLOGUES.get(kind)
    if prologue is not None and state is not None and state.keys() == prologue[0]:
        _walk(node, visitor, prologue[1], prologue[2])
        return node
    if not isinstance(visitor, cst.CSTVisitor):
        return _LIBCST_VISIT(node, visitor)
    own_methods = _own_methods(visitor)
    hooks = _hooks(visitor, own_methods)
    if hooks or kind is not _BatchedVisitor or visitor.before_visit or visitor.after_leave:
        calls = _calls_of(visitor, hooks, own_methods)
        if own_methods == [] and kind is not _BatchedVisitor:
            _PROLOGUES[kind] = (frozenset(state), hooks, calls)
        _walk(node, visitor, hooks, calls)
    elif visitor.visitor_methods.keys() <= _MODULE_ONLY and type(node) is cst.Module:
        # A batch of metadata providers that do all their work from the module (ScopeProvider and
        # ExpressionContextProvider each walk it with a visitor of their own): no method below it to call.
        for method in visitor.visitor_methods.get("visit_Module", ()):
            method(node)
        for method in visitor.visitor_methods.get("leave_Module", ()):
            method(node)
    else:
        # no method for any TRIVIA type: none is called under one either (their fields hold only TRIVIA)
        table = {} if visitor.visitor_methods.keys() & _TRIVIA_METHODS else dict.fromkeys(TRIVIA, _SKIP)
        _walk_batch(node, visitor, table)
    return node


_MODULE_ONLY = frozenset({"visit_Module", "leave_Module"})
# visitor class → (the names in its instance's dict, `_hooks`, `_calls_of`), for an instance without methods of its
# own: then all three depend on the class alone, and an instance with the same names in its dict has none either.
# ScopeVisitor and the analyses' visitors start 114 k visits of parts of a node in a cold check of 10 real trees.
_PROLOGUES: dict[type, tuple[frozenset[str], frozenset[str] | None, dict]] = {}


@contextmanager
def fast_visits() -> Iterator[None]:
    """Within this block, `CSTNode.visit` is `visit` (so are the visits that LibCST's metadata providers and the
    analyses make). Re-entrant and safe across threads: a visit that starts after the last block ended simply
    takes LibCST's slower path, with the same calls."""
    global _installed
    with _install_lock:
        _installed += 1
        cst.CSTNode.visit = visit
    try:
        yield
    finally:
        with _install_lock:
            _installed -= 1
            if not _installed:
                cst.CSTNode.visit = _LIBCST_VISIT


try:  # the visitor that `visit_batched` runs: private in LibCST, so looked up defensively
    from libcst._batched_visitor import _BatchedCSTVisitor as _BatchedVisitor
except ImportError:  # pragma: no cover - another LibCST: every batch then calls the hooks
    _BatchedVisitor = None
