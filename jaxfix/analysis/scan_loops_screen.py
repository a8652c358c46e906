"""The `ast` screen of scan loops (JF102): whether a module may hold a `for` loop that `jaxfix.analysis.scan_loops`
would rewrite or report (a superset of its answer)."""

from __future__ import annotations

import ast

from jaxfix.analysis.loops import bounds_may_be_traced, may_be_rows, short_literal_range
from jaxfix.analysis.screen import (
    Screen, appends_to_name, may_be_compiled, may_carry, may_carry_traced, may_kind, range_may_report,
    surely_impure,
)  # fmt: skip


def may_scan_loops(screen: Screen, min_trip_count: int, report_trip_count: int) -> bool:
    """A finding needs a `for` loop in a function TracedAnalysis may find traced that may carry a name from
    one step to the next (`screen.may_carry`; one that may be TRACED, `may_carry_traced`, unless the range's
    bounds may be traced), over what `_ScanAnalysis._iteration` may accept: `range` (not a short
    literal one; a forward one needs `.append` or an index `a[i]` in its body: without either it is JF101's),
    `reversed(...)`, or rows of an array: a name, subscript, arithmetic, `.T`/`.real`/`.imag`, a call that
    may be a jax.numpy/lax/nn/random function or an array method. Attributes (`self.layers`), `zip`,
    `enumerate`, other calls and displays are never proven to be an array's rows."""
    in_traced_code = getattr(screen, "in_traced_code", None)
    if in_traced_code is not None:
        loops = in_traced_code(ast.For)
    else:  # a Screen without that query: every loop inside a function
        functions = [f for f in ast.walk(screen.tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
        loops = (n for f in functions for n in ast.walk(f) if isinstance(n, ast.For))
    sharp = in_traced_code is not None
    for loop in loops:
        it = loop.iter
        counted = None  # the range() call whose bounds give the count, if any
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range":
            counted = it
            if short_literal_range(it, min_trip_count):
                continue
            if len(it.args) < 3 and not _collects_or_indexes(screen, loop):
                continue  # a forward range loop collecting nothing: JF101's
            if sharp and not range_may_report(screen, loop, it, report_trip_count, blocked=_surely_blocked(screen, loop)):
                continue
        elif isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "reversed":
            inner = it.args[0] if len(it.args) == 1 else None
            range_call = isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and inner.func.id == "range"
            counted = inner if range_call else None
            if inner is not None and not range_call and not may_be_rows(screen, inner):
                continue
            if sharp and range_call and not range_may_report(screen, loop, inner, report_trip_count, blocked=_surely_blocked(screen, loop)):
                continue
            if sharp and inner is not None and not range_call and not _rows_may_report(screen, loop, inner):
                continue
        elif not may_be_rows(screen, it):
            continue
        elif sharp and not _rows_may_report(screen, loop, it):
            continue
        if not sharp:
            if may_carry(screen, loop):
                return True
        elif may_carry_traced(screen, loop) or (
            counted is not None and bounds_may_be_traced(screen, counted) and may_carry(screen, loop)
        ):
            return True  # a count that is not traced needs a traced carry (else: a static computation)
    return False


def _rows_may_report(screen: Screen, loop: ast.For, array: ast.expr) -> bool:
    """`_rows` needs an array of kind TRACED, and its static count is reported only in a compiled function."""
    return may_kind(screen, array)[0] and may_be_compiled(screen, screen.function_of.get(id(loop)))


def _collects_or_indexes(screen: Screen, loop: ast.For) -> bool:
    """What a forward range loop needs for JF102 (`_appended_lists` or `_index_rows`): a `name.append(...)` in its
    body, or its target `i` used only as an index `a[i]`, with some such `a` for each name that may be a traced
    array (`_index_rows` asks every mention of `i` to be one, of arrays of kind TRACED: `may_be_rows`)."""
    index = loop.target.id if isinstance(loop.target, ast.Name) else None
    bases: dict[str, bool] = {}  # the names indexed by `i`: whether one of their `a[i]` may be a traced array's row
    parents: dict[int, ast.AST] = {}
    for statement in loop.body:
        for node in ast.walk(statement):
            if isinstance(node, ast.Call) and appends_to_name(node):
                return True
            for child in ast.iter_child_nodes(node):
                parents[id(child)] = node
    if index is None:
        return False
    for statement in loop.body:
        for node in ast.walk(statement):
            if type(node) is not ast.Name or node.id != index:
                continue
            subscript = parents.get(id(node))
            if not (type(subscript) is ast.Subscript and subscript.slice is node and type(subscript.value) is ast.Name):
                return False  # a use other than `a[i]`: `_index_rows` finds nothing
            base = subscript.value
            if not bases.get(base.id):
                bases[base.id] = may_be_rows(screen, base) and may_kind(screen, base)[0]
    return bool(bases) and all(bases.values())


def _surely_blocked(screen: Screen, loop: ast.For) -> bool:
    """Under-approximates `_check` finding a reason before it looks at carries (whose number-start reason is
    reported whatever the count): a target other than one name, an `else:`, an impure body (`.append` to a name
    aside: the scan's outputs). Then a loop whose count is neither traced nor long is not reported."""
    return not isinstance(loop.target, ast.Name) or bool(loop.orelse) or surely_impure(screen, loop, appending=True)
