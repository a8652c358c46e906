"""JF103 while-to-while-loop beyond the corpus: that the corpus equivalence really compares the eager Python loop
with the compiled lax.while_loop, the analyses it added (which transformations trace a function, flow-sensitive
test kinds, Python int counters), and the claims its docs make (reverse mode is lost, forward mode is not)."""

from __future__ import annotations

import ast

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxfix import corpus
from jaxfix.facts.loops import captured_carries
from jaxfix.facts.module import FileFacts
from jaxfix.facts.traced import Kind
from tests.helpers import codemod_for_module, findings, rewrite

CODEMOD = codemod_for_module("while_to_while_loop")
POSITIVE = [c for c in corpus.cases() if c.codemod == "while_to_while_loop" and not c.negative]


def _function(facts: FileFacts, name: str) -> ast.FunctionDef:
    return next(n for n in ast.walk(facts.tree) if isinstance(n, ast.FunctionDef) and n.name == name)


def _loop(facts: FileFacts) -> ast.While:
    return next(n for n in ast.walk(facts.tree) if isinstance(n, ast.While))


# ---- the corpus comparison is not vacuous --------------------------------------------------------------------


@pytest.mark.parametrize("case", POSITIVE, ids=[c.name for c in POSITIVE])
def test_original_fails_under_jit_and_rewrite_compiles_a_while(case: corpus.Case) -> None:
    """test_equivalent compares the rewrite under jit with the original run eagerly (corpus.call's fallback):
    that holds only if the original really fails under jit, and the rewrite really stages a while loop."""
    args, kwargs = corpus.arguments(case)
    original = corpus.load_function(case.before, case.spec["entry"], tag="jf103-before")
    with pytest.raises(jax.errors.ConcretizationTypeError):
        original(*args, **kwargs)
    rewritten = corpus.load_function(case.after, case.spec["entry"], tag="jf103-after")
    assert "while[" in str(jax.make_jaxpr(rewritten)(*args, **kwargs))


def test_equivalence_detects_a_wrong_rewrite() -> None:
    """A rewrite with a looser tolerance computes other numbers, and the corpus comparison says so."""
    case = next(c for c in POSITIVE if c.name == "newton_tolerance")
    args, kwargs = corpus.arguments(case)
    namespace: dict = {}
    exec(case.after.read_text().replace("> 1e-4 *", "> 1e-1 *"), namespace)
    wrong = corpus.call(namespace[case.spec["entry"]], args, kwargs)
    original = corpus.call(corpus.load_function(case.before, case.spec["entry"], tag="jf103-b2"), args, kwargs)
    with pytest.raises(AssertionError):
        corpus.assert_same(wrong, original, rtol=case.spec["rtol"])


def test_returned_counter_has_the_same_value() -> None:
    """A Python int counter returned from the loop becomes an int32 array with the same value."""
    source = (
        "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    n = 0\n    while jnp.sum(x) > 1.0:\n"
        "        x = x / 2.0\n        n = n + 1\n    return x, n\n"
    )
    fixed = rewrite(source, CODEMOD)
    assert "lax.while_loop" in fixed
    before, after = {}, {}
    exec(source, before)
    exec(fixed, after)
    x = jnp.array([3.0, 5.0])
    with jax.disable_jit():
        x_eager, n_eager = before["f"](x)
    x_loop, n_loop = after["f"](x)
    assert isinstance(n_eager, int) and n_eager == int(n_loop) == 3
    assert n_loop.dtype == jnp.int32
    np.testing.assert_allclose(x_loop, x_eager)


def test_reverse_mode_is_lost_forward_mode_is_not() -> None:
    """What the fix message and the docs say: jax.grad of lax.while_loop raises, jax.jacfwd works."""
    case = next(c for c in POSITIVE if c.name == "fixed_point_cos")
    rewritten = corpus.load_function(case.after, case.spec["entry"], tag="jf103-grad")
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work for lax.while_loop"):
        jax.grad(rewritten)(jnp.float32(1.0))
    assert np.isfinite(jax.jacfwd(rewritten)(jnp.float32(1.0)))


# ---- matching ------------------------------------------------------------------------------------------------


def test_flow_sensitive_test_kind() -> None:
    """`vec` is a traced parameter, but the binding that reaches the loop is static (JAX's own Pallas code)."""
    source = (
        "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x, vec=None):\n    if vec is None:\n"
        "        vec = 32 // x.dtype.itemsize\n        while vec * 2 <= 16:\n            vec *= 2\n"
        "    return x * vec\n"
    )
    assert findings(source, CODEMOD) == []
    facts = FileFacts(source)
    loop = _loop(facts)
    assert facts.traced.kind(loop.test) is Kind.TRACED  # flow-insensitive: joins the parameter in
    assert facts.carry.kind_at(loop, loop.test) is Kind.STATIC


def test_static_values_the_traced_analysis_over_approximates_stay_quiet() -> None:
    """`lax.axis_size` returns a Python int, which TracedAnalysis counts as traced: no array, no finding."""
    source = (
        "import jax\nfrom jax import lax\n\n@jax.jit\ndef f(x):\n    n = lax.axis_size('i')\n    k = 1\n"
        "    while k * 2 <= n:\n        k *= 2\n    return x * k\n"
    )
    assert findings(source, CODEMOD) == []


def test_multiline_test_keeps_its_comments() -> None:
    source = (
        "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x, tol):\n    while (jnp.abs(x) > tol  # large\n"
        "           and jnp.abs(x) < 1e6):  # not diverged\n        x = x / 2.0\n    return x\n"
    )
    fixed = rewrite(source, CODEMOD)
    assert "        # large\n        return jnp.logical_and(jnp.abs(x) > tol, jnp.abs(x) < 1e6)\n" in fixed
    assert "def cond(x):  # not diverged\n" in fixed


def test_fresh_names_avoid_module_names() -> None:
    source = (
        "import jax\nimport jax.numpy as jnp\n\ncond = body = None\n\n@jax.jit\ndef f(x):\n"
        "    while jnp.sum(x) > 1.0:\n        x = x / 2.0\n    return x\n"
    )
    fixed = rewrite(source, CODEMOD)
    assert "def cond_fun(x):" in fixed and "def body_fun(x):" in fixed
    assert "jax.lax.while_loop(cond_fun, body_fun, x)" in fixed


@pytest.mark.parametrize(
    "body, reason",
    [
        ("        x = x / 2.0\n        t = t + 0.5\n", "does not start as an int"),  # a Python float counter
        ("        x = x / 2.0\n        if i % 2 == 0:\n            x = x - 1.0\n        i += 1\n", "a truth value"),
        ("        x = x * 0.5 ** i + jnp.sin(i)\n        i += 1\n", None),  # arithmetic works with a traced int
        ("        x = x / 2.0\n        i = i / 2\n", "may not stay an int"),
    ],
)
def test_python_number_carries(body: str, reason: str | None) -> None:
    source = (
        "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    i = 0\n    t = 0.0\n"
        f"    while jnp.sum(x) > 1.0:\n{body}    return x\n"
    )
    reported = findings(source, CODEMOD)
    assert len(reported) == 1
    if reason is None:
        assert reported[0].fix is not None, reported[0].message
    else:
        assert reported[0].fix is None and reason in reported[0].message, reported[0].message


# ---- the analyses it added -----------------------------------------------------------------------------------


def test_transforms_and_staging() -> None:
    source = (
        "import jax\nfrom jax import lax\n\n@jax.jit\ndef jitted(x):\n    return helper(x)\n\ndef helper(x):\n"
        "    return x\n\ndef differentiated(x):\n    return x\n\ndg = jax.grad(differentiated)\n\n"
        "def step(c, x):\n    def inner(y):\n        return y\n    return inner(c), x\n\n"
        "def run(xs):\n    return lax.scan(step, 0.0, xs)\n\n@jax.custom_jvp\ndef smooth(x):\n    return x\n"
    )
    facts = FileFacts(source)
    traced = facts.traced
    expected = {
        "jitted": ({"jax.jit"}, True),
        "helper": ({"jax.jit"}, True),
        "differentiated": ({"jax.grad"}, False),
        "step": ({"jax.lax.scan"}, True),
        "inner": ({"jax.lax.scan"}, True),
        "smooth": ({"jax.custom_jvp"}, False),
        "run": (set(), False),
    }
    for name, (transforms, staged) in expected.items():
        function = _function(facts, name)
        assert traced.transforms(function) == transforms, name
        assert traced.staged(function) is staged, name


def test_static_numbers_and_static_ints() -> None:
    source = (
        "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    i = 0\n    t = 0.0\n    k = 0\n"
        "    while jnp.sum(x) > 1.0:\n        x = x / 2.0\n        i += 1\n        t = t + 1.0\n"
        "        k = k + jnp.sum(x)\n    return x, i, t, k\n"
    )
    facts = FileFacts(source)
    loop = _loop(facts)
    flow = facts.loop(loop)
    assert facts.carry.static_numbers(loop, flow) == ["i", "t"]  # `k` becomes traced: not static
    assert "stays a Python number" in facts.carry.blocker(loop, flow, construct="lax.while_loop")
    reason = facts.carry.blocker(loop, flow, construct="lax.while_loop", static_ints=True)
    assert reason is not None and reason.startswith("`t`")  # ints pass, the float does not


def test_concrete_use_stops_at_consumed_expressions() -> None:
    source = (
        "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    i = 0\n"
        "    while jnp.sum(x) > 1.0 and i < 5:\n        x = x / 2.0\n        i += 1\n    return x\n"
    )
    facts = FileFacts(source)
    loop = _loop(facts)
    comparison = loop.test.values[1]
    statements = _function(facts, "f").body
    blocked = facts.purity.concrete_use(loop, ["i"], also=statements)
    assert blocked is not None and "truth value" in blocked.reason  # Python's `and` needs a bool
    assert facts.purity.concrete_use(loop, ["i"], also=statements, consumed=[comparison]) is None


def test_captured_carries() -> None:
    """A closure defined before the loop reads the outer `x`, which a loop function would no longer update."""
    source = (
        "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x, y):\n    g = lambda: 2.0 * x\n"
        "    while jnp.sum(x) > 1.0:\n        x = g() / 4.0\n        y = y + 1.0\n    return x, y\n"
    )
    facts = FileFacts(source)
    loop = _loop(facts)
    flow = facts.loop(loop)
    assert set(flow.carried) == {"x", "y"}
    assert captured_carries(flow, facts.enclosing_function(loop)) == ("x",)
    [finding] = findings(source, CODEMOD)
    assert finding.fix is None and "`x` is carried and read by a function defined outside the loop" in finding.message


# ---- jax.debug.print in the body: printed at run time, once per iteration ---------------------------------------

PRINT_PROGRESS = next(
    c for c in corpus.cases() if c.codemod == "while_to_while_loop" and c.name == "print_progress"
)


def _printed(capsys, function, *args):
    """The value of `function(*args)` and the lines it printed (jax.debug.print's included)."""
    capsys.readouterr()
    value = corpus.call(function, list(args), {})
    jax.effects_barrier()
    return value, capsys.readouterr().out.splitlines()


def test_debug_print_in_the_body_prints_what_the_eager_loop_prints(capsys) -> None:
    """lax.while_loop runs jax.debug.print at every iteration, at run time: the rewrite prints the lines the
    Python loop prints when it runs eagerly, and computes the same value."""
    case = next(c for c in POSITIVE if c.name == "debug_print_progress")
    args, _ = corpus.arguments(case)
    original = corpus.load_function(case.before, case.spec["entry"], tag="jf103-debug-before")
    rewritten = corpus.load_function(case.after, case.spec["entry"], tag="jf103-debug-after")
    want, want_lines = _printed(capsys, original, *args)
    got, got_lines = _printed(capsys, rewritten, *args)
    assert len(want_lines) > 3 and got_lines == want_lines
    corpus.assert_same(got, want, rtol=1e-5)


def test_builtin_print_in_the_body_still_stops_the_rewrite() -> None:
    """`print` would run once, at trace time, in a lax.while_loop body: reported without a fix, naming it."""
    [finding] = findings(PRINT_PROGRESS.before.read_text(), CODEMOD)
    assert finding.fix is None and "the body does I/O (`print`)" in finding.message


def test_print_becomes_debug_print_then_a_while_loop(capsys) -> None:
    """JF601 turns the `print` into jax.debug.print; then JF103 rewrites the loop: `jaxfix apply` reaches a
    fixed point with no finding left, and the result prints and computes what the eager original does."""
    from jaxfix.engine import Settings, fix_text

    source = PRINT_PROGRESS.before.read_text()
    new, applied, remaining, errors = fix_text(source, Settings(("JF601", "JF103"), unsafe_fixes=True))
    assert not errors and not remaining and applied == 2
    assert "jax.lax.while_loop(cond, body, (x, delta))" in new and 'jax.debug.print("delta {}", delta)' in new
    again, applied_again, _, _ = fix_text(new, Settings(("JF601", "JF103"), unsafe_fixes=True))
    assert again == new and applied_again == 0
    namespace: dict = {}
    exec(compile(new, "<fixed>", "exec"), namespace)
    args, _ = corpus.arguments(PRINT_PROGRESS)
    original = corpus.load_function(PRINT_PROGRESS.before, PRINT_PROGRESS.spec["entry"], tag="jf103-print-before")
    want, want_lines = _printed(capsys, original, *args)
    got, got_lines = _printed(capsys, namespace[PRINT_PROGRESS.spec["entry"]], *args)
    corpus.assert_same(got, want, rtol=1e-6)
    assert got_lines == want_lines and len(want_lines) >= 2


def test_debug_callback_in_the_body_runs_once_per_iteration() -> None:
    """jax.debug.callback stays in the body too: the rewrite calls it with the values the eager loop passes."""
    source = (
        "import jax\nimport jax.numpy as jnp\n\nseen = []\n\ndef record(value):\n    seen.append(float(value))\n\n"
        "@jax.jit\ndef halve(x):\n    while jnp.max(jnp.abs(x)) > 1.0:\n        x = x / 2.0\n"
        "        jax.debug.callback(record, jnp.max(jnp.abs(x)))\n    return x\n"
    )
    new = rewrite(source, CODEMOD, unsafe=True)
    assert "jax.lax.while_loop(cond, body, x)" in new and "jax.debug.callback(record, jnp.max(jnp.abs(x)))" in new
    results = []
    for text in (source, new):
        namespace: dict = {}
        exec(compile(text, "<case>", "exec"), namespace)
        value = corpus.call(namespace["halve"], [jnp.array([3.0, -20.0])], {})  # the original runs eagerly
        jax.effects_barrier()
        results.append((np.asarray(value), list(namespace["seen"])))
    (want, want_seen), (got, got_seen) = results
    np.testing.assert_allclose(got, want)
    assert got_seen == want_seen == [10.0, 5.0, 2.5, 1.25, 0.625]
