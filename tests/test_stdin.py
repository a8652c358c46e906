"""`check -` and `apply -`: source on stdin, for editors' format-on-save. Bad input leaves stdout empty."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from typer.testing import CliRunner

from jaxfix.cli import app
from tests.test_cli import CLEAN, FINDING, FIXED


def jaxfix(*args: str, stdin: bytes, cwd: Path) -> SimpleNamespace:
    old = Path.cwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(app, list(args), input=stdin)
    finally:
        os.chdir(old)
    return SimpleNamespace(returncode=result.exit_code, stdout=result.stdout_bytes, stderr=result.stderr_bytes)


def test_a_real_pipe(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "jaxfix", "apply", "-"], input=FINDING.encode(), cwd=tmp_path, capture_output=True)
    assert done.returncode == 0 and done.stdout == FIXED.encode()


def test_apply_stdin_writes_the_fixed_text(tmp_path: Path) -> None:
    done = jaxfix("apply", "-", stdin=FINDING.encode(), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode() == FIXED
    assert not list(tmp_path.iterdir()), "nothing written to disk"


def test_apply_stdin_keeps_bom_crlf_and_unchanged_text(tmp_path: Path) -> None:
    source = b"\xef\xbb\xbf" + FINDING.replace("\n", "\r\n").encode()
    done = jaxfix("apply", "-", stdin=source, cwd=tmp_path)
    assert done.stdout == b"\xef\xbb\xbf" + FIXED.replace("\n", "\r\n").encode()
    assert jaxfix("apply", "-", stdin=CLEAN.encode(), cwd=tmp_path).stdout == CLEAN.encode()


def test_apply_stdin_bad_input_leaves_stdout_empty(tmp_path: Path) -> None:
    for bad, reason in ((b"import jax\ndef f(:\n", "syntax error"), (b"x = '\xff'\n", "")):
        done = jaxfix("apply", "-", "--stdin-filename", "pkg/m.py", stdin=bad, cwd=tmp_path)
        assert done.returncode == 2
        assert done.stdout == b""
        assert b"Traceback" not in done.stderr and b"pkg/m.py" in done.stderr and reason.encode() in done.stderr


def test_apply_stdin_diff(tmp_path: Path) -> None:
    done = jaxfix("apply", "-", "--diff", "--stdin-filename", "m.py", stdin=FINDING.encode(), cwd=tmp_path)
    assert done.returncode == 1
    assert b"--- a/m.py" in done.stdout and b'+    jax.debug.print("{}", x)' in done.stdout


def test_check_stdin_names_the_stdin_filename(tmp_path: Path) -> None:
    done = jaxfix("check", "-", "--stdin-filename", "src/m.py", stdin=FINDING.encode(), cwd=tmp_path)
    assert done.returncode == 1
    assert b"src/m.py:6:5: JF601" in done.stdout
    as_json = jaxfix("check", "-", "--output-format", "json", stdin=FINDING.encode(), cwd=tmp_path)
    assert [f["code"] for f in json.loads(as_json.stdout)] == ["JF601"]


def test_stdin_filename_picks_config_and_per_file_ignores(tmp_path: Path) -> None:
    (tmp_path / "proj" / "tests").mkdir(parents=True)
    (tmp_path / "proj" / "pyproject.toml").write_text('[tool.jaxfix.per-file-ignores]\n"tests/**" = ["JF601"]\n')
    quiet = jaxfix("check", "-", "--stdin-filename", "proj/tests/t.py", stdin=FINDING.encode(), cwd=tmp_path)
    assert quiet.returncode == 0, quiet.stdout
    loud = jaxfix("check", "-", "--stdin-filename", "proj/src.py", stdin=FINDING.encode(), cwd=tmp_path)
    assert loud.returncode == 1
    unchanged = jaxfix("apply", "-", "--stdin-filename", "proj/tests/t.py", stdin=FINDING.encode(), cwd=tmp_path)
    assert unchanged.stdout.decode() == FINDING, "an ignored rule does not fix either"


def test_stdin_cannot_mix_with_paths(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(CLEAN)
    done = jaxfix("check", "-", "m.py", stdin=b"", cwd=tmp_path)
    assert done.returncode == 2 and b"cannot be mixed" in done.stderr
