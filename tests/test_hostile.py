"""Hostile input that tests/test_cli.py does not already cover: each gets a one-line message naming the file and a
non-zero exit (or a clean run where the input is valid Python), nothing is partly written, what is rewritten keeps
its bytes' form, and no temporary file is left behind."""

from __future__ import annotations

import os
import pathlib
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_cli import CLEAN, FINDING, FIXED, run


def _no_leftovers(root: Path) -> None:
    left = [p for p in root.rglob("*") if "jaxfix-tmp" in p.name or (p.name.endswith(".tmp") and p.name.startswith("."))]
    assert not left, f"temporary files left behind: {left}"


def _problem_lines(output: str, name: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith(f"{name}: error: ")]


def _one_line_error(result, name: str, reason: str) -> None:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "internal error" not in result.output, result.output
    lines = _problem_lines(result.output, name)
    assert len(lines) == 1 and reason in lines[0], result.output


@pytest.fixture
def with_finding(tmp_path: Path) -> Path:
    """A folder where one good file has a finding: a bad neighbour must not stop its fix."""
    (tmp_path / "bad.py").write_text(FINDING)
    return tmp_path


def test_python_2_code_is_a_syntax_error_and_left_alone(with_finding: Path) -> None:
    content = b'import jax\nprint "hello"\nexec "x = 1"\n'
    (with_finding / "py2.py").write_bytes(content)
    for command in (["check", "."], ["apply", "."]):
        _one_line_error(run(*command, cwd=with_finding), "py2.py", "syntax error, line 2: Missing parentheses")
    assert (with_finding / "py2.py").read_bytes() == content
    assert (with_finding / "bad.py").read_text() == FIXED
    _no_leftovers(with_finding)


def test_latin_1_with_a_cookie_and_crlf_bytes_survive_apply(tmp_path: Path) -> None:
    """Latin-1 with a cookie, CRLF line ends and a byte that is not UTF-8: rewritten and still latin-1."""
    path = tmp_path / "latin.py"
    text = "# -*- coding: latin-1 -*-\n" + FINDING.replace("return x", "return x  # ½ µ é")
    path.write_bytes(text.replace("\n", "\r\n").encode("latin-1"))
    result = run("apply", ".", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    expected = "# -*- coding: latin-1 -*-\n" + FIXED.replace("return x", "return x  # ½ µ é")
    assert path.read_bytes() == expected.replace("\n", "\r\n").encode("latin-1")
    _no_leftovers(tmp_path)


def test_bom_alone_and_a_bom_with_a_clean_file(tmp_path: Path) -> None:
    (tmp_path / "bom.py").write_bytes(b"\xef\xbb\xbf" + FINDING.encode())
    (tmp_path / "bom_clean.py").write_bytes(b"\xef\xbb\xbf" + CLEAN.encode())
    before = (tmp_path / "bom_clean.py").stat().st_mtime_ns
    check = run("check", ".", cwd=tmp_path)
    assert "bom.py:6:5: JF601" in check.output, "positions count from after the BOM"
    run("apply", ".", cwd=tmp_path)
    assert (tmp_path / "bom.py").read_bytes() == b"\xef\xbb\xbf" + FIXED.encode()
    assert (tmp_path / "bom_clean.py").stat().st_mtime_ns == before


def test_tab_indentation_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "tabs.py"
    path.write_text(FINDING.replace("    ", "\t"))
    assert run("apply", ".", cwd=tmp_path).exit_code == 0
    assert path.read_text() == FIXED.replace("    ", "\t")
    compile(path.read_text(), str(path), "exec")


def test_an_empty_file_and_a_blank_file_are_clean(tmp_path: Path) -> None:
    (tmp_path / "empty.py").write_bytes(b"")
    (tmp_path / "blank.py").write_bytes(b"\n\n   \n# jax\n")
    for command in (["check", "."], ["apply", "."]):
        result = run(*command, cwd=tmp_path)
        assert result.exit_code == 0, result.output
    assert (tmp_path / "empty.py").read_bytes() == b""


@pytest.mark.parametrize(
    "name,source",
    [
        ("sum.py", "import jax\nx = " + "+".join(["1"] * 100_000) + "\n"),  # RecursionError in `ast`
        ("unary.py", "import jax\nx = " + "-" * 20_000 + "1\n"),  # MemoryError from CPython's parser
    ],
)
def test_deeply_nested_expressions_are_contained(with_finding: Path, name: str, source: str) -> None:
    (with_finding / name).write_text(source)
    for command in (["check", "."], ["apply", "."]):
        _one_line_error(run(*command, cwd=with_finding), name, "too deeply nested")
    assert (with_finding / name).read_text() == source
    assert (with_finding / "bad.py").read_text() == FIXED, "the other files are still processed"


def test_deep_nesting_inside_traced_code_is_contained_or_analysed(tmp_path: Path) -> None:
    """Nesting `ast` accepts but that may be too deep for LibCST's recursive visitors."""
    depth = 180
    source = FINDING.replace("print(x)", "print(" + "(" * depth + "x" + ")" * depth + ")")
    (tmp_path / "deep.py").write_text(source)
    result = run("check", ".", cwd=tmp_path)
    assert "Traceback" not in result.output and "internal error" not in result.output
    assert result.exit_code in (1, 2)
    if result.exit_code == 2:
        _one_line_error(result, "deep.py", "too deeply nested")


def test_a_very_large_file(tmp_path: Path) -> None:
    """About 1 MB, 40,000 lines of JAX code with nothing to find: the screens answer without LibCST."""
    filler = "".join(f"def g{i}(a):\n    return jnp.sum(a) + {i}\n\n\n" for i in range(10_000))
    path = tmp_path / "big.py"
    path.write_text("import jax\nimport jax.numpy as jnp\n\n\n" + filler)
    for command in (["check", "."], ["apply", "."]):
        result = run(*command, cwd=tmp_path)
        assert result.exit_code == 0, result.output
    assert "Checked 1 file: 0 findings" in run("check", ".", cwd=tmp_path).output


def test_a_large_file_with_a_finding_at_its_end(tmp_path: Path) -> None:
    """1,000 lines that LibCST reads in full, the finding on the last lines."""
    filler = "".join(f"def g{i}(a):\n    return a + {i}\n\n\n" for i in range(250))
    path = tmp_path / "big.py"
    path.write_text(FINDING.replace("@jax.jit", filler + "@jax.jit"))
    result = run("check", ".", cwd=tmp_path)
    assert result.exit_code == 1
    assert f"big.py:{1_006}:5: JF601" in result.output
    run("apply", ".", cwd=tmp_path)
    assert path.read_text() == FIXED.replace("@jax.jit", filler + "@jax.jit")
    _no_leftovers(tmp_path)


def test_a_read_only_file_is_not_rewritten(with_finding: Path) -> None:
    path = with_finding / "locked.py"
    path.write_text(FINDING)
    os.chmod(path, 0o444)
    result = run("apply", ".", cwd=with_finding)
    _one_line_error(result, "locked.py", "cannot write: read-only file")
    assert path.read_text() == FINDING
    assert stat.S_IMODE(path.stat().st_mode) == 0o444
    assert "fixed locked.py" not in result.output
    assert (with_finding / "bad.py").read_text() == FIXED
    _no_leftovers(with_finding)


def test_a_folder_named_like_a_python_file_is_walked(tmp_path: Path) -> None:
    (tmp_path / "pkg.py").mkdir()
    (tmp_path / "pkg.py" / "inner.py").write_text(FINDING)
    for given in (".", "pkg.py"):
        result = run("check", given, cwd=tmp_path)
        assert result.exit_code == 1, result.output
        assert "inner.py:6:5: JF601" in result.output


def test_symlink_loops_are_named_not_followed(with_finding: Path) -> None:
    (with_finding / "self.py").symlink_to("self.py")
    (with_finding / "a.py").symlink_to("b.py")
    (with_finding / "b.py").symlink_to("a.py")
    (with_finding / "sub").mkdir()
    (with_finding / "sub" / "up").symlink_to("..")  # a folder loop: not walked into
    result = run("check", ".", cwd=with_finding)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "internal error" not in result.output
    for name in ("self.py", "a.py", "b.py"):
        assert f"{name}: error: symbolic link loop" in result.output
    assert result.output.count("bad.py:6:5: JF601") == 1
    direct = run("check", "self.py", cwd=with_finding)
    _one_line_error(direct, "self.py", "symbolic link loop")


def test_permission_denied_on_read(with_finding: Path, monkeypatch) -> None:
    """Simulated: the tests may run as root, whom chmod 000 does not stop."""
    secret = with_finding / "secret.py"
    secret.write_text(FINDING)
    real = pathlib.Path.read_bytes

    def read_bytes(self):
        if self.name == "secret.py":
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(pathlib.Path, "read_bytes", read_bytes)
    for command in (["check", "--no-cache", "."], ["apply", "--no-cache", "."]):
        _one_line_error(run(*command, cwd=with_finding), "secret.py", "cannot read: Permission denied")
    monkeypatch.undo()
    assert secret.read_text() == FINDING
    assert (with_finding / "bad.py").read_text() == FIXED


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads and writes regardless of permissions")
def test_permission_denied_for_real(with_finding: Path) -> None:
    secret = with_finding / "secret.py"
    secret.write_text(FINDING)
    os.chmod(secret, 0)
    try:
        _one_line_error(run("check", ".", cwd=with_finding), "secret.py", "cannot read: Permission denied")
    finally:
        os.chmod(secret, 0o644)


def test_a_folder_that_cannot_be_written_leaves_no_temporary_file(with_finding: Path, monkeypatch) -> None:
    """A write that fails half-way (disk full) removes its temporary file and leaves the original intact."""
    import jaxfix.files as files

    def failing_fsync(descriptor):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files.os, "fsync", failing_fsync)
    result = run("apply", "--no-cache", ".", cwd=with_finding)
    _one_line_error(result, "bad.py", "cannot write: No space left on device")
    assert (with_finding / "bad.py").read_text() == FINDING
    _no_leftovers(with_finding)


def test_python_syntax_warnings_of_the_checked_code_are_not_printed(tmp_path: Path) -> None:
    (tmp_path / "warns.py").write_text("import jax\nx = 1\nif x is 1:\n    pass\ny = (1, 2)(3)\n")
    done = subprocess.run(
        [sys.executable, "-m", "jaxfix", "check", "--no-cache", "."], cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 0 and "SyntaxWarning" not in done.stdout + done.stderr, done.stderr
