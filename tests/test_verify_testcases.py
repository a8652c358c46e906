"""`apply --verify` on test files: a test method is checked by running its test cases as its framework does
(jaxfix/verify/testcases.py), before and after the rewrite; and each reverted item is named once, by what it is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import invoke_in
from tests.test_verify_cli import wrong_codemod  # noqa: F401 - the fixture: JF997 turns 0.99 into 0.999

# jraph's pattern: the module fails to import on today's JAX (jax.tree_map is gone) until JF901's fix; every test
# method reads the rebound name and has no fix of its own
REMOVED_API_TESTS = """import unittest

import jax
import jax.numpy as jnp

tree_map = jax.tree_map


class TreeTest(unittest.TestCase):

    def setUp(self):
        self.tree = {"a": jnp.zeros(3), "b": jnp.ones(2)}

    def test_adds_one(self):
        out = tree_map(lambda x: x + 1, self.tree)
        self.assertEqual(float(out["a"].sum()), 3.0)

    def negated(self):
        return tree_map(jnp.negative, self.tree)

    def test_keeps_shapes(self):
        self.assertEqual(self.negated()["b"].shape, (2,))
"""


def test_a_test_file_made_importable_by_its_fix_keeps_it(tmp_path: Path) -> None:
    (tmp_path / "tree_test.py").write_text(REMOVED_API_TESTS)
    result = invoke_in(tmp_path, "apply", "--verify", "tree_test.py")
    assert result.exit_code == 0, result.output
    assert "fixed tree_test.py (1 fix; verified: TreeTest.test_adds_one, TreeTest.negated)" in result.output
    assert "tree_map = jax.tree.map" in (tmp_path / "tree_test.py").read_text()


def test_verify_reports_the_test_cases_run(tmp_path: Path) -> None:
    (tmp_path / "tree_test.py").write_text(REMOVED_API_TESTS)
    result = invoke_in(tmp_path, "verify", "tree_test.py")
    assert result.exit_code == 0, result.output
    assert "tree_test.py::TreeTest.test_adds_one  cpu  verified  1 test case passes after the rewrite (its own tests)" in result.output
    assert "tree_test.py::TreeTest.negated  cpu  verified  2 test cases pass after the rewrite" in result.output  # all of its class's
    assert "note: before the rewrite its tests could not run (its module raises AttributeError:" in result.output


PARAMETERIZED_TESTS = """from absl.testing import absltest
from absl.testing import parameterized
import jax
import numpy as np


class ScaleTest(parameterized.TestCase):

    @parameterized.parameters(0.5, 0.99)
    def test_scale(self, rate):
        np.testing.assert_allclose(float(jax.numpy.asarray(2.0) * rate), {0.5: 1.0, 0.99: 1.98}[rate])

    def test_other(self):
        self.assertEqual(1 + 1, 2)


if __name__ == "__main__":
    absltest.main()
"""


def test_a_fix_that_breaks_a_parameterized_test_is_reverted_once(tmp_path: Path, wrong_codemod) -> None:
    (tmp_path / "scale_test.py").write_text(PARAMETERIZED_TESTS)
    result = invoke_in(tmp_path, "apply", "--verify", "--select", "JF997", "scale_test.py")
    assert result.exit_code == 1, result.output
    out = result.output
    line = "reverted test method scale_test.py::ScaleTest.test_scale  cpu  differs: its test test_scale1 passes before the rewrite; after it, it fails: AssertionError"
    assert line in out
    assert out.count("reverted test method") == 1, out
    assert "    test_scale1: passes before the rewrite; after it: fails: AssertionError" in out
    assert "1 test method reverted" in out
    assert (tmp_path / "scale_test.py").read_text() == PARAMETERIZED_TESTS


PYTEST_CLASS = """import jax
import jax.numpy as jnp
import pytest


class TestDecay:

    def setup_method(self, method):
        self.x = jnp.arange(3.0)

    @pytest.mark.parametrize("rate", [0.5, pytest.param(0.25, id="quarter")])
    def test_rate(self, rate):
        for _ in range(3):
            y = jax.jit(lambda v: v * rate)(self.x)
            assert y.shape == (3,)

    def test_fixture(self, tmp_path):
        assert tmp_path
"""


def test_a_pytest_class_is_run_as_pytest_would(tmp_path: Path) -> None:
    (tmp_path / "test_decay.py").write_text(PYTEST_CLASS)
    result = invoke_in(tmp_path, "verify", "test_decay.py")
    assert "test_decay.py::TestDecay.test_rate  cpu  verified  2 test cases pass after the rewrite (its own tests)" in result.output, result.output


def test_a_test_taking_fixtures_says_so(tmp_path: Path) -> None:
    (tmp_path / "test_decay.py").write_text(PYTEST_CLASS.replace("assert tmp_path\n", "for _ in range(2):\n            jax.jit(lambda v: v)(1.0)\n"))
    result = invoke_in(tmp_path, "verify", "test_decay.py", "--function", "TestDecay.test_fixture")
    assert "TestDecay.test_fixture  cpu  unverified: could not run its tests: test_fixture takes pytest fixtures (tmp_path): only pytest can run it" in result.output, result.output


# a function with no inputs of its own whose only change is a safe module-level fix
THROUGH_AN_IMPORT = """import jax

tree_map = jax.tree_map


def bump(tree):
    return tree_map(lambda x: x + 1, tree)
"""


# a module-level constant and the function that reads it, both changed by JF997's wrong (unsafe) fix: the
# function differs, and still differs with its own fix left out
WRONG_TWICE = """import jax

RATE = 0.99


def bump(x: jax.Array) -> jax.Array:
    return x * RATE + 0.99
"""


def test_an_item_left_out_twice_is_printed_once(tmp_path: Path, wrong_codemod) -> None:
    (tmp_path / "m.py").write_text(WRONG_TWICE)
    result = invoke_in(tmp_path, "apply", "--verify", "--select", "JF997", "--max-examples", "5", "m.py")
    out = result.output
    assert out.count("reverted function m.py::bump  cpu  differs") == 1, out
    assert "1 function reverted" in out
    assert "m.py: every rewrite reverted: bump still fails with its own fixes left out" in out
    assert (tmp_path / "m.py").read_text() == WRONG_TWICE


def test_a_notebook_variable_is_named_as_one(tmp_path: Path) -> None:
    cells = ["import jax", 'out = jax.tree_map(lambda v: v + 1, {"a": 1.0})']
    book = {
        "cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": s} for s in cells],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
    }  # fmt: skip
    (tmp_path / "nb.ipynb").write_text(json.dumps(book))
    result = invoke_in(tmp_path, "apply", "--verify", "nb.ipynb")
    assert "kept notebook variable (cell 2) nb.ipynb::out: its fixes are safe ones; not verified" in result.output, result.output
    assert "1 notebook variable kept unverified" in result.output


# jraph's sharded_graphnet_test.py: JF901's one fix, in setUp, also replaces the module's import with one that
# binds `jax`, which a test method reads; that test fails before and after (it wants 3 devices)
IMPORT_REPLACED_TESTS = """import os
import unittest

import jax
from jax.lib import xla_bridge


class ShardedTest(unittest.TestCase):

    def setUp(self):
        os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=3"
        xla_bridge.get_backend.cache_clear()

    def test_devices(self):
        self.assertEqual(jax.device_count(), 3)
"""


@pytest.mark.parametrize(
    "name, source, kept, written",
    [
        ("m.py", THROUGH_AN_IMPORT, "kept function m.py::bump: its fixes are safe ones; not verified: no source of inputs", "tree_map = jax.tree.map"),
        (
            "sharded_test.py",
            IMPORT_REPLACED_TESTS,
            "kept test method sharded_test.py::ShardedTest.test_devices: its fixes are safe ones; not verified: its tests do not pass "
            "after the rewrite (fails: AssertionError: 1 != 3), nor before",
            "import jax.extend.backend",
        ),
    ],
)
def test_a_function_changed_only_by_a_safe_module_level_fix_keeps_it(tmp_path: Path, name, source, kept, written) -> None:
    """jraph's test modules: their test methods read names a safe fix rebinds and have no fix of their own;
    when they cannot be checked, the safe fix stays (it was reverted with the whole file)."""
    (tmp_path / name).write_text(source)
    result = invoke_in(tmp_path, "apply", "--verify", name)
    assert result.exit_code == 0, result.output
    assert kept in result.output
    assert written in (tmp_path / name).read_text()


# ---- the worker's side: testcases.outcomes and worker.check_tests, in this process -------------------------

FRAMEWORKS = """import unittest

import pytest


class Broken(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        raise RuntimeError("no fixture")

    def test_a(self):
        pass


class Mixed(unittest.TestCase):

    def helper(self):
        return 1

    def test_passes(self):
        self.assertEqual(self.helper(), 1)

    @unittest.skip("not today")
    def test_skipped(self):
        pass


class TestGrid:

    @pytest.mark.parametrize("a", [1, 2])
    @pytest.mark.parametrize("b, c", [(3, 3), pytest.param(4, 5, id="off")])
    def test_grid(self, a, b, c):
        assert b == c
"""


def _module(text: str):
    import types

    module = types.ModuleType("jaxfix_testcases_example")
    exec(compile(text, "example_test.py", "exec"), module.__dict__)
    return module


def test_outcomes_as_the_frameworks_give_them() -> None:
    from jaxfix.verify import testcases

    module = _module(FRAMEWORKS)
    assert testcases.outcomes(module, "Broken.test_a") == {"test_a": "fails: RuntimeError: no fixture"}
    assert testcases.outcomes(module, "Mixed.helper") == {"test_passes": "passes", "test_skipped": "skipped"}
    grid = testcases.outcomes(module, "TestGrid.test_grid")
    assert sorted(grid.values()) == ["fails: AssertionError"] * 2 + ["passes"] * 2  # one per row of the product


def test_a_method_no_test_case_comes_from_is_not_run() -> None:
    import jax

    from jaxfix.verify import worker

    module = _module(FRAMEWORKS)
    report = worker.check_tests(module, module, "Mixed.test_gone", jax.devices("cpu")[0])
    assert report.status == "unverified" and report.reason == "could not run its tests: its class has no test case that comes from Mixed.test_gone"
