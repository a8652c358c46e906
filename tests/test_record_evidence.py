"""A recorded run (`jaxfix record`) as evidence for rewriting: what the record says, where the rules use it, and
that its fixes are unsafe ones that say what they rest on."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from jaxfix import corpus
from jaxfix.analysis.recording import VARYING, Recorded, summarize
from jaxfix.codemods.batch_loop_to_vmap import BatchLoopToVmap
from jaxfix.codemods.loop_to_scan import LoopToScan
from jaxfix.diagnostics import Safety
from jaxfix.project_io import read_record
from tests.helpers import invoke_in, project_findings

ROWS_CASE = corpus.ROOT / "loop_to_scan" / "project_recorded_rows"
VMAP_CASE = corpus.ROOT / "batch_loop_to_vmap" / "project_recorded_rows"
TUPLE_CASE = corpus.ROOT / "batch_loop_to_vmap" / "project_recorded_tuple"


def _array(*shape: int) -> dict:
    return {"kind": "array", "dtype": "float32", "shape": list(shape), "numpy": False}


def _copy(case: Path, tmp_path: Path, *, record: bool) -> Path:
    """The case's before/ project, with its recorded run or without it."""
    folder = tmp_path / case.name
    shutil.copytree(case / "before", folder, ignore=None if record else shutil.ignore_patterns(".jaxfix"))
    return folder


# ---- what the record says ----------------------------------------------------------------------------------------


def test_a_parameter_counts_only_where_every_call_passed_one_array() -> None:
    calls = [
        {"args": [_array(4, 3), _array(3), {"kind": "float", "min": -1, "max": 1}], "kwargs": {"scale": _array()}},
        {"args": [_array(8, 3), _array(3, 1), {"kind": "float", "min": -1, "max": 1}], "kwargs": {"scale": _array()}},
    ]
    assert summarize(calls) == Recorded(2, (2, VARYING, None), {"scale": 0})
    tupled = {"args": [{"kind": "tuple", "items": [_array(3), _array(3)]}, _array(3), _array()], "kwargs": {}}
    assert summarize([*calls, tupled]).positional[0] is None, "one call with a tuple: no evidence"
    assert summarize([*calls, tupled]).keywords == {"scale": None}, "a keyword missing from one call: no evidence"


def test_a_record_of_another_version_of_the_function_is_no_evidence() -> None:
    assert summarize([{"args": [_array(3)]}, {"args": [_array(3), _array(3)]}]) is None
    assert summarize([]) is None and summarize(["nonsense"]) is None


def test_a_missing_or_broken_record_is_no_evidence(tmp_path: Path) -> None:
    assert read_record(tmp_path) == {}
    (tmp_path / ".jaxfix").mkdir()
    for broken in ("{not json", "[1, 2]", '{"m.py::f": 3, "no separator": [], "m.py::g": [{"args": "x"}]}'):
        (tmp_path / ".jaxfix" / "signatures.json").write_text(broken)
        assert read_record(tmp_path) == {}
    (tmp_path / ".jaxfix" / "signatures.json").write_text(json.dumps({"pkg/m.py::C.f": [{"args": [_array(2, 2)]}]}))
    assert read_record(tmp_path) == {"pkg/m.py": {"C.f": Recorded(1, (2,), {})}}


# ---- the rules on the evidence -----------------------------------------------------------------------------------


def test_jf102_scans_the_rows_of_an_unannotated_argument_only_with_the_record(tmp_path: Path) -> None:
    without = project_findings(_copy(ROWS_CASE, tmp_path / "a", record=False), LoopToScan)
    assert without == []
    (found,) = project_findings(_copy(ROWS_CASE, tmp_path / "b", record=True), LoopToScan)
    name, diagnostic = found
    assert name == "model.py" and diagnostic.fix.safety is Safety.UNSAFE
    assert (
        "evidence: a recorded run (`jaxfix record`): `xs` was an array of rank 2 in every recorded call "
        "(1 signature) of `encode`; not proven for other callers: check with `jaxfix apply --verify`"
    ) in diagnostic.message


def test_jf301_maps_over_an_unannotated_argument_only_with_the_record(tmp_path: Path) -> None:
    """`x * 2` does not fail on a tuple (it repeats it): without a record nothing shows that `xs` is an array."""
    assert project_findings(_copy(VMAP_CASE, tmp_path / "a", record=False), BatchLoopToVmap) == []
    (found,) = project_findings(_copy(VMAP_CASE, tmp_path / "b", record=True), BatchLoopToVmap)
    assert found[1].fix.safety is Safety.UNSAFE and "`xs` was an array of rank 2" in found[1].message


def test_a_record_that_saw_a_tuple_is_no_evidence(tmp_path: Path) -> None:
    folder = _copy(TUPLE_CASE, tmp_path, record=True)
    record = json.loads((folder / ".jaxfix" / "signatures.json").read_text())
    assert [call["args"][0]["kind"] for call in record["model.py::doubled"]] == ["array", "tuple"]
    assert project_findings(folder, BatchLoopToVmap) == []


def test_an_annotation_that_says_otherwise_wins_over_the_record(tmp_path: Path) -> None:
    folder = _copy(VMAP_CASE, tmp_path, record=True)
    model = folder / "model.py"
    model.write_text(model.read_text().replace("def doubled(xs):", "def doubled(xs: tuple):"))
    assert project_findings(folder, BatchLoopToVmap) == []


# ---- end to end --------------------------------------------------------------------------------------------------

SCRIPT = "import jax.numpy as jnp\nfrom train import run\n\nprint(run(jnp.ones((4, 3))))\n"


def test_record_then_check_uses_the_record_and_the_cache_follows_it(tmp_path: Path) -> None:
    """`jaxfix record -- python script.py`, then `jaxfix check`: the finding appears (the cached result of the
    check before the record is not reused), and goes again when a new record saw a tuple."""
    folder = _copy(ROWS_CASE, tmp_path, record=False)
    (folder / "pyproject.toml").write_text("")
    (folder / "script.py").write_text(SCRIPT)
    before = invoke_in(folder, "check", "--select", "JF102", ".")
    assert before.exit_code == 0 and "0 findings" in before.output, before.output

    recorded = invoke_in(folder, "record", "--", sys.executable, "script.py")
    assert recorded.exit_code == 0, recorded.output
    after = invoke_in(folder, "check", "--select", "JF102", ".")
    assert after.exit_code == 1, after.output
    (line,) = [line for line in after.output.splitlines() if line.startswith("model.py:5:14: JF102 [*unsafe]")]
    assert "evidence: a recorded run" in line
    assert f"\n{line}\n" in (Path(corpus.ROOT).parent / "docs" / "cli.md").read_text(), "docs/cli.md shows this line"

    path = folder / ".jaxfix" / "signatures.json"
    record = json.loads(path.read_text())
    (call,) = record["model.py::encode"]
    record["model.py::encode"].append({**call, "args": [call["args"][0], {"kind": "list", "items": [_array(3)]}, call["args"][2]]})
    path.write_text(json.dumps(record))
    again = invoke_in(folder, "check", "--select", "JF102", ".")
    assert again.exit_code == 0 and "0 findings" in again.output, again.output


def test_apply_verify_keeps_a_fix_made_on_the_record_where_it_verifies(tmp_path: Path) -> None:
    folder = _copy(VMAP_CASE, tmp_path, record=True)
    (folder / "pyproject.toml").write_text("")
    result = invoke_in(folder, "apply", "--verify", "--select", "JF301", "--max-examples", "5", ".")
    assert result.exit_code == 0, result.output
    assert "fixed model.py (1 fix; verified: doubled)" in result.output
    assert (folder / "model.py").read_text() == (VMAP_CASE / "after" / "model.py").read_text()


def test_the_record_of_a_project_around_the_folder_checked_counts(tmp_path: Path) -> None:
    """`jaxfix record` writes at the project root (a setup.py marks it too); checking a folder below it reads it."""
    (tmp_path / ".jaxfix").mkdir()
    record = {"src/m.py::f": [{"args": [_array(2, 2)]}], "other/m.py::g": [{"args": [_array(3)]}]}
    (tmp_path / ".jaxfix" / "signatures.json").write_text(json.dumps(record))
    (tmp_path / "src").mkdir()
    assert read_record(tmp_path / "src") == {"m.py": {"f": Recorded(1, (2,), {})}}
    assert set(read_record(tmp_path)) == {"src/m.py", "other/m.py"}


def test_a_record_of_a_function_whose_parameters_changed_is_no_evidence(tmp_path: Path) -> None:
    folder = _copy(ROWS_CASE, tmp_path, record=True)
    model = folder / "model.py"
    model.write_text(model.read_text().replace("def encode(h, xs, w):", "def encode(h, xs, w, scale=1.0):"))
    assert project_findings(folder, LoopToScan) == []
