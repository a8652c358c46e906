"""benchmarks/real_code.py's own checks can fail: the tests it picks are those of what apply changed, its screen
comparison reports a finding a screen hid, and a run over a small library prints its table and passes."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

from jaxfix import registry
from tests.test_cli import CLEAN, FINDING

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("jaxfix_real_code", ROOT / "benchmarks" / "real_code.py")
real_code = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(real_code)


def _library(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_the_tests_of_what_apply_changed(tmp_path) -> None:
    files = {"pkg/a.py": CLEAN, "pkg/a_test.py": CLEAN, "pkg/b.py": CLEAN, "pkg/b_test.py": CLEAN,
             "pkg/c_test.py": CLEAN, "pkg/d_test.py": CLEAN}
    original = _library(tmp_path / "original", files)
    rewritten = _library(tmp_path / "rewritten", {**files, "pkg/a.py": FINDING, "pkg/c_test.py": FINDING})
    assert real_code.test_files(original, rewritten, everything=False) == [Path("pkg/a_test.py"), Path("pkg/c_test.py")]
    assert len(real_code.test_files(original, rewritten, everything=True)) == 4


def test_the_screen_comparison_reports_a_hidden_finding(tmp_path, monkeypatch) -> None:
    path = tmp_path / "m.py"
    path.write_text(FINDING)
    assert real_code.screen_check(path)[1:3] == (1, 1) and real_code.screen_check(path)[-1] == []
    jf601 = registry.by_code("JF601")
    monkeypatch.setattr(jf601, "may_match", classmethod(lambda cls, text: False))  # a screen that hides
    found = real_code.screen_check(path)[-1]
    assert found and "JF601" in found[0] and "hidden" in found[0]


def test_a_run_over_a_small_library(tmp_path) -> None:
    _library(tmp_path / "root" / "lib", {"lib/__init__.py": "", "lib/bad.py": FINDING, "lib/good.py": CLEAN})
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "real_code.py"), str(tmp_path / "root"), "--screens", "2",
         "--jobs", "1", "--work", str(tmp_path / "work")],
        capture_output=True, text=True, cwd=ROOT, timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    row = next(line for line in done.stdout.splitlines() if line.startswith("| lib |"))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[1:7] == ["3", str(len((FINDING + CLEAN).splitlines())), "1", "1", "1", "0"], row
    assert "0 of" in cells[16] and "No problem" in done.stdout
    assert (tmp_path / "work" / "rewritten" / "lib" / "lib" / "bad.py").read_text() != FINDING
