"""The command line as a user meets it: output, exit codes, writing files, and bad input."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import libcst as cst
import pytest

from jaxfix import registry
from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.diagnostics import Safety
from tests.helpers import invoke_in

FINDING = "import jax\n\n\n@jax.jit\ndef f(x):\n    print(x)\n    return x\n"
FIXED = 'import jax\n\n\n@jax.jit\ndef f(x):\n    jax.debug.print("{}", x)\n    return x\n'
CLEAN = "import jax\n\n\ndef f(x):\n    return x\n"


def run(*args: str, cwd: Path):
    return invoke_in(cwd, *args)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "bad.py").write_text(FINDING)
    (tmp_path / "good.py").write_text(CLEAN)
    return tmp_path


def test_check_reports_findings_and_exits_1(tree: Path) -> None:
    result = run("check", ".", cwd=tree)
    assert result.exit_code == 1
    assert "bad.py:6:5: JF601 [*] print() of a traced value" in result.output
    assert "Checked 2 files: 1 finding, 1 fixable." in result.output


def test_check_clean_exits_0(tree: Path) -> None:
    assert run("check", "good.py", cwd=tree).exit_code == 0


def test_check_writes_nothing(tree: Path) -> None:
    run("check", ".", cwd=tree)
    assert (tree / "bad.py").read_text() == FINDING


def test_apply_rewrites_in_place_and_keeps_mode(tree: Path) -> None:
    os.chmod(tree / "bad.py", 0o751)
    result = run("apply", ".", cwd=tree)
    assert result.exit_code == 0, result.output
    assert (tree / "bad.py").read_text() == FIXED
    assert stat.S_IMODE((tree / "bad.py").stat().st_mode) == 0o751
    assert "fixed bad.py (1 fix)" in result.output
    assert not list(tree.glob(".*jaxfix-tmp")), "temporary file left behind"


def test_apply_leaves_unchanged_files_alone(tree: Path) -> None:
    before = (tree / "good.py").stat().st_mtime_ns
    run("apply", ".", cwd=tree)
    assert (tree / "good.py").stat().st_mtime_ns == before


def test_apply_diff_prints_and_writes_nothing(tree: Path) -> None:
    result = run("apply", "--diff", ".", cwd=tree)
    assert result.exit_code == 1
    assert "-    print(x)\n" in result.output
    assert '+    jax.debug.print("{}", x)\n' in result.output
    assert (tree / "bad.py").read_text() == FINDING


def test_apply_keeps_bom_and_crlf(tmp_path: Path) -> None:
    path = tmp_path / "win.py"
    path.write_bytes(b"\xef\xbb\xbf" + FINDING.replace("\n", "\r\n").encode())
    run("apply", ".", cwd=tmp_path)
    assert path.read_bytes() == b"\xef\xbb\xbf" + FIXED.replace("\n", "\r\n").encode()


def test_apply_keeps_a_declared_encoding(tmp_path: Path) -> None:
    path = tmp_path / "latin.py"
    source = "# -*- coding: latin-1 -*-\n" + FINDING.replace("return x", "return x  # café")
    path.write_bytes(source.encode("latin-1"))
    run("apply", ".", cwd=tmp_path)
    assert path.read_bytes().decode("latin-1") == "# -*- coding: latin-1 -*-\n" + FIXED.replace("return x", "return x  # café")


@pytest.mark.parametrize(
    "name,content,reason",
    [
        ("syntax.py", b"import jax\ndef f(:\n", "syntax error, line 2"),
        ("binary.py", b"import jax\nx = '\xff\xfe'\n", "cannot decode as utf-8"),
        ("cookie.py", b"# coding: no-such-codec\nimport jax\n", "invalid encoding declaration"),
        ("nul.py", b"import jax\x00\n", "syntax error"),
    ],
)
def test_bad_files_are_named_left_alone_and_exit_2(tmp_path: Path, name: str, content: bytes, reason: str) -> None:
    (tmp_path / name).write_bytes(content)
    (tmp_path / "bad.py").write_text(FINDING)
    for command in (["check", "."], ["apply", "."]):
        result = run(*command, cwd=tmp_path)
        assert result.exit_code == 2
        assert f"{name}: error: {reason}" in result.output
        assert "Traceback" not in result.output
        assert (tmp_path / name).read_bytes() == content
    assert (tmp_path / "bad.py").read_text() == FIXED, "the other files are still fixed"


def test_unreadable_and_missing_paths(tmp_path: Path) -> None:
    (tmp_path / "dangling.py").symlink_to(tmp_path / "nowhere.py")
    result = run("check", "dangling.py", "missing.py", cwd=tmp_path)
    assert result.exit_code == 2
    assert "missing.py: error: no such file or folder" in result.output
    assert "Traceback" not in result.output


def test_select_and_ignore(tree: Path) -> None:
    assert run("check", "--select", "JF601", "--ignore", "JF6", ".", cwd=tree).exit_code == 0
    assert run("check", "--ignore", "print-in-traced", ".", cwd=tree).exit_code == 0
    assert run("check", "--select", "JF6", ".", cwd=tree).exit_code == 1
    result = run("check", "--select", "JF777", ".", cwd=tree)
    assert result.exit_code == 2 and "'JF777' matches no codemod" in result.output


def test_config_in_pyproject(tree: Path) -> None:
    (tree / "pyproject.toml").write_text('[tool.jaxfix]\nignore = ["JF601"]\n')
    assert run("check", ".", cwd=tree).exit_code == 0
    (tree / "pyproject.toml").write_text('[tool.jaxfix]\nbogus = 1\n')
    result = run("check", ".", cwd=tree)
    assert result.exit_code == 2 and "unknown [tool.jaxfix] key(s): bogus" in result.output


def test_suppression_comments(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(FINDING.replace("print(x)", "print(x)  # noqa: JF601"))
    (tmp_path / "b.py").write_text(FINDING.replace("print(x)", "print(x)  # jaxfix: ignore[print-in-traced]"))
    (tmp_path / "c.py").write_text(FINDING.replace("print(x)", "print(x)  # noqa: JF101"))
    result = run("check", ".", cwd=tmp_path)
    assert "a.py" not in result.output and "b.py" not in result.output
    assert "c.py:6:5: JF601" in result.output


def test_discovery_skips_ignored_and_environment_folders(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("generated/\n")
    for folder in ("generated", ".venv", "env", "build", "pkg"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "m.py").write_text(FINDING)
    (tmp_path / "env" / "pyvenv.cfg").write_text("")
    result = run("check", ".", "--exclude", "pkg/", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert "Checked 0 files" in result.output
    assert run("check", "generated/m.py", cwd=tmp_path).exit_code == 1, "a file named on the command line is checked"


def test_rules_and_rule_docs(tree: Path) -> None:
    listing = run("rules", cwd=tree)
    for codemod in registry.all_codemods():
        assert codemod.code in listing.output and codemod.name in listing.output
    docs = run("rule", "JF601", cwd=tree)
    assert docs.exit_code == 0 and "## Fix safety" in docs.output
    assert run("rule", "nope", cwd=tree).exit_code == 2


def test_parallel_run_matches_serial(tmp_path: Path) -> None:
    for index in range(12):
        (tmp_path / f"m{index:02}.py").write_text(FINDING if index % 2 else CLEAN)
    serial = run("check", "-j", "1", ".", cwd=tmp_path)
    parallel = run("check", "-j", "2", ".", cwd=tmp_path)
    assert serial.output == parallel.output
    assert serial.output.count("JF601") == 6


def test_command_line_workers_match_serial(tmp_path: Path) -> None:
    """`python -m jaxfix` is single-threaded and has not imported JAX, so its workers are forked (the in-process run
    above, beside JAX's threads, uses forkserver)."""
    for index in range(12):
        (tmp_path / f"m{index:02}.py").write_text(FINDING if index % 2 else CLEAN)

    def check(jobs: str) -> subprocess.CompletedProcess:
        command = [sys.executable, "-m", "jaxfix", "check", "--no-cache", "-j", jobs, "."]
        return subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)

    serial, parallel = check("1"), check("2")
    assert parallel.returncode == serial.returncode == 1
    assert parallel.stdout == serial.stdout and serial.stdout.count("JF601") == 6
    assert parallel.stderr == serial.stderr


def test_module_entry_point(tree: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "jaxfix", "check", "bad.py"], cwd=tree, capture_output=True, text=True
    )
    assert completed.returncode == 1
    assert "bad.py:6:5: JF601" in completed.stdout


# ---- a codemod that misbehaves is contained -----------------------------------------------------------------


class _Breaks(Codemod):
    """Rewrites every `return` into a syntax error, or crashes, to test the engine's guards."""

    code, name, summary, fix_safety = "JF998", "test-breaks", "test only", Safety.SAFE
    VALID = (Valid("x = 1\n"),)
    INVALID = (Invalid("def f():\n    return 1\n"),)
    crash = False

    def visit_Return(self, node: cst.Return) -> None:
        if self.crash:
            raise ZeroDivisionError("boom")
        not_python = cst.Return(cst.Name("await"))  # renders `return await`: a syntax error
        self.report(node, "breaks", self.fix("break it", [(node, not_python)]))


@pytest.fixture
def breaking(monkeypatch):
    real = registry.all_codemods()
    monkeypatch.setattr(registry, "all_codemods", lambda: (*real, _Breaks))
    yield _Breaks
    _Breaks.crash = False


def test_a_fix_that_does_not_compile_is_not_written(tmp_path: Path, breaking) -> None:
    (tmp_path / "m.py").write_text(FINDING)
    result = run("apply", ".", cwd=tmp_path)
    assert result.exit_code == 2
    assert "internal error: JF998 produced code that does not compile" in result.output
    assert (tmp_path / "m.py").read_text() == FIXED, "the other codemods' fixes still apply"


def test_a_crashing_codemod_is_reported_and_the_others_run(tmp_path: Path, breaking) -> None:
    breaking.crash = True
    (tmp_path / "m.py").write_text(FINDING)
    result = run("check", ".", cwd=tmp_path)
    assert result.exit_code == 2
    assert "internal error: JF998 crashed and was skipped for this file: ZeroDivisionError: boom" in result.output
    assert "m.py:6:5: JF601" in result.output


def test_pyproject_excludes_relative_to_its_folder_wherever_jaxfix_runs(tmp_path: Path) -> None:
    """`exclude = ["pkg/gen.py"]` in the project's pyproject.toml skips that file from the root and from pkg/
    alike; `--exclude` matches relative to where jaxfix runs."""
    (tmp_path / "pyproject.toml").write_text('[tool.jaxfix]\nexclude = ["pkg/gen.py"]\n')
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "gen.py").write_text(FINDING)
    (tmp_path / "pkg" / "mod.py").write_text(CLEAN)
    for folder, target in ((tmp_path, "pkg"), (tmp_path / "pkg", ".")):
        result = run("check", target, "--no-cache", cwd=folder)
        assert result.exit_code == 0 and "Checked 1 file" in result.output, result.output
    result = run("check", ".", "--exclude", "mod.py", "--no-cache", cwd=tmp_path / "pkg")
    assert "Checked 0 files" in result.output


def test_a_file_the_compiler_rejects(tmp_path: Path) -> None:
    """It parses, but Python's compiler rejects it: `check` says so where it has a finding there (and only then:
    it compiles just the files it reports on), `apply` never rewrites it."""
    with_finding = FINDING + "\nreturn 1\n"
    (tmp_path / "found.py").write_text(with_finding)
    (tmp_path / "quiet.py").write_text("x = 1\nreturn x\n")
    result = run("check", ".", cwd=tmp_path)
    assert result.exit_code == 2 and "found.py: error: syntax error, line" in result.output
    assert "'return' outside function" in result.output and "quiet.py" not in result.output
    assert run("check", "quiet.py", cwd=tmp_path).exit_code == 0
    result = run("apply", "found.py", cwd=tmp_path)
    assert result.exit_code == 2 and (tmp_path / "found.py").read_text() == with_finding
    assert "Traceback" not in result.output
