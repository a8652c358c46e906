"""jaxfix.facts.values on `ast`: the lattice of what a value is and its evaluator (which names hold JAX arrays,
their dtype class, Python ints, and whether rebinding an array's name is what NumPy's in-place update does), as
JF401 and JF705 read it. benchmarks/agreement.py's `values-*-exact` families compare it with the LibCST
ArrayAnalysis on every name and item assignment of the examples, the corpus and the planted files
(tests/test_agreement.py)."""

from __future__ import annotations

import ast

import pytest

from jaxfix.facts.module import FileFacts
from jaxfix.facts.values import ARRAY, CONTAINER, INEXACT, INTEGER, STATIC, UNKNOWN, Value

_HEAD = "import jax\nimport jax.numpy as jnp\nimport numpy as np\n\n"


def _facts(body: str) -> FileFacts:
    return FileFacts(_HEAD + body)


def _last_read(facts: FileFacts, name: str) -> ast.Name:
    reads = [n for n in ast.walk(facts.tree) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
    return max(reads, key=lambda n: (n.lineno, n.col_offset))


def _returned(facts: FileFacts) -> ast.expr:
    return [n for n in ast.walk(facts.tree) if isinstance(n, ast.Return)][-1].value


@pytest.mark.parametrize(
    "body, array",
    [
        ("def f():\n    x = jnp.zeros(3)\n    return x\n", True),
        ("def f():\n    x = jnp.zeros(3)\n    x = x.at[0].set(1.0) * 2\n    return x\n", True),
        ("def f(x: jax.Array):\n    return x\n", True),
        ("def f(x: jax.Array = None):\n    return x\n", False),  # a default could be anything
        ("def f(x):\n    return x\n", False),
        ("def f(c):\n    x = jnp.zeros(3)\n    if c:\n        x = np.zeros(3)\n    return x\n", False),
        ("def f(xs):\n    for x in xs:\n        pass\n    return x\n", False),
        ("def f():\n    x = jnp.linspace(0, 1, retstep=True)\n    return x\n", False),  # a tuple
        ("def f():\n    x = jnp.zeros(3)\n    y = x.T.reshape(3)[0]\n    return y\n", True),
        ("def f():\n    return [x for x in range(3) if (y := jnp.ones(3)) is not None], y\n", False),
    ],
)
def test_a_name_holds_an_array_only_when_every_binding_makes_one(body: str, array: bool) -> None:
    facts = _facts(body)
    name = _returned(facts)
    name = name.elts[1] if isinstance(name, ast.Tuple) else name
    assert facts.values.is_array(name) is array


@pytest.mark.parametrize(
    "body, inexact",
    [
        ("def f():\n    x = jnp.zeros(3)\n    return x\n", True),  # float by default
        ("def f():\n    x = jnp.arange(4)\n    return x\n", False),
        ("def f():\n    x = jnp.arange(4.0)\n    return x\n", True),
        ("def f():\n    x = jnp.zeros(3, jnp.int32)\n    return x\n", False),
        ("def f():\n    x = jnp.arange(4) / 2\n    return x\n", True),
        ("def f():\n    x = jnp.arange(4).astype('float32')\n    return x\n", True),
    ],
)
def test_the_dtype_class_of_an_array(body: str, inexact: bool) -> None:
    facts = _facts(body)
    assert facts.values.is_inexact(_returned(facts)) is inexact


def test_an_annotation_is_trusted_at_run_time_only_where_jax_traces_every_call() -> None:
    jitted = _facts("@jax.jit\ndef f(x: jax.Array):\n    return x\n")
    plain = _facts("def f(x: jax.Array):\n    return x\n")
    assert jitted.values.is_runtime_array(_returned(jitted))
    assert plain.values.is_array(_returned(plain)) and not plain.values.is_runtime_array(_returned(plain))


@pytest.mark.parametrize(
    "expr, integer",
    [("3", True), ("-3 + 2 * 4", True), ("len(xs)", True), ("x.shape[0]", True), ("x.ndim", True), ("i", True),
     ("j", False), ("2.0", False), ("True", False), ("xs", False)],
)  # fmt: skip
def test_python_ints(expr: str, integer: bool) -> None:
    facts = _facts(f"def f(xs, j):\n    x = jnp.zeros(3)\n    for i in range(3):\n        pass\n    return {expr}\n")
    assert facts.values.is_integer(_returned(facts)) is integer


def test_the_lattice_point_of_an_expression() -> None:
    facts = _facts("def f(xs):\n    x = jnp.zeros(3)\n    return x, len(xs), [x], xs, jnp.arange(3)\n")
    values = [facts.values.value(e) for e in _returned(facts).elts]
    assert values == [Value(ARRAY, INEXACT), Value(STATIC, INTEGER), Value(CONTAINER), Value(UNKNOWN), Value(ARRAY)]


@pytest.mark.parametrize(
    "body, reason",
    [
        ("def f():\n    x = jnp.zeros(3)\n    x[0] = 1.0\n    return x\n", None),
        ("def f():\n    x = jnp.zeros(3)\n    y = [x]\n    x[0] = 1.0\n    return y\n",
         "`x` is also referenced on line 7 (`y = [x]`) before this update"),
        ("def f():\n    x = jnp.zeros(3)\n    if x.sum() > 0: print(x)\n    x[0] = 1.0\n    return x\n", None),
        ("def f():\n    x = jnp.zeros(3)\n    g = lambda: x\n    x[0] = 1.0\n    return g\n",
         "referenced on line 7 (`g = lambda: x`)"),
        ("def f():\n    x = y = jnp.zeros(3)\n    x[0] = 1.0\n    return x\n",
         "bound together with another name (`x = y = jnp.zeros(3)`)"),
        ("def f(a):\n    x = jnp.asarray(a)\n    x[0] = 1.0\n    return x\n",
         "bound to `jnp.asarray(a)`, which may share memory"),
        ("@jax.jit\ndef f(x: jax.Array):\n    x[0] = 1.0\n", "is a parameter and is not read after this update"),
        ("def f(x: jax.Array):\n    x[0] = 1.0\n    return x\n", "only through a `jax.Array` annotation"),
        ("def f():\n    x = jnp.zeros(3)\n    for i in range(3):\n        x[i] = 1.0\n        z = {'a': x}\n"
         "    return x\n", "referenced on line 9 (`z = {'a': x}`)"),  # the same loop runs it before the next update
    ],
)  # fmt: skip
def test_what_stops_a_rebinding_from_doing_what_numpy_does(body: str, reason: str | None) -> None:
    facts = _facts(body)
    statement = next(n for n in ast.walk(facts.tree) if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Subscript))
    found = facts.values.rebind_blocker(statement.targets[0].value, statement)
    assert (found is None) if reason is None else (found is not None and reason in found), found
