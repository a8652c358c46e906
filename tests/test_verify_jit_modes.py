"""An original that JAX rejects under jit is run with jit disabled; the rewrite runs jitted. Compiled whole and op
by op are two XLA programs that round differently, so on an ill-conditioned input (a singular matrix) their
results can be far apart while the rewrite computes what the original does: such an input must not be reported
as a difference, and a real difference on the same inputs must still be.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

from jaxfix.verify import runner
from jaxfix.verify.targets import DIFFERS, VERIFIED, Module, Options, Source, Target

EARLY_RETURN = Path(__file__).resolve().parent.parent / "corpus" / "branch_to_cond" / "early_return"


def _target(tmp_path: Path, name: str, function: str, before: str, after: str, calls: list[list[str]]) -> Target:
    path = tmp_path / f"{name}.py"
    path.write_text(before)
    source = Source(kind="examples", origin="test", calls=tuple({"args": args, "kwargs": {}} for args in calls))
    return Target(id=f"{path}::{function}", name=function, before=Module(str(path), before), after=Module(str(path), after), sources=(source,))


def _singular_matrix_jit_rounds_away() -> str:
    """A singular matrix [[a, a], [a, a]] whose determinant is exactly 0 op by op but a positive rounding residue
    when compiled (XLA fuses a*d - b*c into one multiply-add): log_det is -inf eagerly and finite jitted."""
    import jax
    import jax.numpy as jnp

    determinant = jax.jit(jnp.linalg.det)
    value = np.float32(1.4509394)
    for _ in range(64):
        matrix = jnp.full((2, 2), value)
        with jax.disable_jit():
            eager = float(jnp.linalg.det(matrix))
        if eager == 0.0 and float(determinant(matrix)) > 0.0:
            return f"jnp.full((2, 2), jnp.float32({float(value)!r}))"
        value = np.nextafter(value, np.float32(2.0))
    pytest.skip("XLA computes a 2x2 determinant the same jitted and op by op on this machine: no singular input rounds apart")


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    folder = tmp_path_factory.mktemp("jit_modes")
    before = (EARLY_RETURN / "before.py").read_text()
    after = (EARLY_RETURN / "after.py").read_text()
    wrong = after.replace("logd = jnp.log(d)", "logd = 2.0 * jnp.log(d)")  # twice the log-determinant: relative error 1
    assert wrong != after
    singular = _singular_matrix_jit_rounds_away()
    # a static argument whose values compare and hash equal (0.0 and -0.0): the jitted rewrite answers -0.0 with
    # the executable compiled for 0.0, and 1 / -0.0 comes back +inf
    unjittable = textwrap.dedent(
        """\
        import jax
        import jax.numpy as jnp

        @jax.jit
        def scale(x, s):
            if jnp.any(x > 100.0):
                return x
            return x / s
        """
    )
    static = textwrap.dedent(
        """\
        import functools
        import jax
        import jax.numpy as jnp

        @functools.partial(jax.jit, static_argnums=1)
        def scale(x, s):
            return jnp.where(jnp.any(x > 100.0), x, x / s)
        """
    )
    # rejected under jit before and after (the `while` stays): both are compared with jit disabled
    printing = textwrap.dedent(
        """\
        import jax
        import jax.numpy as jnp

        @jax.jit
        def relax(x):
            delta = jnp.ones_like(x)
            while jnp.max(jnp.abs(delta)) > 1e-3:
                delta = 0.5 * (jnp.roll(x, 1) - x)
                x = x + delta
                print("delta", delta)
            return x
        """
    )
    debug_print = printing.replace('print("delta", delta)', 'jax.debug.print("delta {}", delta)')
    wrong_print = debug_print.replace("0.5 * (", "0.25 * (")
    matrices = [["jnp.array([[2.0, 0.0], [0.0, 3.0]])"], [singular]]
    vector = [["jnp.array([0.0, 1.0, 0.0, 1.0])"]]
    targets = [
        _target(folder, "singular", "log_det", before, after, matrices),
        _target(folder, "singular_wrong", "log_det", before, wrong, matrices),
        _target(folder, "static_zero", "scale", unjittable, static, [["jnp.ones(3)", "0.0"], ["jnp.ones(3)", "-0.0"]]),
        _target(folder, "printing", "relax", printing, debug_print, vector),
        _target(folder, "printing_wrong", "relax", printing, wrong_print, vector),
    ]
    return {Path(r.target.split("::")[0]).stem: r for r in runner.run(targets, Options(max_examples=5))}


def test_a_singular_matrix_rounded_apart_by_jit_is_not_a_difference(reports) -> None:
    report = reports["singular"]
    assert report.status == VERIFIED, [(d.reason, d.counterexample) for d in report.devices]
    (device,) = report.devices
    assert device.examples >= 2
    assert any("ill-conditioned input" in note and "only by how jit rounds" in note for note in device.notes), device.notes


def test_a_wrong_rewrite_is_still_caught_where_the_original_runs_with_jit_disabled(reports) -> None:
    report = reports["singular_wrong"]
    assert report.status == DIFFERS, report
    assert "(the original was run with jit disabled: JAX rejects it under jit)" in report.devices[0].counterexample


def test_a_jit_cache_hit_for_an_equal_static_argument_is_a_difference(reports) -> None:
    report = reports["static_zero"]
    assert report.status == DIFFERS, report
    assert "infinity differs" in report.devices[0].reason


def test_a_rewrite_rejected_under_jit_like_its_original_is_compared_with_jit_disabled(reports) -> None:
    report = reports["printing"]
    assert report.status == VERIFIED, report
    (device,) = report.devices
    assert device.examples >= 2
    assert any("the rewrite ran with jit disabled too" in note for note in device.notes), device.notes
    wrong = reports["printing_wrong"]
    assert wrong.status == DIFFERS, wrong
    assert "(both were run with jit disabled: JAX rejects both under jit)" in wrong.devices[0].counterexample
