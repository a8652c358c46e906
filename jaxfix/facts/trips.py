"""How many steps a `for ... in range(...)` takes, as tracing sees it (the loop rules JF101 and JF102 read it).

A trip count is "literal" (a number known here), "static" (known at trace time, not here: a shape, a static
argument) or "traced" (the Python loop cannot run under tracing: `range(n)` of a traced `n` raises
`TracerIntegerConversionError`). `static_advice` is the way out the rules give for a traced one."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from jaxfix.facts.traced import Kind, param_names


# The trip-count settings of the loop rules (JF101, JF102), in [tool.jaxfix.codemods.NAME]: (name, default, doc)
# of each rule's `Option`.
TRIP_COUNT_SETTINGS = (
    (
        "min-trip-count",
        10,
        "loops of fewer known steps stay Python loops (unrolling a few steps compiles about as fast; "
        "benchmarks/loop_crossover.py measures the crossover)",
    ),
    ("report-trip-count", 100, "a loop that cannot be rewritten is reported from this many known steps"),
)


@dataclass(frozen=True)
class Trip:
    """The trip count of `range(...)`; `lower` None means 0; `problem`: what fori_loop cannot express."""

    kind: str  # "literal", "static" or "traced"
    count: int | None
    lower: ast.expr | None
    upper: ast.expr
    problem: str | None = None


def range_trip(facts, call: ast.Call) -> Trip | None:
    """The trip count of a `range(...)` call: None when a bound's kind is unknown or the call is not plain
    positional `range(stop)`, `range(start, stop)` or `range(start, stop, step)`."""
    if call.keywords or any(type(a) is ast.Starred for a in call.args) or not 1 <= len(call.args) <= 3:
        return None
    values = list(call.args)
    problem = None
    step = 1
    shapes, traced = facts.shapes, facts.traced
    if len(values) == 3:
        step = shapes.constant(values[2])
        if step != 1:
            problem = "lax.fori_loop supports only a step of 1"
        values = values[:2]
    kinds = [traced.kind(v) for v in values]
    if Kind.TRACED in kinds:
        kind = "traced"
    elif Kind.UNKNOWN in kinds:
        return None
    else:
        kind = "static"
    lower, upper = (None, values[0]) if len(values) == 1 else (values[0], values[1])
    count = None
    if kind == "static":
        start = 0 if lower is None else shapes.constant(lower)
        stop = shapes.constant(upper)
        if start is not None and stop is not None and step:
            kind, count = "literal", len(range(start, stop, step))
    return Trip(kind, count, lower, upper, problem)


def bound_text(facts, bound: ast.expr) -> str:
    """The source of a bound of `range(...)` as written, its own parentheses included."""
    return facts.positions.with_parentheses(bound, facts.binder.parent(bound))


def count_text(facts, trip: Trip) -> str:
    """`n` or `n - k`: the number of steps of a static trip, as code."""
    upper = bound_text(facts, trip.upper)
    return upper if trip.lower is None else f"{upper} - {bound_text(facts, trip.lower)}"


def read_names(node: ast.AST) -> list[str]:
    """The variables `node` reads, in order (`cfg` in `cfg.n`, not `n`)."""
    kind = type(node)
    if kind is ast.Name:
        return [node.id]
    if kind is ast.Attribute:
        return read_names(node.value)
    return [name for child in ast.iter_child_nodes(node) for name in read_names(child)]


def static_advice(facts, bound: ast.expr, *, by_hand: bool = True) -> str:
    """The user's way out of a traced trip count: make the bound static where it comes in."""
    function = facts.traced.enclosing_function(bound)
    names = read_names(bound)
    is_def = isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
    params = param_names(function.args) if is_def else []
    own = [n for n in names if n in params]
    tail = ", or rewrite the loop by hand with lax.while_loop" if by_hand else ""
    if own and is_def:
        listed = ", ".join(repr(n) for n in own)
        return (
            f"`{own[0]}` is a traced argument of `{function.name}`: mark it static "
            f"(`static_argnames=({listed},)` on the jax.jit that traces it) if it is a Python int" + tail
        )
    return f"make `{bound_text(facts, bound)}` a Python int known at trace time (a static argument: `static_argnames=...` on the jax.jit)" + tail
