"""The facts JF901 (deprecated-api) decides its findings and fix plans from, on `ast`: a call's arguments bound and
mapped onto another API (`facts/arguments.py`), what a sharding argument holds and where a legacy mesh context is
entered (`facts/sharding.py`), and whether an import's name is read or its statement stands alone on its line
(`facts/imports.py`)."""

from __future__ import annotations

import ast

from jaxfix.facts import arguments
from jaxfix.facts.imports import alone_on_line, import_is_read, string_annotation_names
from jaxfix.facts.module import FileFacts, in_order
from jaxfix.facts.sharding import NONE, SHARDING, SPEC, UNKNOWN, legacy_mesh_contexts, module_imports, sharding_kind


def _call(text: str) -> ast.Call:
    return next(n for n in ast.walk(ast.parse(text)) if type(n) is ast.Call)


def test_arguments_bind_as_python_does() -> None:
    params = ("x", "idx", "y", "unique_indices")
    assert arguments.bind(in_order(_call("f(a, 0, 1)")), params, required=3) == {"x": 0, "idx": 1, "y": 2}
    assert arguments.bind(in_order(_call("f(a, y=1, idx=0)")), params, required=3) == {"x": 0, "y": 1, "idx": 2}
    assert arguments.bind(in_order(_call("f(a, y=g(), idx=h())")), params, required=3) is None  # reorders calls
    assert arguments.bind(in_order(_call("f(a, *rest)")), params, required=3) is None
    assert arguments.bind(in_order(_call("f(a, 0, 1, other=2)")), params, required=3) is None
    assert arguments.bind(in_order(_call("f(a, 0)")), params, required=3) is None


def test_arguments_mapped_onto_keywords() -> None:
    mapped = arguments.mapped_keywords
    allowed = frozenset({"in_shardings", "out_shardings", "donate_argnums"})
    renames = {"in_axis_resources": "in_shardings"}
    positional = ("f", "in_shardings", "out_shardings")
    assert mapped(in_order(_call("pjit(f, a, b, **kw)")), positional, renames, allowed, unpacked=True) == [
        (None, False), ("in_shardings", True), ("out_shardings", True), (None, False)
    ]
    assert mapped(in_order(_call("pjit(f, in_axis_resources=a)")), positional, renames, allowed, unpacked=True) == [
        (None, False), ("in_shardings", False)
    ]
    assert mapped(in_order(_call("pjit(f, a, in_shardings=b)")), positional, renames, allowed, unpacked=True) is None
    assert mapped(in_order(_call("pjit(f, a, b, c)")), positional, renames, allowed, unpacked=True) is None
    assert mapped(in_order(_call("pjit(f, **kw)")), positional, renames, allowed, unpacked=False) is None
    assert arguments.has_effects(ast.parse("[g(x)]", mode="eval").body)
    assert not arguments.has_effects(ast.parse("lambda: g(x)", mode="eval").body)


def test_what_a_sharding_holds() -> None:
    text = (
        "from jax.sharding import NamedSharding, PartitionSpec as P\n"
        "s = NamedSharding(m, P('x'))\nt = P('x')\nu = s\nu = t\n"
        "a = (s, None)\nb = [s, t]\nc = {'k': None}\nd = s\ne = u\nf = g(x)\nh = (*xs,)\n"
    )
    facts = FileFacts(text)
    values = {t.targets[0].id: t.value for t in facts.tree.body if type(t) is ast.Assign}
    kind = lambda name: sharding_kind(facts.binder, values[name])  # noqa: E731
    assert [kind(n) for n in "stabcdefh"] == [SHARDING, SPEC, NONE, SPEC, NONE, SHARDING, UNKNOWN, UNKNOWN, UNKNOWN]


def test_where_a_legacy_mesh_context_is_entered() -> None:
    text = (
        "import jax\nfrom jax.sharding import Mesh\n"
        "with Mesh(d, ('x',)):\n    pass\nwith jax.set_mesh(m):\n    pass\n"
        "def f(self):\n    with self._mesh, open(p):\n        pass\n    with make_mesh():\n        pass\n"
    )
    facts = FileFacts(text)
    assert legacy_mesh_contexts(facts.tree, module_imports(facts.binder)) == [
        (3, "Mesh(d, ('x',))"), (8, "self._mesh"), (10, "make_mesh()")
    ]


def test_whether_an_import_is_read() -> None:
    text = (
        "from jax import tree_map, tree_leaves, tree_flatten\nfrom jax.experimental.maps import Mesh\n"
        "def f():\n    return tree_map\nx: 'Mesh' = None\ndef g():\n    tree_leaves = 1\n    return tree_leaves\n"
    )
    facts = FileFacts(text)
    statement = facts.tree.body[0]
    annotated = string_annotation_names(facts.binder)
    assert annotated == {"Mesh"}
    assert import_is_read(facts.binder, statement, "tree_map", annotated)
    assert not import_is_read(facts.binder, statement, "tree_leaves", annotated)  # a local of `g` is read
    assert not import_is_read(facts.binder, statement, "tree_flatten", annotated)
    assert import_is_read(facts.binder, facts.tree.body[1], "Mesh", annotated)


def test_a_statement_alone_on_its_line() -> None:
    text = "import a\nimport b; import c\nif x: import d\nif y:\n    import e\n"
    facts = FileFacts(text)
    imports = [n for n in ast.walk(facts.tree) if type(n) is ast.Import]
    assert [alone_on_line(facts.binder, facts.positions, s) for s in imports] == [True, False, False, False, True]
