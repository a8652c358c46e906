"""The `ast` screen of row writes (JF104): whether a module may hold a `lax.fori_loop` whose body writes rows of its
carry at the loop index, as `jaxfix.analysis.row_writes` would find it (a superset of its answer)."""

from __future__ import annotations

import ast

from jaxfix.analysis.row_writes import _FORI
from jaxfix.analysis.screen import ast_target_names
from jaxfix.facts.traced import param_names


def may_write_rows(screen) -> bool:
    """A finding needs a call that may resolve to `jax.lax.fori_loop`, without `*` or `**` arguments, whose
    body is a lambda or a name some def in the module has, with two parameters (index, carry) and a write
    `out.at[index].set(v)` into the carry or a name the body assigns from it (`RowWriteAnalysis.loop`)."""
    wanted = frozenset({_FORI})
    defs = None
    for node in screen.imported_calls:
        if not screen.may_resolve_to(node.func, wanted):
            continue
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            continue
        body = node.args[2] if len(node.args) > 2 else next((k.value for k in node.keywords if k.arg == "body_fun"), None)
        if isinstance(body, ast.Lambda):
            bodies = [body]
        elif isinstance(body, ast.Name):
            if defs is None:
                defs = {}
                for n in screen.nodes_of(ast.FunctionDef, ast.AsyncFunctionDef):
                    defs.setdefault(n.name, []).append(n)
            bodies = defs.get(body.id, ())
        else:
            continue
        if any(_body_writes_rows(function) for function in bodies):
            return True
    return False


def _body_writes_rows(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> bool:
    """`row_writes._writes_rows` on the `ast`, with the body's first two parameters (syntax.param_names's order)."""
    params = param_names(function.args)
    if len(params) < 2:
        return False
    index, carry = params[0], params[1]
    nodes = [n for part in ([function.body] if isinstance(function, ast.Lambda) else function.body) for n in ast.walk(part)]
    carried = {carry}
    for node in nodes:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id == carry:
            for target in node.targets:
                carried.update(ast_target_names(target))
    for node in nodes:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "set"):
            continue
        at = node.func.value
        if not (isinstance(at, ast.Subscript) and isinstance(at.value, ast.Attribute) and at.value.attr == "at"):
            continue
        if not (isinstance(at.value.value, ast.Name) and at.value.value.id in carried):
            continue
        elements = at.slice.elts if isinstance(at.slice, ast.Tuple) else [at.slice]
        first = elements[0] if elements else None
        if not (isinstance(first, ast.Name) and first.id == index):
            continue
        full = all(isinstance(e, ast.Slice) and e.lower is None and e.upper is None and e.step is None for e in elements[1:])
        if full and len(node.args) == 1 and not node.keywords and not isinstance(node.args[0], ast.Starred):
            return True
    return False

