"""`jaxfix verify` and `jaxfix apply --verify` as a user runs them: output, exit codes, and what is written."""

from __future__ import annotations

import shutil
from pathlib import Path

import libcst as cst
import pytest

from jaxfix import corpus, registry
from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.diagnostics import Safety
from tests.helpers import invoke_in

PLANTED = Path(__file__).resolve().parent / "planted"
CORPUS = corpus.ROOT


def run(*args: str, cwd: Path):
    return invoke_in(cwd, *args)


def test_verify_two_files(tmp_path: Path) -> None:
    case = CORPUS / "loop_to_fori" / "static_steps_decay"
    result = run("verify", str(case / "before.py"), str(case / "after.py"), "--max-examples", "3", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert "before.py::decay  cpu  verified  4 examples (case.toml)" in result.output
    assert "Verified 1 of 1 function: 0 differ, 0 unverified; devices: cpu." in result.output
    assert list(tmp_path.iterdir()) == [], "nothing is left in the working directory (no .hypothesis folder)"


def test_verify_reports_a_difference_and_exits_1(tmp_path: Path) -> None:
    for name in ("changed_constant_before.py", "changed_constant_after.py"):
        shutil.copy(PLANTED / name, tmp_path / name)
    result = run("verify", "changed_constant_before.py", "changed_constant_after.py", "--function", "steps", "--seed", "3", cwd=tmp_path)
    assert result.exit_code == 1, result.output
    assert "changed_constant_before.py::steps  cpu  differs: leaf 0: 0.01 != 0.001" in result.output
    assert "    n: 1" in result.output and "    rewrite output: float32[] 0.001" in result.output


@pytest.mark.parametrize(
    "args, message",
    [
        (["a.py", "b.py"], "define no function in common"),
        (["a.py", "a.py", "--function", "g"], "defines no function 'g'"),
        (["a.py", "missing.py"], "missing.py"),
    ],
)
def test_verify_bad_arguments_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "a.py").write_text("def f(x):\n    return x\n")
    (tmp_path / "b.py").write_text("def h(x):\n    return x\n")
    result = run("verify", *args, cwd=tmp_path)
    assert result.exit_code == 2
    assert message in result.output


def test_verify_pending_rewrites_of_a_tree(tmp_path: Path) -> None:
    """Rewrites computed in memory: the changed helper is verified through its vmapped caller; nothing is
    written; a function with no inputs is reported as such."""
    for case in ("loop_to_fori/jit_of_vmap_body", "print_in_traced/jit_value"):
        shutil.copytree(CORPUS / case, tmp_path / case.replace("/", "_"))
    (tmp_path / "loose.py").write_text("import jax\n\n\n@jax.jit\ndef loose(x):\n    print(x)\n    return x\n")
    before = {p: p.read_text() for p in tmp_path.rglob("*.py")}
    result = run("verify", ".", "--max-examples", "3", cwd=tmp_path)
    assert result.exit_code == 2, result.output  # loose could not be verified: not a clean pass
    out = result.output
    assert "Verified 3 of 4 functions: 0 differ, 1 unverified" in out
    assert "loop_to_fori_jit_of_vmap_body/before.py::population  cpu  verified" in out
    assert "loop_to_fori_jit_of_vmap_body/before.py::logistic_map  verified through population (no inputs of its own)" in out
    assert "print_in_traced_jit_value/before.py::squash  cpu  verified" in out
    assert "loose.py::loose  unverified: no source of inputs: no annotation for x" in out
    assert "Verified 3 of 4 functions: 0 differ, 1 unverified" in out
    assert {p: p.read_text() for p in tmp_path.rglob("*.py")} == before


def test_verify_with_nothing_verifiable_exits_2(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("import jax\n\n\n@jax.jit\ndef f(x):\n    print(x)\n    return x\n")
    result = run("verify", "m.py", "--max-examples", "2", cwd=tmp_path)
    assert result.exit_code == 2, result.output
    assert "Verified 0 of 1 function: 0 differ, 1 unverified" in result.output


# ---- apply --verify ---------------------------------------------------------------------------------------


class _WrongConstant(Codemod):
    """A deliberately wrong rewrite (0.99 -> 0.999), to see `apply --verify` refuse it."""

    code, name, summary, fix_safety = "JF997", "test-wrong-constant", "test only", Safety.UNSAFE
    VALID = (Valid("x = 1\n"),)
    INVALID = (Invalid("x = 0.99\n", "x = 0.999\n"),)

    def visit_Float(self, node: cst.Float) -> None:
        if node.value == "0.99":
            self.report(node, "wrong on purpose", self.fix("change the constant", [(node, node.with_changes(value="0.999"))]))


@pytest.fixture
def wrong_codemod(monkeypatch):
    real = registry.all_codemods()
    monkeypatch.setattr(registry, "all_codemods", lambda: (*real, _WrongConstant))


MIXED = '''import jax
import jax.numpy as jnp


@jax.jit
def noisy(x: jax.Array) -> jax.Array:
    print("x", x)
    return x * 2.0


def decay(x: jax.Array) -> jax.Array:
    return x * 0.99


def helper(x):
    return jnp.sin(x) * 0.99


def uses_helper(x: jax.Array) -> jax.Array:
    return helper(x) + 1.0
'''


def test_apply_verify_keeps_what_verifies_and_reverts_the_rest(tmp_path: Path, wrong_codemod) -> None:
    (tmp_path / "m.py").write_text(MIXED)
    result = run("apply", "--verify", "m.py", "--max-examples", "5", cwd=tmp_path)
    assert result.exit_code == 1, result.output  # a rewrite differed
    assert "fixed m.py (1 fix; verified: noisy)" in result.output
    assert "reverted function m.py::decay  cpu  differs: " in result.output  # on its values or its gradient
    # helper has no inputs of its own: its caller is verified instead, differs, and takes helper's fix with it
    assert "reverted function m.py::helper: its caller uses_helper differs\n    m.py::uses_helper  cpu  differs: " in result.output
    written = (tmp_path / "m.py").read_text()
    assert 'jax.debug.print("x {}", x)' in written, "the verified fix is kept"
    assert written.count("0.99\n") == 2 and "0.999" not in written, "the wrong ones are reverted"


def test_apply_verify_diff_writes_nothing(tmp_path: Path, wrong_codemod) -> None:
    (tmp_path / "m.py").write_text(MIXED)
    result = run("apply", "--verify", "--diff", "m.py", "--max-examples", "3", cwd=tmp_path)
    assert result.exit_code == 1
    assert '+    jax.debug.print("x {}", x)' in result.output and "+    return x * 0.999" not in result.output
    assert (tmp_path / "m.py").read_text() == MIXED


# ---- jaxfix record ----------------------------------------------------------------------------------------

RECORDED_MODULE = '''import jax
import jax.numpy as jnp


@jax.jit
def smooth(x, w):
    for i in range(20):
        x = 0.5 * x + w * jnp.roll(x, 1)
    return x


def helper(params, scale):
    return jax.tree.map(lambda p: p * scale, params)
'''

RECORDED_TESTS = '''import jax.numpy as jnp
from pkg.m import helper, smooth


def make(n):  # no literal shapes at the call sites: only recording can tell what `smooth` gets
    return jnp.linspace(0.0, 1.0, n)


def test_smooth():
    assert smooth(make(7), make(1)[0] + 0.25).shape == (7,)


def test_helper():
    assert helper({"a": make(3), "b": (make(2), 4)}, 2.0)["a"].shape == (3,)
'''


def test_record_then_verify_from_the_recorded_signatures(tmp_path: Path) -> None:
    import json
    import sys

    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "m.py").write_text(RECORDED_MODULE)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_m.py").write_text(RECORDED_TESTS)
    result = run("record", "--", sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:benchmark", "tests", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert "Recorded 2 signatures of 2 functions into .jaxfix/signatures.json." in result.output
    recorded = json.loads((tmp_path / ".jaxfix" / "signatures.json").read_text())
    assert set(recorded) == {"pkg/m.py::smooth", "pkg/m.py::helper"}, "test functions are not recorded"
    (signature,) = recorded["pkg/m.py::smooth"]
    assert [(a["dtype"], a["shape"]) for a in signature["args"]] == [("float32", [7]), ("float32", [])]
    (signature,) = recorded["pkg/m.py::helper"]
    assert signature["args"][0]["items"]["b"]["items"][1] == {"kind": "int", "choices": [0, 1, 4]}
    assert signature["args"][0]["items"]["a"]["bound"] == 2.0, "concrete arrays keep their scale"

    result = run("verify", "pkg", "--max-examples", "4", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert "pkg/m.py::smooth  cpu  verified  4 examples (recorded by jaxfix record: 1 signature)" in result.output


def test_record_passes_the_exit_code_on(tmp_path: Path) -> None:
    import sys

    result = run("record", "--", sys.executable, "-c", "raise SystemExit(3)", cwd=tmp_path)
    assert result.exit_code == 3
    assert "Recorded 0 signatures of 0 functions" in result.output


def test_verify_leaves_out_fixes_that_change_the_numbers_on_purpose(tmp_path: Path) -> None:
    """JF701 splits a reused key: its rewrite draws other numbers by design, so `verify PATH` compares the
    other rewrites only (without this it reported the function as differing)."""
    for case in ("prng_key_reuse/two_draws", "print_in_traced/jit_value"):
        shutil.copytree(CORPUS / case, tmp_path / case.replace("/", "_"))
    result = run("verify", ".", "--max-examples", "3", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert "print_in_traced_jit_value/before.py::squash  cpu  verified" in result.output
    assert "prng_key_reuse" not in result.output
    assert "0 differ" in result.output
