"""The progress bar: drawn on a terminal for a long run, never into a pipe or a log, never with --quiet."""

from __future__ import annotations

import io

from jaxfix.report import progress
from jaxfix.report.progress import Progress
from tests.test_cli import FINDING, run


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_drawn_on_a_terminal_once_the_run_is_long(monkeypatch) -> None:
    monkeypatch.setattr(progress, "DELAY", 0.0)
    stream = _Terminal()
    bar = Progress(4, stream=stream)
    for _ in range(4):
        bar.advance()
    assert "4/4 files" in stream.getvalue()
    bar.clear()
    assert stream.getvalue().endswith("\r\x1b[K")


def test_not_drawn_for_a_quick_run(monkeypatch) -> None:
    monkeypatch.setattr(progress, "DELAY", 60.0)
    stream = _Terminal()
    bar = Progress(4, stream=stream)
    bar.advance()
    bar.close()
    assert stream.getvalue() == ""


def test_never_into_a_pipe_nor_when_disabled(monkeypatch) -> None:
    monkeypatch.setattr(progress, "DELAY", 0.0)
    pipe = io.StringIO()
    Progress(4, stream=pipe).advance()
    terminal = _Terminal()
    Progress(4, stream=terminal, enabled=False).advance()
    assert pipe.getvalue() == terminal.getvalue() == ""


def test_quiet_prints_findings_only(tmp_path) -> None:
    (tmp_path / "bad.py").write_text(FINDING)
    result = run("check", "--quiet", ".", cwd=tmp_path)
    assert result.exit_code == 1
    assert result.output.splitlines() == [line for line in result.output.splitlines() if "JF601" in line]
    assert "Checked" not in result.output
