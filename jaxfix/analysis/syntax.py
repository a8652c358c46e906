"""Small facts about LibCST syntax that every analysis needs: the names a target or a parameter list binds,
the text of a dotted name, the statements of a block and the returns that end it."""

from __future__ import annotations

import dataclasses
import inspect
import typing
from typing import Sequence

import libcst as cst

from jaxfix.facts.knowledge.jax import AT_METHODS  # noqa: F401 (the rules')
from jaxfix.analysis.metadata import IS_NODE_TYPE, TRIVIA, field_getter, visited_fields, children


def target_names(target: cst.BaseExpression) -> list[str]:
    """Local names an assignment target binds (`a, (b, *c)` → a, b, c); attributes and subscripts bind none."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for element in target.elements for n in target_names(element.value)]
    if isinstance(target, cst.StarredElement):
        return target_names(target.value)
    return []


def param_names(params: cst.Parameters) -> list[str]:
    """Every parameter name, in order: positional-only, ordinary, *args, keyword-only, **kwargs."""
    names = [p.name.value for p in (*params.posonly_params, *params.params)]
    if isinstance(params.star_arg, cst.Param):
        names.append(params.star_arg.name.value)
    names.extend(p.name.value for p in params.kwonly_params)
    if params.star_kwarg is not None:
        names.append(params.star_kwarg.name.value)
    return names


def dotted_name(node: cst.BaseExpression) -> str:
    """`jax.numpy` for the expression `jax.numpy`; TypeError for anything but names and attributes of names."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{dotted_name(node.value)}.{node.attr.value}"
    raise TypeError(f"not a dotted name: {node!r}")


# `x.at[i].<method>(v)`: the functional updates of a JAX array.


def walk(node: cst.CSTNode):
    """Every node under `node`, `node` included (LibCST has no ast.walk)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(children(current))


def code_nodes(node: cst.CSTNode):
    """`walk` without the nodes of `TRIVIA` and those under them: for searches of names, expressions and
    statements, which never lie there."""
    if type(node) in TRIVIA:
        return
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(code_children(current))


def code_children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """`children(node)` without those of `TRIVIA`, in the same order. It reads only the fields whose annotation
    admits a node that is not trivia: two thirds of a module's nodes are trivia, and most fields hold only
    them (`lpar`, `comma`, `whitespace_after_func`). The walks of the whole module that the analyses share
    (TracedAnalysis's collector, `code_nodes`) cost about half as much with it."""
    get = _CODE_GETTERS[type(node)]
    if get is None:  # no source for LibCST's node classes: `children` asks LibCST
        return [child for child in node.children if type(child) not in TRIVIA]
    found: list[cst.CSTNode] = []
    is_code = _IS_CODE_TYPE
    for value in get(node):
        if is_code[type(value)]:
            found.append(value)
        elif type(value) in (list, tuple):
            found += [item for item in value if is_code[type(item)]]
    return found


class _CodeGetters(dict):
    """node type → `metadata.field_getter` of its fields that may hold code (`_code_fields`), None where `children`
    cannot name them."""

    def __missing__(self, kind: type):
        fields = _code_fields(kind)
        found = self[kind] = None if fields is None else field_getter(fields)
        return found


class _CodeTypes(dict):
    """type → whether it is a node type other than trivia, filled on first sight (as `metadata.IS_NODE_TYPE`)."""

    def __missing__(self, kind: type) -> bool:
        found = self[kind] = IS_NODE_TYPE[kind] and kind not in TRIVIA
        return found


_CODE_GETTERS = _CodeGetters()
_IS_CODE_TYPE = _CodeTypes()


def _code_fields(kind: type) -> tuple[str, ...] | None:
    """The fields `children` reads of a `kind` node that may hold a node other than trivia (all of them where an
    annotation cannot be read); None where `children` cannot name them."""
    visited = visited_fields(kind)
    if visited is None:
        return None
    annotations = {field.name: field.type for field in dataclasses.fields(kind)}
    return tuple(name for name in visited if not _only_trivia(annotations.get(name)))


def _only_trivia(annotation) -> bool:
    """Whether a field annotated `annotation` holds only trivia nodes, or no node (`Sequence[LeftParen]`,
    `Union[Comma, MaybeSentinel]`, `BaseParenthesizableWhitespace`); False for anything it cannot tell."""
    arguments = typing.get_args(annotation)
    if arguments:
        return all(_only_trivia(argument) for argument in arguments)
    if annotation is type(None) or annotation is cst.MaybeSentinel:
        return True
    if not (inspect.isclass(annotation) and issubclass(annotation, cst.CSTNode)):
        return False
    return all(
        sub in TRIVIA or getattr(cst, sub.__name__, None) in TRIVIA  # or the copy LibCST's `add_slots` leaves
        for sub in _subclasses(annotation) if not inspect.isabstract(sub)
    )


def _subclasses(kind: type) -> set[type]:
    found = {kind}
    for sub in kind.__subclasses__():
        found |= _subclasses(sub)
    return found


def mentions(node: cst.CSTNode, name: str) -> bool:
    return any(type(n) is cst.Name and n.value == name for n in code_nodes(node))


def is_number(expr: cst.BaseExpression) -> bool:
    """A Python number literal (`3`, `-0.5`, `True`)."""
    if isinstance(expr, (cst.Integer, cst.Float)):
        return True
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        return isinstance(expr.expression, (cst.Integer, cst.Float))
    return isinstance(expr, cst.Name) and expr.value in ("True", "False")


def is_none(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"


def is_full_slice(element) -> bool:
    """`:` alone."""
    return isinstance(element, cst.Slice) and element.lower is None and element.upper is None and element.step is None


def at_base(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """`x` for the receiver `x.at[i]` of a functional update; None for anything else."""
    if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Attribute) and expr.value.attr.value == "at":
        return expr.value.value
    return None


def row_write(node: cst.CSTNode, index: str, name: str | None = None) -> cst.BaseExpression | None:
    """v of `name.at[index].set(v)` (or `name.at[index, :].set(v)`), else None: one row written (JF104, JF301)."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "set"):
        return None
    at = node.func.value
    if not (isinstance(at, cst.Subscript) and isinstance(at.value, cst.Attribute) and at.value.attr.value == "at"):
        return None
    base = at.value.value
    if not isinstance(base, cst.Name) or (name is not None and base.value != name):
        return None
    first = at.slice[0].slice
    if not (isinstance(first, cst.Index) and isinstance(first.value, cst.Name) and first.value.value == index):
        return None
    if not all(is_full_slice(element.slice) for element in at.slice[1:]):
        return None
    if len(node.args) != 1 or node.args[0].keyword is not None or node.args[0].star:
        return None
    return node.args[0].value


def is_docstring(statement: cst.CSTNode) -> bool:
    """A statement that is only a string: a docstring where it opens a body (kept first when a body moves)."""
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def body_statements(suite: cst.BaseSuite) -> Sequence[cst.BaseStatement]:
    """A block's statements; a one-line suite (`for i in r: a; b`) counts as one simple statement."""
    if isinstance(suite, cst.SimpleStatementSuite):
        return (suite,)  # type: ignore[return-value]
    return suite.body


def sole_return(statement: cst.CSTNode | None) -> cst.Return | None:
    """The `return` of a line that is only a `return`; None for anything else."""
    if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) and len(statement.body) == 1:
        if isinstance(statement.body[0], cst.Return):
            return statement.body[0]
    return None


def is_terminal(block: Sequence[cst.CSTNode]) -> bool:
    """Whether every path through `block` ends in a `return` it ends with: a final `return`, or a final `if`
    whose every branch (an `else` included) is terminal."""
    if not block:
        return False
    last = block[-1]
    if sole_return(last) is not None:
        return True
    if isinstance(last, cst.If):
        orelse = last.orelse
        if orelse is None:
            return False
        rest = [orelse] if isinstance(orelse, cst.If) else body_statements(orelse.body)
        return is_terminal(body_statements(last.body)) and is_terminal(rest)
    return False


def terminal_parts(block: Sequence[cst.CSTNode]):
    """The pieces of a terminal block to check as ordinary code: every statement but the returns that end
    it (for those, their values) and the `if` tests that lead to them."""
    for index, statement in enumerate(block):
        if index == len(block) - 1 and is_terminal(block):
            final = sole_return(statement)
            if final is not None:
                if final.value is not None:
                    yield final.value
                return
            yield statement.test
            yield from terminal_parts(body_statements(statement.body))
            orelse = statement.orelse
            yield from terminal_parts([orelse] if isinstance(orelse, cst.If) else body_statements(orelse.body))
            return
        yield statement
