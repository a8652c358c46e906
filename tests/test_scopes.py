"""jaxfix.analysis.scopes gives LibCST's own ScopeProvider map: the same nodes in the same order, each with a
scope of the same shape (kind, node, name, parent, assignments, accesses, what each access refers to,
qualified names), under LibCST's traversal and under `fast_visits()`, on every corpus file and on the shapes
of code that ScopeVisitor treats specially."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, ScopeProvider
from libcst.metadata.scope_provider import Access, BaseAssignment, LocalScope, Scope, ScopeVisitor

from jaxfix.analysis import scopes
from jaxfix.analysis.metadata import TRIVIA, fast_visits
from jaxfix.analysis.syntax import walk

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
SPECIAL = {
    "annotations": "from typing import cast, NewType, TypeVar, Literal, List\nimport typing as t\n"
    "def f(a: 'List[int]', b: \"t.Optional['X']\" = None) -> 'Literal[\"no\"]':\n    x: 'int' = cast('Y', a)\n"
    "    return t.cast(List['Z'], b)\nN = NewType('N', 'int')\nT = TypeVar('T', bound='Q')\nbad: '1 +' = 2\n",
    "classes": "import jax\nclass C(jax.Base, 'Str', metaclass=M, k=v):\n    x = 1\n    y = [x for _ in ()]\n"
    "    def m(self, z=x):\n        nonlocal q\n        return lambda w=z: (w, self, __class__)\n",
    "comprehensions": "ys = [y for x in xs for y in x if y]\nd = {k: v for k, v in d.items()}\n"
    "g = (a for a in (b := c))\ns = {t for t in [u := 1 for _ in ()]}\n",
    "scopes": "import numpy as np\ndef f():\n    global np\n    import jax.numpy as np\n    def g():\n"
    "        nonlocal h\n    h = 1\n    del h\n    return np.ones(2)\nfor i, (j, k) in z:\n    pass\nelse:\n    i\n"
    "async def a():\n    async for q in r:\n        pass\n    async with s as (t, u):\n        await t\n",
    "match": "match x:\n    case [a, *rest] if a:\n        print(a, rest)\n    case {'k': v, **kw}:\n        pass\n"
    "    case P(q=r) | Q(r) as s:\n        s\n",
    "type_parameters": "type T[X: int, *Ys, **P] = list[X]\ndef f[A: 'B'](a: A) -> A:\n    return a\n"
    "class K[Z](Base[Z]):\n    pass\n",
    "whitespace": "x = ( # comment\n    1 ,  # more\n\n    2 ,)\ny = x [ 1 : 2 , :: 3 ] ;  z = { 'a' : 1 }\n"
    "def f (a , * , b = 1) :  # c\n    return a\\\n        + b\n",
    "imports": "import a.b.c as d, e\nfrom . import f\nfrom .g import (h as i, j,)\nfrom k import *\na.b.c.x\ne.y\n",
    # what makes a callee or a subscripted name one of typing's (ScopeVisitor then reads strings as type hints)
    "typing_names": "c0 = cast('A', x)\nfrom typing import cast as c, NewType\nimport typing_extensions as te, os\n"
    "import typing.re\nfrom .typing import cast as rc\nv = c('B', x), rc('C', x), NewType('N', 'D')\n"
    "w = te.Literal['E'], te.Optional['F'], typing.cast('G', x), typing.re.X['H'], os.cast('I', x)\n"
    "def typing(y):\n    return cast('J', y), List['K'], y.cast('L', y)\nclass typing_extensions:\n    Literal = 1\n"
    "    z = Literal['M'], cast('N', z)\ndef g(cast):\n    return cast('O', cast)[0]['P']\nq: 'import typing as u' = 1\n"
    "r = u.cast('Q', x), (x or y).cast('R', x), f()['S'], f()[0].cast('T', x)\n"
    "s: 'Callable[[], \"import os as o2\"]' = o2.path\n",
    "typing_local": "typing = object()\ny = typing.cast('A', x), typing.TypeVar('B'), typing.Literal['C']\n",
}


def _sources() -> list[tuple[str, str]]:
    files = sorted(CORPUS.glob("*/*/before.py")) + sorted(CORPUS.glob("*/*/after.py"))
    return [*SPECIAL.items(), *((str(f.relative_to(CORPUS)), f.read_text(encoding="utf-8")) for f in files)]


def test_there_are_corpus_files():
    assert len(_sources()) > 500


def test_scope_visitor_has_no_method_for_trivia():
    """`_QuickScopeVisitor` records TRIVIA nodes without calling anything: ScopeVisitor must not answer them."""
    names = {kind.__name__ for kind in TRIVIA}
    for name in dir(ScopeVisitor):
        if name.startswith(("visit_", "leave_")) and not getattr(getattr(ScopeVisitor, name), "_is_no_op", False):
            assert name.split("_")[1] not in names, name


class _LibcstScopes(ScopeProvider):
    """ScopeProvider as LibCST defines it, whatever `scopes.install()` has done to ScopeProvider."""

    def visit_Module(self, node: cst.Module) -> None:
        visitor = ScopeVisitor(self)
        node.visit(visitor)
        visitor.infer_accesses()


class _Shapes:
    """Comparable descriptions of the scopes of one map. The two maps hold the same module's nodes (and nodes
    that ScopeVisitor parses out of string annotations, described by type and code), but scopes, assignments
    and accesses of their own: a scope is described by its kind, node and parent, an assignment and an access
    by their node, name and scope."""

    def __init__(self, module: cst.Module) -> None:
        self._nodes = {id(node) for node in walk(module)}
        self._scopes: dict[int, tuple] = {}

    def node(self, node: cst.CSTNode | None):
        if node is None or id(node) in self._nodes:
            return None if node is None else id(node)
        return type(node).__name__, cst.Module([]).code_for_node(node)

    def scope(self, scope: Scope | None):
        if scope is None:
            return None
        key = self._scopes.get(id(scope))
        if key is None:
            node = self.node(scope.node) if isinstance(scope, LocalScope) else None
            parent = self.scope(scope.parent) if scope.parent is not scope else "itself"
            key = self._scopes[id(scope)] = (type(scope).__name__, node, parent)
        return key

    def assignment(self, assignment: BaseAssignment) -> tuple:
        node = getattr(assignment, "node", None)
        index = getattr(assignment, "_Assignment__index", None)
        as_name = self.node(getattr(assignment, "as_name", None))
        return type(assignment).__name__, assignment.name, self.scope(assignment.scope), self.node(node), index, as_name

    def access(self, access: Access) -> tuple:
        scope = self.scope(access.scope)
        return self.node(access.node), scope, access.is_annotation, access.is_type_hint, access._Access__index

    def whole(self, scope: Scope) -> dict:
        """Everything a rule can read from `scope`."""
        assignments = {name: _sorted(map(self.assignment, found)) for name, found in scope._assignments.items()}
        accesses = {name: _sorted(map(self.access, found)) for name, found in scope._accesses_by_name.items()}
        by_node = scope._accesses_by_node
        return {
            "key": self.scope(scope),
            "globals": self.scope(scope.globals),
            "count": scope._assignment_count,
            "prefix": scope._name_prefix,
            "name": getattr(scope, "name", None),
            "overwrites": {k: self.scope(v) for k, v in getattr(scope, "_scope_overwrites", {}).items()},
            "assignments": assignments,
            "accesses": accesses,
            "by_node": _sorted((self.node(n), _sorted(map(self.access, found))) for n, found in by_node.items()),
            "referents": _sorted((self.access(a), _sorted(map(self.assignment, a.referents))) for a in scope.accesses),
            "references": _sorted(
                (self.assignment(a), _sorted(map(self.access, a.references))) for a in scope.assignments
            ),
        }


def _sorted(descriptions) -> list:
    return sorted(descriptions, key=repr)


def _described(module: cst.Module, provider: type[ScopeProvider], fast: bool) -> tuple[list, list, dict]:
    """The map in order as (node, scope), each scope once in full, and each node's qualified names."""
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    if fast:
        with fast_visits():
            found = wrapper.resolve(provider)
    else:
        found = wrapper.resolve(provider)
    shapes = _Shapes(module)
    entries = [(shapes.node(node), shapes.scope(scope)) for node, scope in found.items()]
    distinct = list({id(s): s for s in found.values() if s is not None}.values())
    scoped = [node for node in walk(module) if found.get(node) is not None]
    names = {id(node): _sorted(found[node].get_qualified_names_for(node)) for node in scoped}
    return entries, [shapes.whole(scope) for scope in distinct], names


@pytest.mark.parametrize("name, source", _sources(), ids=lambda v: v if "\n" not in v else "")
def test_same_scopes_as_libcst(name, source):
    scopes.install()
    module = cst.parse_module(source)
    expected = _described(module, _LibcstScopes, fast=False)
    assert ScopeProvider.visit_Module is scopes.visit_Module
    for fast in (True, False):
        entries, described, names = _described(module, ScopeProvider, fast)
        assert entries == expected[0], (name, fast)
        assert described == expected[1], (name, fast)
        assert names == expected[2], (name, fast)


@pytest.mark.parametrize("name, source", _sources(), ids=lambda v: v if "\n" not in v else "")
def test_imported_names_start_with_a_name_an_import_binds(name, source):
    """The binder's `imported_names` hold the first name of every name and attribute that LibCST gives a
    qualified name of source IMPORT: `Binder.qualified` and `imported` look no further for any other."""
    import ast

    from libcst.metadata import QualifiedNameSource

    from jaxfix.facts.binder import Binder

    try:
        bound = Binder(ast.parse(source)).imported_names
    except SyntaxError:
        pytest.skip("ast cannot parse it here")
    # LibCST reads a string annotation as code (`q: 'import typing as u'` binds `u` for it); Python binds nothing
    # there, nor does the binder: those names are the one departure here
    in_strings: set[str] = set()

    def read_strings(tree: ast.AST) -> None:
        for inner in ast.walk(tree):
            if isinstance(inner, (ast.Import, ast.ImportFrom)) and tree is not top:
                in_strings.update((a.asname or a.name).split(".")[0] for a in inner.names)
            elif isinstance(inner, ast.Constant) and type(inner.value) is str and "import" in inner.value:
                try:
                    read_strings(ast.parse(inner.value))
                except SyntaxError:
                    pass

    top = ast.parse(source)
    read_strings(top)
    scopes.install()
    found = MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True).resolve(ScopeProvider)
    imported = 0
    for node, scope in found.items():
        head = node
        while isinstance(head, cst.Attribute):
            head = head.value
        if scope is None or not isinstance(head, cst.Name):
            continue
        if any(q.source is QualifiedNameSource.IMPORT for q in scope.get_qualified_names_for(node)):
            imported += 1
            assert head.value in bound or head.value in in_strings, (name, head.value)
    assert imported or name not in ("imports", "typing_names")
