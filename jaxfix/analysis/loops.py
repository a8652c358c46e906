"""What kind of loop a `for` is: the trip count of its `range(...)` and what its bounds may be (the facts the
loop rules JF101 and JF102 share), on LibCST and, for the screens, on `ast`. JF703 asks `range_trip`'s literal
count on `ast` (`facts.literals.range_steps`)."""

from __future__ import annotations

import ast
from dataclasses import dataclass

import libcst as cst

from jaxfix.analysis.dataflow import _ARRAY_EVIDENCE_ATTRIBUTES, ARRAY_METHODS
from jaxfix.analysis.screen import Screen, dotted, may_kind
from jaxfix.analysis.syntax import AT_METHODS, param_names
from jaxfix.analysis.traced import Kind
from jaxfix.facts.knowledge.jax import CORE_ARRAY_NAMESPACES
from jaxfix.facts.trips import TRIP_COUNT_SETTINGS  # noqa: F401 (read from here by JF102)

@dataclass(frozen=True)
class Trip:
    """The trip count of `range(...)`: "literal" (a known number), "static" (known at trace time, not here),
    or "traced" (the Python loop cannot run under tracing)."""

    kind: str
    count: int | None
    lower: cst.BaseExpression | None  # None: 0
    upper: cst.BaseExpression
    problem: str | None = None  # what fori_loop cannot express (a step other than 1)


def range_trip(context, call: cst.Call) -> Trip | None:
    """The trip count of a `range(...)` call: None when a bound's kind is unknown or the call is not
    plain positional `range(stop)`, `range(start, stop)` or `range(start, stop, step)`."""
    if any(arg.keyword is not None or arg.star for arg in call.args) or not 1 <= len(call.args) <= 3:
        return None
    values = [arg.value for arg in call.args]
    problem = None
    step = 1
    if len(values) == 3:
        step = context.shapes.constant(values[2])
        if step != 1:
            problem = "lax.fori_loop supports only a step of 1"
        values = values[:2]
    kinds = [context.traced.kind(v) for v in values]
    if Kind.TRACED in kinds:
        kind = "traced"
    elif Kind.UNKNOWN in kinds:
        return None
    else:
        kind = "static"
    lower, upper = (None, values[0]) if len(values) == 1 else (values[0], values[1])
    count = None
    if kind == "static":
        start = 0 if lower is None else context.shapes.constant(lower)
        stop = context.shapes.constant(upper)
        if start is not None and stop is not None and step:
            kind, count = "literal", len(range(start, stop, step))
    return Trip(kind, count, lower, upper, problem)


def static_advice(context, bound: cst.BaseExpression, *, by_hand: bool = True) -> str:
    """The user's way out of a traced trip count: make the bound static where it comes in."""
    traced = context.traced
    function = traced.enclosing_function(bound)
    names = [n.value for n in names_in(bound)]
    params = param_names(function.params) if isinstance(function, cst.FunctionDef) else []
    own = [n for n in names if n in params]
    if own and isinstance(function, cst.FunctionDef):
        listed = ", ".join(repr(n) for n in own)
        return (
            f"`{own[0]}` is a traced argument of `{function.name.value}`: mark it static "
            f"(`static_argnames=({listed},)` on the jax.jit that traces it) if it is a Python int"
            + (", or rewrite the loop by hand with lax.while_loop" if by_hand else "")
        )
    return (
        f"make `{context.code_for(bound)}` a Python int known at trace time (a static argument: `static_argnames=...` "
        "on the jax.jit)" + (", or rewrite the loop by hand with lax.while_loop" if by_hand else "")
    )


def names_in(node: cst.CSTNode) -> list[cst.Name]:
    """The variables `node` reads (`cfg` in `cfg.n`, not `n`)."""
    if isinstance(node, cst.Name):
        return [node]
    if isinstance(node, cst.Attribute):
        return names_in(node.value)
    return [name for child in node.children for name in names_in(child)]


def bounds_may_be_traced(screen: Screen, call: ast.Call) -> bool:
    """Whether a bound of `range(...)` may be traced: such a loop is reported even when it carries nothing."""
    return any(may_kind(screen, value)[0] for value in call.args[:2] if not isinstance(value, ast.Starred))


def short_literal_range(call: ast.Call, threshold: int) -> bool:
    """`range(3)`, `range(2, 5)`: integer literals only, fewer steps than `threshold` (no name resolved)."""
    values = []
    for arg in call.args[:2]:
        if not (isinstance(arg, ast.Constant) and type(arg.value) is int):
            return False
        values.append(arg.value)
    if len(call.args) not in (1, 2) or call.keywords:
        return False
    start, stop = (0, values[0]) if len(values) == 1 else values
    return stop - start < threshold


_ARRAY_PREFIXES = CORE_ARRAY_NAMESPACES  # DataflowAnalysis.is_array_like's calls


def may_be_rows(screen: Screen, expr: ast.expr, seen: frozenset = frozenset()) -> bool:
    """Over-approximates `ArrayAnalysis.value_kinds(expr) == {ARRAY_VALUE}` (and `DataflowAnalysis.is_array_like`,
    `ArrayAnalysis._is_array`), what `_rows` needs of the value a loop walks: a name (see `_name_may_be_rows`), an
    index into one, `.T`/`.real`/`.imag` of one, arithmetic with one, a call that may be a jax.numpy/nn/random/lax
    function, an array method of one or an `.at[...]` update of one."""
    may = lambda e: may_be_rows(screen, e, seen)  # noqa: E731
    if isinstance(expr, ast.Name):
        return _name_may_be_rows(screen, expr.id, seen)
    if isinstance(expr, ast.NamedExpr):
        return may(expr.value)
    if isinstance(expr, ast.Subscript):
        return may(expr.value)
    if isinstance(expr, ast.Attribute):
        return expr.attr in ("T", "mT", "real", "imag") and may(expr.value)
    if isinstance(expr, ast.BinOp):
        return may(expr.left) or may(expr.right)
    if isinstance(expr, ast.UnaryOp):
        return not isinstance(expr.op, ast.Not) and may(expr.operand)
    if isinstance(expr, ast.IfExp):
        return may(expr.body) and may(expr.orelse)
    if isinstance(expr, ast.Call):
        func = expr.func
        parts = dotted(func)
        if parts is not None and any(q.startswith(_ARRAY_PREFIXES) for q in screen.qualified_names(parts)):
            return True
        if isinstance(func, ast.Attribute):
            receiver = func.value
            if func.attr in AT_METHODS and isinstance(receiver, ast.Subscript):
                at = receiver.value
                if isinstance(at, ast.Attribute) and at.attr == "at" and may(at.value):
                    return True
            return func.attr in ARRAY_METHODS and may(receiver)
    return False


def _name_may_be_rows(screen: Screen, name: str, seen: frozenset) -> bool:
    """A name, matched in any scope: used as only arrays are (`_used_as_arrays`: `_name_is_array`'s evidence), an
    annotated parameter or a bare annotation (ArrayAnalysis), a parameter of a function a recorded run saw or the
    project's calls pass arrays (ArrayAnalysis.argument_evidence), or bound by `=`, `:=` or `op=` to a value that may be
    an array (the reaching definitions value_kinds follows). Loop, `with` and `except` targets, unpacking, imports,
    defs and unannotated parameters without such a use never hold an array there."""
    if name in seen:
        return True  # a cycle: decided by the bindings outside it
    if name in _used_as_arrays(screen) or name in screen.evidence_params:
        return True
    seen = seen | {name}
    for how, value in _value_bindings(screen).get(name, ()):
        if how in ("annotated", "declared") or may_be_rows(screen, value, seen):
            return True
    return False


def _value_bindings(screen: Screen) -> dict[str, list[tuple[str, ast.expr | None]]]:
    """Name → its bindings in any scope that may make it an array: ("value", v) for `name = v`, `name: T = v`,
    `name := v` and `name op= v`; ("annotated", None) for an annotated parameter, ("declared", None) for `name: T`."""
    found = screen.__dict__.get("_value_bindings")
    if found is None:
        found = {}
        for node in screen.nodes_in_order(ast.arg, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.NamedExpr):
            kind = type(node)
            if kind is ast.arg:
                if node.annotation is not None:
                    found.setdefault(node.arg, []).append(("annotated", None))
            elif kind is ast.Assign:
                for target in node.targets:
                    if type(target) is ast.Name:
                        found.setdefault(target.id, []).append(("value", node.value))
            elif kind in (ast.AugAssign, ast.AnnAssign, ast.NamedExpr):
                if type(node.target) is ast.Name:
                    how = "declared" if node.value is None else "value"
                    found.setdefault(node.target.id, []).append((how, node.value))
        screen.__dict__["_value_bindings"] = found
    return found


def _used_as_arrays(screen: Screen) -> frozenset[str]:
    """The names DataflowAnalysis._name_is_array may find used as only arrays are, anywhere in the module: `x.shape`
    (`_ARRAY_EVIDENCE_ATTRIBUTES`), or a positional argument of a call that may be a jax.numpy function."""
    found = screen.__dict__.get("_used_as_arrays")
    if found is None:
        names = set()
        for node in screen.nodes_of(ast.Attribute, ast.Call):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                if node.attr in _ARRAY_EVIDENCE_ATTRIBUTES:
                    names.add(node.value.id)
            elif isinstance(node, ast.Call) and node.args:
                parts = dotted(node.func)
                if parts is not None and any(q.startswith("jax.numpy.") for q in screen.qualified_names(parts)):
                    for arg in node.args:
                        arg = arg.value if isinstance(arg, ast.Starred) else arg
                        if isinstance(arg, ast.Name):
                            names.add(arg.id)
        found = screen.__dict__["_used_as_arrays"] = frozenset(names)
    return found
