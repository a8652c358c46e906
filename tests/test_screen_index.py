"""Screen's one-pass node index (`Screen._index`) against what `ast` itself walks: the screens' speed rests on it,
their answers on it giving the same nodes and functions as `ast.walk` and a walk that tracks functions."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from jaxfix.analysis.screen import Screen

ROOT = Path(__file__).resolve().parent.parent

# Every kind of statement and expression this Python parses, in and around functions.
EVERY_FORM = '''
import jax.numpy as jnp, os.path
from jax import lax as l, numpy
from . import sibling
global_value: int = 1

@decorator(arg=lambda q=1: q)
async def outer(a, /, b: "T" = 2, *args, c, d=3, **kwargs) -> jnp.ndarray:  # type: ignore
    global g
    x = y = a + -b
    x += 1
    (z := x) if x else None
    del y
    assert x, "m"
    async with cm() as (p, q), other():
        pass
    async for i in aiter():
        break
    with cm() as r:
        continue
    for k, *rest in items:
        pass
    else:
        pass
    while x < 3 <= b:
        x = x[1:2, ...].at[0].set(1.0)
    try:
        raise ValueError from None
    except (TypeError, ValueError) as error:
        pass
    except Exception:
        pass
    else:
        pass
    finally:
        pass
    def inner():
        nonlocal x
        yield x
        yield from range(3)
        return lambda *v, **w: (v, w)
    await something
    result = [i for i in x if i for j in i], {i: j for i, j in x}, {i for i in x}, (i async for i in x)
    text = f"{x!r:>{b}} {z=}" + b"bytes".decode() + r"raw"
    match x:
        case [1, 2, *others]:
            pass
        case {"k": value, **extra}:
            pass
        case Point(x=0, y=yy) | (None as nothing):
            pass
        case str() if x:
            pass
        case _:
            pass
    return not x and b or {**kwargs} is not None in [True, ...]

class C(Base, metaclass=Meta):
    attribute: list[int] = []
    def method(self, t=1j):
        return self.attribute @ t
'''


def _sources() -> list[str]:
    texts = [EVERY_FORM]
    if sys.version_info >= (3, 11):
        texts.append("try:\n    pass\nexcept* ValueError as group:\n    pass\n")
    if sys.version_info >= (3, 12):
        texts.append("type Alias[T: int, *Ts, **P] = list[T]\ndef f[T](x: T) -> T:\n    return x\n")
    return texts


def _walked(tree: ast.AST) -> list[ast.AST]:
    """`ast.walk`'s nodes but the expression contexts, which the index leaves out."""
    return [node for node in ast.walk(tree) if not isinstance(node, ast.expr_context)]


@pytest.mark.parametrize("text", _sources())
def test_nodes_are_ast_walks_nodes_in_its_order(text) -> None:
    tree = ast.parse(text)
    assert Screen(text, tree).nodes == _walked(tree)


def test_nodes_of_this_repository_are_ast_walks() -> None:
    for path in sorted([*ROOT.glob("jaxfix/**/*.py"), *ROOT.glob("codemods/*.py")]):
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        assert Screen(text, tree).nodes == _walked(tree), path


def test_nodes_of_gives_each_type_and_its_subclasses() -> None:
    tree = ast.parse(EVERY_FORM)
    screen = Screen(EVERY_FORM, tree)
    for types in [(ast.Call,), (ast.For, ast.While), (ast.expr,), (ast.stmt, ast.Lambda)]:
        expected = [node for node in _walked(tree) if isinstance(node, types)]
        assert sorted(map(id, screen.nodes_of(*types))) == sorted(map(id, expected))


def test_a_functions_header_is_its_own_for_tracing_but_the_outer_scopes_for_bindings() -> None:
    """TracedAnalysis traces a decorator or default with its function; PredicateAnalysis binds their names in
    the scope around it."""
    text = "def outer():\n    def inner(p=default, *, q: hint):\n        return body\n"
    screen = Screen(text)
    outer, inner = screen.nodes_of(ast.FunctionDef)
    names = {node.id: position for position, node in enumerate(screen.nodes) if isinstance(node, ast.Name)}
    index = screen._index
    assert index.owners[names["default"]] is inner and index.scopes[names["default"]] is outer
    assert index.owners[names["hint"]] is inner and index.scopes[names["hint"]] is outer
    assert index.owners[names["body"]] is inner and index.scopes[names["body"]] is inner
    assert set(screen._scopes) == {id(outer), id(inner)} and screen._scopes[id(inner)].parent.function is outer


def test_imported_calls_are_those_whose_callee_starts_with_an_imported_name() -> None:
    text = "import jax.numpy as jnp\nfrom jax import jit\n\ndef f(x, self):\n    jnp.zeros(3).sum()\n    jit(f)(x)\n    len(x)\n    self.g()\n"
    screen = Screen(text)
    assert sorted(ast.unparse(call) for call in screen.imported_calls) == ["jit(f)", "jnp.zeros(3)"]
