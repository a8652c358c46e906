"""jaxfix.analysis.metadata gives LibCST's own answers: each node's children are `node.children` in the same
order, the parent map equals ParentNodeProvider's, node for node (qualified names are the `ast` binder's, compared
with QualifiedNameProvider's in tests/test_binder.py), and a visit under `fast_visits()` makes the same calls in
the same order as LibCST's (so every metadata provider and codemod sees the same), on every corpus file and on
the shapes of code that scopes treat specially."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import (
    ExpressionContextProvider,
    MetadataWrapper,
    ParentNodeProvider,
    PositionProvider,
    ScopeProvider,
)

from jaxfix.analysis import metadata
from jaxfix.analysis.metadata import StatementPositions, children, fast_visits, parent_map

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


def _deepest_first(module: cst.Module) -> list[cst.CSTNode]:
    """Every node, the deepest first: a method's nodes are asked for before its class's."""
    found, stack = [], [(module, 0)]
    while stack:
        node, depth = stack.pop()
        found.append((depth, node))
        stack.extend((child, depth + 1) for child in node.children)
    return [node for _, node in sorted(found, key=lambda pair: -pair[0])]


def _every_field_parents(module: cst.Module) -> list[tuple[int, int]]:
    """(child, parent) for every node held in any dataclass field of another (parent_map reads only the visited
    ones), in parent_map's order."""
    found, stack = [], [module]
    while stack:
        node = stack.pop()
        for field in dataclasses.fields(node):
            value = getattr(node, field.name)
            for item in value if isinstance(value, (list, tuple)) else [value]:
                if isinstance(item, cst.CSTNode):
                    found.append((id(item), id(node)))
                    stack.append(item)
    return found


@pytest.mark.parametrize("name, source", _sources(), ids=lambda v: v if "\n" not in v else "")
def test_same_answers_as_libcst(name, source):
    wrapper = MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True)
    for node in _nodes(wrapper.module):
        ours, theirs = children(node), node.children
        assert len(ours) == len(theirs) and all(a is b for a, b in zip(ours, theirs)), type(node).__name__
    ours = parent_map(wrapper.module)
    assert ours == dict(wrapper.resolve(ParentNodeProvider))
    assert [(id(a), id(b)) for a, b in ours.items()] == _every_field_parents(wrapper.module)


class _Events(cst.CSTVisitor):
    """A visitor that records what a traversal calls on it in `events`."""

    def __init__(self) -> None:
        self.events: list[tuple] = []


class _Recorder(_Events):
    """Every call a traversal makes on it, in order. It declines the children of every fifth node, as a visitor
    whose `visit_X` returns False does; `hooks=False` records no attribute calls (the path that skips them)."""

    def on_visit(self, node):
        self.events.append(("visit", type(node).__name__, id(node)))
        return len(self.events) % 5 != 0

    def on_leave(self, node):
        self.events.append(("leave", id(node)))


class _HookRecorder(_Recorder):
    def on_visit_attribute(self, node, attribute):
        self.events.append(("enter", id(node), attribute))

    def on_leave_attribute(self, node, attribute):
        self.events.append(("exit", id(node), attribute))


class _FieldHooks(_Recorder):
    """Hooks found by LibCST's default attribute calls, as ScopeVisitor's `visit_ClassDef_bases` are (an f-string's
    absent format spec gets none)."""

    def visit_Call_args(self, node):
        self.events.append(("args", id(node)))

    def leave_Call_args(self, node):
        self.events.append(("/args", id(node)))

    def visit_FormattedStringExpression_format_spec(self, node):
        self.events.append(("spec", id(node)))


class _MethodRecorder(_Events):
    """LibCST's own `on_visit` and `on_leave`, which call `visit_<Node>`/`leave_<Node>` by the node's type; it
    declines the children of every other call."""

    def visit_Name(self, node):
        self.events.append(("name", node.value))

    def visit_Call(self, node):
        self.events.append(("call", id(node)))
        return len(self.events) % 2 == 0

    def leave_Call(self, node):
        self.events.append(("/call", id(node)))

    def leave_Attribute(self, node):
        self.events.append(("/attribute", id(node)))


class _TriviaRecorder(_Events):
    """Methods for whitespace and punctuation, which a visitor without them never reaches (metadata.TRIVIA)."""

    def visit_Comment(self, node):
        self.events.append(("comment", node.value))

    def leave_Comma(self, node):
        self.events.append(("/comma", id(node)))


class _Batched(cst.BatchableCSTVisitor):
    """A batched visitor with a field hook, as ScopeProvider has (`visit_ClassDef_bases`)."""

    def __init__(self, events: list) -> None:
        super().__init__()
        self.events = events

    def visit_Name(self, node):
        self.events.append(("name", node.value))

    def visit_Call_args(self, node):
        self.events.append(("args", id(node)))

    def leave_Call_args(self, node):
        self.events.append(("/args", id(node)))


def _recorded(module: cst.Module, kind: type) -> list[tuple]:
    visitor = kind()
    module.visit(visitor)
    return visitor.events


@pytest.mark.parametrize("name, source", _sources(), ids=lambda v: v if "\n" not in v else "")
def test_fast_visits_make_libcsts_calls(name, source):
    module = cst.parse_module(source)
    expected = {kind: _recorded(module, kind) for kind in (_Recorder, _HookRecorder, _FieldHooks, _MethodRecorder, _TriviaRecorder)}
    batched_expected: list = []
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([_Batched(batched_expected)])
    libcst_scopes = _scope_facts(MetadataWrapper(module, unsafe_skip_copy=True))
    with fast_visits():
        assert cst.CSTNode.visit is metadata.visit
        for kind, events in expected.items():
            assert _recorded(module, kind) == events, kind.__name__
        batched: list = []
        MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([_Batched(batched)])
        assert batched == batched_expected
        assert _scope_facts(MetadataWrapper(module, unsafe_skip_copy=True)) == libcst_scopes
    assert cst.CSTNode.visit is metadata._LIBCST_VISIT


def _scope_facts(wrapper: MetadataWrapper) -> list:
    """What ScopeProvider and ExpressionContextProvider say of every node: its scope's kind and name, the qualified
    names it has there, and its expression context; then every scope's assignments and accesses."""
    scopes = wrapper.resolve(ScopeProvider)
    contexts = wrapper.resolve(ExpressionContextProvider)
    facts = []
    for node in _nodes(wrapper.module):
        scope = scopes.get(node)
        names = sorted((q.name, q.source.name) for q in scope.get_qualified_names_for(node)) if scope else None
        facts.append((type(node).__name__, type(scope).__name__, getattr(scope, "name", None), names, contexts.get(node)))
    for scope in dict.fromkeys(s for s in scopes.values() if s is not None):
        facts.append(sorted((a.name, type(a).__name__, len(a.references)) for a in scope.assignments))
        facts.append(sorted((a.node.value if isinstance(a.node, cst.Name) else type(a.node).__name__) for a in scope.accesses))
    return facts


def test_fast_visits_leave_transformers_to_libcst():
    class Upper(cst.CSTTransformer):
        def leave_Name(self, original, updated):
            return updated.with_changes(value=updated.value.upper())

    with fast_visits():
        assert cst.parse_module("x = y\n").visit(Upper()).code == "X = Y\n"


class _NameRecorder(_Events):
    def visit_Name(self, node):
        self.events.append(("name", node.value))


def _with_own_method(module: cst.Module) -> list[tuple]:
    visitor = _NameRecorder()
    visitor.visit_Attribute = lambda node: visitor.events.append(("own", type(node.value).__name__))
    module.visit(visitor)
    return visitor.events


def test_fast_visits_see_methods_an_instance_holds():
    """What `visit` found for a visitor class holds for an instance with the same names in its dict, and no other:
    one with a method of its own (or another set of names) is looked at anew."""
    module = cst.parse_module("f(x, y.z)\n")
    expected = _with_own_method(module)
    assert ("own", "Name") in expected
    with fast_visits():
        assert _recorded(module, _NameRecorder) == _recorded(module, _NameRecorder)  # the second from the cache
        assert _with_own_method(module) == expected
        visitor = _NameRecorder()
        visitor.extra = None
        module.visit(visitor)
        assert visitor.events == _recorded(module, _NameRecorder)


def test_fast_visits_nest_and_restore():
    with fast_visits():
        with fast_visits():
            assert cst.CSTNode.visit is metadata.visit
        assert cst.CSTNode.visit is metadata.visit  # the outer block still holds it
    assert cst.CSTNode.visit is metadata._LIBCST_VISIT


@pytest.mark.parametrize("name, source", _sources(), ids=lambda v: v if "\n" not in v else "")
def test_statement_positions_are_libcsts(name, source):
    import ast

    try:
        tree = ast.parse(source)
    except SyntaxError:  # newer syntax than this Python's `ast` (the engine then uses PositionProvider itself)
        pytest.skip("ast cannot parse it here")
    wrapper = MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True)
    expected = wrapper.resolve(PositionProvider)
    positions = StatementPositions(wrapper, tree, parent_map(wrapper.module))
    inside = [n for statement in wrapper.module.body for n in _nodes(statement)]
    for node in inside:
        assert positions[node] == expected[node], (name, type(node).__name__)
    assert positions._whole is None, "a statement fell back to the whole module's positions"
    for node in _nodes(wrapper.module):  # the module, its header and footer too
        assert positions[node] == expected[node]
    assert cst.Name("elsewhere") not in positions
    innermost_first = StatementPositions(wrapper, tree, parent_map(wrapper.module))  # methods placed one by one
    for node in _deepest_first(wrapper.module):
        assert innermost_first[node] == expected[node], (name, type(node).__name__)


def test_statement_positions_inside_classes():
    """A node inside a class body is placed by generating its statement alone at the body's indentation: tabs,
    nested classes, decorators, strings over several lines, continuation lines, several statements on a line."""
    import ast

    source = (
        "import jax\n\n\nclass Outer(Base):\n\t'''Doc\n\tstring.'''\n\tx = 1; y = 2\n\n"
        "\t@jax.jit\n\tdef step(self, a,\n\t\t\tb):\n\t\ts = '''one\ntwo''' + str(a)\n\t\treturn (s +\n  b)\n\n"
        "\tclass Inner:\n\t\t  def deep(self):  # comment\n\t\t      return [1,\n 2]\n\n"
        "class Empty: pass\n"
    )
    tree = ast.parse(source)
    wrapper = MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True)
    expected = wrapper.resolve(PositionProvider)
    positions = StatementPositions(wrapper, tree, parent_map(wrapper.module))
    method = wrapper.module.body[1].body.body[2]
    for node in _deepest_first(method):
        assert positions[node] == expected[node], type(node).__name__
    assert wrapper.module.body[1] not in positions._computed and positions._whole is None  # not the whole class
    for node in _deepest_first(wrapper.module):
        assert positions[node] == expected[node], type(node).__name__
    assert positions._whole is not None  # the module's own header asks for the whole


def test_statement_positions_inside_blocks():
    """A node inside nested blocks (a loop in a method, an `elif`, a handler, a `finally`) is placed by generating
    its innermost statement alone at the blocks' indentation, not its function's whole code."""
    import ast

    source = (
        "class C:\n  async def m(self, xs):\n    for x in xs:\n    \tif x:\n    \t  pass\n    \telif x > 1:\n"
        "    \t  y = f(x)  # c\n    \telse:\n    \t  while g(\n x):\n    \t      break\n    else:\n      try:\n"
        "        async with a as b: z = [1,\n2]\n      except E:\n        h(1); h(2)\n      else:\n        ok = 'é'\n"
        "      finally:\n\n        # c\n        done()\n    match xs:\n      case [a]:\n        pass\n"
    )
    tree = ast.parse(source)
    wrapper = MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True)
    expected = wrapper.resolve(PositionProvider)
    method = wrapper.module.body[0].body.body[0]
    for node in [n for statement in method.body.body for n in _nodes(statement)]:
        positions = StatementPositions(wrapper, tree, parent_map(wrapper.module))
        assert positions[node] == expected[node], type(node).__name__
        assert method not in positions._computed and positions._whole is None, type(node).__name__
    for node in _deepest_first(wrapper.module):
        assert positions[node] == expected[node], type(node).__name__
    positions = StatementPositions(wrapper, tree, parent_map(wrapper.module))
    call = next(n for n in _nodes(method) if isinstance(n, cst.Call) and getattr(n.func, "value", None) == "f")
    assert positions[call] == expected[call]
    assert len(positions._computed) < 20  # `y = f(x)  # c` alone


def test_statement_positions_of_unusual_text():
    import ast

    for source in ["x = 1", "x = 'é'; y = (\n  2)\r\n\r\n@d\n\n# c\ndef f(): return 'ü'\r\n", "if x:\n\tpass\n# end"]:
        wrapper = MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True)
        expected = wrapper.resolve(PositionProvider)
        positions = StatementPositions(wrapper, ast.parse(source), parent_map(wrapper.module))
        assert all(positions[n] == expected[n] for n in _nodes(wrapper.module)), source
