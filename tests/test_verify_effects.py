"""What `jaxfix verify` must not be fooled by: gradients (checked by default), side effects (globals written,
arguments changed in place), functions that return None, and `apply --verify` judging each rewrite by the
functions it changes. Each planted bad pair is caught with default options; its good twin verifies."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jaxfix.cli import app

PLANTED = Path(__file__).resolve().parent / "planted"

# pair: (exit code, lines the output must contain)
BAD = {
    "grad_nan_branch": (1, ["differs: gradient: leaf 0: NaN in one and not the other", "rewrite gradient[0]: float32[] nan"]),
    "grad_loop_raises": (1, ["differs: gradient: the original is differentiable; the rewrite raises ValueError: Reverse-mode"]),
    "grad_original_raises": (1, ["differs: leaf 0: 0.125 != 0.0625"]),
    "global_append": (1, ["differs: global variables written differ: the original writes SEEN; the rewrite does not"]),
    "dropped_log": (  # the original's gradient raises (a host float in the log): values and the log are still compared
        1,
        ["differs: global variables written differ: the original writes RESIDUALS; the rewrite does not", "rewrite globals written: {}"],
    ),
    "clip_in_place": (1, ["differs: arguments after the call (x changed in place)", "original argument after the call:['x']: float32[] 1"]),
    "returns_none": (
        2,
        [
            "main  cpu  unverified: could not check: it returned None on every input",
            "energy  unverified: no source of inputs",
            "Verified 0 of 2 functions: 0 differ, 2 unverified",
        ],
    ),
}
GOOD = {  # counts vary: gradients are compared on the finite inputs only
    "grad_nan_branch_good": ["; gradients compared on "],
    "grad_loop_raises_good": ["; gradients compared on "],
    "grad_original_raises_good": ["note: the original's gradient raised (ValueError) on "],
    "global_append_good": ["note: both wrote the same globals on "],
    "dropped_log_good": ["note: both wrote the same globals on ", "note: the original's gradient raised (ConcretizationTypeError)"],
    "clip_in_place_good": ["note: arguments were changed in place on"],
    "returns_none_good": ["energy_good  verified through main_good", "Verified 2 of 2 functions"],
}


def run(*args: str, cwd: Path):
    old = Path.cwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(app, list(args))
    finally:
        os.chdir(old)


def _verify_pair(name: str, tmp_path: Path, *options: str):
    for side in ("before", "after"):
        shutil.copy(PLANTED / f"{name}_{side}.py", tmp_path / f"{name}_{side}.py")
    return run("verify", f"{name}_before.py", f"{name}_after.py", *options, cwd=tmp_path)


@pytest.mark.parametrize("name", list(BAD))
def test_bad_pair_is_caught_with_default_options(name: str, tmp_path: Path) -> None:
    code, lines = BAD[name]
    result = _verify_pair(name, tmp_path)
    assert result.exit_code == code, result.output
    for line in lines:
        assert line in result.output, result.output


@pytest.mark.parametrize("name", list(GOOD))
def test_good_twin_verifies(name: str, tmp_path: Path) -> None:
    result = _verify_pair(name, tmp_path)
    assert result.exit_code == 0, result.output
    for line in GOOD[name]:
        assert line in result.output, result.output


def test_no_grad_skips_gradients(tmp_path: Path) -> None:
    result = _verify_pair("grad_nan_branch", tmp_path, "--no-grad", "--max-examples", "10")
    assert result.exit_code == 0, result.output
    assert "gradients compared" not in result.output


PROGRAM = '''from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnums=1)
def smooth(x, steps):
    for _ in range(steps):
        x = 0.5 * (x + jnp.roll(x, 1, axis=-1))
    return x


@jax.jit
def report(x):
    print(x)
    return x + 1.0


def leaves(tree):
    return jax.tree_map(lambda v: v * 2.0, tree)


def main():
    xs = jnp.arange(4.0)
    print(smooth(xs, 3), report(xs), leaves({"a": xs}))
'''


SMALL_PROGRAM = '''import sys

import jax.numpy as jnp


def energy(x):
    return x ** 2


def total(xs):
    return sum(energy(x) for x in xs)


def main():
    xs = jnp.asarray([float(a) for a in sys.argv[1:]])
    print(total(xs))
'''


def test_a_program_whose_main_returns_none_is_not_verified(tmp_path: Path) -> None:
    (tmp_path / "before.py").write_text(SMALL_PROGRAM)
    (tmp_path / "after.py").write_text(SMALL_PROGRAM.replace("x ** 2", "x ** 3"))
    result = run("verify", "before.py", "after.py", "--max-examples", "5", cwd=tmp_path)
    assert result.exit_code == 2, result.output
    assert "before.py::energy  unverified: no source of inputs" in result.output
    assert "before.py::main  cpu  unverified: could not check: it returned None on every input" in result.output
    assert "Verified 0 of 3 functions: 0 differ, 3 unverified" in result.output


def test_apply_verify_keeps_fixes_that_verify_alone_and_safe_fixes(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(PROGRAM)
    result = run("apply", "--verify", "m.py", "--max-examples", "5", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    text = (tmp_path / "m.py").read_text()
    # smooth and report verify on their own, through inputs from main's call; main itself cannot be checked
    assert "jax.lax.fori_loop(0, steps, body, x)" in text, result.output
    assert 'jax.debug.print("{}", x)' in text, result.output
    assert "jax.tree.map(lambda v" in text, result.output  # a safe fix whose original raises on every input
    assert "fixed m.py (3 fixes; verified: smooth, report)" in result.output
    assert "kept function m.py::leaves: its fixes are safe ones; not verified: the original raised on every input (AttributeError)" in result.output
    assert "0 functions reverted" in result.output and "1 function kept unverified (safe fixes only)" in result.output


CALLBACK = '''import jax


@jax.jit
def logged(x: jax.Array) -> jax.Array:
    jax.debug.callback(lambda v: None, x)
    return x * 2.0


def printed(x: jax.Array) -> jax.Array:
    jax.debug.print("x {}", x)
    return x * 2.0
'''


def test_a_host_callback_cannot_be_checked_a_debug_print_can(tmp_path: Path) -> None:
    (tmp_path / "before.py").write_text(CALLBACK)
    (tmp_path / "after.py").write_text(CALLBACK.replace("    jax.debug.callback(lambda v: None, x)\n", "").replace('    jax.debug.print("x {}", x)\n', ""))
    result = run("verify", "before.py", "after.py", "--max-examples", "5", cwd=tmp_path)
    assert result.exit_code == 2, result.output
    assert "before.py::logged  cpu  unverified: could not check: the original calls jax.debug.callback (a host callback" in result.output
    assert "before.py::printed  cpu  verified" in result.output
