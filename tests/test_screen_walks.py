"""Screen facts read from the node index or the statements list instead of a walk of their own, against the walks
they replace: prng_key_reuse's `_alias_groups` (a walk of every node of a scope), compared entry by entry on the
corpus, this repository and every form the index test parses."""

from __future__ import annotations

import ast
import collections
from pathlib import Path

import pytest

from jaxfix import corpus
from jaxfix.analysis import screen as screens
from jaxfix.analysis.screen import Screen, ast_children, ast_target_names
from jaxfix.codemods import prng_key_reuse
from tests.test_screen_index import _sources

ROOT = Path(__file__).resolve().parent.parent

# What the index misses and a walk does not: bindings in a class body (module level, and in a function), in a
# class's bases, a method's header, a lambda and a comprehension in a class, `:=` everywhere.
CLASSES = '''
import jax
from jax import lax as l

class Outer(Base, metaclass=(m := Meta)):
    x = y = 1
    lam = lambda q: q
    values = [z := i for i in range(3)]
    try:
        import numpy as np
    except ImportError as error:
        np = None
    class Inner:
        inner_value: int = 2
        def method(self, a=(d := 4)):
            b = a
            return b
    @jax.jit
    def step(self, state):
        for i, (k, v) in enumerate(state):
            state += v
        with open(state) as handle:
            global g
        return jax.vmap(lambda s: s)(state)

def outer(n):
    class Local:
        field = n
        def f(self):
            nonlocal n
            return helper(self)
    return l.scan(body, n, None), jax.jit(other)
'''


def _texts() -> list[str]:
    texts = [*_sources(), CLASSES]
    for case in corpus.cases():
        texts.extend(path.read_text(encoding="utf-8") for path in (case.before, case.after) if path.exists())
    for path in sorted([*ROOT.glob("jaxfix/analysis/*.py"), *ROOT.glob("codemods/*.py")]):
        texts.append(path.read_text(encoding="utf-8"))
    return texts


def _walked_groups(scope: ast.AST) -> dict[str, frozenset[str]]:
    """`_alias_groups` as a walk of every node of the scope."""
    parent: dict[str, str] = {}

    def find(name: str) -> str:
        while parent.setdefault(name, name) != name:
            name = parent[name]
        return name

    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(ast.iter_child_nodes(node))
        if isinstance(node, ast.Assign):
            targets, value = [n for t in node.targets for n in prng_key_reuse._bound(t)], node.value
        elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)):
            targets, value = prng_key_reuse._bound(node.target), node.value
        else:
            continue
        names = [*targets, *prng_key_reuse._value_names(value)]
        if prng_key_reuse._value_names(value):
            for name in names[1:]:
                parent[find(name)] = find(names[0])
    groups: dict[str, set[str]] = {}
    for name in list(parent):
        groups.setdefault(find(name), set()).add(name)
    return {name: frozenset(groups[find(name)]) for name in parent}


ALIASES = '''
key = rng
a, (b, c) = key, (other, more)
class C:
    inside = key
def f(k):
    x = y = k
    if x:
        for i in range(3):
            z: object = x
    def g():
        w = z
    return [v := z for _ in x]
'''


@pytest.mark.parametrize("walrus", [False, True])
def test_alias_groups_are_the_walks(walrus) -> None:
    texts = [ALIASES if walrus else ALIASES.replace("[v := z for _ in x]", "x"), *_texts()]
    for text in texts:
        tree = ast.parse(text)
        screen = Screen(text, tree)
        defs = [s for s, _ in screen.statements if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
        for scope in [tree, *defs]:
            assert prng_key_reuse._alias_groups(screen, scope) == _walked_groups(scope), text[:300]
    screen = Screen(ALIASES, ast.parse(ALIASES))
    f = next(s for s, _ in screen.statements if isinstance(s, ast.FunctionDef) and s.name == "f")
    assert prng_key_reuse._alias_groups(screen, f)["v"] == {"v", "z", "x", "y", "k"}
