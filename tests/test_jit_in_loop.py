"""JF502 (jit-in-loop): the premise (a new function object per iteration compiles again, hoisted once) and
the cases the corpus does not spell out."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from jaxfix.codemods.jit_in_loop import JitInLoop
from tests.helpers import findings, rewrite

BENCHMARK = Path(__file__).resolve().parent.parent / "benchmarks" / "jit_in_loop.py"


def _benchmark():
    spec = importlib.util.spec_from_file_location("jit_in_loop_benchmark", BENCHMARK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_in_the_loop_compiles_every_step_and_hoisted_once() -> None:
    import jax
    import jax.numpy as jnp

    bench = _benchmark()
    x = jax.block_until_ready(jnp.linspace(-1.0, 1.0, 7))
    for kind, in_loop, hoisted in bench.variants():
        # one function object: jit's cache finds the first compilation again; the other kinds compile each step
        assert bench.measure(in_loop, x, 3)[0] == (1 if kind == "one function object" else 3), kind
        assert bench.measure(hoisted, x, 3)[0] == 1, kind


@pytest.mark.parametrize(
    "source",
    [
        # the jit keywords read the loop variable
        "import jax\n\ndef f(x):\n    for n in range(3):\n"
        "        x = jax.jit(lambda v, k: v * k, static_argnums=n % 2)(x, 2)\n    return x\n",
        # a default value read where the lambda is made
        "import jax\n\ndef f(x):\n    for i in range(3):\n        x = jax.jit(lambda v, k=i: v * k)(x)\n    return x\n",
        # a def's default value and decorator keywords
        "import jax\nfrom functools import partial\n\ndef f(x):\n    for i in range(3):\n"
        "        @partial(jax.jit, static_argnums=i % 1)\n        def g(v, k=i):\n            return v * k\n\n"
        "        x = g(x)\n    return x\n",
        # a store into what the lambda reads
        "import jax\n\ndef f(x, cfg):\n    for _ in range(3):\n        cfg['s'] = cfg['s'] * 2\n"
        "        x = jax.jit(lambda v: v * cfg['s'])(x)\n    return x\n",
    ],
)
def test_what_the_loop_changes_stops_the_hoist(source: str) -> None:
    reported = findings(source, JitInLoop)
    assert len(reported) == 1 and reported[0].fix is None and "which the loop changes" in reported[0].message
    assert rewrite(source, JitInLoop) == source


def test_name_bound_twice_is_not_moved() -> None:
    source = (
        "import jax\n\ndef f(x):\n    step = None\n    for _ in range(3):\n"
        "        step = jax.jit(lambda v: v + 1)\n        x = step(x)\n    return x, step\n"
    )
    reported = findings(source, JitInLoop)
    assert len(reported) == 1 and reported[0].fix is None


def test_jit_outside_any_loop_or_in_a_loop_iterable_is_quiet() -> None:
    source = (
        "import jax\n\ndef f(xs):\n    for x in jax.jit(lambda v: v * 2)(xs):\n        print(x)\n"
        "    return jax.jit(lambda v: v)(xs)\n"
    )
    assert findings(source, JitInLoop) == []


def test_fresh_name_avoids_existing_ones() -> None:
    source = (
        "import jax\n\ndef f(x, jitted):\n    for _ in range(3):\n        x = jax.jit(lambda v: v * 2)(x)\n"
        "    return x, jitted\n"
    )
    assert "jitted_fn = jax.jit(lambda v: v * 2)" in rewrite(source, JitInLoop)


def test_names_the_loop_changes_become_arguments_and_the_jit_leaves_both_loops() -> None:
    source = (
        "import jax\n\ndef f(x, ys):\n    total = x\n    for i in range(2):\n        for y in ys:\n"
        "            total = total + jax.jit(lambda v: v * y - total)(x)\n    return total\n"
    )
    fixed = rewrite(source, JitInLoop)
    assert "    jitted = jax.jit(lambda v, y, total: v * y - total)\n    for i in range(2):" in fixed
    assert "total = total + jitted(x, y, total)" in fixed
    reported = findings(source, JitInLoop)
    assert "pass `y`, `total`, which the loop changes, as arguments" in reported[0].message


@pytest.mark.parametrize(
    "call",
    [
        "jax.jit(lambda v, k=1: v * i)(x)",  # a default
        "jax.jit(lambda v, s: v * i * s)(x, s=2.0)",  # a keyword at the call
        "jax.jit(lambda v: v[i])(x)",  # an index
        "jax.jit(lambda v: v * i, static_argnums=())(x)",  # jit keywords
        "jax.jit(lambda v: v * float(i))(x)",  # `float()` of a tracer fails
    ],
)
def test_loop_variables_stay_closed_over_unless_clearly_arithmetic(call: str) -> None:
    source = f"import jax\n\ndef f(x):\n    for i in range(3):\n        x = {call}\n    return x\n"
    reported = findings(source, JitInLoop)
    assert len(reported) == 1 and reported[0].fix is None, reported[0].message
