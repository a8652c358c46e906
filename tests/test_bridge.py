"""jaxfix/edit/bridge.py maps each `ast` node to the LibCST node that spells the same code, and back, on text
where the two trees place nodes differently: decorators, parentheses, f-strings, non-ASCII text, multi-line
strings, comments inside brackets, parameters, notebooks' cell code."""

from __future__ import annotations

import ast
import json

import libcst as cst
import pytest

from jaxfix import notebook
from jaxfix.edit.bridge import Bridge


def bridge(text: str) -> Bridge:
    return Bridge(cst.parse_module(text), ast.parse(text))


def spelled(b: Bridge, node: ast.AST) -> str | None:
    """The code of the LibCST node that the bridge gives for `node`."""
    found = b.cst_of(node)
    return None if found is None else b.module.code_for_node(found)


def nodes(b: Bridge, kind: type, text: str | None = None) -> list[ast.AST]:
    """The `ast` nodes of `kind` (whose source is `text`, if given), in `ast.walk`'s order."""
    source = b.module.code
    return [n for n in ast.walk(b.tree) if isinstance(n, kind) and (text is None or ast.get_source_segment(source, n) == text)]


def test_every_mapped_node_maps_back_to_itself_and_spells_the_same_code() -> None:
    text = (
        "import jax, jax.numpy as jnp\nfrom os import *\n"
        "@jax.jit\n@(lambda f: f)\ndef f(x, *args, y: int = (1), **kw) -> 'é':\n"
        "    z = (x + y) * -x[1:2, ::3]\n    w = [*args] + list(kw)\n"
        "    while x and y and not z:\n        x = yield (x, y)\n"
        "    return {k: v for k, v in kw.items() if v} or (lambda q=3: q)(y=2)\n"
        "class C(object):\n    @property\n    async def g(self):\n        async with a as b:\n            await b\n"
    )
    b = bridge(text)
    unmapped = []
    for node in ast.walk(b.tree):
        found = b.cst_of(node)
        if found is None:
            unmapped.append(node)
            continue
        assert b.ast_of(found) is node, ast.dump(node)
        if isinstance(node, ast.expr) and not isinstance(node, (ast.Tuple, ast.GeneratorExp)):
            assert b.module.code_for_node(found).strip().strip("()") == ast.get_source_segment(text, node).strip("()")
    # what `ast` does not place (expression contexts, `with` items, comprehensions), and `1:2, ::3`, which LibCST
    # holds as the subscript's elements, not as a tuple
    placed = [n for n in unmapped if getattr(n, "end_lineno", None) is not None]
    assert [ast.get_source_segment(text, n) for n in placed] == ["1:2, ::3"]


def test_a_decorated_def_and_its_decorators() -> None:
    b = bridge("import jax\n\n# a comment\n@jax.jit\n@partial(jax.vmap, in_axes=0)\ndef f(x):\n    @inner\n    def g():\n        pass\n    return g\n")
    f, g = nodes(b, ast.FunctionDef)
    assert isinstance(b.cst_of(f), cst.FunctionDef) and b.cst_of(f).name.value == "f"
    assert isinstance(b.cst_of(g), cst.FunctionDef) and b.cst_of(g).name.value == "g"
    (partial,) = nodes(b, ast.Call)
    assert spelled(b, partial) == "partial(jax.vmap, in_axes=0)"
    (keyword,) = nodes(b, ast.keyword)
    assert spelled(b, keyword) == "in_axes=0"
    (inner,) = nodes(b, ast.Name, "inner")
    assert spelled(b, inner) == "inner"


def test_parenthesised_expressions() -> None:
    b = bridge("t = (1, 2)\nu = (  # why\n    3, 4,  # more\n)\ne = ()\ns = sum(x for x in t)\nv = ((a + b))\nw = (a)(b)\n")
    pair, triple, empty = nodes(b, ast.Tuple)
    assert spelled(b, pair) == "(1, 2)" and len(b.cst_of(pair).elements) == 2  # its parentheses are lpar/rpar
    assert isinstance(b.cst_of(triple), cst.Tuple) and len(b.cst_of(triple).elements) == 2
    assert isinstance(b.cst_of(empty), cst.Tuple) and not b.cst_of(empty).elements
    (generator,) = nodes(b, ast.GeneratorExp)
    assert spelled(b, generator) == "x for x in t"
    (addition,) = nodes(b, ast.BinOp)
    assert spelled(b, addition) == "((a + b))"  # LibCST's node holds its parentheses as lpar/rpar
    assert isinstance(b.cst_of(addition), cst.BinaryOperation)
    (call,) = [n for n in nodes(b, ast.Call) if isinstance(n.func, ast.Name) and n.func.id == "a"]
    assert isinstance(b.cst_of(call), cst.Call)
    for node in (pair, triple, empty, generator, addition, call):
        assert b.ast_of(b.cst_of(node)) is node


def test_a_chain_of_and_is_one_ast_node_and_the_outermost_libcst_pair() -> None:
    b = bridge("if a and b and c:\n    pass\n")
    (chain,) = nodes(b, ast.BoolOp)
    outer = b.cst_of(chain)
    assert isinstance(outer, cst.BooleanOperation) and b.module.code_for_node(outer) == "a and b and c"
    assert b.ast_of(outer.left) is None  # `a and b`: no `ast` node of its own
    (test,) = nodes(b, ast.If)
    assert b.cst_of(test).test is outer


def test_columns_count_characters_in_libcst_and_bytes_in_ast() -> None:
    b = bridge("s = 'é' + x\nt = '日本' + y\n")
    x, y = nodes(b, ast.Name, "x"), nodes(b, ast.Name, "y")
    assert x[0].col_offset == 11 and b.cst_of(x[0]).value == "x"
    assert y[0].col_offset == 15 and b.cst_of(y[0]).value == "y"
    assert b.point(2, 15) == (2, 11)


def test_f_strings_and_multi_line_strings() -> None:
    b = bridge('name = f"{x!r:>{width}} and {y}"\ndoc = """one\ntwo""" "three"\nz = q\n')
    (joined,) = [n for n in nodes(b, ast.JoinedStr) if n.lineno == 1 and isinstance(b.cst_of(n), cst.FormattedString)]
    assert b.ast_of(b.cst_of(joined)) is joined
    for name in ("x", "width", "y"):
        (node,) = nodes(b, ast.Name, name)
        assert b.cst_of(node).value == name
    (doc,) = [n for n in nodes(b, ast.Constant) if isinstance(n.value, str) and "two" in n.value]
    assert isinstance(b.cst_of(doc), cst.ConcatenatedString)
    (q,) = nodes(b, ast.Name, "q")
    assert b.cst_of(q).value == "q"  # lines after a string of three lines


def test_parameters_map_to_params_whatever_their_annotation_default_or_star() -> None:
    b = bridge("def f(a, /, b: int = 1, *args: str, c=(2), **kw):\n    pass\nl = lambda *, d: d\n")
    for arg in nodes(b, ast.arg):
        param = b.cst_of(arg)
        assert isinstance(param, cst.Param) and param.name.value == arg.arg
        assert b.ast_of(param) is arg
    (default,) = [n for n in nodes(b, ast.Constant) if n.value == 1]
    assert spelled(b, default) == "1"


def test_slices_and_subscripts_with_comments_inside() -> None:
    b = bridge("y = x[\n    1, 1:  # the first column\n]\nz = x[None, :]\n")
    first, _ = nodes(b, ast.Slice)
    assert isinstance(b.cst_of(first), cst.Slice)
    assert b.ast_of(b.cst_of(first)) is first
    index = [n for n in nodes(b, ast.Tuple)]
    assert [b.cst_of(n) for n in index] == [None, None]  # LibCST's subscript holds its elements, not a tuple


def test_other_line_endings_and_tabs() -> None:
    b = bridge("if a:\r\n\tb = c\r\nd = e\r")
    (c,) = nodes(b, ast.Name, "c")
    (e,) = nodes(b, ast.Name, "e")
    assert b.cst_of(c).value == "c" and b.cst_of(e).value == "e"


def test_notebook_cells_are_one_module() -> None:
    cells = [
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": source}
        for source in (["%matplotlib inline\n", "import jax\n"], ["!pip install x\n", "y = jax.jit(f)(3)\n"])
    ]
    raw = json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode()
    text = notebook.read(raw).module()[0]
    b = bridge(text)
    (call,) = [n for n in nodes(b, ast.Call) if isinstance(n.func, ast.Call)]
    assert spelled(b, call) == "jax.jit(f)(3)"
    assert b.ast_of(b.cst_of(call)) is call


@pytest.mark.parametrize("text", ["x = 1\n", "\n\n# only a comment\n", ""])
def test_the_module_maps_to_the_module(text: str) -> None:
    b = bridge(text)
    assert b.cst_of(b.tree) is b.module and b.ast_of(b.module) is b.tree


def test_top_level_statements_joined_by_semicolons_and_decorated() -> None:
    """The module's level is read off the `ast` (statements joined by `;` are one LibCST line, a decorated def
    starts at its decorators): every node still maps back to itself."""
    text = "# c\nimport jax; x = jax.f(1)\n\n@dec(\n  2)\ndef g(a):\n    return a; b\ny = [g(i) for i in x]; z = 1\nif y: w = 2\n"
    b = bridge(text)
    for node in ast.walk(b.tree):
        found = b.cst_of(node)
        if found is not None:
            assert b.ast_of(found) is node, ast.dump(node)
    (call,) = nodes(b, ast.Call, "g(i)")
    assert spelled(b, call) == "g(i)"


def test_only_the_top_level_statement_holding_a_node_is_placed() -> None:
    """Finding a node asks the positions of the nodes of its own top-level statement, never another's (asking
    every top-level statement's cost as much as generating the module's code)."""
    from libcst.metadata import MetadataWrapper, PositionProvider

    text = "def f():\n    return 1\n\ndef g(x):\n    return x + 2\n\ndef h():\n    return 3\n"
    module = cst.parse_module(text)
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    g = module.body[1]
    inside_g = set()

    def collect(node):
        inside_g.add(node)
        for child in node.children:
            collect(child)

    collect(g)
    asked = []

    class Recording(dict):
        def get(self, node, default=None):
            asked.append(node)
            return positions.get(node, default)

    b = Bridge(module, ast.parse(text), Recording(positions), text)
    (binop,) = nodes(b, ast.BinOp)
    assert b.module.code_for_node(b.cst_of(binop)) == "x + 2"
    assert asked and all(node in inside_g for node in asked)
