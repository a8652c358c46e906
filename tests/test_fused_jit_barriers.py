"""JF504 (fused-jit-barriers): the premise (three programs compiled separately, one fused, the same numbers)
and the cases the corpus does not spell out: what keeps it quiet, what it reports without a fix, and the
forms of the decorator it writes."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from jaxfix.codemods.fused_jit_barriers import FusedJitBarriers
from tests.helpers import findings, rewrite

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"

PIECES = """\
import jax
import jax.numpy as jnp
from functools import partial


@jax.jit
def f(x, y):
    return x * y


@jax.jit
def g(x):
    return x + 1.0
"""

LOOP = """

def run(x, y):
    for _ in range(3):
        x = step(x, y)
    return x
"""


def _module(step: str, extra: str = "") -> str:
    return PIECES + extra + "\n\n" + step + LOOP


def test_one_program_instead_of_three_and_the_same_numbers() -> None:
    import jax

    sys.path.insert(0, str(BENCHMARKS))
    try:
        spec = importlib.util.spec_from_file_location("fused_jit_benchmark", BENCHMARKS / "fused_jit.py")
        bench = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(bench)
        from measure import CompileCounter
    finally:
        sys.path.remove(str(BENCHMARKS))
    params, x, y = bench._arguments(8, 4)
    results = {}
    for name, step, _ in bench.versions():
        with CompileCounter() as counter:
            results[name] = jax.block_until_ready(step(params, x, y))
        assert counter.count == (3 if name == "separate" else 1), name
    for name in ("fused", "stripped"):
        for a, b in zip(jax.tree.leaves(results[name]), jax.tree.leaves(results["separate"])):
            assert jax.numpy.allclose(a, b, rtol=1e-5, atol=1e-6), name


@pytest.mark.parametrize(
    "step",
    [
        # a host transfer of a result
        "def step(x, y):\n    z = f(x, y)\n    z.block_until_ready()\n    return g(z)",
        "def step(x, y):\n    z = f(x, y)\n    w = z.item()\n    return g(z)",
        "def step(x, y):\n    z = np.asarray(f(x, y))\n    return g(z)",
        # a function jaxfix does not know, an attribute, a module name that is not a constant
        "def step(x, y):\n    z = helper(f(x, y))\n    return g(z)",
        "def step(x, y):\n    z = f(x, y).T\n    return g(z)",
        "def step(x, y):\n    z = f(x, y) * SCALE\n    return g(z)",
        # a shape that depends on the values: fails under jit
        "def step(x, y):\n    z = f(x, y)\n    return g(jnp.nonzero(z)[0])",
        "def step(x, y):\n    z = f(x, y)\n    return g(jnp.where(z)[0])",
        # control flow, even on a parameter
        "def step(x, y):\n    for _ in range(2):\n        x = f(x, y)\n    return g(x)",
        # no return, or a call kept only for its effect
        "def step(x, y):\n    z = f(x, y)\n    g(z)",
        "def step(x, y):\n    f(x, y)\n    return g(x)",
    ],
)
def test_steps_jit_would_trace_differently_are_left_alone(step: str) -> None:
    extra = "import numpy as np\n\nSCALE = [2.0]\n\n\ndef helper(v):\n    return v\n"
    assert findings(_module(step, extra), FusedJitBarriers) == []


def test_a_step_traced_elsewhere_or_transformed_is_left_alone() -> None:
    step = "def step(x, y):\n    z = f(x, y)\n    return g(z)"
    called_from_jit = _module(step) + "\n\n@jax.jit\ndef outer(x, y):\n    return step(x, y)\n"
    vmapped = _module(step) + "\n\nbatched = jax.vmap(step)\n"
    assert findings(called_from_jit, FusedJitBarriers) == []
    assert findings(vmapped, FusedJitBarriers) == []


@pytest.mark.parametrize(
    ("step", "extra", "reason"),
    [
        ("def step(x, y, scale=2.0):\n    z = f(x, y)\n    return g(z)", "", "default values"),
        ("def step(x, y):\n    z = f(x, y)\n    return g(z), y", "", "returns `y`"),
        ("def step(x, y):\n    z = f(x, y)\n    return g(jnp.reshape(z, y))", "", "passes `y` to `jnp.reshape`"),
        (
            "def step(x, y):\n    z = h(x, y)\n    return g(z)",
            "\n\n@partial(jax.jit, inline=True)\ndef h(x, y):\n    return x - y\n",
            "`inline`",
        ),
        (
            "def step(x, y):\n    z = d(y['p'], x)\n    return g(z)",
            "\n\n@partial(jax.jit, donate_argnums=0)\ndef d(p, x):\n    return p * x\n",
            "cannot donate it",
        ),
        (
            "def step(x, y):\n    z = k(x, y)\n    return g(z)",
            "\n\nk = jax.jit(jax.grad(lambda a, b: (a * b).sum()), static_argnums=1)\n",
            "signature jaxfix cannot see",
        ),
        (
            "def step(x, y):\n    z = s(x, y * 2)\n    return g(z)",
            "\n\n@partial(jax.jit, static_argnums=1)\ndef s(x, n):\n    return x * n\n",
            "receives `y * 2`",
        ),
    ],
)
def test_what_stops_the_fix_is_named(step: str, extra: str, reason: str) -> None:
    source = _module(step, extra)
    reported = findings(source, FusedJitBarriers)
    assert len(reported) == 1 and reported[0].fix is None, [d.message for d in reported]
    assert "not fixed" in reported[0].message and reason in reported[0].message
    assert rewrite(source, FusedJitBarriers) == source


def test_used_as_a_value_is_reported_without_a_fix() -> None:
    source = _module("def step(x, y):\n    z = f(x, y)\n    return g(z)") + "\n\nSTEPS = {'sgd': step}\n"
    reported = findings(source, FusedJitBarriers)
    assert len(reported) == 1 and reported[0].fix is None and "used as a value" in reported[0].message


def test_static_by_keyword_and_donation_together_with_functools_imported() -> None:
    source = (
        "import functools\n\nimport jax\n\n\n@functools.partial(jax.jit, static_argnames='n')\n"
        "def power(x, n):\n    return x**n\n\n\n@functools.partial(jax.jit, donate_argnums=0)\n"
        "def shrink(p, x):\n    return p - 0.1 * x\n\n\n"
        "# the step\ndef step(p, x, n):\n    y = power(x, n=n)\n    return shrink(p, y)\n\n\n"
        "def run(p, x):\n    for _ in range(3):\n        p = step(p, x, 2)\n    return p\n"
    )
    fixed = rewrite(source, FusedJitBarriers)
    assert "# the step\n@functools.partial(jax.jit, static_argnums=2, donate_argnums=0)\ndef step(p, x, n):" in fixed
    assert rewrite(fixed, FusedJitBarriers) == fixed


def test_partial_import_is_added_when_missing() -> None:
    source = (
        "import jax\n\n\ndef _scale(x, n):\n    return x * n\n\n\nscale = jax.jit(_scale, static_argnums=1)\n\n\n"
        "@jax.jit\ndef shift(x):\n    return x - 1.0\n\n\n"
        "def step(x, n):\n    return shift(scale(x, n))\n\n\n"
        "def run(x):\n    for n in (1, 2):\n        x = step(x, n)\n    return x\n"
    )
    fixed = rewrite(source, FusedJitBarriers)
    assert fixed.startswith("import jax\nfrom functools import partial\n")
    assert "@partial(jax.jit, static_argnums=1)\ndef step(x, n):" in fixed


def test_a_module_level_loop_counts() -> None:
    source = (
        "import jax\n\n\n@jax.jit\ndef gradient(p, x):\n    return p * x\n\n\n"
        "@jax.jit\ndef apply(p, g):\n    return p - g\n\n\n"
        "def step(p, x):\n    g = gradient(p, x)\n    return apply(p, g)\n\n\n"
        "p = 1.0\nwhile p > 0:\n    p = step(p, 2.0)\n"
    )
    assert "@jax.jit\ndef step(p, x):" in rewrite(source, FusedJitBarriers)


def test_decorated_step_is_left_alone() -> None:
    source = _module("@jax.jit\ndef step(x, y):\n    z = f(x, y)\n    return g(z)")
    assert findings(source, FusedJitBarriers) == []
    source = _module("@partial(jax.jit, donate_argnums=0)\ndef step(x, y):\n    z = f(x, y)\n    return g(z)")
    assert findings(source, FusedJitBarriers) == []
