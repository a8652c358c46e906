"""jaxfix.analysis.metadata gives LibCST's own answers: each node's children are `node.children` in the same
order, the parent map equals ParentNodeProvider's and the qualified names equal QualifiedNameProvider's, node
for node, on every corpus file and on the shapes of code that scopes treat specially."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, ParentNodeProvider, QualifiedNameProvider

from jaxfix.analysis.metadata import QualifiedNames, children, parent_map

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
SPECIAL = {
    "shim": "try:\n    from jax import tree_map as tm\nexcept ImportError:\n    from jax.tree_util import tree_map as tm\ntm(f, x)\n",
    "shadowed": "import jax.numpy as jnp\ndef f(jnp):\n    return jnp.sum(1)\nclass C:\n    jnp = 1\n    y = [jnp for _ in ()]\n",
    "comprehension": "import jax\nys = [jax.jit(f) for f in fs if f]\ng = (lambda jax: jax)(1)\n",
    "global": "import numpy as np\ndef f():\n    global np\n    import jax.numpy as np\n    return np.ones(2)\n",
    "match": "match x:\n    case [a, *rest] if a:\n        print(a, rest)\n    case {'k': v, **kw}:\n        pass\n",
    "syntax": "async def f(*a, b=1, **k):\n    async with x as (y, z):\n        await w\n    return f'{a!r:>{b}}' + rb'x'\n"
    "lambda *, k=1: (yield from g) if a else [*b, {**c}]\ndel x[1:2:3], y\nassert p, q\nraise E from e\n"
    "type T[X: int] = list[X]\nx: int = 1\nwhile x := y:\n    break\nelse:\n    pass\n",
    "decorators": "from functools import partial\nimport jax\n@partial(jax.jit, static_argnums=0)\ndef f(n, x=jax.numpy.ones(3)):\n    return x * n\n",
}


def _sources() -> list[tuple[str, str]]:
    files = sorted(CORPUS.rglob("*.py"))
    return [*SPECIAL.items(), *((str(f.relative_to(CORPUS)), f.read_text(encoding="utf-8")) for f in files)]


def test_there_are_corpus_files():
    assert len(_sources()) > 500


def _nodes(module: cst.Module) -> list[cst.CSTNode]:
    found, stack = [], [module]
    while stack:
        node = stack.pop()
        found.append(node)
        stack.extend(node.children)
    return found


@pytest.mark.parametrize("name, source", _sources(), ids=lambda v: v if "\n" not in v else "")
def test_same_answers_as_libcst(name, source):
    wrapper = MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True)
    for node in _nodes(wrapper.module):
        ours, theirs = children(node), node.children
        assert len(ours) == len(theirs) and all(a is b for a, b in zip(ours, theirs)), type(node).__name__
    assert parent_map(wrapper.module) == dict(wrapper.resolve(ParentNodeProvider))
    expected = wrapper.resolve(QualifiedNameProvider)
    ours = QualifiedNames(wrapper)
    for node, value in expected.items():
        value = value() if callable(value) else value
        assert set(ours.get(node, ())) == set(value), (name, cst.Module([]).code_for_node(node))
