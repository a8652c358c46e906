"""JF502 (jit-in-loop): the premise (a new function object per iteration compiles again, hoisted once) and
the cases the corpus does not spell out."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from jaxfix.codemods.jit_in_loop import JitInLoop
from jaxfix.diagnostics import Position
from jaxfix.facts.module import FileFacts
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


@pytest.mark.parametrize(
    ("source", "line", "fixed"),
    [
        # a bound method of the class the method is in: a new function object each time
        ("import jax\nclass T:\n    def step(self, x):\n        return x\n    def run(self, xs):\n"
         "        for x in xs:\n            y = jax.jit(self.step)(x)\n", 7, True),
        # a def with a `partial(jax.jit, ...)` decorator in the loop
        ("import jax\nfrom functools import partial\ndef run(xs):\n    for x in xs:\n"
         "        @partial(jax.jit, static_argnums=0)\n        def f(n, y):\n            return y * n\n        f(2, x)\n",
         6, True),
        # under an `if` in a `while` loop
        ("import jax\ndef run(xs, c):\n    while c:\n        if c:\n            c = jax.jit(lambda x: x * 2)(c)\n", 5, True),
        # in the iterable of an inner loop: the outer loop's body, through `from jax import jit`
        ("from jax import jit\ndef run(xs):\n    for a in xs:\n        for b in jit(lambda x: x)(a):\n"
         "            print(b)\n", 4, True),
        # a def defined in the loop, jitted there: no fix
        ("import jax\ndef run(xs):\n    for x in xs:\n        def g(y):\n            return y\n        h = jax.jit(g)\n",
         6, False),
        # a partial of the loop variable at module level: it reads what the loop changes
        ("import jax\nfrom functools import partial\ndef g(n, y):\n    return y\nfor x in range(3):\n"
         "    h = jax.jit(partial(g, x))\n", 6, False),
        # a def calling the variable of an outer loop, hoisted out of the inner one
        ("import jax\ndef run(layers, x):\n    for layer in layers:\n        for i in range(3):\n"
         "            @jax.jit\n            def f(y):\n                return layer(y)\n            x = f(x)\n    return x\n",
         6, True),
    ],
)
def test_each_kind_of_jit_in_a_loop_is_reported(source: str, line: int, fixed: bool) -> None:
    assert [(d.start.line, d.fix is not None) for d in findings(source, JitInLoop)] == [(line, fixed)]


def _declined(text: str, line: int) -> str:
    """Why JF502 left line `line` alone, as `jaxfix explain` says it (a decline its `check` recorded)."""
    from jaxfix import explain, registry

    (verdict,) = explain.explain_text(text, explain.Target("a.py", line), [registry.by_code("JF502")]).verdicts
    assert verdict.outcome == "recognised, left alone", verdict
    return verdict.detail


def test_a_def_calling_what_the_loop_binds_is_declined() -> None:
    """flax's spmd test: `for layer in layers:` around a jitted def that calls `layer` (a different program each
    iteration: declined, which `explain` says); a def calling anything else in the same place is reported."""
    text = (
        "import jax\n\ndef run(layers, x, g):\n    for layer in layers:\n        @jax.jit\n"
        "        def f(y):\n            return layer.apply(y)\n        x = f(x)\n    return x\n"
    )
    assert findings(text, JitInLoop) == []
    assert "a different program on each iteration" in _declined(text, 6)
    for other in ("g(y)", "g(layer)"):
        assert findings(text.replace("layer.apply(y)", other), JitInLoop), other


def test_a_jit_in_a_def_the_loop_defines_is_quiet_and_a_module_function_is_rewrapped() -> None:
    """brax's tests: a lambda jitted in a def that a loop defines (runs when called); a module's function jitted
    in the loop itself is re-wrapped on every iteration."""
    text = (
        "import jax\nfrom brax import kinematics\n\ndef test(states):\n    for s in states:\n"
        "        x = kinematics.forward(s)\n        def check(y):\n            return jax.jit(lambda v: v)(y)\n"
    )
    assert findings(text, JitInLoop) == []
    rewrapped = findings(text.replace("kinematics.forward(s)", "jax.jit(kinematics.forward)(s)"), JitInLoop)
    assert len(rewrapped) == 1 and "new jit wrapper" in rewrapped[0].message


def test_a_benchmark_loop_is_declined_at_the_def_name() -> None:
    """A loop that clears JAX's caches re-jits on purpose: `explain` names the reason at the jitted def's name."""
    text = (
        "import jax\n\ndef run(x):\n    for _ in range(3):\n        jax.clear_caches()\n\n"
        "        @jax.jit\n        def f(v):\n            return v + 1\n\n        x = f(x)\n    return x\n"
    )
    assert findings(text, JitInLoop) == []
    assert "clears JAX's caches" in _declined(text, 8)
    facts = FileFacts(text, explaining=True)
    assert JitInLoop.check(facts) == [] and [(d.start, d.end) for d in facts.decisions] == [
        (Position(8, 13), Position(8, 14))  # LibCST's `FunctionDef.name`
    ]


def test_check_parses_no_file_with_libcst_and_apply_builds_the_hoist(tmp_path, monkeypatch) -> None:
    """JF502 answers on `ast`: `check` parses nothing with LibCST, even for a finding with a fix; `apply --diff`
    builds the hoist from the plan."""
    import libcst

    from jaxfix.analysis import fastnodes
    from tests.helpers import invoke_in

    made: list[str] = []
    real_fast, real_cst = fastnodes.parse_module, libcst.parse_module
    monkeypatch.setattr(fastnodes, "parse_module", lambda text, *a, **k: made.append(text) or real_fast(text, *a, **k))
    monkeypatch.setattr(libcst, "parse_module", lambda text, *a, **k: made.append(text) or real_cst(text, *a, **k))
    (tmp_path / "loop.py").write_text(
        "import jax\n\ndef run(x):\n    for _ in range(3):\n        x = jax.jit(lambda v: v * 2)(x)\n    return x\n"
    )
    result = invoke_in(tmp_path, "check", "--select", "JF502", "--no-cache", "-j", "1", ".")
    assert "JF502" in result.output and made == []
    result = invoke_in(tmp_path, "apply", "--diff", "--select", "JF502", "--no-cache", "-j", "1", ".")
    assert "+    jitted = jax.jit(lambda v: v * 2)\n" in result.output and made
