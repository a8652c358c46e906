"""JF801-JF804: the claims their docs make (dtypes kept, stale values), and edge cases beyond the examples."""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxfix import corpus
from tests.helpers import codemod_for_module, findings, rewrite

MASK = codemod_for_module("boolean_mask")
SHAPE = codemod_for_module("traced_shape")
COLLECTIVE = codemod_for_module("missing_collective")
STALE = codemod_for_module("stale_global")

_MASKED = "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    return x[x != 0].{}(), jnp.{}(x[~(x == 0)])\n"


def _run(source: str, x):
    namespace: dict = {}
    exec(compile(source, "<jf801>", "exec"), namespace)
    return namespace["f"](x)


@pytest.mark.parametrize("reduction", ["sum", "mean"])
@pytest.mark.parametrize(
    "x",
    [
        jnp.array([1.5, 0.0, -2.0]),
        jnp.array([1, 0, -3], jnp.int8),
        jnp.array([200, 0, 100], jnp.uint8),
        jnp.array([3, 0, 5], jnp.int32),
        jnp.array([True, False, True]),
        jnp.array([1 + 2j, 0, 3]),
        jnp.array([0.5, 0.0, 2.0], jnp.bfloat16),
        jnp.zeros(3),  # every element masked out: 0 for the sum, NaN for the mean
    ],
    ids=lambda x: str(x.dtype) + ("-empty" if not bool(jnp.any(x)) else ""),
)
def test_masked_reduction_keeps_values_and_dtype(reduction, x) -> None:
    source = _MASKED.format(reduction, reduction)
    fixed = rewrite(source, MASK, unsafe=True)
    assert "x[" not in fixed
    with pytest.raises(jax.errors.NonConcreteBooleanIndexError):
        _run(source, x)
    with warnings.catch_warnings(), jax.disable_jit():
        warnings.simplefilter("ignore")  # the mean of an empty selection warns
        eager = _run(source, x)
    corpus.assert_same(_run(fixed, x), eager, rtol=1e-2 if x.dtype == jnp.bfloat16 else 1e-6)


def test_mask_of_a_rebound_array_is_not_rewritten() -> None:
    source = "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    m = x > 0\n    x = x * 2\n    return x[m].sum()\n"
    assert rewrite(source, MASK) == source
    assert "not proven" in findings(source, MASK)[0].message


def test_masked_store_and_python_list_index_are_quiet() -> None:
    source = (
        "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x, names):\n    y = x.at[0].set(1.0)\n"
        "    return y, names[0]\n"
    )
    assert findings(source, MASK) == []


def test_traced_shape_fix_needs_every_call_constant() -> None:
    source = (
        "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x, n):\n    return x + jnp.zeros(n)\n\n"
        "a = f(jnp.ones(2), 2)\nb = f(jnp.ones(3), len([1, 2, 3]))\n"
    )
    [finding] = findings(source, SHAPE)
    assert finding.fix is None and "not an integer constant" in finding.message


def test_traced_shape_of_a_count_summed_in_a_loop() -> None:
    """jumanji's mmst/utils.py: `total += ...` in a loop reaches itself, and asking whether `total` is a tracer
    followed that cycle without end (RecursionError, the rule skipped for the file). The cycle is judged by what
    enters it: a traced start makes a traced count, a Python list's entry does not."""
    traced = (
        "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    total = jnp.sum(x)\n    for i in range(3):\n"
        "        total += 1\n    return jnp.zeros(total)\n"
    )
    [finding] = findings(traced, SHAPE)
    assert "computed from traced values" in finding.message
    python_count = (
        "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef merge(graph, num_edges):\n"
        "    return jnp.ones((num_edges, 2)) + graph\n\n@jax.jit\ndef walk(graph, sizes):\n"
        "    counts = [len(s) for s in sizes]\n    total = counts[0]\n    for i in range(1, 3):\n"
        "        total += counts[i] + counts[i - 1]\n        graph = merge(graph, total)\n    return graph\n"
    )
    assert [f.message for f in findings(python_count, SHAPE) if "`total`" in f.message] == []


def test_traced_shape_under_vmap_suggests_in_axes() -> None:
    source = "import jax\nimport jax.numpy as jnp\n\n@jax.vmap\ndef f(x, n):\n    return jnp.arange(n) * x\n"
    [finding] = findings(source, SHAPE)
    assert finding.fix is None and "in_axes=None" in finding.message


# Sizes the rule proves traced (`facts.predicates.tracer`), each one finding: shape functions through any import
# alias, `.reshape` of an array, sizes inside tuples and lists; tracers at their edges: a traced parameter beside a
# static one, vmap's mapped one beside `None`, a static parameter that a traced call also passes a tracer, a call by
# keyword, `n += 1` of a traced `n`, `n += v` of a traced `v`, a parameter read in a nested def.
@pytest.mark.parametrize("source", [
    "import jax\nfrom jax.numpy import zeros as z\n@jax.jit\ndef f(x, n):\n    return x + z((n, 2))\n",
    "import jax\n@jax.jit\ndef f(x: jax.Array, n):\n    return x.reshape(n, -1)\n",
    "import jax\ndef f(k, n):\n    return jax.random.normal(k, shape=[n, 2])\ng = jax.vmap(f)\n",
    "import jax\nimport jax.numpy as jnp\ng = jax.jit(lambda x: jnp.arange(jnp.sum(x)))\n",
    "import jax\nimport jax.numpy as jnp\n@jax.jit\ndef f(x):\n    y = jnp.zeros(3)\n    return x.reshape(y.sum(), -1)\n",
    "import jax\nimport jax.numpy as jnp\nfrom functools import partial\n"
    "@partial(jax.jit, static_argnums=(1,))\ndef f(x, m, n):\n    return jnp.zeros((n, m))\n",
    "import jax\nimport jax.numpy as jnp\ndef f(x, n, k):\n    return jnp.arange(n) + k\ng = jax.vmap(f, (0, 0, None))\n",
    "import jax\nimport jax.numpy as jnp\nfrom functools import partial\n"
    "@partial(jax.jit, static_argnums=1)\ndef g(x, n):\n    return jnp.zeros(n)\n"
    "@jax.jit\ndef f(x):\n    return g(x, jnp.sum(x))\n",
    "import jax\nimport jax.numpy as jnp\ndef helper(n):\n    return jnp.zeros(n)\n"
    "@jax.jit\ndef f(x):\n    return helper(n=jnp.sum(x))\n",
    "import jax\nimport jax.numpy as jnp\n@jax.jit\ndef f(x):\n    n = jnp.sum(x)\n    n += 1\n    return jnp.zeros(n)\n",
    "import jax\nimport jax.numpy as jnp\n@jax.jit\ndef f(x):\n    n = 0\n    n += jnp.sum(x)\n    return jnp.arange(n)\n",
    "import jax\nimport jax.numpy as jnp\n@jax.jit\ndef f(x, n):\n    def g():\n        return jnp.ones((n, 2))\n    return g()\n",
])
def test_traced_shape_finds_sizes_proven_traced(source) -> None:
    assert len(findings(source, SHAPE)) == 1


def test_traced_shape_needs_a_size_that_is_traced() -> None:
    # sizes from shapes, literals and `len` inside jit, and a traced size in code that nothing traces
    source = (
        "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    y = jnp.zeros(x.shape[0]) + jnp.ones((3, 4))\n"
        "    return x.reshape(len(x), -1) + y\n\ndef g(n):\n    return jnp.arange(n)\n"
    )
    assert findings(source, SHAPE) == []
    assert len(findings(source.replace("len(x)", "x.sum()"), SHAPE)) == 1


def test_traced_shape_needs_a_size_proven_a_tracer() -> None:
    # numpyro's static_argnums, chex's function called under jit with a constant, brax's size computed by jnp in a
    # function that jit does not trace, diffrax's `out_size = 0` then `out_size += 1`, equinox's vmap with None
    source = (
        "import jax\nimport jax.numpy as jnp\nfrom functools import partial\n\n"
        "@partial(jax.jit, static_argnums=(1,))\ndef pad(x, n):\n    return x + jnp.zeros((n,))\n\n"
        "def cube(side):\n    return jnp.ones((side, side))\n\nrun = jax.jit(lambda: cube(8))\n\n"
        "def train(k):\n    m = jnp.round(k)\n\n    @jax.jit\n    def epoch(x):\n        size = 0\n        size += 1\n"
        "        return jnp.arange(m) + jnp.full(size, 1.0)\n\n    return epoch\n\n"
        "def pool(x, target):\n    return x.reshape(target, -1)\n\nop = jax.vmap(pool, (0, None))\n"
    )
    assert findings(source, SHAPE) == []
    for before, after in [
        ("lambda: cube(8)", "lambda x: cube(x.sum())"), ("static_argnums=(1,)", "static_argnums=(0,)"),
        ("size += 1", "size += x.sum()"), ("(0, None)", "(0, 0)"),
    ]:
        assert findings(source.replace(before, after), SHAPE), after


def test_traced_shape_fixes_each_parameter_once_at_its_first_use() -> None:
    source = (
        "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x, n):\n    return jnp.zeros(n) + jnp.ones((n,))\n\n"
        "y = f(jnp.ones(3), 3)\n"
    )
    first, second = sorted(findings(source, SHAPE), key=lambda f: (f.start.line, f.start.column))
    assert first.fix is not None and "jnp.zeros(n)" in first.message
    assert second.fix is None and "offered at its first use" in second.message
    fixed = rewrite(source, SHAPE, unsafe=True)
    assert '@partial(jax.jit, static_argnames=("n",))' in fixed and "from functools import partial" in fixed


def test_traced_shape_adds_the_keyword_to_jit_s_call() -> None:
    source = (
        "import jax\nimport jax.numpy as jnp\n\ndef f(x, n):\n    return x + jnp.zeros(n)\n\n"
        "g = jax.jit(f, donate_argnums=0,)\ny = g(jnp.ones(3), 3)\n"
    )
    fixed = rewrite(source, SHAPE, unsafe=True)
    assert 'g = jax.jit(f, donate_argnums=0, static_argnames=("n",),)' in fixed, fixed


def test_collective_in_a_local_helper_that_receives_the_gradients() -> None:
    source = (
        "import jax\nfrom functools import partial\n\ndef loss(p, x):\n    return (p * x).sum()\n\n"
        "def sync(g):\n    return jax.lax.pmean(g, 'i')\n\n"
        "@partial(jax.pmap, axis_name='i')\ndef step(p, x):\n    g, aux = jax.grad(lambda q: (loss(q, x), 0.0), has_aux=True)(p)\n"
        "    return p - 0.1 * sync(g)\n"
    )
    assert findings(source, COLLECTIVE) == []
    unsynced = source.replace("0.1 * sync(g)", "0.1 * g")
    assert len(findings(unsynced, COLLECTIVE)) == 1


def test_gradients_into_another_modules_function_are_quiet() -> None:
    source = (
        "import jax\nfrom functools import partial\nfrom .dist import allreduce\n\ndef loss(p, x):\n"
        "    return (p * x).sum()\n\n@partial(jax.pmap, axis_name='i')\ndef step(p, x):\n"
        "    g = allreduce(jax.grad(loss)(p, x))\n    return p - 0.1 * g\n"
    )
    assert findings(source, COLLECTIVE) == []


def test_jit_keeps_the_global_it_traced_with() -> None:
    """The bug JF804 reports, on its corpus case: the second call still multiplies by the old scale."""
    case = next(c for c in corpus.cases() if c.id == "stale_global/rebind_after_call")
    first, second = corpus.load_function(case.before, "results", tag="stale")()
    np.testing.assert_array_equal(first, second)  # scale was 1.0, then 2.0: both results use 1.0
    assert len(findings(case.before.read_text(encoding="utf-8"), STALE)) == 1


def test_masked_float_sum_may_round_differently_so_the_fix_is_unsafe() -> None:
    """The Fix safety section's claim: adding the zeros at `x`'s positions pairs the terms differently from the
    sum over `x[mask]`, so some float32 sums differ in the last bits (212 of 450 draws in
    benchmarks/mask_rounding.py). Hence the fix is unsafe, and says so."""
    from jaxfix.diagnostics import Safety

    source = _MASKED.format("sum", "sum")
    [finding, _] = findings(source, MASK)
    assert finding.fix.safety is Safety.UNSAFE and "round" in finding.message
    rng = np.random.default_rng(0)
    fixed = jax.jit(lambda x: jnp.sum(jnp.where(x > 0, x, 0)))
    differing = 0
    for _ in range(10):
        x = jnp.asarray(rng.standard_normal(100).astype(np.float32))
        differing += np.asarray(x[x > 0].sum()).view(np.int32) != np.asarray(fixed(x)).view(np.int32)
    assert differing > 0
