"""Ranks, dtype categories and integer constants (jaxfix/facts/shapes.py on `ast`, and analysis/shapes.py on LibCST
while rules still read it), and the dtype check that uses them in CarryAnalysis (facts/carry.py and
analysis/carry.py). Each expression is the value of the last `probe = ...` in a small function; each test runs on
both trees (`side`)."""

from __future__ import annotations

import ast
import textwrap

import jax.numpy as jnp
import libcst as cst
import numpy as np
import pytest
from libcst.metadata import MetadataWrapper

from jaxfix.analysis import ModuleContext
from jaxfix.facts.module import FileFacts
from jaxfix.facts.shapes import Category

HEADER = "import jax\nimport jax.numpy as jnp\nimport numpy as np\nfrom jaxtyping import Array, Float, Int\n\n"
N = 7


@pytest.fixture(params=["ast", "libcst"])
def side(request):
    return request.param


def _probe(body: str, params: str = "x", side: str = "ast"):
    source = HEADER + f"N = {N}\n\ndef f({params}):\n" + textwrap.indent(textwrap.dedent(body), "    ")
    if side == "ast":
        facts = FileFacts(source)
        probes = [
            node.value for node in ast.walk(facts.tree)
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name) and node.targets[0].id == "probe"
        ]  # fmt: skip
        return facts.shapes, sorted(probes, key=lambda n: n.lineno)[-1]
    context = ModuleContext(MetadataWrapper(cst.parse_module(source)))
    probes = []

    class Finder(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            target = node.targets[0].target
            if isinstance(target, cst.Name) and target.value == "probe":
                probes.append(node.value)

    context.module.visit(Finder())
    return context.shapes, probes[-1]


@pytest.mark.parametrize(
    "body, params, expected",
    [
        ("probe = 1 + 2\n", "x", Category.INT),
        ("probe = 1 / 2\n", "x", Category.FLOAT),
        ("probe = jnp.zeros(3)\n", "x", Category.FLOAT),
        ("probe = jnp.zeros(3, dtype=jnp.int32)\n", "x", Category.INT),
        ("probe = jnp.zeros((), jnp.int32)\n", "x", Category.INT),
        ("probe = jnp.full((2,), 1.0, jnp.int8)\n", "x", Category.INT),
        ("probe = jnp.arange(5)\n", "x", Category.INT),
        ("probe = jnp.arange(5) * 0.5\n", "x", Category.FLOAT),
        ("probe = jnp.arange(5) / 2\n", "x", Category.FLOAT),
        ("probe = jnp.arange(5) > 2\n", "x", Category.BOOL),
        ("a = jnp.arange(5)\nprobe = a.astype(jnp.float16)\n", "x", Category.FLOAT),
        ("probe = jnp.full((2,), 3)\n", "x", Category.INT),
        ("probe = jnp.full((2,), 3.0)\n", "x", Category.FLOAT),
        ("probe = jnp.sin(jnp.arange(5))\n", "x", Category.FLOAT),
        ("probe = jnp.argmax(x)\n", "x", Category.INT),
        ("probe = jnp.sum(jnp.arange(3) > 1)\n", "x", Category.INT),
        ("probe = x + 1\n", "x: Float[Array, 'n']", Category.FLOAT),
        ("probe = x.shape[0] * 2\n", "x", Category.INT),
        ("probe = (1j) * jnp.ones(2)\n", "x", Category.COMPLEX),
        ("a = jnp.zeros(3, dtype=jnp.int32)\nprobe = a.at[0].set(2.5)\n", "x", Category.INT),
        # unknown: parameters without annotations, anything not on the lists
        ("probe = x + 1\n", "x", None),
        ("probe = x * 0.5\n", "x", None),
        ("probe = foo(3)\n", "x", None),
        ("probe = True + True\n", "x", None),  # Python bools add to ints, bool arrays do not
    ],
)
def test_category(body, params, expected, side):
    shapes, expr = _probe(body, params, side)
    assert shapes.category(expr) == expected


@pytest.mark.parametrize(
    "code",
    [
        "jnp.zeros(3)",
        "jnp.zeros(3, dtype=jnp.int32)",
        "jnp.zeros((), jnp.int32)",
        "jnp.arange(5)",
        "jnp.arange(5) * 0.5",
        "jnp.arange(5) > 2",
        "jnp.full((2,), 3)",
        "jnp.sin(jnp.arange(5))",
        "jnp.sum(jnp.arange(3) > 1)",
        "jnp.arange(5).astype(jnp.float16)",
        "jnp.zeros(3, dtype=jnp.int32).at[0].set(2)",
    ],
)
def test_category_agrees_with_jax(code, side):
    """The category claimed for an expression is the one JAX gives it."""
    shapes, expr = _probe(f"probe = {code}\n", side=side)
    value = eval(code, {"jnp": jnp})
    actual = {"b": Category.BOOL, "i": Category.INT, "u": Category.INT, "f": Category.FLOAT, "c": Category.COMPLEX}
    assert shapes.category(expr) == actual[np.dtype(value.dtype).kind]


@pytest.mark.parametrize(
    "body, expected",
    [
        ("probe = x * 0.5\n", Category.FLOAT),  # whatever x is, at least float
        ("probe = x / 3\n", Category.FLOAT),
        ("probe = jnp.exp(x)\n", Category.FLOAT),
        ("probe = x + 1\n", Category.INT),
        ("probe = x if x else 0.5\n", None),  # either arm may be taken
        ("probe = foo(x) * 2\n", Category.INT),
        ("probe = foo(x)\n", None),
    ],
)
def test_least_category(body, expected, side):
    shapes, expr = _probe(body, side=side)
    assert shapes.least_category(expr) == expected


@pytest.mark.parametrize(
    "body, params, expected",
    [
        ("probe = jnp.zeros((3, 4))\n", "x", 2),
        ("probe = jnp.zeros((3, 4)).sum()\n", "x", 0),
        ("probe = jnp.ones(5) @ jnp.ones((5, 2))\n", "x", 1),
        ("probe = x[0]\n", "x: Float[Array, 'n d']", 1),
        ("probe = x + 1\n", "x: Float[Array, 'n d']", 2),
        ("probe = x.shape[0]\n", "x", 0),
        ("probe = x + 1\n", "x", None),
    ],
)
def test_rank(body, params, expected, side):
    shapes, expr = _probe(body, params, side)
    assert shapes.rank(expr) == expected


@pytest.mark.parametrize("code, expected", [("3 * N + 1", 3 * N + 1), ("2 ** 4 - N", 16 - N), ("N // 2", N // 2), ("x", None)])
def test_constant(code, expected, side):
    shapes, expr = _probe(f"probe = {code}\n", side=side)
    assert shapes.constant(expr) == expected


@pytest.mark.parametrize(
    "code, name, expected",
    [
        ("jnp.concatenate([y, x])", "y", "jnp.concatenate"),
        ("y[1:]", "y", "y[...]"),
        ("y.at[1:].set(y[:-1])", "y", None),
        ("jnp.sin(y) * 2", "y", None),
        ("y.reshape(-1)", "y", ".reshape()"),
    ],
)
def test_reshaping(code, name, expected, side):
    shapes, expr = _probe(f"y = x\nprobe = {code}\n", side=side)
    assert shapes.reshaping(expr, name) == expected


def _loop_blocker(source: str, side: str) -> str | None:
    if side == "ast":
        facts = FileFacts(HEADER + textwrap.dedent(source))
        loop = next(node for node in ast.walk(facts.tree) if isinstance(node, ast.For))
        return facts.carry.blocker(loop, facts.loop(loop), construct="lax.fori_loop")
    context = ModuleContext(MetadataWrapper(cst.parse_module(HEADER + textwrap.dedent(source))))
    loops = []

    class Finder(cst.CSTVisitor):
        def visit_For(self, node: cst.For) -> None:
            loops.append(node)

    context.module.visit(Finder())
    loop = loops[0]
    flow = context.dataflow.loop(loop)
    return context.carry.blocker(loop, flow, construct="lax.fori_loop")


def test_carry_whose_dtype_changes_is_refused(side):
    reason = _loop_blocker(
        """
        @jax.jit
        def f(x):
            y = jnp.arange(5)
            for i in range(100):
                y = y * 0.5 + x
            return y
        """,
        side,
    )
    assert reason is not None and "changes dtype from int to float" in reason


@pytest.mark.parametrize(
    "init, update",
    [
        ("jnp.arange(5)", "y + i"),  # int stays int
        ("jnp.zeros(5)", "y * 0.5 + x"),  # float stays float
        ("0.0 * x", "y + x"),  # unknown start: not refused here (documented in JF101's Fix safety)
    ],
)
def test_carry_whose_dtype_stays_is_accepted(init, update, side):
    reason = _loop_blocker(
        f"""
        @jax.jit
        def f(x):
            y = {init}
            for i in range(100):
                y = {update}
            return y
        """,
        side,
    )
    assert reason is None or "dtype" not in reason


def test_python_bool_carry_is_refused(side):
    reason = _loop_blocker(
        """
        @jax.jit
        def f(x):
            done = False
            for i in range(100):
                done = done | (x[i] > 0)
            return done
        """,
        side,
    )
    assert reason is not None and "Python bool" in reason


def test_carry_that_becomes_a_tuple_is_refused(side):
    reason = _loop_blocker(
        """
        @jax.jit
        def f(x):
            for i in range(100):
                x = (x, x)
            return x
        """,
        side,
    )
    assert reason is not None and "becomes a Python tuple" in reason
