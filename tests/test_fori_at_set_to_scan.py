"""JF104 beyond its corpus: the loop → fori_loop → scan chain with JF101, the forms of a fori_loop call and of
its body the rewrite handles (each run against the original), and what stops it (each with its reason)."""

from __future__ import annotations

import textwrap

import jax.numpy as jnp
import numpy as np
import pytest

from jaxfix import corpus
from jaxfix.engine import Settings, fix_text
from jaxfix.facts.module import FileFacts
from tests.helpers import codemod_for_module, findings, rewrite

JF104 = codemod_for_module("fori_at_set_to_scan")


def run(source: str, entry: str, *args):
    namespace: dict = {}
    exec(compile(source, "<case>", "exec"), namespace)
    return corpus.call(namespace[entry], list(args), {})


def rewritten(source: str) -> str:
    source = textwrap.dedent(source)
    new = rewrite(source, JF104)
    assert new != source, [d.message for d in findings(source, JF104)]
    return new


def assert_equivalent(before: str, after: str, entry: str, *args) -> None:
    corpus.assert_same(run(after, entry, *args), run(textwrap.dedent(before), entry, *args), rtol=1e-5, atol=1e-6)


# ---- the fixed-point chain: a Python loop becomes a fori_loop (JF101), then a scan (JF104) --------------------

LOOP = """\
import jax
import jax.numpy as jnp


@jax.jit
def rnn(w, xs, h):
    out = jnp.zeros((xs.shape[0], h.shape[0]))
    for i in range(xs.shape[0]):
        h = jnp.tanh(w @ h + xs[i])
        out = out.at[i].set(h)
    return h, out
"""


def test_a_python_loop_becomes_a_scan_through_fori_loop() -> None:
    new, applied, remaining, errors = fix_text(LOOP, Settings(("JF101", "JF104"), unsafe_fixes=True))
    assert not errors and not remaining
    assert applied == 2  # one fix per pass: loop → fori_loop, then fori_loop → scan
    assert "fori_loop" not in new and "jax.lax.scan(body, h, xs)" in new
    assert "def body(h, x):" in new and "out = jnp.zeros" not in new
    args = (0.5 * np.eye(3, dtype=np.float32), np.cos(np.arange(36.0, dtype=np.float32)).reshape(12, 3), np.ones(3, np.float32))
    corpus.assert_same(run(new, "rnn", *args), run(LOOP, "rnn", *args), rtol=1e-5, atol=1e-6)


def test_jf101_alone_stops_at_fori_loop() -> None:
    new, _, _, _ = fix_text(LOOP, Settings(("JF101",), unsafe_fixes=True))
    assert "fori_loop" in new and "scan" not in new


# ---- forms the rewrite handles, each checked against the original ------------------------------------------

def test_keywords_alias_unroll_docstring_and_full_slices() -> None:
    before = """
        import jax.numpy as jnp
        from jax.lax import fori_loop


        def f(xs):
            n = xs.shape[0]
            out = jnp.zeros((n, 3))

            def body(i, carry):
                \"\"\"One step.\"\"\"
                h, out = carry
                h = jnp.sin(h + xs[i])
                out = out.at[i, :].set(h * 2.0)
                return h, out

            h, out = fori_loop(lower=0, upper=n, body_fun=body, init_val=(jnp.zeros(3), out), unroll=2)
            return out, h
    """
    after = rewritten(before)
    assert "jax.lax.scan(body, jnp.zeros(3), xs, unroll=2)" in after
    assert '"""One step."""\n        h = jnp.sin(h + x)' in after
    assert "astype" not in after  # h * 2.0 keeps the default float dtype of jnp.zeros(3)
    assert_equivalent(before, after, "f", jnp.linspace(0.0, 1.0, 30).reshape(10, 3))


def test_a_value_whose_names_change_later_is_bound_where_it_was_written() -> None:
    before = """
        import jax.numpy as jnp
        from jax import lax


        def f(x, steps=20):
            def body(i, carry):
                x, path = carry
                path = path.at[i].set(jnp.sin(x) + jnp.cos(x) * jnp.tanh(x) - x * x / 3.0)
                x = x * 0.9 + 0.1
                return x, path

            x, path = lax.fori_loop(0, steps, body, (x, jnp.zeros((steps,) + x.shape)))
            return path
    """
    after = rewritten(before)
    assert "path_t = jnp.sin(x)" in after and "return x, path_t.astype(float)" in after
    assert_equivalent(before, after, "f", np.linspace(-1, 1, 4, dtype=np.float32))


def test_an_argument_of_another_dtype_is_cast_to_the_output_dtype() -> None:
    # `.at[i].set` casts bfloat16 rows into the float32 output; the scan must stack float32 rows too.
    before = """
        import jax.numpy as jnp
        from jax import lax


        def f(w, h, steps=10):
            out = jnp.zeros((steps,) + h.shape)

            def body(i, carry):
                h, out = carry
                h = jnp.tanh(w @ h + 1.0)
                out = out.at[i].set(h)
                return h, out

            h, out = lax.fori_loop(0, steps, body, (h, out))
            return out
    """
    after = rewritten(before)
    assert "return h, h.astype(float)" in after
    args = (0.5 * jnp.eye(2, dtype=jnp.bfloat16), jnp.ones(2, jnp.bfloat16))
    result = run(after, "f", *args)
    assert result.dtype == jnp.float32
    assert_equivalent(before, after, "f", *args)


def test_an_expression_gets_parentheses_before_its_cast() -> None:
    before = """
        import jax.numpy as jnp
        from jax import lax


        def f(c, n=6):
            def body(i, out):
                return out.at[i].set(c + 1)

            out = lax.fori_loop(0, n, body, jnp.zeros(n))
            return out
    """
    after = rewritten(before)
    assert "return None, (c + 1).astype(float)" in after
    assert "out = lax.scan(body, None, length=n)[1]" in after
    assert_equivalent(before, after, "f", np.int32(3))


def test_several_states_and_outputs_and_an_output_array_read_later() -> None:
    before = """
        import jax.numpy as jnp
        from jax import lax


        def f(x, v, steps=15):
            xs0 = jnp.zeros((steps,) + x.shape, x.dtype)
            vs = jnp.zeros((steps,) + v.shape, v.dtype)

            def body(i, carry):
                x, xs, v, vs = carry
                v = v - 0.1 * x
                x = x + 0.1 * v
                xs = xs.at[i].set(x)
                vs = vs.at[i].set(v)
                return x, xs, v, vs

            x, xs, v, vs = lax.fori_loop(0, steps, body, (x, xs0, v, vs))
            return xs, vs, x, xs0.sum()
    """
    after = rewritten(before)
    assert "(x, v), (xs, vs) = lax.scan(body, (x, v), length=steps)" in after
    assert "x, v = carry" in after and "return (x, v), (x, v)" in after
    assert "xs0 = jnp.zeros" in after  # still read after the loop
    assert "vs = jnp.zeros" not in after
    x = np.array([1.0, 0.5], np.float32)
    assert_equivalent(before, after, "f", x, x * 0)


def test_a_jitted_function_with_a_static_size_and_an_input_sequence() -> None:
    before = """
        from functools import partial

        import jax
        import jax.numpy as jnp
        from jax import lax


        @partial(jax.jit, static_argnums=2)
        def f(xs, h, n):
            def body(i, carry):
                h, out = carry
                h = 0.5 * h + xs[i]
                out = out.at[i].set(h)
                return h, out

            _, out = lax.fori_loop(0, n, body, (h, jnp.zeros((n,) + h.shape, h.dtype)))
            return out
    """
    after = rewritten(before)
    # `xs` has an unknown number of rows: it is indexed, and the scan runs over the index
    assert "_, out = lax.scan(body, h, jnp.arange(n))" in after and "xs[i]" in after
    assert_equivalent(before, after, "f", np.arange(12.0, dtype=np.float32).reshape(6, 2), np.zeros(2, np.float32), 4)


# ---- what stops the rewrite ------------------------------------------------------------------------------

STOPPED = {
    "used twice": (
        """
        def body(i, carry):
            h, out = carry
            h = h + 1.0
            out = out.at[i].set(h)
            return h, out
        a = lax.fori_loop(0, 5, body, (h, jnp.zeros((5, 2))))
        b = lax.fori_loop(0, 5, body, (h, jnp.zeros((5, 2))))
        """,
        "used elsewhere",
    ),
    "index rebound": (
        """
        def body(i, carry):
            h, out = carry
            h = h + sum(x for i in range(2) for x in [1.0])
            out = out.at[i].set(h)
            return h, out
        h, out = lax.fori_loop(0, 5, body, (h, jnp.zeros((5, 2))))
        """,
        "binds the index",
    ),
    "starts at 1": (
        """
        def body(i, carry):
            h, out = carry
            out = out.at[i].set(h)
            return h, out
        h, out = lax.fori_loop(1, 5, body, (h, jnp.zeros((5, 2))))
        """,
        "not 0",
    ),
    "numpy buffer": (
        """
        def body(i, carry):
            h, out = carry
            out = out.at[i].set(h)
            return h, out
        h, out = lax.fori_loop(0, 5, body, (h, np.zeros((5, 2))))
        """,
        "not as a fresh array",
    ),
    "row read by the state": (
        """
        def body(i, carry):
            h, out = carry
            out = out.at[i].set(h)
            return h + out[0], out
        h, out = lax.fori_loop(0, 5, body, (h, jnp.zeros((5, 2))))
        """,
        "reads `out`",
    ),
    "unpacked late": (
        """
        def body(i, carry):
            k = i * 2
            h, out = carry
            out = out.at[i].set(h * k)
            return h, out
        h, out = lax.fori_loop(0, 5, body, (h, jnp.zeros((5, 2))))
        """,
        "unpack its carry first",
    ),
    "row of unknown shape": (
        """
        def body(i, carry):
            h, out = carry
            out = out.at[i].set(h)
            return h, out
        h, out = lax.fori_loop(0, 5, body, (h, jnp.zeros((5, d))))
        """,
        "shape of a row",
    ),
    "unknown number of rows": (
        """
        def body(i, carry):
            h, out = carry
            out = out.at[i].set(h)
            return h, out
        h, out = lax.fori_loop(0, m, body, (h, jnp.zeros((5, 2))))
        """,
        "write every row",
    ),
    "result indexed": (
        """
        def body(i, carry):
            h, out = carry
            out = out.at[i].set(h)
            return h, out
        return lax.fori_loop(0, 5, body, (h, jnp.zeros((5, 2))))[1]
        """,
        "not assigned",
    ),
    "written twice": (
        """
        def body(i, carry):
            h, out = carry
            out = out.at[i].set(h)
            out = out.at[i].set(h + 1)
            return h, out
        h, out = lax.fori_loop(0, 5, body, (h, jnp.zeros((5, 2))))
        """,
        "exactly once",
    ),
}


@pytest.mark.parametrize("case", list(STOPPED), ids=list(STOPPED))
def test_what_stops_the_rewrite_is_reported(case: str) -> None:
    body, reason = STOPPED[case]
    source = (
        "import numpy as np\nimport jax.numpy as jnp\nfrom jax import lax\n\n\ndef f(d, m):\n    h = jnp.zeros(2)\n"
        + textwrap.indent(textwrap.dedent(body).strip() + "\n", "    ")
        + ("    return out\n" if "return lax" not in body else "")
    )
    reported = findings(source, JF104)
    assert reported
    for finding in reported:
        assert finding.fix is None and "not rewritten" in finding.message
        assert reason in finding.message, finding.message
    assert rewrite(source, JF104) == source


def test_a_body_defined_in_another_function_is_reported() -> None:
    source = textwrap.dedent(
        """
        import jax.numpy as jnp
        from jax import lax

        def body(i, carry):
            h, out = carry
            out = out.at[i].set(h)
            return h, out

        def f(h):
            h, out = lax.fori_loop(0, 5, body, (h, jnp.zeros((5,))))
            return out
        """
    )
    [finding] = findings(source, JF104)
    assert finding.fix is None and "another function" in finding.message


def test_a_scalar_row_needs_no_shape_proof() -> None:
    # Only a scalar broadcasts to `()`: whatever `y[i - 1] * y[i]` is, the original runs only if it is one.
    before = """
        import jax
        import jax.numpy as jnp
        from jax import lax


        @jax.jit
        def products(y):
            d = jnp.zeros(y.shape[0])

            def body(i, carry):
                d, y = carry
                d = d.at[i].set(y[i - 1] * y[i])
                return d, y

            d, y = lax.fori_loop(0, y.shape[0], body, (d, y))
            return d
    """
    after = rewritten(before)
    assert "def body(y, i):" in after and "return y, (y[i - 1] * y[i]).astype(float)" in after
    assert "y, d = lax.scan(body, y, jnp.arange(y.shape[0]))" in after
    assert_equivalent(before, after, "products", jnp.sin(jnp.arange(9.0)))


# ---- rows of an array that exists before the loop, and trip counts JAX computes: no per-step outputs ---------

EXISTING_ROWS = {
    # every row is updated from what it held: the array's contents are data
    "rows read and rewritten": """
        def f(grid, w):
            def body(i, grid):
                grid = grid.at[i].set(grid[i] * w[i])
                return grid
            return lax.fori_loop(0, grid.shape[0], body, grid)
    """,
    # a stencil over the interior rows: the boundary rows stay
    "interior rows": """
        def f(grid):
            def body(i, grid):
                return grid.at[i].set(0.5 * (grid[i - 1] + grid[i + 1]))
            return lax.fori_loop(1, grid.shape[0] - 1, body, grid)
    """,
    # the first rows of a field computed earlier are zeroed, in a tuple carry beside a counter
    "first rows of a computed field": """
        def f(u, n):
            u = 2.0 * u
            def body(i, carry):
                u, cleared = carry
                u = u.at[i].set(0.0)
                return u, cleared + 1
            u, cleared = lax.fori_loop(0, n, body, (u, 0))
            return u
    """,
    # every row is read with `.at[i].get()` and rewritten
    "rows read with at-get": """
        def f(grid):
            def body(i, grid):
                return grid.at[i].set(2.0 * grid.at[i].get())
            return lax.fori_loop(0, grid.shape[0], body, grid)
    """,
    # every row is rewritten, then the whole array scaled with `+=`
    "augmented assignment": """
        def f(grid):
            def body(i, grid):
                grid = grid.at[i].set(1.0)
                grid += 1.0
                return grid
            return lax.fori_loop(0, grid.shape[0], body, grid)
    """,
    # a lambda zeroing rows of a grid passed in
    "lambda on a grid": """
        def f(grid, n):
            return lax.fori_loop(0, n, lambda i, g: g.at[i].set(0.0), grid)
    """,
    # a zeros buffer whose first row is set before the loop holds data
    "buffer with contents": """
        def f(x0, n):
            path = jnp.zeros((8, 2)).at[7].set(x0)
            def body(i, path):
                return path.at[i].set(jnp.ones(2) * i)
            return lax.fori_loop(0, n, body, path)
    """,
    # the trip count is a JAX value: traced under any caller's jit, never a scan length
    "count computed by JAX": """
        def f(h, mask):
            n = jnp.sum(mask)
            def body(i, carry):
                h, out = carry
                h = jnp.tanh(h)
                out = out.at[i].set(h)
                return h, out
            h, out = lax.fori_loop(0, n, body, (h, jnp.zeros((16, 2))))
            return out
    """,
}


@pytest.mark.parametrize("case", list(EXISTING_ROWS), ids=list(EXISTING_ROWS))
def test_rows_of_an_existing_array_or_a_jax_count_are_no_finding(case: str) -> None:
    source = "import jax.numpy as jnp\nfrom jax import lax\n" + textwrap.dedent(EXISTING_ROWS[case])
    assert findings(source, JF104) == []


def test_an_existing_array_beside_a_fresh_output_is_reported_without_a_fix() -> None:
    """One carried array is a grid passed in, the other a buffer made for the loop: the loop does collect
    per-step outputs, and says which array stops the rewrite."""
    source = textwrap.dedent(
        """
        import jax.numpy as jnp
        from jax import lax

        def f(grid, h):
            def body(i, carry):
                h, grid, out = carry
                h = jnp.tanh(h)
                grid = grid.at[i].set(0.0)
                out = out.at[i].set(h)
                return h, grid, out
            h, grid, out = lax.fori_loop(0, 4, body, (h, grid, jnp.zeros((4, 3))))
            return grid, out
        """
    )
    [finding] = findings(source, JF104)
    assert finding.fix is None and "`grid` starts as `grid`" in finding.message


def test_the_same_loops_on_a_fresh_buffer_are_rewritten() -> None:
    """The counterpart of the cases above: a static count and a `jnp.zeros` buffer whose every row the loop
    writes once are per-step outputs."""
    before = """
        import jax.numpy as jnp
        from jax import lax


        def f(h):
            n = 16
            def body(i, carry):
                h, out = carry
                h = jnp.tanh(h + 0.1)
                out = out.at[i].set(h)
                return h, out
            h, out = lax.fori_loop(0, n, body, (h, jnp.zeros((n,) + h.shape)))
            return out
    """
    after = rewritten(before)
    assert "lax.scan(body, h, length=n)" in after
    assert_equivalent(before, after, "f", np.array([0.1, -0.2], np.float32))



# ---- the facts, read without the rule -------------------------------------------------------------------------

ROW_LOOPS = """\
import jax.numpy as jnp
from jax import lax


def f(w, xs, grid):
    def body(i, carry):
        h, out = carry
        h = jnp.tanh(w @ h + xs[i])
        out = out.at[i].set(h)
        return h, out
    def clear(i, grid):
        return grid.at[i].set(0.0)
    def running(i, out):
        return out.at[i].set(out[i - 1] + xs[i])
    h, out = lax.fori_loop(0, xs.shape[0], body, (jnp.zeros(4), jnp.zeros((xs.shape[0], 4))))
    total = lax.fori_loop(0, 3, lambda i, t: t + i, 0.0)
    sums = lax.fori_loop(0, xs.shape[0], running, jnp.zeros(xs.shape[0]))
    return out, lax.fori_loop(0, 4, clear, grid), total, sums
"""


def test_what_a_loop_body_does_to_its_rows_is_read_from_the_file_facts() -> None:
    """Which fori_loops write rows of their carry, and what their bodies do to those rows, are facts of the module
    on `ast` (`FileFacts.row_writes`), which any reader asks without the rule: the loop's index and carry, whether it
    updates an array that existed before it, and the plan of its scan (outputs, scanned arrays) or what stops it."""
    rows = FileFacts(ROW_LOOPS).row_writes
    loops = list(rows.loops())
    assert [(loop.body.name, loop.index, loop.carry) for loop in loops] == [
        ("body", "i", "carry"), ("running", "i", "out"), ("clear", "i", "grid"),
    ]
    collecting, running, clearing = loops
    assert not rows.traced_count(collecting) and not rows.updates_existing_rows(collecting)
    assert rows.updates_existing_rows(clearing) and not rows.updates_existing_rows(running)
    plan = rows.plan(collecting)
    assert [(o.name, o.position, o.cast) for o in plan.outputs] == [("out", 1, None)]
    assert plan.names == ["h", "out"] and plan.scanned == ["xs"] and not plan.uses_index
    assert rows.plan(running) == "the body reads `out` besides writing its row (`return out.at[i].set(out[i - 1] + xs[i])`)"
