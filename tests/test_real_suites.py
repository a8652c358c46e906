"""The real-suite harness's own logic (benchmarks/real_suites.py), with no network, no venv and no real project:
the outcomes its pytest plugin records, the red/green comparison, the attribution of a red test to a rewritten
file from its traceback, the cache keys and the table."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
_spec = importlib.util.spec_from_file_location("jaxfix_real_suites", BENCHMARKS / "real_suites.py")
real_suites = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = real_suites  # dataclasses look their module up while the class is built
_spec.loader.exec_module(real_suites)
Outcome, Fix = real_suites.Outcome, real_suites.Fix

SUITE = {
    "lib.py": "def double(x):\n    return 2 * x\n",
    "lib_test.py": """\
import pytest
import lib


@pytest.fixture
def broken():
    raise RuntimeError("no fixture")


def test_passes():
    assert lib.double(2) == 4


def test_fails():
    assert lib.double(2) == 5


def test_errors(broken):
    pass


def test_skips():
    pytest.skip("not here")


@pytest.mark.xfail(reason="known")
def test_xfails():
    assert False
""",
    "broken_test.py": "import lib_that_does_not_exist\n\n\ndef test_never():\n    pass\n",
}


def test_plugin_records_one_outcome_per_test_and_collection_errors(tmp_path):
    for name, text in SUITE.items():
        (tmp_path / name).write_text(text)
    outcomes_file = tmp_path / "outcomes.jsonl"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(real_suites.PLUGIN.parent)]),
           "REAL_SUITES_OUTCOMES": str(outcomes_file)}
    subprocess.run([sys.executable, "-m", "pytest", "-p", real_suites.PLUGIN.stem, *real_suites.PYTEST_OPTIONS,
                    "lib_test.py", "broken_test.py"], cwd=tmp_path, env=env, capture_output=True, check=False)
    outcomes = real_suites.fold_outcomes(outcomes_file.read_text().splitlines())
    assert {nodeid: o.outcome for nodeid, o in outcomes.items()} == {
        "lib_test.py::test_passes": "passed", "lib_test.py::test_fails": "failed",
        "lib_test.py::test_errors": "error", "lib_test.py::test_skips": "skipped",
        "lib_test.py::test_xfails": "xfailed", "broken_test.py": "error"}
    assert "lib_that_does_not_exist" in outcomes["broken_test.py"].text
    assert "lib_test.py:15" in outcomes["lib_test.py::test_fails"].text
    assert real_suites.counts(outcomes) == {"passed": 1, "failed": 1, "error": 2, "skipped": 2}


def test_red_is_pass_to_fail_error_or_gone_and_green_is_new_passes():
    before = {"a_test.py::test_kept": Outcome("passed"), "a_test.py::test_breaks": Outcome("passed"),
              "a_test.py::test_was_failing": Outcome("failed"), "b_test.py::T::test_gone": Outcome("passed"),
              "c_test.py": Outcome("error", text="ImportError: jax.tree_map")}
    after = {"a_test.py::test_kept": Outcome("passed"), "a_test.py::test_breaks": Outcome("error", text="boom"),
             "a_test.py::test_was_failing": Outcome("passed"),
             "b_test.py": Outcome("error", text="ImportError: cannot import name 'pjit'"),
             "c_test.py::test_imports_again": Outcome("passed")}
    red, green = real_suites.compare(before, after)
    assert {n: o.outcome for n, o in red.items()} == {"a_test.py::test_breaks": "error",
                                                      "b_test.py::T::test_gone": "missing"}
    assert "cannot import name 'pjit'" in red["b_test.py::T::test_gone"].text
    assert green == ["a_test.py::test_was_failing", "c_test.py::test_imports_again"]


TRACEBACK = """\
self = <replay_buffers_test.ReplayBufferTest testMethod=test_insert>

    def test_insert(self):
>       buffer.insert(state, samples)

brax/training/replay_buffers_test.py:88:
_ _ _ _ _ _ _ _ _ _
brax/training/replay_buffers.py:421: in insert
    return self._insert(buffer_state, samples)
{root}/.venv/lib/python3.11/site-packages/jax/_src/pjit.py:150: in cache_miss
    raise ValueError("PartitionSpec needs a mesh")
E   ValueError: PartitionSpec needs a mesh
  File "{root}/brax/training/acme/running_statistics.py", line 12, in update
"""


def test_traceback_files_are_relative_to_the_copy_and_in_order(tmp_path):
    text = TRACEBACK.format(root=tmp_path)
    assert real_suites.traceback_files(text, tmp_path) == [
        ("brax/training/replay_buffers_test.py", 88), ("brax/training/replay_buffers.py", 421),
        (".venv/lib/python3.11/site-packages/jax/_src/pjit.py", 150),
        ("brax/training/acme/running_statistics.py", 12)]
    assert real_suites.traceback_files(TRACEBACK.format(root="/elsewhere"), tmp_path)[-1] == (
        "brax/training/replay_buffers.py", 421)


def test_a_red_test_is_put_down_to_the_rewritten_files_its_traceback_passes_through(tmp_path):
    pjit = [Fix("JF901", 412, None, False, "pjit"), Fix("JF901", 422, None, False, "pjit")]
    fixes = {"brax/training/replay_buffers.py": pjit, "brax/training/pmap.py": [Fix("JF901", 27, None, False, "")],
             "brax/training/acme/running_statistics.py": [Fix("JF701", 90, None, True, "")]}
    outcome = Outcome("failed", text=TRACEBACK.format(root=tmp_path))
    nodeid = "brax/training/replay_buffers_test.py::ReplayBufferTest::test_insert"
    assert real_suites.suspects(outcome, nodeid, tmp_path, fixes) == [
        "brax/training/replay_buffers.py", "brax/training/acme/running_statistics.py"]
    assert real_suites.suspects(outcome, nodeid, tmp_path, {"brax/training/replay_buffers_test.py": pjit,
                                                            **fixes})[0] == "brax/training/replay_buffers_test.py"
    assert real_suites.fixes_near(pjit, [421]) == [pjit[1]]
    assert real_suites.fixes_near(pjit, [300]) == pjit  # none near: every fix of the file


def test_fixes_by_file_keeps_applied_fixes_only(tmp_path):
    findings = [
        {"code": "JF901", "filename": str(tmp_path / "pkg" / "a.py"), "location": {"row": 3, "column": 1},
         "message": "m", "fix": {"applicability": "safe", "edits": []}},
        {"code": "JF701", "filename": str(tmp_path / "nb.ipynb"), "location": {"row": 2, "column": 1}, "cell": 4,
         "message": "m", "fix": {"applicability": "unsafe", "edits": []}},
        {"code": "JF902", "filename": str(tmp_path / "pkg" / "a.py"), "location": {"row": 5, "column": 1},
         "message": "m", "fix": {"applicability": "display-only", "edits": []}},
        {"code": "JF703", "filename": str(tmp_path / "pkg" / "a.py"), "location": {"row": 9, "column": 1},
         "message": "m", "fix": None}]
    fixes = real_suites.fixes_by_file(findings, tmp_path)
    assert {path: [f.label() for f in file_fixes] for path, file_fixes in fixes.items()} == {
        "pkg/a.py": ["JF901 line 3"], "nb.ipynb": ["JF701 cell 4:2 (unsafe)"]}


def test_cache_keys_follow_the_spec_the_sources_and_jax(tmp_path):
    projects = real_suites.load_projects()
    project = projects["optax"]
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "a.py").write_text("x = 1\n")
    sources = real_suites.tree_digest(tmp_path)
    (tmp_path / "pkg" / "__pycache__").mkdir()
    (tmp_path / "pkg" / "__pycache__" / "a.pyc").write_bytes(b"\0")
    assert real_suites.tree_digest(tmp_path) == sources  # caches are no part of the sources
    key = real_suites.before_key(project, sources)
    assert real_suites.before_key(project, sources) == key
    (tmp_path / "pkg" / "a.py").write_text("x = 2\n")
    assert real_suites.before_key(project, real_suites.tree_digest(tmp_path)) != key
    narrower = real_suites.Project(**{**project.spec(), "tests": project.tests[:1]})
    assert real_suites.before_key(narrower, sources) != key
    assert real_suites.venv_key(project, "0.10.2") != real_suites.venv_key(project, "0.10.3")
    assert real_suites.venv_key(narrower, "0.10.2") == real_suites.venv_key(project, "0.10.2")
    assert "jax==0.10.2" in real_suites.venv_requirements(project, "0.10.2")


def test_every_project_names_its_tests_and_its_subset():
    projects = real_suites.load_projects()
    assert {"jraph", "gymnax", "optax", "equinox", "flax", "jumanji", "brax", "numpyro"} <= set(projects)
    for project in projects.values():
        assert project.tests or dict(project.smoke).get("package"), project.name
        assert project.timeout > 0
        assert not any(r.split("=")[0].strip() in ("jax", "jaxlib") for r in project.install), project.name


def _result(red: dict[str, Outcome], blame, how) -> object:
    project = real_suites.load_projects()["brax"]
    before = {"t.py::test_a": Outcome("passed", 1.0), "t.py::test_b": Outcome("passed", 1.0)}
    after = {"t.py::test_a": Outcome("passed", 1.0), "t.py::test_b": Outcome("failed", 1.0)}
    fixes = {"brax/training/replay_buffers.py": [Fix("JF901", 412, None, False, "")]}
    return real_suites.Result(project, before, after, 30.4, 12.0, fixes, list(fixes), red, [], blame, how)


def test_table_names_each_red_test_with_its_file_and_rules():
    fix = Fix("JF901", 412, None, False, "")
    result = _result({"t.py::test_b": Outcome("failed")},
                     {"t.py::test_b": [("brax/training/replay_buffers.py", [fix])]}, {"t.py::test_b": "bisection"})
    table = real_suites.markdown([result], "0.10.2")
    row = next(line for line in table.splitlines() if line.startswith("| brax"))
    assert row.split(" | ")[2:7] == ["2 / 0 / 0", "1 / 1 / 0", "1", "0", "30 s → 12 s"]
    assert "Tests that turned red: 1." in table
    assert ("- brax `t.py::test_b`: failed after; `brax/training/replay_buffers.py` (JF901 line 412) [bisection]"
            in table)


def test_a_saved_result_builds_the_same_table(tmp_path):
    fix = Fix("JF901", 412, None, False, "")
    result = _result({"t.py::test_b": Outcome("failed", 1.0, "boom")},
                     {"t.py::test_b": [("brax/training/replay_buffers.py", [fix])]}, {"t.py::test_b": "traceback"})
    real_suites.save_result(result, tmp_path / "brax.json")
    loaded = real_suites.load_result(tmp_path / "brax.json")
    assert loaded == result
    assert real_suites.markdown([loaded], "0.10.2") == real_suites.markdown([result], "0.10.2")
