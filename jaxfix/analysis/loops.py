"""The trip count of a `for` loop's `range(...)` on LibCST: what benchmarks/agreement.py's `range-steps-exact` family
compares `facts.literals.range_steps` (JF703's, on `ast`) against. The loop rules JF101 and JF102 read
`facts/trips.py`, its twin on `ast`."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from jaxfix.analysis.traced import Kind


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
