"""JF102 loop-to-scan beyond its corpus: the order of several outputs, values appended before they change,
backward loops, the stacking calls, rows of several arrays, what it reports and where it stays quiet, and the
split with JF101 (no loop gets findings from both)."""

from __future__ import annotations

import textwrap

import pytest

from jaxfix import corpus, registry
from tests.helpers import codemod_for_module, findings, rewrite

SCAN = codemod_for_module("loop_to_scan")
FORI = codemod_for_module("loop_to_fori")
HEADER = "import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\n"


def _source(body: str) -> str:
    return HEADER + textwrap.dedent(body).lstrip("\n")


def _same_numbers(before: str, after: str, tmp_path, entry: str, args: list[str]) -> None:
    """The rewrite computes what the original computes (the corpus comparison: structure, dtype, values)."""
    (tmp_path / "before.py").write_text(before)
    (tmp_path / "after.py").write_text(after)
    values = [eval(a, {"jnp": __import__("jax.numpy").numpy}) for a in args]
    original = corpus.call(corpus.load_function(tmp_path / "before.py", entry, tag="tb"), values, {})
    rewritten = corpus.call(corpus.load_function(tmp_path / "after.py", entry, tag="ta"), values, {})
    corpus.assert_same(rewritten, original, rtol=1e-5, atol=1e-6)


def test_several_outputs_keep_their_order_and_a_value_that_changes_later_gets_a_name(tmp_path) -> None:
    before = _source(
        """
        def f(xs: jax.Array):
            h = jnp.zeros(3)
            zs = []
            ys = []
            for x in xs:
                zs.append(h)  # before the update
                h = jnp.tanh(h + x)
                ys.append(h * 2.0)
            return jnp.stack(ys), jnp.stack(zs)
        """
    )
    after = rewrite(before, SCAN)
    assert "        z = h  # before the update\n" in after
    assert "        return h, (z, h * 2.0)\n" in after
    assert "    h, (zs, ys) = jax.lax.scan(step, h, xs)\n    return ys, zs\n" in after
    _same_numbers(before, after, tmp_path, "f", ["jnp.sin(jnp.arange(36.0)).reshape(12, 3)"])


def test_a_backward_range_scans_in_reverse_and_keeps_the_list_order(tmp_path) -> None:
    before = _source(
        """
        def f(xs: jax.Array):
            h = jnp.zeros(3)
            ys, sums = [], []
            for t in range(xs.shape[0] - 1, -1, -1):
                h = jnp.tanh(h + t * xs[t])
                ys.append(h)
                sums.append(h.sum())
            return jnp.stack(ys), jnp.array(sums[::-1], dtype=jnp.float16)
        """
    )
    after = rewrite(before, SCAN)
    assert "jax.lax.scan(step, h, jnp.arange(xs.shape[0]), reverse=True)" in after
    assert "return ys[::-1], jnp.array(sums, dtype=jnp.float16)" in after
    assert "ys, sums = [], []" not in after
    _same_numbers(before, after, tmp_path, "f", ["jnp.cos(jnp.arange(36.0)).reshape(12, 3)"])


def test_stacking_along_another_axis_becomes_moveaxis(tmp_path) -> None:
    before = _source(
        """
        def f(x):
            ys = []
            for _ in range(20):
                x = jnp.cos(x)
                ys.append(x)
            return jnp.stack(ys, axis=-1), jnp.stack(ys, 0), jnp.asarray(ys)
        """
    )
    after = rewrite(before, SCAN)
    assert "return jnp.moveaxis(ys, 0, -1), ys, ys\n" in after
    assert "jax.lax.scan(step, x, length=20)" in after
    _same_numbers(before, after, tmp_path, "f", ["jnp.arange(6.0).reshape(2, 3)"])


def test_rows_of_arrays_proven_to_have_the_same_length_are_scanned_together(tmp_path) -> None:
    before = _source(
        """
        def f(xs):
            ws = jnp.ones_like(xs)
            acc = jnp.zeros(xs.shape[1:])
            for i in range(len(xs)):
                acc = 0.5 * acc + ws[i] * xs[i]
            return acc
        """
    )
    after = rewrite(before, SCAN)
    assert "    def step(acc, inputs):\n        w_i, x_i = inputs\n" in after
    assert "acc, _ = jax.lax.scan(step, acc, (ws, xs))" in after
    _same_numbers(before, after, tmp_path, "f", ["jnp.sin(jnp.arange(24.0)).reshape(12, 2)"])


def test_an_array_of_unproven_length_is_indexed_not_scanned() -> None:
    collecting = _source(
        """
        def f(xs, w: jax.Array):
            acc = jnp.zeros(xs.shape[1:])
            out = []
            for i in range(xs.shape[0]):
                acc = acc + w[i] * xs[i]
                out.append(acc)
            return jnp.stack(out)
        """
    )
    after = rewrite(collecting, SCAN)
    assert "def step(acc, i):" in after and "jnp.arange(xs.shape[0])" in after and "w[i] * xs[i]" in after
    carry_only = _source(
        """
        def f(xs, w: jax.Array):
            acc = jnp.zeros(xs.shape[1:])
            for i in range(xs.shape[0]):
                acc = acc + w[i] * xs[i]
            return acc
        """
    )
    assert findings(carry_only, SCAN) == []  # JF101's fori_loop: the index is not only a row of xs
    assert "lax.fori_loop" in rewrite(carry_only, FORI)


def test_an_underscore_the_function_reads_is_not_rebound() -> None:
    source = (
        "import jax\nimport jax.numpy as jnp\n\n\ndef _(v):\n    return v\n\n\n@jax.jit\ndef f(xs):\n"
        "    acc = jnp.zeros(xs.shape[1:])\n    for x in xs:\n        acc = acc * 0.5 + x\n    return _(acc)\n"
    )
    assert "    acc = jax.lax.scan(step, acc, xs)[0]\n" in rewrite(source, SCAN)


def test_comments_of_the_list_creation_move_to_the_next_line() -> None:
    before = _source(
        """
        def f(w, h):
            # outputs
            hs = []  # one per step
            h = h * 2.0
            for _ in range(50):
                h = jnp.tanh(w @ h)
                hs.append(h)
            return jnp.stack(hs)
        """
    )
    after = rewrite(before, SCAN)
    assert "    # outputs\n    # one per step\n    h = h * 2.0\n    def step(h, _):\n" in after


@pytest.mark.parametrize(
    "body,reason",
    [
        (
            "ys = []\nfor t in range(200):\n    x = jnp.cos(x)\n    if t % 2 == 0:\n        ys.append(x)\nreturn jnp.stack(ys)\n",
            "appends to `ys` conditionally",
        ),
        (
            "ys = []\nfor t in range(200):\n    x = jnp.cos(x)\n    ys.append(x)\n    ys.append(x)\nreturn jnp.stack(ys)\n",
            "more than once per step",
        ),
        ("ys = [x]\nfor t in range(200):\n    x = jnp.cos(x)\n    ys.append(x)\nreturn jnp.stack(ys)\n", "not created"),
        ("ys = []\nfor t in range(200):\n    x = jnp.cos(x)\n    ys.append(x)\nreturn ys\n", "(`return ys`)"),
        (
            "ys = []\nfor t in range(200):\n    x = jnp.cos(x)\n    ys.append(x)\nreturn jnp.stack(ys + [x])\n",
            "(`ys + [x]`)",
        ),
        (
            "ys = []\nfor t in range(200):\n    x = jnp.cos(x) + len(ys)\n    ys.append(x)\nreturn jnp.stack(ys)\n",
            "the body uses `ys` other than appending to it (`len(ys)`)",
        ),
        (
            "ys = []\nfor t in range(200):\n    x = jnp.cos(x); ys.append(x)\nreturn jnp.stack(ys)\n",
            "shares its line",
        ),
        ("ys = []\nfor t in range(200):\n    x = jnp.cos(x)\n    ys.append(t)\nreturn jnp.stack(ys)\n", "not known to be traced"),
        (
            "ys = []\nfor t in range(200):\n    x = jnp.cos(x)\n    ys.append(x)\n    print(t)\nreturn jnp.stack(ys)\n",
            "does I/O",
        ),
        (
            "ys = []\nfor t in range(200):\n    x = jnp.cos(x)\n    ys.append(x[:t])\nreturn jnp.stack(ys)\n",
            "uses `t` as a Python int",
        ),
        (
            "ys = []\nfor t in range(0, 200, 2):\n    x = jnp.cos(x)\n    ys.append(x)\nreturn jnp.stack(ys)\n",
            "step of 1",
        ),
        (
            "ys = []\nfor t in range(200):\n    x = jnp.cos(x)\n    y = (x, x)\n    ys.append(y)\nreturn jnp.array(ys)\n",
            "not proven to be one array",
        ),
    ],
)
def test_reported_without_a_fix(body: str, reason: str) -> None:
    source = HEADER + "def f(x):\n" + textwrap.indent(body, "    ")
    reported = findings(source, SCAN)
    assert len(reported) == 1 and reported[0].fix is None, [d.message for d in reported]
    assert reason in reported[0].message, reported[0].message
    assert "not rewritten to lax.scan" in reported[0].message
    assert findings(source, FORI) == []  # one loop, one rule


@pytest.mark.parametrize(
    "body",
    [
        # a short loop
        "ys = []\nfor _ in range(9):\n    x = jnp.cos(x)\n    ys.append(x)\nreturn jnp.stack(ys)\n",
        # nothing carried: vmap's job
        "ys = []\nfor k in range(100):\n    ys.append(jnp.sin(k * x))\nreturn jnp.stack(ys)\n",
        # the rows of a Python list (the layers of a model)
        "for w in layers:\n    x = jnp.tanh(w @ x)\nreturn x\n",
        # NumPy data
        "for c in np.linspace(0.0, 1.0, 50):\n    x = x * c\nreturn x\n",
        # a loop over rows whose count is unknown here and which cannot be rewritten: quiet
        "for row in x:\n    if row.sum() > 0:\n        break\n    x = x + 1.0\nreturn x\n",
        # a target that unpacks each row
        "acc = x[0, 0]\nfor a, b in x:\n    acc = acc + a * b\nreturn acc\n",
        # zip and enumerate are not the rows of one array
        "acc = x[0]\nfor a, b in zip(x, x):\n    acc = acc + a * b\nreturn acc\n",
        # a static computation: nothing traced is carried
        "n = 1\nsizes = []\nfor _ in range(20):\n    n = n * 2\n    sizes.append(n)\nreturn x * jnp.array(sizes).sum()\n",
    ],
)
def test_quiet(body: str) -> None:
    source = (
        "import jax\nimport jax.numpy as jnp\nimport numpy as np\n\n\n@jax.jit\ndef f(x, layers):\n"
        + textwrap.indent(body, "    ")
    )
    assert findings(source, SCAN) == []


def _loop_files():
    for case in corpus.cases():
        if case.codemod.startswith("loop_"):
            yield pytest.param(case.before.read_text(encoding="utf-8"), id=case.id)
    for codemod in (SCAN, FORI):
        for index, example in enumerate((*codemod.VALID, *codemod.INVALID)):
            yield pytest.param(example.code, id=f"{codemod.code}-{index}")


@pytest.mark.parametrize("source", list(_loop_files()))
def test_no_loop_gets_findings_from_both_rules(source: str) -> None:
    reported = findings(source, SCAN) + findings(source, FORI)
    starts = [(d.start.line, d.start.column) for d in reported]
    assert len(starts) == len(set(starts)), [(d.code, d.message) for d in reported]


def test_jf101_yields_only_where_jf102_speaks() -> None:
    """JF101 asks `scan_finding` before it rewrites: a loop JF102 neither rewrites nor reports stays JF101's."""
    from jaxfix.codemods.loop_to_scan import LoopToScan

    assert registry.by_code("JF102") is LoopToScan
    source = _source(
        """
        def f(xs):
            acc = jnp.zeros(xs.shape[1:])
            for i in range(xs.shape[0]):
                acc = acc + xs[i] * i
            return acc
        """
    )
    assert findings(source, SCAN) == []
    assert "lax.fori_loop" in rewrite(source, FORI)


def test_a_backward_range_carrying_state_is_a_reverse_scan_over_the_indices(tmp_path) -> None:
    """lax.fori_loop cannot step by -1; a scan over jnp.arange with reverse=True visits the same indices."""
    before = _source(
        """
        def f(xs: jax.Array, w: jax.Array):
            h = jnp.zeros(3)
            for t in range(xs.shape[0] - 1, -1, -1):
                h = jnp.tanh(0.5 * h + xs[t] * w[t])
            return h
        """
    )
    after = rewrite(before, SCAN)
    assert "h, _ = jax.lax.scan(step, h, jnp.arange(xs.shape[0]), reverse=True)" in after
    assert findings(before, FORI) == []
    _same_numbers(before, after, tmp_path, "f", ["jnp.sin(jnp.arange(36.0)).reshape(12, 3)", "jnp.arange(36.0).reshape(12, 3) / 9"])


# ---- carries that start as a Python number -------------------------------------------------------------------



JAXTYPED = (
    "from __future__ import annotations\n\nfrom typing import TYPE_CHECKING\n\n"
    "import jax\nimport jax.numpy as jnp\n\nif TYPE_CHECKING:\n    from jaxtyping import Array, Float\n\n\n@jax.jit\n"
)


def _reverse_collect(tail: str, *, params: str = 'rewards: Float[Array, "T"], gamma: float') -> str:
    return JAXTYPED + textwrap.dedent(
        f"""
        def f({params}):
            g = 0.0
            returns = []
            for t in reversed(range(rewards.shape[0])):
                g = rewards[t] + gamma * g
                returns.append(g)
        """
    ).lstrip("\n") + textwrap.indent(textwrap.dedent(tail).lstrip("\n"), "    ")


@pytest.mark.parametrize(
    "tail",
    [
        "returns = returns[::-1]\nreturn jnp.stack(returns)\n",
        "returns = list(reversed(returns))\nreturn jnp.stack(returns)\n",
        "returns.reverse()\nreturn jnp.stack(returns)\n",
        "return jnp.stack(list(reversed(returns)))\n",
        "return jnp.stack(returns[::-1])\n",
    ],
)
def test_a_list_built_backwards_and_put_back_in_time_order_is_a_reverse_scan(tmp_path, tail: str) -> None:
    before = _reverse_collect(tail)
    after = rewrite(before, SCAN)
    assert "    g, returns = jax.lax.scan(step, g, rewards, reverse=True)\n    return returns\n" in after, after
    assert "reverse()" not in after and "reversed" not in after and "[::-1]" not in after
    _same_numbers(before, after, tmp_path, "f", ["jnp.sin(jnp.arange(30.0))", "0.9"])


def test_a_list_kept_backwards_is_reversed_after_the_reverse_scan(tmp_path) -> None:
    before = _reverse_collect("return jnp.stack(returns)\n")
    after = rewrite(before, SCAN)
    assert "    return returns[::-1]\n" in after
    _same_numbers(before, after, tmp_path, "f", ["jnp.sin(jnp.arange(30.0))", "0.9"])


@pytest.mark.parametrize(
    "tail,shown",
    [
        # not right after the loop: something in between may read the list in its first order
        ("y = jnp.stack(returns)\nreturns = returns[::-1]\nreturn y + jnp.stack(returns)\n", "`returns = returns[::-1]`"),
        # reversed only on one path
        ("if gamma > 0:\n    returns.reverse()\nreturn jnp.stack(returns)\n", "`returns.reverse()`"),
        # reversed into another name, which is then a list used after the loop
        ("backwards = returns[::-1]\nreturn jnp.stack(backwards)\n", "`returns[::-1]`"),
    ],
)
def test_other_reversals_after_the_loop_are_uses_of_the_list(tail: str, shown: str) -> None:
    before = _reverse_collect(tail)
    assert findings(before, SCAN) == []  # under 100 steps, a loop it cannot rewrite is quiet
    long = before.replace("reversed(range(rewards.shape[0]))", "reversed(range(200))")
    reported = findings(long, SCAN)
    assert len(reported) == 1 and reported[0].fix is None, [d.message for d in reported]
    assert "is used as a list after the loop" in reported[0].message and shown in reported[0].message


def test_a_float_start_of_unproven_shape_starts_from_the_first_step(tmp_path) -> None:
    # the corpus case: `rewards` may be a (T, envs) batch, and `gae` a row after one step
    source = _corpus_before("gae_unannotated")
    reported = findings(source, SCAN)
    assert len(reported) == 1 and reported[0].fix is not None
    message = reported[0].message
    assert "the scan starts it as an array of the first step's shape and dtype" in message
    assert "assumes `rewards`, `values` and `dones` are arrays: non-static arguments of `gae`" in message
    after = rewrite(source, SCAN)
    assert "    gae = jnp.zeros_like(jax.eval_shape(step, gae, 0)[0])\n" in after
    # over the rows of an array: the first row is what the step gets first
    unproven = _reverse_collect("return jnp.stack(returns[::-1])\n", params="rewards: jax.Array, gamma: float")
    after = rewrite(unproven, SCAN)
    assert "g = jnp.zeros_like(jax.eval_shape(step, g, rewards[0])[0])" in after
    assert "g, returns = jax.lax.scan(step, g, rewards, reverse=True)" in after
    for rewards in ["jnp.sin(jnp.arange(30.0))", "jnp.sin(jnp.arange(90.0)).reshape(30, 3)"]:
        _same_numbers(unproven, after, tmp_path, "f", [rewards, "0.9"])
    # another number: the array starts full of it
    ones = unproven.replace("g = 0.0", "g = 1.0")
    after = rewrite(ones, SCAN)
    assert "g = jnp.full_like(jax.eval_shape(step, g, rewards[0])[0], g)" in after
    _same_numbers(ones, after, tmp_path, "f", ["jnp.sin(jnp.arange(90.0)).reshape(30, 3)", "0.9"])
    # the proven scalar step keeps the Python float start as it is
    assert "eval_shape" not in rewrite(_reverse_collect("return jnp.stack(returns[::-1])\n"), SCAN)


def test_a_start_that_is_a_number_on_one_path_only_is_reported_with_how_to_start_it() -> None:
    source = _source(
        """
        def f(xs: jax.Array, decay: float, warm: bool):
            avg = 0.0
            if warm:
                avg = xs[0]
            for x in xs:
                avg = decay * avg + x
            return avg
        """
    )
    reported = findings(source, SCAN)
    assert len(reported) == 1 and reported[0].fix is None
    assert "start it with `avg = jnp.zeros_like(xs[0])`" in reported[0].message


def test_float_and_int_annotations_and_range_indices_prove_a_scalar_step() -> None:
    # `gamma: float` is a scalar, traced or not; `t` of `range` is a Python int; `rewards[t]` of a 1-D array:
    # the scan starts from the Python float; elsewhere from the first step's shape
    tail = "return jnp.stack(returns[::-1])\n"
    proven = findings(_reverse_collect(tail), SCAN)[0]
    assert proven.fix is not None and "first step's shape" not in proven.message
    for unproven in ('rewards: Float[Array, "T"], gamma', "rewards: jax.Array, gamma: float", 'rewards: Float[Array, "T d"], gamma: float'):
        reported = findings(_reverse_collect(tail, params=unproven), SCAN)
        assert len(reported) == 1 and reported[0].fix is not None, unproven
        assert "the scan starts it as an array of the first step's shape" in reported[0].message


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_the_first_step_from_a_python_float_equals_the_scan_from_it(dtype: str) -> None:
    """On this JAX: a Python 0.0 combined with arrays of `dtype` stays `dtype` (weak typing), and lax.scan promotes
    its weakly typed 0.0 start to that dtype, so the scan computes the Python loop's numbers exactly, op by op.
    Compiled, that holds in float32; in half precision XLA may round a loop body's arithmetic otherwise than the
    same operations unrolled (seen on a CPU with AVX512-FP16 and AMX-BF16), by a few units in the last place."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    rewards = jnp.sin(jnp.arange(24.0)).astype(dtype)
    values = jnp.cos(jnp.arange(24.0)).astype(dtype)
    gamma = jnp.asarray(0.97, dtype)

    def python_loop(rewards, values):
        g, out = 0.0, []
        for t in reversed(range(rewards.shape[0])):
            g = rewards[t] - values[t] + gamma * g
            out.append(g)
        return jnp.stack(out[::-1])

    def scan(rewards, values):
        def step(g, t):
            g = rewards[t] - values[t] + gamma * g
            return g, g

        return jax.lax.scan(step, 0.0, jnp.arange(rewards.shape[0]), reverse=True)[1]

    first = rewards[23] - values[23] + gamma * 0.0
    assert first.dtype == jnp.dtype(dtype) and not first.weak_type
    with jax.disable_jit():
        loop_op_by_op, scan_op_by_op = python_loop(rewards, values), scan(rewards, values)
    assert scan_op_by_op.dtype == loop_op_by_op.dtype == jnp.dtype(dtype)
    np.testing.assert_array_equal(np.asarray(scan_op_by_op, np.float32), np.asarray(loop_op_by_op, np.float32))
    expected = jax.jit(python_loop)(rewards, values)
    got = jax.jit(scan)(rewards, values)
    assert got.dtype == expected.dtype == jnp.dtype(dtype)
    _compiled_matches(got, expected, dtype)


def _compiled_matches(got, expected, dtype: str) -> None:
    """Bit for bit in float32; in half precision within a few units in the last place of the largest value (how
    XLA rounds a compiled loop body's half-precision arithmetic depends on the CPU)."""
    import numpy as np

    got, expected = np.asarray(got, np.float32), np.asarray(expected, np.float32)
    if dtype == "float32":
        np.testing.assert_array_equal(got, expected)
    else:
        import jax.numpy as jnp

        ulp = float(jnp.finfo(dtype).eps) * float(np.max(np.abs(expected)))
        np.testing.assert_allclose(got, expected, rtol=0, atol=8 * ulp)


def _corpus_before(case: str) -> str:
    from pathlib import Path

    return (Path(__file__).parent.parent / "corpus" / "loop_to_scan" / case / "before.py").read_text()


def test_the_comment_of_a_removed_reversal_goes_above_the_scan(tmp_path) -> None:
    before = _reverse_collect("# back to time order\nreturns = returns[::-1]  # oldest first\nreturn jnp.stack(returns)\n")
    after = rewrite(before, SCAN)
    assert "    # back to time order\n    # oldest first\n    g, returns = jax.lax.scan(step, g, rewards, reverse=True)\n    return returns\n" in after
    _same_numbers(before, after, tmp_path, "f", ["jnp.sin(jnp.arange(30.0))", "0.9"])


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("shape", [(40,), (40, 3)])
def test_a_carry_started_from_the_first_steps_shape_gives_the_loops_numbers_exactly(dtype: str, shape, tmp_path) -> None:
    """The unannotated GAE, rewritten with `gae = jnp.zeros_like(jax.eval_shape(step, gae, 0)[0])`, computes the
    Python loop's numbers bit for bit where the step computes in one dtype, on a (T,) or a (T, envs) batch: op by
    op in every dtype, compiled in float32 (half precision: see _compiled_matches)."""
    import importlib.util

    import jax.numpy as jnp
    import numpy as np

    source = _corpus_before("gae_unannotated")
    after = rewrite(source, SCAN)
    assert "jax.eval_shape(step, gae, 0)" in after
    functions = []
    for name, text in (("before_gae", source), ("after_gae", after)):
        path = tmp_path / f"{name}.py"
        path.write_text(text)
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        functions.append(module.gae)
    size = int(np.prod(shape))
    rewards = jnp.sin(jnp.arange(size, dtype=jnp.float32)).reshape(shape).astype(dtype)
    values = jnp.cos(jnp.arange(size, dtype=jnp.float32) / 3.0).reshape(shape).astype(dtype)
    dones = (jnp.arange(size).reshape(shape) % 7 == 6).astype(dtype)
    import jax

    with jax.disable_jit():
        loop, scan = (f(rewards, values, dones, 0.99, 0.95) for f in functions)
    assert loop.shape == scan.shape and loop.dtype == scan.dtype
    assert np.array_equal(np.asarray(loop, np.float32), np.asarray(scan, np.float32))
    loop, scan = (f(rewards, values, dones, 0.99, 0.95) for f in functions)
    assert loop.shape == scan.shape and loop.dtype == scan.dtype
    _compiled_matches(scan, loop, dtype)


# ---- the facts, without the rule -------------------------------------------------------------------------------


def test_the_scan_facts_of_a_loop_are_read_from_the_file_facts() -> None:
    """What a loop is as a scan is a fact of the module (`FileFacts.scans`, on `ast`), which any reader asks without
    the rule: what the loop walks and in which direction, what it carries and collects, and why a loop has none."""
    import ast

    from jaxfix.facts.module import FileFacts

    source = _source(
        """
        def f(rewards: jax.Array, w):
            gae = jnp.zeros(3)
            advantages = []
            for t in reversed(range(rewards.shape[0])):
                gae = rewards[t] + 0.9 * gae
                advantages.append(gae)
            advantages = advantages[::-1]
            for _ in range(4):
                w = jnp.sin(w)
            return jnp.stack(advantages), w
        """
    )
    facts = FileFacts(source)
    (function,) = [node for node in facts.tree.body if isinstance(node, ast.FunctionDef)]
    long, short = [node for node in function.body if isinstance(node, ast.For)]
    counts = (10, 100)
    finding = facts.scans.finding(long, counts)
    plan = finding.plan
    assert finding.node is long.iter and facts.scans.finding(long, counts) is finding
    assert (plan.iteration.mode, plan.iteration.reverse, plan.carried) == ("index", True, ("gae",))
    assert [output.name for output in plan.outputs] == ["advantages"] and plan.outputs[0].reversal is not None
    assert [array for array, _ in plan.rows] == ["rewards"] and not plan.index_used
    assert facts.scans.refusal(long, counts) is None
    assert facts.scans.finding(short, counts) is None
    assert facts.scans.refusal(short, counts) == "a loop of 4 known steps: below min-trip-count (10)"
