"""The real code yardstick's data is well formed, and its benchmark matches findings to cases as documented.
The real sources are not needed: the matching runs on a small fake project."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

from jaxfix import registry

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.fixture(scope="module")
def yardstick():
    spec = importlib.util.spec_from_file_location("jaxfix_benchmarks_yardstick", BENCHMARKS / "yardstick.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def test_data_file_is_well_formed(yardstick):
    projects, cases = yardstick.load()
    codes = {codemod.code for codemod in registry.all_codemods()}
    assert {case.code for case in cases} <= codes
    assert all(case.expect in ("fire", "quiet") for case in cases)
    assert all(case.why.strip() and case.tags for case in cases)
    assert all(not Path(case.path).is_absolute() and ".." not in Path(case.path).parts for case in cases)
    keys = [(case.project, case.path, case.line, case.code) for case in cases]
    assert len(keys) == len(set(keys)), "a case is listed twice"
    fire = [case for case in cases if case.expect == "fire"]
    quiet = [case for case in cases if case.expect == "quiet"]
    assert len(fire) >= 45 and len(quiet) >= 25
    assert len({case.project for case in fire}) >= 8, "positives from most projects"
    assert set(projects) >= {case.project for case in cases}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[projects]\np = "1"\n[[case]]\nproject = "p"\n', "lacks"),
        ('[projects]\np = "1"\n[[case]]\nproject = "p"\npath = "a.py"\nline = 1\nsnippet = "x"\ncode = "JF101"\n'
         'expect = "maybe"\nneeds = "module"\nwhy = "w"\n', "expects"),
        ('[projects]\n[[case]]\nproject = "p"\npath = "a.py"\nline = 1\nsnippet = "x"\ncode = "JF101"\n'
         'expect = "fire"\nneeds = "module"\nwhy = "w"\n', "not in [projects]"),
    ],
)
def test_malformed_data_is_refused(yardstick, tmp_path, text, message):
    data = tmp_path / "bad.toml"
    data.write_text(text)
    with pytest.raises(ValueError, match=re.escape(message)):
        yardstick.load(data)
    assert yardstick.main([str(tmp_path), "--data", str(data)]) == 2


MODULE = """\
import jax


def leaves(tree):
    return jax.tree_leaves(tree)


def fine(tree):
    return jax.tree.leaves(tree)
"""

DATA = """\
[projects]
fakeproj = "1.0"
absent = "2.0"

[[case]]
project = "fakeproj"
path = "pkg/mod.py"
line = {fire_line}
snippet = "return jax.tree_leaves(tree)"
code = "JF901"
expect = "fire"
needs = "module"
why = "removed API"

[[case]]
project = "fakeproj"
path = "pkg/mod.py"
line = 9
snippet = "return jax.tree.leaves(tree)"
code = "JF901"
expect = "quiet"
needs = "module"
why = "the current API"

[[case]]
project = "fakeproj"
path = "pkg/mod.py"
line = 2
snippet = "text that is nowhere"
code = "JF901"
expect = "fire"
needs = "module"
why = "a line that cannot be found"

[[case]]
project = "absent"
path = "a.py"
line = 1
snippet = "x"
code = "JF901"
expect = "fire"
needs = "module"
why = "a project that is not there"
"""


def fake_project(tmp_path: Path, fire_line: int) -> tuple[Path, Path]:
    root = tmp_path / "src"
    (root / "fakeproj-1.0" / "pkg").mkdir(parents=True)
    (root / "fakeproj-1.0" / "pkg" / "mod.py").write_text(MODULE)
    data = tmp_path / "cases.toml"
    data.write_text(DATA.format(fire_line=fire_line))
    return root, data


@pytest.mark.parametrize("fire_line", [5, 20])  # 20: the line moved, found again by its snippet
def test_matching_on_a_fake_project(yardstick, tmp_path, fire_line):
    root, data = fake_project(tmp_path, fire_line)
    projects, cases = yardstick.load(data)
    result = yardstick.run(root, projects, cases)
    assert result.projects == ["fakeproj-1.0"]
    assert any("absent-2.0 not found" in note and "skipped" in note for note in result.notes)
    outcome = {(case.expect, case.line): hit for case, hit in result.cases}
    assert outcome == {("fire", fire_line): True, ("quiet", 9): False}
    assert [case.snippet for case in result.lost] == ["text that is nowhere"]
    assert sum(result.unmatched.values()) == 0
    table = yardstick.tables(result)
    assert "| JF901 | 1 | 1 | 100% | 1 | 0 |" in table
    assert "left out because their line was not found: 1" in table


def test_a_finding_matches_within_two_lines_and_its_own_span(yardstick):
    case = yardstick.Case("p", "a.py", 10, "x", "JF501", "fire", "donation", "w")
    near = yardstick.Finding("a.py", "JF501", 12, 12)
    far = yardstick.Finding("a.py", "JF501", 13, 13)
    spanning = yardstick.Finding("a.py", "JF501", 3, 9)
    assert yardstick.matches(near, case, 10)
    assert not yardstick.matches(far, case, 10)
    assert yardstick.matches(spanning, case, 10)
    assert not yardstick.matches(yardstick.Finding("a.py", "JF502", 10, 10), case, 10)
    assert not yardstick.matches(yardstick.Finding("b.py", "JF501", 10, 10), case, 10)


def test_findings_outside_the_yardstick_are_counted(yardstick):
    result = yardstick.Result()
    case = yardstick.Case("p", "a.py", 10, "x", "JF701", "quiet", "guarded", "w")
    findings = [yardstick.Finding("a.py", "JF701", 10, 10), yardstick.Finding("a.py", "JF901", 30, 30)]
    yardstick.score("p", [(case, 10)], findings, result)
    assert result.cases == [(case, True)]  # a quiet case matched: a false alarm
    assert result.unmatched == {"p": 1} and result.unmatched_codes == {"JF901": 1}
    assert "| JF701 | 0 | 0 | - | 1 | 1 |" in yardstick.tables(result)


def test_docs_hold_the_markers(yardstick, tmp_path):
    docs = tmp_path / "benchmarks.md"
    start, end = yardstick.MARKERS
    docs.write_text(f"# B\n\n{start}\nold\n{end}\n\nafter\n")
    assert yardstick.write_docs("| new |\n", docs)
    assert docs.read_text() == f"# B\n\n{start}\n| new |\n{end}\n\nafter\n"
    assert not yardstick.write_docs("| new |\n", docs)
    assert start in yardstick.DOCS.read_text(encoding="utf-8") and end in yardstick.DOCS.read_text(encoding="utf-8")
