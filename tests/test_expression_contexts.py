"""jaxfix.analysis.expression_contexts gives LibCST's own ExpressionContextProvider map: the same nodes in the
same order, each with the same context, on every corpus file, on some real files (LibCST's and the standard
library's own sources) and on the shapes of code that ExpressionContextVisitor treats specially."""

from __future__ import annotations

import ast
import dataclasses
import inspect
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import ExpressionContextProvider, MetadataWrapper
from libcst.metadata.expression_context_provider import ExpressionContextVisitor

from jaxfix.analysis import expression_contexts
from jaxfix.analysis.metadata import TRIVIA, fast_visits

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
REAL = [
    Path(inspect.getfile(module))
    for module in (ast, dataclasses, inspect, cst._nodes.expression, cst._nodes.statement, cst.metadata.scope_provider)
]
SPECIAL = {
    "assignments": "a = b = c\na.b, c[d] = e\n[x, *y], (z,) = w\na += 1\na.b -= c\nd[e] *= f\nx: int = 1\n"
    "y.z: str\nw[0]: 'T' = g(h)\n",
    "walrus": "if (n := len(a)) > 10:\n    pass\nprint([y := f(x), y ** 2])\nwhile chunk := f.read():\n    pass\n",
    "comprehensions": "ys = [y for x in xs for y in x if y if not y.z]\nd = {k: v for k, (v, w) in d.items()}\n"
    "g = (a.b for a.b in c)\ns = {t[0] for t[0] in [u := 1 for _ in ()]}\nsum(x async for x in aiter())\n",
    "stars": "a, *b = c\n*d, = e\n[*f, g] = h\nprint(*args, **kwargs)\nx = [*a, *b]\nfor *i, j in k:\n    pass\n",
    "del": "del a\ndel a.b, c[d]\ndel (e, [f, g.h])\ndel i[j][k].l\n",
    "subscripts": "a[b] = c\na[b:c, d:e:f] = g\na[b][c] = d\na[b.c] = d[e]\nx = y[z]\nm[...] = n[:, None]\n",
    "attributes": "a.b.c = d.e\nf().g = h\n(i or j).k = l\nm.n[o].p = q\n",
    "classes": "@dec(a)\nclass C(B, metaclass=M, k=v):\n    x: int = 1\n    def m(self, z=x, *a, k: 'T' = 2, **kw) -> R:\n"
    "        return z\n    class D:\n        pass\n",
    "functions": "@d.e\nasync def f(a, /, b: int = c, *, d=e.f, **g) -> h.i:\n    nonlocal j\n    global k\n"
    "    return (yield l)\nlambda m, n=o, *p, q=r, **s: m + n\n",
    "imports": "import a.b.c as d, e\nfrom . import f\nfrom .g import (h as i, j,)\nfrom k import *\n",
    "compound": "for a, b in c:\n    pass\nelse:\n    d = e\nasync for f in g:\n    h = f\nwith i as j, k as (l, m.n):\n"
    "    pass\ntry:\n    o\nexcept P as q:\n    r\nexcept (S, T):\n    pass\nelse:\n    u\nfinally:\n    v\n"
    "try:\n    w\nexcept* X as y:\n    pass\n",
    "match": "match x:\n    case [a, *rest] if a:\n        print(a, rest)\n    case {'k': v, **kw}:\n        pass\n"
    "    case P(q=r) | Q(r) as s:\n        s.t = s\n    case _:\n        u[v] = w\n",
    "type_parameters": "type T[X: int, *Ys, **P] = list[X]\ndef f[A: 'B'](a: A) -> A:\n    return a\n"
    "class K[Z: (int, str)](Base[Z]):\n    pass\n",
    "strings": "x = f'{a!r:>{b}} {c.d} {e[f]}'\ny = 'a' 'b' f'c'\nz = rb'd' b'e'\n",
    "whitespace": "x = ( # comment\n    1 ,  # more\n\n    2 ,)\ny = x [ 1 : 2 , :: 3 ] ;  z = { 'a' : 1 }\n"
    "def f (a , * , b = 1) :  # c\n    return a\\\n        + b\n",
}


def _sources() -> list[tuple[str, str]]:
    files = sorted(CORPUS.rglob("*.py"))
    return [
        *SPECIAL.items(),
        *((str(f.relative_to(CORPUS)), f.read_text(encoding="utf-8")) for f in files),
        *((f.name, f.read_text(encoding="utf-8")) for f in REAL),
    ]


def test_there_are_corpus_files():
    assert len(_sources()) > 500


def test_every_method_of_libcsts_visitor_is_followed():
    """A method that a later LibCST adds to ExpressionContextVisitor must get its `_visit_<Node>` too."""
    methods = {name for name in vars(ExpressionContextVisitor) if name.startswith(("visit_", "leave_", "on_"))}
    assert methods == {f"visit_{kind.__name__}" for kind in expression_contexts._SPECIAL}
    assert not {kind.__name__ for kind in TRIVIA} & {name.split("_", 1)[1] for name in methods}


class _LibcstContexts(ExpressionContextProvider):
    """ExpressionContextProvider as LibCST defines it, whatever `expression_contexts.install()` has done."""

    def visit_Module(self, node: cst.Module) -> None:
        node.visit(ExpressionContextVisitor(self, expression_contexts.LOAD))


def _entries(module: cst.Module, provider: type[ExpressionContextProvider], fast: bool) -> list[tuple[int, object]]:
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    if fast:
        with fast_visits():
            found = wrapper.resolve(provider)
    else:
        found = wrapper.resolve(provider)
    return [(id(node), value) for node, value in found.items()]


@pytest.mark.parametrize("name, source", _sources(), ids=lambda v: v if "\n" not in v else "")
def test_same_contexts_as_libcst(name, source):
    expression_contexts.install()
    module = cst.parse_module(source)
    expected = _entries(module, _LibcstContexts, fast=False)
    assert ExpressionContextProvider.visit_Module is expression_contexts.visit_Module
    assert expected, name
    for fast in (True, False):
        assert _entries(module, ExpressionContextProvider, fast) == expected, (name, fast)
    assert [(id(node), value) for node, value in expression_contexts.contexts(module).items()] == expected
