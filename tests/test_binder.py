"""The `ast` binder (jaxfix/facts/binder.py), the one answer about names (JaxNames reads it): Python's scoping
rules on small texts, its names against LibCST's QualifiedNameProvider on every name and attribute of the
examples, the corpus and tests/planted, and its defs against the project index's names."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

from jaxfix.analysis.ast_syntax import ast_qualified_defs
from jaxfix.facts.binder import Binder

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("jaxfix_binder_speed", ROOT / "benchmarks" / "binder_speed.py")
binder_speed = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(binder_speed)


def _nodes(source: str, spelling: str) -> tuple[Binder, list[ast.AST]]:
    """The binder of `source` and its names and attributes spelled `spelling`, in the order of the text."""
    binder = Binder(ast.parse(source))
    found = [n for n in binder.nodes_of(ast.Name, ast.Attribute) if ast.unparse(n) == spelling]
    return binder, sorted(found, key=lambda n: (n.lineno, n.col_offset))


def qualified(source: str, spelling: str) -> list[str | None]:
    """`qualified` of each name or attribute spelled `spelling`, in the order of the text."""
    binder, nodes = _nodes(source, spelling)
    assert nodes, spelling
    return [binder.qualified(node) for node in nodes]


def test_imports_resolve_to_qualified_names():
    source = "import jax.numpy as jnp\nimport jax.lax\nfrom jax import random as jr\njnp.zeros\njax.lax.scan\njax\njr.split\n"
    assert qualified(source, "jnp.zeros") == ["jax.numpy.zeros"]
    assert qualified(source, "jax.lax.scan") == ["jax.lax.scan"]
    assert qualified(source, "jax") == ["jax", "jax"]  # `jax.lax.scan`'s base too
    assert qualified(source, "jr.split") == ["jax.random.split"]


def test_relative_imports_keep_their_dots():
    source = "from . import a\nfrom ..m import b\nfrom .n import c as d\na.x\nb\nd.y\n"
    assert qualified(source, "a.x") == [".a.x"]
    assert qualified(source, "b") == ["..m.b"]
    assert qualified(source, "d.y") == [".n.c.y"]


def test_locals_and_attributes_of_values_have_no_qualified_name():
    source = "import jax.numpy as jnp\ndef f(jnp):\n    return jnp.zeros\nx = 1\nx.real\njnp.zeros(3).sum\n"
    assert qualified(source, "jnp.zeros") == [None, "jax.numpy.zeros"]
    assert qualified(source, "x.real") == [None]
    assert qualified(source, "jnp.zeros(3).sum") == [None]


def test_class_scope_is_not_seen_from_its_methods_nor_its_comprehensions():
    source = (
        "import numpy as np\n"
        "class C:\n"
        "    import jax.numpy as np\n"
        "    y = np.ones\n"
        "    a = [np.zeros for _ in np.arange(3)]\n"
        "    def m(self):\n"
        "        return np.empty\n"
    )
    assert qualified(source, "np.ones") == ["jax.numpy.ones"]
    assert qualified(source, "np.zeros") == ["numpy.zeros"]  # a comprehension's body skips the class
    assert qualified(source, "np.arange") == ["jax.numpy.arange"]  # its first iterable is read in the class
    assert qualified(source, "np.empty") == ["numpy.empty"]


def test_comprehension_targets_are_local_to_the_comprehension():
    source = "import jax.numpy as jnp\nxs = [jnp.real for jnp in range(3)]\njnp.zeros\n"
    assert qualified(source, "jnp.real") == [None]
    assert qualified(source, "jnp.zeros") == ["jax.numpy.zeros"]


def test_lambda_parameters_shadow():
    assert qualified("import jax.numpy as np\nf = lambda np: np.zeros\ng = lambda: np.ones\n", "np.zeros") == [None]
    assert qualified("import jax.numpy as np\nf = lambda np: np.zeros\ng = lambda: np.ones\n", "np.ones") == ["jax.numpy.ones"]


def test_global_and_nonlocal_bind_in_the_scope_they_name():
    source = (
        "import numpy as np\n"
        "def f():\n"
        "    global np\n"
        "    import jax.numpy as np\n"
        "def g():\n"
        "    return np.zeros\n"
    )
    assert qualified(source, "np.zeros") == [None]  # two imports of `np` in the module: no one name
    source = (
        "def f():\n"
        "    import numpy as np\n"
        "    def g():\n"
        "        nonlocal np\n"
        "        import jax.numpy as np\n"
        "    return np.zeros\n"
        "def h():\n"
        "    import numpy as np\n"
        "    return np.ones\n"
    )
    assert qualified(source, "np.zeros") == [None]
    assert qualified(source, "np.ones") == ["numpy.ones"]


def test_walrus_binds_in_the_enclosing_function():
    source = "import numpy as np\ndef f(xs):\n    ys = [(np := x) for x in xs]\n    return np.zeros\n"
    assert qualified(source, "np.zeros") == [None]


def test_annotations_decorators_and_defaults_are_read_in_the_enclosing_scope():
    source = (
        "import numpy as np\n"
        "@np.vectorize\n"
        "def f(np=np.float32, *, k: np.ndarray = None) -> np.dtype:\n"
        "    import jax.numpy as np\n"
        "    return np.zeros\n"
    )
    assert qualified(source, "np.vectorize") == ["numpy.vectorize"]
    assert qualified(source, "np.float32") == ["numpy.float32"]
    assert qualified(source, "np.ndarray") == ["numpy.ndarray"]
    assert qualified(source, "np.dtype") == ["numpy.dtype"]
    assert qualified(source, "np.zeros") == ["jax.numpy.zeros"]


def test_del_reads_the_binding_it_removes():
    assert qualified("import numpy as np\ndel np\n", "np") == ["numpy"]


def test_match_captures_bind():
    source = "import numpy as np\ndef f(v):\n    match v:\n        case [np]:\n            return np.zeros\n"
    assert qualified(source, "np.zeros") == [None]


def test_star_imports_name_nothing():
    binder, nodes = _nodes("from jax.numpy import *\nzeros\n", "zeros")
    assert binder.qualified(nodes[0]) is None
    assert binder.module.star_import


def test_a_name_bound_to_different_imports_is_no_one_name():
    shim = "try:\n    import jax.numpy as xp\nexcept ImportError:\n    import numpy as xp\nxp.zeros\n"
    assert qualified(shim, "xp.zeros") == [None]
    fallback = "try:\n    import jax.numpy as xp\nexcept ImportError:\n    xp = None\nxp.zeros\n"
    assert qualified(fallback, "xp.zeros") == ["jax.numpy.zeros"]  # one import among the names
    binder, nodes = _nodes(fallback, "xp.zeros")
    assert binder.imported(nodes[0]) is None  # but not on every path: JF901 names no API there


def test_a_read_sees_the_bindings_made_before_it():
    source = "print(np)\nimport numpy as np\nprint(np)\nimport jax.numpy as np\nprint(np)\n"
    assert qualified(source, "np") == [None, "numpy", None]
    local = "import numpy as np\ndef f():\n    y = np\n    np = 1\n"  # a local read before its binding
    assert qualified(local, "np") == [None, None]


def test_is_builtin():
    def answers(source: str) -> list[bool]:
        binder, nodes = _nodes(source, "print")
        return [binder.is_builtin(node, "print") for node in nodes]

    assert answers("print(1)\n") == [True]
    assert answers("def f(print):\n    print(1)\n") == [False]
    assert answers("try:\n    from rich import print\nexcept ImportError:\n    pass\nprint(1)\n") == [False]


def test_defs_by_the_project_index_names():
    source = (
        "def f():\n"
        "    def g():\n"
        "        if x:\n"
        "            def h(): pass\n"
        "    class K:\n"
        "        def no(self): pass\n"
        "class C:\n"
        "    def m(self): pass\n"
        "    class D:\n"
        "        def no(self): pass\n"
        "    if x:\n"
        "        def no(self): pass\n"
        "if x:\n"
        "    def top(): pass\n"
        "for i in y:\n"
        "    def no(): pass\n"
    )
    assert list(Binder(ast.parse(source)).defs) == ["f", "f.<locals>.g", "f.<locals>.g.<locals>.h", "C.m", "top"]


def test_node_index():
    tree = ast.parse("def f(a=b):\n    return [c for c in a]\n")
    binder = Binder(tree)
    function = tree.body[0]
    names = {n.id: n for n in binder.nodes_of(ast.Name)}
    assert binder.parent(function) is tree and binder.parent(names["b"]) is function.args
    assert binder.scope_of[names["b"]] is binder.module  # a default is read outside
    assert binder.scope_of[names["a"]].node is function  # the first iterable: in the function
    assert binder.scope_of[function.body[0].value.elt].kind == "comprehension"
    assert [s.kind for s in binder.scopes] == ["module", "function", "comprehension"]
    assert binder.calls == [] and binder.nodes_of(ast.Return) == [function.body[0]]


# Where LibCST's scopes depart from Python's, the binder keeps Python's rule: these are all the departures.
LIBCST_DEPARTURES = {  # source: the names where `qualified` and `imported` answer otherwise than LibCST
    "import numpy as np\ndef f(xs):\n    ys = [(np := x) for x in xs]\n    return np.zeros\n": ["np.zeros", "np"],
    "import numpy as np\ndef f(v):\n    match v:\n        case [np]:\n            return np.zeros\n": ["np.zeros", "np"],
    "import numpy as np\ndef f():\n    y = np\n    np = 1\n": ["np"],
}


@pytest.mark.parametrize("source", list(LIBCST_DEPARTURES))
def test_libcst_departures_are_these(source):
    found = [(d.code, d.question) for d in binder_speed.disagreements(source)]
    assert found == [(code, question) for code in LIBCST_DEPARTURES[source] for question in ("qualified", "imported")]


def _sources() -> list[Path]:
    return sorted([*(ROOT / "examples").rglob("*.py"), *(ROOT / "corpus").rglob("*.py"), *(ROOT / "tests" / "planted").rglob("*.py")])


def test_names_agree_with_libcst_on_examples_corpus_and_planted():
    files = _sources()
    assert len(files) > 500
    found = [str(d) for path in files for d in binder_speed.disagreements(path.read_text(encoding="utf-8"), str(path))]
    assert found == []


def test_defs_agree_with_the_project_index():
    for path in _sources():
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except SyntaxError:
            continue
        assert Binder(tree).defs == ast_qualified_defs(tree), path


def test_the_binder_imports_no_libcst_and_nothing_of_jaxfix():
    tree = ast.parse((ROOT / "jaxfix" / "facts" / "binder.py").read_text(encoding="utf-8"))
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported <= {"__future__", "ast", "builtins", "typing"}


def test_name_twins_pair_as_positions_do():
    """JaxNames finds the `ast` node of a LibCST name without positions (NameTwins); on every name and attribute
    chain on a name of the examples, the corpus and tests/planted it finds the node the Bridge finds by position,
    and no statement is left to positions."""
    import libcst as cst
    from libcst.metadata import MetadataWrapper

    from jaxfix.analysis.metadata import parent_map
    from jaxfix.edit.bridge import Bridge, NameTwins

    checked = 0
    for path in _sources():
        source = path.read_text(encoding="utf-8")
        try:
            tree = ast.parse(source)
            module = MetadataWrapper(cst.parse_module(source)).module
        except (SyntaxError, ValueError, cst.ParserSyntaxError):
            continue
        bridge = Bridge(module, tree)
        twins = NameTwins(module, tree, parent_map(module), Binder(tree).parents, lambda: bridge)
        for node in parent_map(module):
            if isinstance(node, (cst.Name, cst.Attribute)):
                base = node
                while isinstance(base, cst.Attribute):
                    base = base.value
                expected = bridge.ast_of(node) if isinstance(base, cst.Name) else None  # else no name of the binder's
                if not isinstance(expected, (ast.Name, ast.Attribute)):
                    expected = None
                assert twins.ast_of(node) is expected, (path, module.code_for_node(node))
                checked += 1
        assert twins.unpaired == 0, path
    assert checked > 30_000


def test_sole_import_and_other_bindings():
    """What the screens' name facts read (`sole_import`, `other_bindings`, `_surely_qualified`)."""
    source = (
        "import jax.numpy as jnp\n"
        "import jax.random\n"
        "try:\n    from jax import enable_x64\nexcept ImportError:\n    from jax.experimental import enable_x64\n"
        "from . import rel\n"
        "import numpy as np\n"
        "def f(x):\n    global np\n    return x\n"
        "class C:\n    import optax\n"
        "for y in []:\n    pass\n"
    )
    binder = Binder(ast.parse(source))
    assert binder.sole_import("jnp") == "jax.numpy" and binder.sole_import("jax") == "jax"
    assert binder.sole_import("enable_x64") is None  # two homes: no one name
    assert binder.sole_import("rel") is None and binder.sole_import("np") is None  # relative; declared global
    assert binder.sole_import("optax") is None  # a class's import, not the module's
    assert binder.bound_otherwise() == {"rel", "np", "f", "x", "C", "y"}
    assert binder.bound_otherwise((ast.FunctionDef, ast.arg)) == {"rel", "np", "C", "y"}


# Where the binder keeps Python's rule over LibCST's, findings change: LibCST's scopes saw the module `jax` below
# (JF901 reported `jax.tree_map`, three findings before the binder answered names), Python sees a local.
PYTHON_RULE_CASES = {
    "match_capture": (
        "import jax\n\n\n"
        "def leaves(tree):\n"
        "    match tree:\n"
        "        case {\"params\": jax}:  # a config entry named like the module: a local from here on\n"
        "            return jax.tree_map(lambda x: x, tree)\n"
        "        case _:\n"
        "            return jax.tree_map(lambda x: x, tree)  # the same local (unbound here), not the module\n"
    ),
    "walrus_in_a_comprehension": (
        "import jax\n\n\n"
        "def first_tree(candidates):\n"
        "    if any((jax := c) is not None for c in candidates):  # binds `jax` in the function\n"
        "        return jax.tree_map(lambda x: x, candidates)\n"
        "    return None\n"
    ),
}


@pytest.mark.parametrize("name", PYTHON_RULE_CASES)
def test_findings_follow_pythons_scopes(name):
    from jaxfix import engine, registry

    jf901 = next(c for c in registry.all_codemods() if c.code == "JF901")
    text = PYTHON_RULE_CASES[name]
    assert engine.analyse(text, [jf901])[0] == []
    module_level = "import jax\n\ntree = jax.tree_map(lambda x: x, {})\n"  # the module's `jax`: reported
    assert [d.code for d in engine.analyse(module_level, [jf901])[0]] == ["JF901"]


def test_module_aliases_are_the_first_top_level_imports():
    """How a fix spells a name (JaxNames.expression_for reads these): only top-level imports, the first wins."""
    source = (
        "import jax.numpy as jnp\nimport jax.numpy as np2\nimport jax.lax\nfrom jax import random as jr, tree\n"
        "from . import local\nfrom m import *\nif x:\n    import optax\ndef f():\n    import chex\n"
    )
    assert Binder(ast.parse(source)).module_aliases == {
        "jax.numpy": "jnp", "jax": "jax", "jax.lax": "jax.lax", "jax.random": "jr", "jax.tree": "tree",
    }
