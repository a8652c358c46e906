"""The `ast` screens of the branch rules (Screen.may_be_tracer / may_fail_truth) are sound: on
each probe where a JF2xx codemod reports something without its screen, the screen lets the file through. A few
probes show that the screens do reject static tests."""

from __future__ import annotations

import pytest

from tests.helpers import codemod_for_module
from tests.test_screens import _BRANCH, passes, unscreened

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


def _rejected_beside_a_sibling(code: str, rejected: str, sibling: str) -> None:
    """The rule's screen rejects `rejected`, where the rule finds nothing, and passes `sibling`, where it fires."""
    codemod = next(c for c in [*RULES, codemod_for_module("boolean_mask")] if c.code == code)
    rejected, sibling = HEADER + rejected, HEADER + sibling
    assert codemod.may_match(rejected) and not passes(rejected, codemod)
    assert unscreened(rejected, codemod) == []
    assert unscreened(sibling, codemod) and passes(sibling, codemod)


def test_builtins_need_an_argument_predicate_analysis_may_prove_traced() -> None:
    # flax's gemma sampler: `min` of a shape and a parameter jit keeps static
    _rejected_beside_a_sibling(
        "JF203",
        "@partial(jax.jit, static_argnums=1)\ndef f(x, n):\n    return x[:min(x.shape[0], n)]\n",
        "@jax.jit\ndef f(x, n):\n    return x[0] * min(x.shape[0], n)\n",
    )
    # equinox's filter: bool() of the parameter of a lambda that tree_map calls
    _rejected_beside_a_sibling(
        "JF203",
        "@jax.jit\ndef f(x, masks):\n    return jax.tree.map(lambda m, y: y if bool(m) else 0, masks, x)\n",
        "@jax.jit\ndef f(x, masks):\n    return jax.tree.map(lambda m, y: y if bool(jnp.sum(y) > 0) else 0, masks, x)\n",
    )


def test_boolean_mask_needs_a_name_that_may_be_a_tracer_or_bound_to_a_mask_where_it_is_read() -> None:
    # equinox's `filter_spec: PyTree[AxisSpec]`: a module-level type alias in an annotation
    _rejected_beside_a_sibling(
        "JF801",
        "from typing import Any, Callable\nAxisSpec = bool | Callable[[Any], bool]\n\n"
        "@jax.jit\ndef f(x, spec: list[AxisSpec]):\n    return x.sum()\n",
        "@jax.jit\ndef f(x):\n    spec = x > 0\n    return x[spec]\n",
    )


def test_branch_tests_need_an_annotation_that_may_say_array() -> None:
    # gemma's transformer: `cache[name] if cache else None` on a parameter annotated with a class or None
    _rejected_beside_a_sibling(
        "JF202",
        "@jax.jit\ndef f(x, cache: dict | None):\n    c = cache['a'] if cache else None\n    return x, c\n",
        "@jax.jit\ndef f(x, cache: jax.Array):\n    c = cache[0] if cache else 0.0\n    return x, c\n",
    )


def test_branch_tests_leave_out_an_if_in_a_try_that_catches_the_tracers_error() -> None:
    # haiku's dropout: a test written to run traced and eagerly
    guarded = (
        "@jax.jit\ndef f(x, rate):\n    try:\n        if rate > 0.5:\n            x = x * 2.0\n"
        "    except jax.errors.ConcretizationTypeError:\n        pass\n    return x\n"
    )
    unguarded = guarded.replace("jax.errors.ConcretizationTypeError", "ValueError")
    _rejected_beside_a_sibling("JF202", guarded, unguarded)
    cond = "            x = x * 2.0\n            rate = rate * 2.0\n"
    _rejected_beside_a_sibling(
        "JF201", guarded.replace("            x = x * 2.0\n", cond), unguarded.replace("            x = x * 2.0\n", cond)
    )
    chain = guarded.replace("            x = x * 2.0\n", "            x = x * 2.0\n        elif rate < 0.1:\n            x = -x\n")
    _rejected_beside_a_sibling("JF204", chain, chain.replace("jax.errors.ConcretizationTypeError", "ValueError"))


def test_branch_to_cond_needs_a_function_traced_through_nesting_but_not_handed_to_the_host() -> None:
    # numpyro's progress bar: the traced factory hands the `_update` it defines to io_callback
    host = (
        "from jax.experimental import io_callback\n\n@jax.jit\ndef factory(x):\n    def _update(y):\n"
        "        if jnp.sum(y) > 0:\n            y = jnp.cumsum(y)\n            y = -y\n        return y\n\n"
        "    return lax.cond(jnp.sum(x) > 1, lambda v: io_callback(_update, v, v), lambda v: v, x)\n"
    )
    _rejected_beside_a_sibling("JF201", host, host.replace("io_callback(_update, v, v)", "_update(v)"))


def test_branch_to_cond_sees_a_def_in_a_class_only_from_the_class_body() -> None:
    # flax's MergeContext: a method `unflatten` is not the module's `unflatten` the other methods call
    method = (
        "def unflatten(x):\n    return x\n\nclass C:\n    def unflatten(self, x):\n        if jnp.sum(x) > 0:\n"
        "            x = jnp.cumsum(x)\n            x = -x\n        return x\n\n    @jax.jit\n    def merge(self, x):\n        return unflatten(x)\n"
    )
    sibling = method.replace("def unflatten(x):\n    return x\n", "def unflatten(x):\n    if jnp.sum(x) > 0:\n        x = jnp.cumsum(x)\n        x = -x\n    return x\n")
    _rejected_beside_a_sibling("JF201", method, sibling)


def test_branch_tests_read_only_the_bindings_that_reach_them() -> None:
    cond = codemod_for_module("branch_to_cond")
    # flax's `merge`: the `else` binds `t` to a tracer, but only `t = x.ndim` reaches the inner test
    # (ast_flow.StatementOrder), as PredicateAnalysis asks every reaching binding to be a tracer
    text = _BRANCH + (
        "@jax.jit\ndef f(x, flag=False):\n    if flag:\n        t = x.ndim\n        if t > 1:\n            x = x.sum()\n"
        "    else:\n        t = x\n    return x\n"
    )
    assert cond.may_match(text) and not passes(text, cond) and unscreened(text, cond) == []
    swapped = text.replace("t = x.ndim", "t = X").replace("t = x\n", "t = x.ndim\n").replace("t = X", "t = x")
    assert unscreened(swapped, cond) and passes(swapped, cond), swapped
    # through a loop, a binding later in the body reaches the test of the next step
    looped = _BRANCH + (
        "@jax.jit\ndef f(x):\n    t = x\n    for i in range(3):\n        if t > 1:\n            x = x.sum()\n"
        "        t = x * 2.0\n    return x\n"
    )
    assert unscreened(looped, cond) and passes(looped, cond)
