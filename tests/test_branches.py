"""The branch facts: which truth tests surely fail under tracing (facts/predicates.py), what an `if`'s branches
need and give (facts/branches.py, facts/loops.block_flow), and the `jnp.logical_*` form of a test
(codegen.logical_test)."""

from __future__ import annotations

import ast
import textwrap

import jax
import jax.numpy as jnp
import libcst as cst
import pytest

from jaxfix.codegen import logical_test
from jaxfix.facts.flow import Lines
from jaxfix.facts.loops import block_flow
from jaxfix.facts.module import FileFacts
from jaxfix.facts.predicates import Truth

HEADER = "import jax\nimport jax.numpy as jnp\nfrom jax import lax\nfrom functools import partial\n\n"


def _context(source: str) -> FileFacts:
    return FileFacts(HEADER + textwrap.dedent(source))


def _ifs(facts: FileFacts) -> list[ast.If]:
    return sorted(facts.binder.nodes_of(ast.If), key=lambda node: (node.lineno, node.col_offset))


def _test(source: str) -> Truth:
    context = _context(source)
    return context.predicates.truth(_ifs(context)[-1].test)


# ---- which tests surely fail ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        "if x > 0:\n        x = -x",
        "if jnp.any(jnp.isnan(x)):\n        x = jnp.zeros_like(x)",
        "y = jnp.sum(x)\n    if y < 1.0:\n        x = -x",
        "done = jnp.all(x > 0)\n    if done:\n        x = -x",
        "if x.sum() > 0 and x.max() < 3:\n        x = -x",
        "if not jnp.isfinite(jnp.sum(x)):\n        x = -x",
        "if 0 < jnp.sum(x) < 1:\n        x = -x",
    ],
)
def test_traced_tests(body: str) -> None:
    assert _test(f"@jax.jit\ndef f(x):\n    {body}\n    return x\n") is Truth.TRACED


@pytest.mark.parametrize(
    "signature, body",
    [
        ("x", "if x.shape[0] > 1:\n        x = x[1:]"),
        ("x", "if x.ndim == 2:\n        x = x.T"),
        ("x", "if x.dtype == jnp.float16:\n        x = x.astype(jnp.float32)"),
        ("x, mask=None", "if mask is not None:\n        x = x * mask"),
        ("x, scale=1.0", "if scale != 1.0:\n        x = x * scale"),  # an omitted default is not traced
        ("x", "if isinstance(x, tuple):\n        x = x[0]"),
        ("x, *rest", "if rest:\n        x = x + 1"),  # a tuple's truth is static
        ("x", "n = jnp.size(x) % 4\n    if n != 0:\n        x = x[:-n]"),
        ("x", "if x == None:\n        x = 0.0"),
        ("x", "if x.shape == (3,):\n        x = x + 1"),
        ("state", "if state.count > 0:\n        state = state._replace(count=0)"),  # a field may be static
        ("x", "if unknown(x):\n        x = -x"),  # a call to something unknown
        ("x", "if x:\n        x = -x"),  # a parameter might be a tuple or dict: its truth is not proven to fail
        ("x, y", "if x == y:\n        x = -x"),  # `==` on pytrees compares structure first
        ("x", "if jnp.iscomplexobj(x):\n        x = x.real"),  # a Python bool from the dtype (found in jax/)
        ("x", "n = lax.axis_size('i')\n    if n % 2 != 0:\n        x = -x"),  # a Python int
    ],
)
def test_tests_that_stay_python(signature: str, body: str) -> None:
    assert _test(f"@jax.jit\ndef f({signature}):\n    {body}\n    return x\n") is Truth.OTHER


def test_static_argnames_and_untraced_code() -> None:
    assert _test("@partial(jax.jit, static_argnames='n')\ndef f(x, n):\n    if n > 2:\n        x = x + 1\n    return x\n") is Truth.OTHER
    assert _test("def f(x):\n    if x > 0:\n        x = -x\n    return x\n") is Truth.OTHER


def test_mixed_and_reports_only_when_the_traced_part_comes_first() -> None:
    assert _test("@jax.jit\ndef f(x):\n    if jnp.sum(x) > 0 and x.shape[0] > 1:\n        x = -x\n    return x\n") is Truth.MIXED
    # Python short-circuits: the static part first may keep the traced part from ever running.
    assert _test("@jax.jit\ndef f(x):\n    if x.shape[0] > 1 and jnp.sum(x) > 0:\n        x = -x\n    return x\n") is Truth.OTHER


def test_flow_sensitive_bindings() -> None:
    source = "@jax.jit\ndef f(x):\n    m = None\n    m = jnp.ones(3)\n    if m.sum() > 0:\n        x = -x\n    return x\n"
    assert _test(source) is Truth.TRACED
    # `m` may still be None on the path where the first test is false, as far as dataflow knows.
    source = "@jax.jit\ndef f(x):\n    m = None\n    if m is None:\n        m = jnp.ones(3)\n    if m.sum() > 0:\n        x = -x\n    return x\n"
    assert _test(source) is Truth.OTHER
    # A binding that may still be a Python value on some path: not proven.
    source = "@jax.jit\ndef f(x, k: int):\n    n = 0\n    if k > 2:\n        n = jnp.sum(x)\n    if n > 0:\n        x = -x\n    return x\n"
    assert _test(source) is Truth.OTHER


def test_parameters_of_helpers_follow_their_call_sites() -> None:
    helper = "def helper(x, t):\n    if t > 0:\n        x = -x\n    return x\n\n"
    traced_call = helper + "@jax.jit\ndef f(x, t):\n    return helper(x, t)\n"
    context = _context(traced_call)
    assert context.predicates.truth(_ifs(context)[0].test) is Truth.TRACED
    static_call = helper + "@jax.jit\ndef f(x):\n    return helper(x, x.shape[0])\n"
    context = _context(static_call)
    assert context.predicates.truth(_ifs(context)[0].test) is Truth.OTHER


def test_lax_bodies_and_unbatched_vmap_arguments() -> None:
    context = _context(
        "@jax.jit\ndef f(x):\n    def body(i, x):\n        if i % 2 == 0:\n            x = -x\n        return x\n"
        "    return lax.fori_loop(0, 4, body, x)\n"
    )
    assert context.predicates.truth(_ifs(context)[0].test) is Truth.TRACED
    # vmap with in_axes None passes the argument through untouched: a Python int stays one.
    context = _context("def g(x, n):\n    if n > 1:\n        x = x[1:]\n    return x\n\nh = jax.vmap(g, (0, None))\n")
    assert context.predicates.truth(_ifs(context)[0].test) is Truth.OTHER


# ---- block flow and branch outputs ---------------------------------------------------------------------------


def test_block_flow() -> None:
    text = "a = x + 1\nif c:\n    y = a\nelse:\n    y = 0\nz = z + y\n"
    flow = block_flow(ast.parse(text).body, Lines(text), ["y", "z"])
    assert {"x", "c", "z"} <= flow.live_in and "a" not in flow.live_in and "y" not in flow.live_in
    assert flow.defined == {"a", "y", "z"}
    text = "if c:\n    y = 1\n"
    assert block_flow(ast.parse(text).body, Lines(text)).defined == frozenset()


def _branches(source: str):
    context = _context(source)
    node = _ifs(context)[-1]
    return context.branches.branches(node, [("`if`", node.body), ("`else`", node.orelse or None)])


def test_outputs_and_operands() -> None:
    result = _branches(
        "@jax.jit\ndef f(x, v, t):\n    if t < 1:\n        a = -x\n        v = v + a\n    else:\n        x = 2 * x\n"
        "    return x, v\n"
    )
    assert result.blocker is None
    assert result.outputs == ("x", "v")  # in the order the function mentions them
    assert result.operands == ("x", "v")  # read before assigned in one branch or the other
    assert [arm.label for arm in result.arms] == ["`if`", "`else`"]


def test_early_return_takes_the_rest_of_the_function() -> None:
    result = _branches("@jax.jit\ndef f(x):\n    if x < 0:\n        return -x\n    y = x * 2\n    return y\n")
    assert result.blocker is None and result.returns and len(result.tail) == 2


@pytest.mark.parametrize(
    "body, reason",
    [
        ("if x > 0:\n        y = 1.0\n    return y", "not assigned in the `else` branch"),
        ("if x > 0:\n        y = jnp.ones(3)\n    else:\n        y = 0.0\n    return y", "rank"),
        ("if x > 0:\n        y = 1\n    else:\n        y = x * 0.5\n    return y", "Python int"),
        ("if x > 0:\n        y = None\n    else:\n        y = x\n    return y", "None"),
        ("if x > 0:\n        print(x)\n        y = x\n    else:\n        y = -x\n    return y", "does I/O"),
        ("if x > 0:\n        cache.append(x)\n    return x", "cache"),
        ("if x > 0:\n        return x\n    x = x + 1", "only some branches"),
        ("for i in range(3):\n        if x > i:\n            break\n    return x", "break"),
    ],
)
def test_blockers(body: str, reason: str) -> None:
    result = _branches(f"cache = []\n\n@jax.jit\ndef f(x):\n    {body}\n")
    assert result.blocker is not None and reason in result.blocker, result.blocker


# ---- the test as jnp.logical_* -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "test, expected",
    [
        ("x > 0", "x > 0"),
        ("(a > 0) and not (b < 1)", "jnp.logical_and(a > 0, jnp.logical_not(b < 1))"),
        ("a or b and c", "jnp.logical_or(a, jnp.logical_and(b, c))"),
        ("0 < x <= 1", "jnp.logical_and(0 < x, x <= 1)"),
    ],
)
def test_logical_test(test: str, expected: str) -> None:
    converted = logical_test(cst.parse_expression(test), "jnp")
    assert cst.Module(body=[]).code_for_node(converted) == expected


def test_logical_test_refuses_a_computed_middle_operand() -> None:
    assert logical_test(cst.parse_expression("0 < f(x) < 1"), "jnp") is None


def test_logical_test_matches_python_truth() -> None:
    """In a truth test, `and`/`or`/`not` and chained comparisons mean what jnp.logical_* compute, for every
    combination of scalar operands (numbers included, where Python's `and` returns an operand, not a bool)."""
    values = [-1.0, 0.0, 0.5, 2.0]
    cases = ["a and b", "a or not b", "not a and (b or a)", "0 < a < b", "a < 1 or b > 1 and a != b"]
    for case in cases:
        converted = cst.Module(body=[]).code_for_node(logical_test(cst.parse_expression(case), "jnp"))
        for a in values:
            for b in values:
                python = bool(eval(case, {"a": a, "b": b}))
                staged = jax.jit(lambda a, b: eval(converted, {"jnp": jnp, "a": a, "b": b}))(a, b)
                assert bool(staged) == python, (case, a, b)


def test_while_tests_see_the_body_bindings() -> None:
    """What a `while` loop codemod asks (Predicates.truth of its test): the body's bindings count."""
    context = _context(
        "@jax.jit\ndef f(x):\n    n = jnp.sum(x)\n    while n > 1:\n        n = n / 2\n    m = jnp.sum(x)\n"
        "    while m > 1:\n        m = 3\n    k = 0\n    while k < 3:\n        k = k + 1\n    return n\n"
    )
    loops = [s for s in context.tree.body[-1].body if isinstance(s, ast.While)]
    assert [context.predicates.truth(loop.test) for loop in loops] == [Truth.TRACED, Truth.OTHER, Truth.OTHER]


def test_loop_carried_values_stay_tracers() -> None:
    source = (
        "@jax.jit\ndef f(x):\n    acc = jnp.zeros(())\n    for i in range(3):\n        acc = acc + x[i]\n"
        "        if acc > 1:\n            x = jnp.cumsum(x)\n    return x\n"
    )
    assert _test(source) is Truth.TRACED
