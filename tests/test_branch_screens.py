"""The `ast` screens of the branch rules (Screen.may_be_tracer / may_be_array / may_fail_truth) are sound: on
each probe where a JF2xx codemod reports something without its screen, the screen lets the file through. A few
probes show that the screens do reject static tests."""

from __future__ import annotations

import pytest

from tests.helpers import codemod_for_module
from tests.test_screens import passes, unscreened

RULES = [codemod_for_module(m) for m in ("branch_to_cond", "branch_to_where", "builtin_on_traced", "elif_chain")]
HEADER = "import jax\nimport jax.numpy as jnp\nfrom jax import lax\nfrom functools import partial\n\n"

PROBES = [
    # closures: the name is bound in the enclosing function
    "@jax.jit\ndef f(x):\n    s = jnp.sum(x)\n    def g(y):\n        if s > 0:\n            y = jnp.cumsum(y)\n        return y\n"
    "    return lax.fori_loop(0, 3, lambda i, y: g(y), x)\n",
    # a global name bound in traced code
    "@jax.jit\ndef f(x):\n    global S\n    S = jnp.sum(x)\n    if S > 0:\n        x = jnp.cumsum(x)\n    return x\n",
    # tuple unpacking from a display, `+=`, walrus
    "@jax.jit\ndef f(x):\n    a, b = jnp.sum(x), jnp.max(x)\n    if a > b:\n        x = jnp.cumsum(x)\n    return x\n",
    "@jax.jit\ndef f(x):\n    t = 0.0\n    t += jnp.sum(x)\n    if t > 1:\n        x = jnp.cumsum(x)\n    return x\n",
    # lax bodies, keyword-only parameters without defaults, helpers reached by calls
    "@jax.jit\ndef f(x):\n    def body(i, x):\n        if i == 0:\n            x = jnp.cumsum(x)\n        elif i == 1:\n"
    "            x = jnp.flip(x)\n        return x\n    return lax.fori_loop(0, 3, body, x)\n",
    "@jax.jit\ndef f(x, *, t):\n    return jnp.log(x) if t > 0 else x\n",
    "def helper(x, t):\n    if t > 0:\n        x = jnp.cumsum(x)\n    return x\n\n@jax.jit\ndef f(x, t):\n    return helper(x, t)\n",
    # bare names with array evidence only from use, `==` against a number, methods and `.at`
    "@jax.jit\ndef f(x):\n    done = jnp.all(x > 0)\n    if not done:\n        x = jnp.cumsum(x)\n    return x\n",
    "@jax.jit\ndef f(x, k):\n    if k == 2:\n        x = jnp.cumsum(x)\n    return x\n",
    "@jax.jit\ndef f(x):\n    if x.at[0].get() > 0:\n        x = jnp.cumsum(x)\n    return x\n",
    "@jax.jit\ndef f(x):\n    return max(x.sum(), 0.0), (x.sum() > 0) and (x.max() < 2)\n",
    "@jax.jit\ndef f(x):\n    return all(x > 0), bool(jnp.sum(x) > 0)\n",
]

REJECTED = [
    "@jax.jit\ndef f(x, training=False):\n    if training:\n        x = x * 0.5\n    return x\n",
    "@jax.jit\ndef f(x):\n    if x.shape[0] > 1 and x.ndim == 2:\n        x = x[1:]\n    return x\n",
    "@jax.jit\ndef f(x, mode='a'):\n    if mode == 'b':\n        x = -x\n    elif x is None:\n        x = 0\n    return x\n",
    "@jax.jit\ndef f(xs):\n    for x in xs:\n        if x:\n            break\n    return max(len(xs), 2)\n",
]


@pytest.mark.parametrize("text", PROBES)
@pytest.mark.parametrize("codemod", RULES, ids=[c.code for c in RULES])
def test_probes_pass_where_they_match(codemod, text) -> None:
    source = HEADER + text
    if unscreened(source, codemod):
        assert passes(source, codemod)


def test_every_probe_is_found_by_some_rule() -> None:
    """The probes test something: each one is a finding of at least one branch rule."""
    for text in PROBES:
        assert any(unscreened(HEADER + text, codemod) for codemod in RULES), text


@pytest.mark.parametrize("text", REJECTED)
def test_static_tests_are_rejected(text) -> None:
    source = HEADER + text
    assert not any(passes(source, codemod) for codemod in RULES)
