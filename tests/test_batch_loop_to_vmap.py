"""JF301 batch-loop-to-vmap beyond the corpus: the forms it rewrites, what stops it (each with the reason it
gives), its boundary with JF102 (loops with a carry), and that its rewrites really batch."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxfix import corpus
from jaxfix.facts.batches import Refused
from jaxfix.facts.module import FileFacts
from tests.helpers import codemod_for_module, findings, rewrite

CODEMOD = codemod_for_module("batch_loop_to_vmap")
HEAD = "import jax\nimport jax.numpy as jnp\nimport numpy as np\n\n"


def _fixed(body: str) -> str:
    return rewrite(HEAD + body, CODEMOD, unsafe=True)[len(HEAD) :]


def _messages(body: str) -> list[str]:
    return [d.message for d in findings(HEAD + body, CODEMOD)]


# ---- forms ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "before, after",
    [
        # map over two arrays, a lambda
        (
            "def f(xs: jax.Array, ys: jax.Array):\n    return jnp.stack(list(map(lambda x, y: x * y + 1.0, xs, ys)))\n",
            "def f(xs: jax.Array, ys: jax.Array):\n    return jax.vmap(lambda x, y: x * y + 1.0)(xs, ys)\n",
        ),
        # a keyword argument stays in a local function (vmap maps keyword arguments along axis 0)
        (
            "def f(xs: jax.Array):\n    return jnp.stack([jnp.sum(x, axis=0) for x in xs])\n",
            "def f(xs: jax.Array):\n    def body(x):\n        return jnp.sum(x, axis=0)\n"
            "    return jax.vmap(body)(xs)\n",
        ),
        # an index loop with a computed element: the row gets a name
        (
            "def f(w, inputs: jax.Array):\n    return jnp.stack([w @ inputs[i] for i in range(inputs.shape[0])], axis=-1)\n",
            "def f(w, inputs: jax.Array):\n    def body(inputs_row):\n        return w @ inputs_row\n"
            "    return jax.vmap(body, out_axes=-1)(inputs)\n",
        ),
        # a Python number passed unbatched
        (
            "def g(x, scale):\n    return jnp.tanh(x) * scale\n\ndef f(xs: jax.Array):\n"
            "    return jnp.asarray([g(x, 2.0) for x in xs])\n",
            "def g(x, scale):\n    return jnp.tanh(x) * scale\n\ndef f(xs: jax.Array):\n"
            "    return jax.vmap(g, in_axes=(0, None))(xs, 2.0)\n",
        ),
        # the index used as a number: mapped over jnp.arange, the rows read with it in the body
        (
            "def f(xs: jax.Array, ys: jax.Array):\n    return jnp.stack([xs[i] + ys[i] for i in range(len(xs))])\n",
            "def f(xs: jax.Array, ys: jax.Array):\n    def body(i):\n        return xs[i] + ys[i]\n"
            "    return jax.vmap(body)(jnp.arange(len(xs)))\n",
        ),
        (
            "def f(xs: jax.Array):\n    return jnp.stack([jnp.roll(x, i) for i, x in enumerate(xs)])\n",
            "def f(xs: jax.Array):\n    return jax.vmap(jnp.roll)(xs, jnp.arange(len(xs)))\n",
        ),
        # a short literal range stays a loop (as JF101 leaves it)
        (
            "def f(x: jax.Array):\n    return jnp.stack([x[..., k] * 2.0 for k in range(3)], axis=-1)\n",
            "def f(x: jax.Array):\n    return jnp.stack([x[..., k] * 2.0 for k in range(3)], axis=-1)\n",
        ),
        # array methods of the batched row are pure, even outside traced code
        (
            "def g(x):\n    return x.sum() / x.shape[0]\n\ndef f(xs: jax.Array):\n    return jnp.stack([g(x) for x in xs])\n",
            "def g(x):\n    return x.sum() / x.shape[0]\n\ndef f(xs: jax.Array):\n    return jax.vmap(g)(xs)\n",
        ),
    ],
)
def test_rewrites(before: str, after: str) -> None:
    assert _fixed(before) == after


def test_traced_parameter_used_as_an_array_is_a_batch() -> None:
    body = "@jax.jit\ndef f(xs):\n    n = xs.shape[0]\n    return jnp.stack([jnp.sin(x) for x in xs]) / n\n"
    assert "jax.vmap(jnp.sin)(xs)" in _fixed(body)


# ---- what stops it -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body, reason",
    [
        ("def g(x):\n    return float(x[0]) * x\n\ndef f(xs: jax.Array):\n    return jnp.stack([g(x) for x in xs])\n",
         "`float()`"),
        ("def g(x):\n    return x * x.item()\n\ndef f(xs: jax.Array):\n    return jnp.stack([g(x) for x in xs])\n",
         "Python value"),
        ("def g(x):\n    return x[x > 0].sum()\n\ndef f(xs: jax.Array):\n    return jnp.stack([g(x) for x in xs])\n",
         "boolean mask"),
        ("def g(x):\n    return np.sum(x) + x\n\ndef f(xs: jax.Array):\n    return jnp.stack([g(x) for x in xs])\n",
         "`np.sum`"),
        ("def h(y):\n    return y if y[0] > 0 else -y\n\ndef g(x):\n    return h(x * 2.0)\n\n"
         "def f(xs: jax.Array):\n    return jnp.stack([g(x) for x in xs])\n",
         "calls `h`, which uses a batched value in Python control flow"),
        ("def g(x):\n    return x, x\n\ndef f(xs: jax.Array):\n    return jnp.array([g(x) for x in xs])\n",
         "tuple"),
        ("def f(xs: jax.Array):\n    return jnp.stack([jnp.linalg.qr(x) for x in xs])\n", "tuple"),
        ("def f(xs: jax.Array):\n    return jnp.stack([(x, x) for x in xs])\n", "tuple"),
        ("def f(params, xs: jax.Array):\n    return jnp.stack([params[i] * x for i, x in enumerate(xs)])\n",
         "not known to be a JAX array"),
        ("def f(xs: jax.Array):\n    return jnp.stack([jnp.zeros(i) + x[0] for i, x in enumerate(xs)])\n",
         "as a shape or a count"),
        ("def f(xs: jax.Array):\n    return jnp.stack([x.reshape(i + 1, -1).sum() for i, x in enumerate(xs)])\n",
         "as a shape or a count"),
        ("def f(xs: jax.Array):\n    return jnp.stack([x * int(i) for i, x in enumerate(xs)])\n", "`int()`"),
        ("def f(xs: jax.Array):\n    return jnp.stack([x if i % 2 else -x for i, x in enumerate(xs)])\n", "control flow"),
        ("def f(w, xs: jax.Array):\n    return jnp.stack([jnp.sin(w) for x in xs])\n", "does not depend"),
        ("def f(xs: jax.Array):\n    return jnp.stack([print(x) or x for x in xs])\n", "control flow"),
        ("def f(xs: jax.Array):\n    return jnp.stack([jnp.sin(x) * (y := 2.0) for x in xs])\n", "`:=`"),
        ("def f(opt, xs: jax.Array):\n    return jnp.stack([opt(x) for x in xs])\n", "not known to be pure"),
    ],
)
def test_reports_without_fix(body: str, reason: str) -> None:
    messages = _messages(body)
    assert len(messages) == 1 and "not rewritten" in messages[0] and reason in messages[0], messages
    assert _fixed(body) == body


@pytest.mark.parametrize(
    "body",
    [
        # NumPy stacking, NumPy data, an unproven parameter
        "def f(xs):\n    return np.stack([np.sin(x) for x in xs])\n",
        "def f(xs):\n    return jnp.stack([jnp.sin(x) for x in xs])\n",
        "def f(n):\n    xs = np.ones((n, 3))\n    return jnp.stack([jnp.sin(x) for x in xs])\n",
        # other arguments of the stack, several or filtered `for` clauses, a list built elsewhere
        "def f(xs: jax.Array):\n    return jnp.stack([jnp.sin(x) for x in xs], dtype=jnp.float32)\n",
        "def f(xs: jax.Array):\n    return jnp.stack([jnp.sin(x) for x in xs for _ in range(2)])\n",
        "def f(xs: jax.Array):\n    ys = [jnp.sin(x) for x in xs]\n    return jnp.stack(ys)\n",
        # over an index alone, what a traced index cannot stand in for is host-side arithmetic: no report
        "def f(key, n, w: jax.Array):\n    return jnp.stack([w + jax.random.normal(key, (i,)).sum() for i in range(n)])\n",
        "def f(n):\n    return jnp.stack([jnp.concatenate([jnp.ones(i + 1), jnp.zeros(n - i - 1)]) for i in range(n)])\n",
        "def f(parents):\n    root = lambda i: i if parents[i] < 0 else root(parents[i])\n"
        "    return jnp.array([root(i) for i in range(len(parents))])\n",
        # a `for` statement that carries state: JF102's (loop-to-scan), not a batch
        "@jax.jit\ndef f(xs):\n    h = jnp.zeros(xs.shape[1:])\n    hs = []\n    for x in xs:\n"
        "        h = jnp.tanh(h + x)\n        hs.append(h)\n    return jnp.stack(hs)\n",
    ],
)
def test_quiet(body: str) -> None:
    assert _messages(body) == []


LOOP = "def f(w, xs: jax.Array):\n    ys = []\n    for x in xs:\n{body}    return jnp.stack(ys)\n"


@pytest.mark.parametrize(
    "body",
    [
        # a carried value: JF102's scan
        "def f(xs: jax.Array):\n    h = 0.0\n    ys = []\n    for x in xs:\n        h = h + x\n        ys.append(h)\n"
        "    return jnp.stack(ys)\n",
        # the loop variable is read after the loop
        "def f(xs: jax.Array):\n    ys = []\n    for x in xs:\n        ys.append(x * 2.0)\n    return jnp.stack(ys) + x\n",
        # a closure reads a name the loop assigns
        "def f(xs: jax.Array):\n    g = lambda: h\n    ys = []\n    for x in xs:\n        h = x * 2.0\n"
        "        ys.append(h + g())\n    return jnp.stack(ys)\n",
        # the list is not created empty just before the loop, or is stacked twice
        "def f(xs: jax.Array):\n    ys = [xs[0]]\n    for x in xs:\n        ys.append(x)\n    return jnp.stack(ys)\n",
        "def f(xs: jax.Array):\n    ys = []\n    for x in xs:\n        ys.append(x)\n    return jnp.stack(ys), jnp.array(ys)\n",
        # a closure returns the list: after a rewrite it would return an array
        "def f(xs: jax.Array):\n    ys = []\n    g = lambda: ys\n    for x in xs:\n        ys.append(x * 2.0)\n"
        "    return jnp.stack(ys), g()\n",
        # conditional append, an `else:` clause
        "def f(xs: jax.Array):\n    ys = []\n    for x in xs:\n        if x.ndim:\n            ys.append(x)\n    return jnp.stack(ys)\n",
        "def f(xs: jax.Array):\n    ys = []\n    for x in xs:\n        ys.append(x)\n    else:\n        pass\n"
        "    return jnp.stack(ys)\n",
    ],
)
def test_loop_quiet(body: str) -> None:
    assert _messages(body) == []


@pytest.mark.parametrize(
    "body, reason",
    [
        ("        y = x @ w\n        if y[0] > 0:\n            y = -y\n        ys.append(y)\n", "Python control flow"),
        ("        w.block_until_ready()\n        ys.append(w @ x)\n", "not known to be pure"),
        ("        assert x.ndim == 1\n        ys.append(w @ x)\n", "other than assignments"),
    ],
)
def test_loop_reports_without_fix(body: str, reason: str) -> None:
    source = LOOP.format(body=body)
    messages = _messages(source)
    assert len(messages) == 1 and "not rewritten" in messages[0] and reason in messages[0], messages
    assert _fixed(source) == source


def test_loop_with_axis_and_zip() -> None:
    source = (
        "def f(xs: jax.Array, ys: jax.Array):\n    out = []\n    for x, y in zip(xs, ys):\n"
        "        out.append(jnp.outer(x, y))\n    return jnp.stack(out, axis=1)\n"
    )
    assert _fixed(source) == (
        "def f(xs: jax.Array, ys: jax.Array):\n    out = jax.vmap(jnp.outer, out_axes=1)(xs, ys)\n    return out\n"
    )


def test_random_body_is_rewritten_with_a_note() -> None:
    body = "def f(key, xs: jax.Array):\n    return jnp.stack([x + jax.random.normal(key, x.shape) for x in xs])\n"
    (message,) = _messages(body)
    assert "random" in message
    assert "jax.vmap(body)(xs)" in _fixed(body)


def test_lambda_parameter_is_not_lost() -> None:
    """The element reads a parameter of the enclosing lambda: a function defined before the statement would
    not see it."""
    body = "def f(xs: jax.Array):\n    g = lambda w: jnp.stack([w * x + 1.0 for x in xs])\n    return g(2.0)\n"
    (message,) = _messages(body)
    assert "cannot take a local function" in message
    assert _fixed(body) == body


def test_comments_of_the_list_move_with_it() -> None:
    source = "def f(xs: jax.Array):\n    ys = []  # rows\n    for x in xs:\n        ys.append(jnp.sin(x))\n    return jnp.stack(ys)\n"
    assert _fixed(source) == "def f(xs: jax.Array):\n    # rows\n    ys = jax.vmap(jnp.sin)(xs)\n    return ys\n"


def test_class_body_gets_no_local_function() -> None:
    body = "class C:\n    xs = jnp.ones((3, 2))\n    ys = jnp.stack([x * 2.0 for x in xs])\n"
    (message,) = _messages(body)
    assert "cannot take a local function" in message


# ---- the rewrites batch ------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", [c for c in corpus.cases() if c.codemod == "batch_loop_to_vmap" and not c.negative],
                         ids=lambda c: c.name)
def test_rewrite_is_one_batched_computation(case: corpus.Case) -> None:
    """The rewritten program has no per-row copies: its jaxpr does not grow with the batch, while the
    original's does (so the corpus equivalence compares a loop with a batched computation)."""
    args, _ = corpus.arguments(case)
    bigger = [jnp.concatenate([a, a]) if i in case.spec.get("batch_args", ()) else a for i, a in enumerate(args)]
    static = ()
    if "size_arg" in case.spec:  # a `range(n)` loop: its count doubles, and stays static
        static = (case.spec["size_arg"],)
        bigger[static[0]] = 2 * args[static[0]]
    before = corpus.load_function(case.before, case.spec["entry"], tag="jf301-b")
    after = corpus.load_function(case.after, case.spec["entry"], tag="jf301-a")
    size = lambda f, a: len(str(jax.make_jaxpr(f, static_argnums=static)(*a)).splitlines())  # noqa: E731
    assert size(after, args) == size(after, bigger)
    assert size(before, args) < size(before, bigger)
    np.testing.assert_allclose(after(*bigger), before(*bigger), rtol=1e-5, atol=1e-6)


# ---- the payoff benchmark ----------------------------------------------------------------------------------


def test_benchmark_tiles_the_batch_and_times_each_case(capsys) -> None:
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "benchmarks" / "vmap_batch.py"
    spec = importlib.util.spec_from_file_location("jaxfix_benchmarks_vmap_batch", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    case = next(c for c in corpus.cases() if c.codemod == "batch_loop_to_vmap" and c.name == "zip_pairs")
    args, _ = module.batched_arguments(case, 10)
    assert [a.shape[0] for a in args] == [10, 10]
    module.main(["--cases", "zip_pairs", "--batch", "6", "--repeats", "1", "--calls", "1"])
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| zip_pairs |")]
    assert len(rows) == 1 and rows[0].endswith("x |")


def test_refused_cases_would_break_under_vmap() -> None:
    """The refusals are not caution for its own sake: vmap of the function behind them raises where the
    loop computes."""
    cases = {c.name: c for c in corpus.cases() if c.codemod == "batch_loop_to_vmap"}
    for name, function, error in (
        ("branch_on_value", "clip_or_flip", jax.errors.TracerBoolConversionError),
        ("value_shaped", "first_positive", jax.errors.ConcretizationTypeError),
    ):
        case = cases[name]
        args, _ = corpus.arguments(case)
        corpus.call(corpus.load_function(case.before, case.spec["entry"], tag=f"jf301-{name}"), args, {})
        with pytest.raises(error):
            jax.vmap(corpus.load_function(case.before, function, tag=f"jf301-{name}-f"))(args[0])


# ---- one loop, one rule ------------------------------------------------------------------------------------

LOOP_RULES = ("loop_to_fori", "loop_to_scan", "fori_at_set_to_scan", "batch_loop_to_vmap")


@pytest.mark.parametrize(
    "path",
    sorted(p for c in corpus.cases() if c.codemod in LOOP_RULES for p in {c.before, c.after}),
    ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}/{p.name}",
)
def test_no_loop_gets_two_fixes(path) -> None:
    """JF101, JF102, JF104 and JF301 never all fix one loop: a loop whose steps are independent is JF301's
    batch (JF101 and JF102 leave it), JF104 only sees lax.fori_loop calls, and JF301 only Python loops and
    comprehensions. Every fixed finding's loop starts on its own line."""
    rules = [codemod_for_module(name) for name in LOOP_RULES]
    diagnostics, errors, _ = __import__("jaxfix.engine", fromlist=["analyse"]).analyse(path.read_text(), rules)
    assert not errors, errors
    lines = [d.start.line for d in diagnostics if d.fix is not None]
    assert len(lines) == len(set(lines)), [(d.code, d.start.line) for d in diagnostics if d.fix is not None]


def test_jf301_takes_a_fresh_buffer_loop_that_jf101_and_jf102_would_rewrite(monkeypatch) -> None:
    """In traced code a loop writing `out.at[i].set(...)` carries `out`: JF101 (fori_loop) or JF102 (scan over
    the rows it reads) would rewrite it; its steps are independent, so JF301 rewrites it into jax.vmap, and
    they stay quiet. A buffer read in the loop makes the rows depend on each other: JF301 stays quiet."""
    from jaxfix.engine import analyse

    rules = [codemod_for_module(name) for name in LOOP_RULES]
    independent = HEAD + (
        "@jax.jit\ndef f(xs):\n    out = jnp.zeros_like(xs)\n    for i in range(xs.shape[0]):\n"
        "        out = out.at[i].set(jnp.sin(xs[i]) * 2.0)\n    return out\n"
    )
    dependent = independent.replace("jnp.sin(xs[i]) * 2.0", "jnp.sin(xs[i]) + out[i - 1]")
    diagnostics, _, _ = analyse(independent, rules)
    assert [(d.code, d.fix is not None) for d in diagnostics] == [("JF301", True)]
    diagnostics, _, _ = analyse(dependent, rules)
    assert [d.code for d in diagnostics if d.fix is not None] == ["JF101"]
    without = [codemod_for_module(name) for name in LOOP_RULES if name != "batch_loop_to_vmap"]
    diagnostics, _, _ = analyse(independent, without)
    # The owner of a loop does not depend on the selection (as between JF101 and JF102): no fori_loop or scan.
    assert [d.code for d in diagnostics if d.fix is not None] == []
    import jaxfix.facts.batches as batch_facts

    monkeypatch.setattr(batch_facts._Decision, "_row_loop", lambda self, loop, groups: None)
    diagnostics, _, _ = analyse(independent, without)
    assert [d.code for d in diagnostics if d.fix is not None] == ["JF101"]  # what JF301 takes over


# ---- loops writing the rows of a fresh buffer ----------------------------------------------------------------

ROWS = "def f(w, k, xs: jax.Array):\n{buffer}    for i in range({count}):\n{body}    return out\n"


def _rows(body: str, buffer: str = "    out = jnp.zeros_like(xs)\n", count: str = "xs.shape[0]") -> str:
    return ROWS.format(buffer=buffer, count=count, body=body)


@pytest.mark.parametrize(
    "source, after",
    [
        # rows of the buffer's dtype (xs's): no cast
        (_rows("        out = out.at[i].set(-xs[i])\n"), "    out = jax.vmap(body)(xs)\n"),
        # rows of a dtype not proven to be the buffer's: the cast .at[i].set made
        (_rows("        out = out.at[i].set(jnp.tanh(xs[i]))\n", "    out = jnp.zeros((len(xs), xs.shape[1]))\n"),
         "    out = jax.vmap(jnp.tanh)(xs).astype(float)\n"),
        # the index as a number, a length not tied to xs: jnp.arange(k), xs[i] read in the body
        (_rows("        out = out.at[i].set(xs[i] * i)\n", "    out = jnp.zeros((k, xs.shape[1]), dtype=xs.dtype)\n", "k"),
         "    out = jax.vmap(body)(jnp.arange(k)).astype(xs.dtype)\n"),
        # a scalar row takes any scalar; a same-module function's shape is followed
        (_rows("        out = out.at[i].set(g(xs[i]))\n", "    out = jnp.zeros(xs.shape[0])\n"),
         "    out = jax.vmap(g)(xs).astype(float)\n"),
    ],
)
def test_row_loop_rewrites(source: str, after: str) -> None:
    fixed = _fixed("def g(x):\n    return jnp.sum(x * x)\n\n" + source)
    assert fixed.splitlines()[-2] == after.rstrip("\n"), fixed
    assert "for i in" not in fixed and ".at[" not in fixed


@pytest.mark.parametrize(
    "body, buffer, count, reason",
    [
        ("        out = out.at[i].set(w @ xs[i])\n", "    out = jnp.zeros((xs.shape[0], 3))\n", "xs.shape[0]",
         "has the shape of a row"),
        ("        out = out.at[i].set(jnp.sum(xs[i]))\n", "    out = jnp.zeros_like(xs)\n", "xs.shape[0]",
         "has the shape of a row"),
        ("        out = out.at[i].set(jnp.sin(xs[i]))\n", "    out = jnp.zeros_like(xs)\n", "k",
         "write every row"),
        ("        y = jnp.sin(xs[i])\n        print(y)\n        out = out.at[i].set(y)\n", "    out = jnp.zeros_like(xs)\n",
         "xs.shape[0]", "other than assignments"),
    ],
)
def test_row_loop_reports_without_fix(body: str, buffer: str, count: str, reason: str) -> None:
    source = _rows(body, buffer, count)
    messages = _messages(source)
    assert len(messages) == 1 and "not rewritten" in messages[0] and reason in messages[0], messages
    assert _fixed(source) == source


@pytest.mark.parametrize(
    "body, buffer, count",
    [
        # the buffer is read in the loop (rows depend on earlier rows), other state is carried
        ("        out = out.at[i].set(xs[i] + out[i - 1])\n", "    out = jnp.zeros_like(xs)\n", "xs.shape[0]"),
        ("        w = w * 0.5\n        out = out.at[i].set(xs[i] * w)\n", "    out = jnp.zeros_like(xs)\n", "xs.shape[0]"),
        # part of a buffer of known length, a buffer that is not fresh, a conditional write
        ("        out = out.at[i].set(xs[i])\n", "    out = jnp.zeros((8, 3))\n", "4"),
        ("        out = out.at[i].set(jnp.sin(xs[i]))\n", "    out = xs\n", "xs.shape[0]"),
        ("        if i > 2:\n            out = out.at[i].set(xs[i])\n", "    out = jnp.zeros_like(xs)\n", "xs.shape[0]"),
        # items of a Python list (or NumPy data) copied into a buffer: host-side work
        ("        out = out.at[i].set(w[i] * 2.0)\n", "    out = jnp.zeros((len(w), 3))\n", "len(w)"),
        # another row than the loop's index
        ("        out = out.at[i + 1].set(xs[i])\n", "    out = jnp.zeros_like(xs)\n", "xs.shape[0]"),
    ],
)
def test_row_loop_quiet(body: str, buffer: str, count: str) -> None:
    assert _messages(_rows(body, buffer, count)) == []


@pytest.mark.parametrize("name", ["fold_in_noise", "split_keys_rows", "random_per_key"])
def test_random_stream_is_the_loops_with_threefry_only(name: str) -> None:
    """Why a random body gets a note: vmapped per-element keys draw the loop's numbers with the default
    threefry PRNG (the corpus compares them too), but not with the rbg implementations."""
    case = next(c for c in corpus.cases() if c.codemod == "batch_loop_to_vmap" and c.name == name)
    before = corpus.load_function(case.before, case.spec["entry"], tag=f"jf301-rng-b-{name}")
    after = corpus.load_function(case.after, case.spec["entry"], tag=f"jf301-rng-a-{name}")
    default = jax.config.jax_default_prng_impl
    try:
        for impl, same in (("threefry2x32", True), ("rbg", False)):
            jax.config.update("jax_default_prng_impl", impl)
            args, _ = corpus.arguments(case)  # keys made under this implementation
            assert bool(jnp.array_equal(before(*args), after(*args))) is same, impl
    finally:
        jax.config.update("jax_default_prng_impl", default)


def test_statements_with_comments_above_them_go_into_the_body_as_they_are() -> None:
    """A comment line above a statement of the body crashed JF301 (the body was made as text, where the comment
    set the indentation); found by benchmarks/fuzz.py on a mutated corpus case."""
    from jaxfix import engine, registry

    body = (
        "@jax.jit\ndef f(xs: jax.Array):\n    out = []\n    for x in xs:\n        # scale\n        y = x * 2\n"
        "        # shift\n        out.append(y + 1)\n        # done\n    return jnp.stack(out)\n"
    )
    assert _fixed(body) == (  # the comment after the last statement (the block's footer) stays too
        "@jax.jit\ndef f(xs: jax.Array):\n    def body(x):\n        # scale\n        y = x * 2\n        # shift\n"
        "        return y + 1\n        # done\n    out = jax.vmap(body)(xs)\n    return out\n"
    )
    settings = engine.Settings(tuple(c.code for c in registry.all_codemods()), unsafe_fixes=True)
    assert engine.fix_text(HEAD + body, settings)[3] == []  # no internal error


def test_comments_of_a_body_that_becomes_one_call_go_above_it() -> None:
    """With no local function to hold them, the body's comment lines, end-of-line comments and closing comments
    are kept above the new statement, in their order (they used to be dropped)."""
    body = (
        "@jax.jit\ndef f(xs: jax.Array):\n    out = []\n    for x in xs:\n        # squash\n"
        "        out.append(jnp.tanh(x))  # tanh\n        # done\n    return jnp.stack(out)\n"
    )
    assert _fixed(body) == (
        "@jax.jit\ndef f(xs: jax.Array):\n    # squash\n    # tanh\n    # done\n    out = jax.vmap(jnp.tanh)(xs)\n"
        "    return out\n"
    )


def test_comments_of_a_row_loop_body_are_kept() -> None:
    body = (
        "def f(xs: jax.Array):\n    out = jnp.zeros(len(xs), dtype=jnp.int32)\n    for i in range(len(xs)):\n"
        "        # row i\n        out = out.at[i].set(jnp.sum(xs[i] > 0))  # count\n        # done\n    return out\n"
    )
    fixed = _fixed(body)
    assert "jax.vmap" in fixed and "for i in" not in fixed
    assert fixed.index("# row i") < fixed.index("# count") < fixed.index("# done") < fixed.index("jax.vmap")


# ---- the facts the rule reads ----------------------------------------------------------------------------------

BATCHES = """\
import jax
import jax.numpy as jnp

def f(w, xs: jax.Array, ys: jax.Array, key):
    pairs = jnp.stack([jnp.dot(x, y) for x, y in zip(xs, ys)])
    noisy = jnp.stack([jax.random.normal(key, (i,)) for i in range(len(xs))])
    rows = []
    for x in xs:
        h = jnp.tanh(w @ x)
        rows.append(h)
    out = jnp.zeros_like(xs)
    for i in range(xs.shape[0]):
        out = out.at[i].set(jnp.sin(xs[i]))
    return pairs, noisy, jnp.stack(rows, axis=1), out
"""


def test_what_a_batch_walks_is_read_from_the_file_facts() -> None:
    """Which comprehension or loop walks the rows of arrays, and what its steps do, are facts of the file
    (`FileFacts.batches`, on `ast`), which any reader asks without the rule: the variables and what each walks, an
    index read as a row, the list an appending loop fills and the one stack that reads it, the fresh buffer a
    loop writes row by row, and what stops jax.vmap (a batched value given as a shape)."""
    facts = FileFacts(BATCHES)
    batches = facts.batches
    code = batches.code
    function = facts.tree.body[2]
    pairs, noisy, rows, loop, out, buffer_loop, _ = function.body
    zipped = batches.batch(pairs.value.args[0])
    assert zipped.variables == ["x", "y"] and [code(a) for a in zipped.arrays] == ["xs", "ys"]
    assert all(batches.is_array(a) for a in zipped.arrays) and batches.assumed_rows(zipped) == ("", None, None)
    indexed = batches.batch(noisy.value.args[0])
    assert indexed.index == "i" and code(indexed.arrays[0]) == "xs" and code(indexed.count) == "len(xs)"
    normal = indexed.element
    with pytest.raises(Refused, match="shape"):
        batches.check_function(normal.func, [1], len(normal.args))
    appended = batches.iteration(loop.target, loop.iter, loop.body[-1].value.args[0], [[s] for s in loop.body[:-1]])
    assert appended.variables == ["x"] and code(appended.arrays[0]) == "xs" and len(appended.statements) == 1
    creation = batches.creation(loop, "rows")
    assert creation is rows
    call, shown, axis = batches.single_stack(loop, "rows", creation)
    assert (code(call), shown, axis) == ("jnp.stack(rows, axis=1)", "jnp.stack", 1)
    assert batches.buffer_creation(buffer_loop, "out") is out
    assert batches.buffer_creation(buffer_loop, "rows") is None  # `rows = []` is not a call
