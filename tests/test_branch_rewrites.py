"""What the branch rewrites compute beyond the corpus's values: gradients (jnp.where's NaN trap), both outcomes
of a test, and that a rewrite runs under jit where the original raised TracerBoolConversionError."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import pytest

from jaxfix import corpus
from tests.helpers import codemod_for_module, rewrite

WHERE = codemod_for_module("branch_to_where")
COND = codemod_for_module("branch_to_cond")


def _load(source: str, entry: str, tmp_path, name: str):
    path = tmp_path / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    return corpus.load_function(path, entry, tag=name)


SAFE_LOG = "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    return jnp.log(x) if x > 0 else 0.0\n"


def test_unsafe_side_becomes_cond_with_finite_gradient(tmp_path) -> None:
    fixed = rewrite(SAFE_LOG, WHERE)
    assert "lax.cond" in fixed and "jnp.where" not in fixed
    f = _load(fixed, "f", tmp_path, "safe_log")
    assert float(jax.grad(f)(0.0)) == 0.0
    assert float(jax.grad(f)(2.0)) == pytest.approx(0.5)
    # The rewrite jaxfix avoids: jnp.where computes log(0) = -inf on the side not taken, and the gradient of
    # the selected 0.0 becomes 0 * inf = NaN.
    naive = jax.jit(lambda x: jnp.where(x > 0, jnp.log(x), 0.0))
    assert math.isnan(float(jax.grad(naive)(0.0)))


def test_where_gradient_matches_the_branch_taken(tmp_path) -> None:
    source = "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    return x * x if x > 0 else 0.01 * x\n"
    fixed = rewrite(source, WHERE)
    assert "jnp.where(x > 0, x * x, 0.01 * x)" in fixed
    f = _load(fixed, "f", tmp_path, "leaky")
    original = _load(source, "f", tmp_path, "leaky_before")
    for x in (-3.0, -0.5, 0.0, 0.5, 3.0):
        with jax.disable_jit():
            expected = jax.grad(original)(x)
        assert float(jax.grad(f)(x)) == pytest.approx(float(expected))


def test_original_raises_and_rewrite_runs_under_jit(tmp_path) -> None:
    source = (
        "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x, t):\n    if t > 0:\n        y = jnp.cumsum(x)\n"
        "    else:\n        y = jnp.flip(x)\n    return y\n"
    )
    original = _load(source, "f", tmp_path, "raises")
    with pytest.raises(jax.errors.TracerBoolConversionError):
        original(jnp.arange(3.0), 1.0)
    f = _load(rewrite(source, COND), "f", tmp_path, "cond")
    for t in (1.0, -1.0):
        with jax.disable_jit():
            expected = original(jnp.arange(3.0), t)
        assert jnp.array_equal(f(jnp.arange(3.0), t), expected)


def test_cond_gradient_flows_through_outputs_and_operands(tmp_path) -> None:
    source = (
        "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x, t):\n    y = jnp.sin(x)\n    if t > 0:\n"
        "        y = y * jnp.log(x)\n    return jnp.sum(y)\n"
    )
    fixed = rewrite(source, COND)
    assert "lax.cond" in fixed
    f = _load(fixed, "f", tmp_path, "grad_cond")
    original = _load(source, "f", tmp_path, "grad_before")
    x = jnp.array([0.5, 2.0])
    for t in (1.0, -1.0):
        with jax.disable_jit():
            expected = jax.grad(original)(x, t)
        assert jnp.allclose(jax.grad(f)(x, t), expected)
