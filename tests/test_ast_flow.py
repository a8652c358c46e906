"""jaxfix.analysis.ast_flow over-approximates dataflow.FunctionFlow: at every loop of every function, the names
FunctionFlow finds live at its head or after it are among `loop_liveness`'s; at every statement, each binding
FunctionFlow finds reaching it (`reaching`) stands in a statement `StatementOrder.may_reach` lets through. Checked
on every corpus file before its fix and on the shapes of code whose flow is special (exits, handlers, `with`, walrus, closures)."""

from __future__ import annotations

import ast
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider

from jaxfix import corpus
from jaxfix.analysis import ast_flow
from jaxfix.analysis.dataflow import UNDEFINED, FunctionFlow, Parameter

SPECIAL = {
    "exits": "def f(xs, n):\n    y = 0\n    for x in xs:\n        if x:\n            z = x\n            continue\n"
    "        elif n:\n            w = z\n            break\n        else:\n            return y\n        y = w\n"
    "    else:\n        v = y\n    while n > y:\n        n -= 1\n        if n:\n            q = n\n    return v, q\n",
    "handlers": "def f(a):\n    for i in range(a):\n        try:\n            b = g(i)\n            c = b\n"
    "        except (E, F) as err:\n            b = err\n        else:\n            d = c\n        finally:\n"
    "            e = b\n    return e\n",
    "handlers_without_loop": "def f(a):\n    try:\n        b = g(a)\n        c = b\n    except E as err:\n        b = err\n"
    "    else:\n        d = c\n    finally:\n        e = b\n    if a:\n        h = e\n    else:\n        h = d\n    return h\n",
    "with": "def f(a):\n    for i in a:\n        with g(i) as (h, k):\n            m = h\n            n = m\n"
    "        p = n\n    return k\n",
    "walrus": "def f(a):\n    for i in a:\n        if (b := g(i)) > 0:\n            c = [d := e for e in b]\n"
    "        x: int\n        y: int = d\n        z = (lambda q=(r := 1): q + r)()\n    return y, r\n",
    "closures": "def f(a):\n    def g():\n        return b\n    for i in a:\n        b = i\n        c = lambda: d\n"
    "        d = i\n        class K:\n            e = c\n    return g\n",
    "declared": "def f(a):\n    global t\n    def g():\n        nonlocal a\n        a = 1\n    for i in a:\n"
    "        t = i\n        a = i\n        del t\n    return a\n",
    "nested_loops": "def f(xs):\n    for x in xs:\n        for y in x:\n            z = y\n        for w in x:\n"
    "            u = z\n        z = 0\n    return u\n",
}


def _texts() -> list[tuple[str, str]]:
    texts = list(SPECIAL.items())
    for case in corpus.cases():  # the text before each fix: the code the rules read
        if case.before.exists():
            texts.append((str(case.before), case.before.read_text(encoding="utf-8")))
    return texts


def _functions(text: str, tree: ast.Module):
    """(LibCST def, its def in `tree`, positions, wrapper) for each def of the text."""
    wrapper = MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    defs = {(node.name, node.body[0].lineno): node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    for node in positions:
        if isinstance(node, cst.FunctionDef):
            first = positions[node.body.body[0] if isinstance(node.body, cst.IndentedBlock) else node.body].start.line
            yield node, defs[(node.name.value, first)], positions, wrapper


@pytest.mark.parametrize("name, text", _texts(), ids=lambda value: Path(value).name[:40] if "\n" not in value else None)
def test_ast_flow_over_approximates_function_flow(name, text) -> None:
    tree = ast.parse(text)
    functions = list(_functions(text, tree))
    _check_liveness(name, functions)
    _check_reaching(name, tree, functions)


def _check_liveness(name: str, functions) -> None:
    """Each name FunctionFlow finds live at a loop's head or after it is among `loop_liveness`'s."""
    for function, tree_function, positions, wrapper in functions:
        if any(isinstance(n, ast.Name) and n.id in ("locals", "vars", "eval", "exec", "dir") for n in ast.walk(tree_function)):
            continue  # FunctionFlow takes every name as live: the screens never ask then (`screen._reads`)
        flow = FunctionFlow(function)
        loops = {(n.lineno, n.col_offset): n for n in ast.walk(tree_function) if isinstance(n, (ast.For, ast.AsyncFor, ast.While))}
        live = ast_flow.loop_liveness(tree_function)
        parents = wrapper.resolve(ParentNodeProvider)
        for node in positions:
            if not isinstance(node, (cst.For, cst.While)):
                continue
            owner = parents.get(node)
            while not isinstance(owner, (cst.FunctionDef, cst.Lambda, cst.Module)):
                owner = parents.get(owner)
            if owner is not function:
                continue
            start = positions[node].start
            found = live.get(id(loops[(start.line, start.column)]))
            if found is None:
                continue  # no answer: any name may be live
            expected = (flow.live_at_head(node) | flow.live_after(node)) - {"True", "False", "None"}
            assert expected <= found, (name, start.line, sorted(expected - found))


def _check_reaching(name: str, tree: ast.Module, functions) -> None:
    """Each binding FunctionFlow finds reaching a statement stands in one `StatementOrder.may_reach` lets through."""
    tree_statements = {(n.lineno, n.col_offset): n for n in ast.walk(tree) if isinstance(n, ast.stmt)}
    for function, tree_function, positions, _ in functions:
        flow = FunctionFlow(function)
        order = ast_flow.StatementOrder(tree_function)
        for statement, state in flow._reaching.items():
            start = positions[statement].start
            use = tree_statements.get((start.line, start.column))
            if use is None or order._paths.get(id(use)) is None:
                continue  # a statement of a nested def, which has its own flow
            for variable, sources in state.items():
                bindings = order.bindings(variable)
                if bindings is None:
                    continue
                reaching = [b for b, _ in bindings if order.may_reach(b, use)]
                for source in sources:
                    if source is UNDEFINED or isinstance(source, Parameter):
                        continue
                    at = positions[source].start
                    assert any(
                        (b.lineno, b.col_offset) <= (at.line, at.column) <= (b.end_lineno, b.end_col_offset) for b in reaching
                    ), (name, start.line, variable, at.line)
