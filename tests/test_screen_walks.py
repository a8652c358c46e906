"""Screen facts read from the node index or the statements list instead of a walk of their own, against the walks
they replace: `_kinds` (a recursive walk as TracedAnalysis's binding collector walks LibCST), compared entry by
entry on the corpus, this repository and every form the index test parses."""

from __future__ import annotations

import ast
import collections
from pathlib import Path

import pytest

from jaxfix import corpus
from jaxfix.analysis import screen as screens
from jaxfix.analysis.screen import Screen, _bind_loop, _kinds, ast_children, ast_target_names
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


def _collected(screen: Screen) -> screens._Kinds:
    """`_kinds` as a recursive walk of every node, as the binding collector walks LibCST."""
    kinds = screens._Kinds()
    named_seeds: set[str] = set()

    def bind(scope, in_class: bool, name: str, source) -> None:
        if scope is None:
            if in_class:
                return
            scope = kinds.module
        scope.bindings.append((name, source))

    def visit(node, function, scope, in_class: bool) -> None:
        kind = type(node)
        if kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda):
            if kind is not ast.Lambda:
                bind(scope, in_class, node.name, screens._STATIC)
                kinds.defs.setdefault(node.name, []).append(node)
                if any(screen._mentions(d, screens._COMPILING) for d in node.decorator_list):
                    kinds.compiling_seeds.append(node)
                if node.decorator_list:
                    kinds.decorated.append(node)
            inner = kinds.scopes[id(node)] = screens._KindScope(scope, id(node), screens._lambda_params(node))
            if scope is not None:
                scope.nested.append(node)
            for child in ast_children(node):
                visit(child, node, inner, False)
            return
        if kind is ast.ClassDef:
            bind(scope, in_class, node.name, screens._STATIC)
            for child in ast_children(node):
                visit(child, function, scope, in_class or function is None)
            return
        if kind is ast.Assign:
            for target in node.targets:
                for name in ast_target_names(target):
                    bind(scope, in_class, name, node.value)
        elif kind in (ast.AugAssign, ast.NamedExpr) or (kind is ast.AnnAssign and node.value is not None):
            for name in ast_target_names(node.target):
                bind(scope, in_class, name, node.value)
        elif kind in (ast.For, ast.AsyncFor):
            _bind_loop(node, lambda name, source: bind(scope, in_class, name, source))
        elif kind in (ast.With, ast.AsyncWith):
            for item in node.items:
                for name in ast_target_names(item.optional_vars):
                    bind(scope, in_class, name, screens._UNKNOWN)
        elif kind is ast.ExceptHandler and node.name:
            bind(scope, in_class, node.name, screens._STATIC)
        elif kind in (ast.Import, ast.ImportFrom):
            for alias in node.names:
                if alias.name != "*":
                    bind(scope, in_class, (alias.asname or alias.name).split(".")[0], screens._STATIC)
        elif kind in (ast.Global, ast.Nonlocal):
            for name in node.names:
                bind(scope, in_class, name, screens._UNKNOWN)
        elif kind is ast.Call:
            kinds.calls.append((node, function))
            if scope is not None and type(node.func) is ast.Name:
                scope.calls.add(node.func.id)
            if screen.may_resolve_to(node.func, screens._COMPILING):
                for argument in (*node.args, *(k.value for k in node.keywords)):
                    for inner in ast.walk(argument):
                        if isinstance(inner, ast.Lambda):
                            kinds.compiling_seeds.append(inner)
                        elif isinstance(inner, ast.Name):
                            named_seeds.add(inner.id)
        for child in ast_children(node):
            visit(child, function, scope, in_class)

    for statement in screen.tree.body:
        visit(statement, None, None, False)
    kinds.compiling_seeds.extend(f for name in named_seeds for f in kinds.defs.get(name, ()))
    kinds.compiling_seeds.extend(screen.project_seeds)
    return kinds


def _comparable(kinds: screens._Kinds):
    """The collected facts without their order (every use of them is a set or a fixed point)."""
    count = collections.Counter

    def bindings(scope):
        return count((name, source if isinstance(source, tuple) else id(source)) for name, source in scope.bindings)

    def ids(nodes):
        return count(map(id, nodes))

    scopes = {
        key: (scope.parent.function if scope.parent else None, scope.params, bindings(scope), scope.calls,
              ids(scope.nested))
        for key, scope in kinds.scopes.items()
    }
    return (
        scopes, bindings(kinds.module), kinds.module.calls, {name: ids(defs) for name, defs in kinds.defs.items()},
        ids(kinds.compiling_seeds), count((id(call), id(function)) for call, function in kinds.calls),
        ids(kinds.decorated),
    )  # fmt: skip


@pytest.mark.parametrize("text", _texts()[:2] + [CLASSES])
def test_kinds_of_every_form_are_the_collectors(text) -> None:
    screen = Screen(text, ast.parse(text))
    assert _comparable(_kinds(screen)) == _comparable(_collected(screen))


def test_kinds_of_the_corpus_and_this_repository_are_the_collectors() -> None:
    for text in _texts():
        screen = Screen(text, ast.parse(text))
        assert _comparable(_kinds(screen)) == _comparable(_collected(screen)), text[:300]


def test_kinds_leave_out_module_level_class_bodies_alone() -> None:
    screen = Screen(CLASSES, ast.parse(CLASSES))
    kinds = _kinds(screen)
    assert sorted(name for name, _ in kinds.module.bindings) == ["Outer", "jax", "l", "outer"]  # not `m` of its bases
    local = next(s for s in kinds.scopes.values() if s.params == ["n"])
    assert sorted(name for name, _ in local.bindings) == ["Local", "f", "field"]


