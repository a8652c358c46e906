"""The README stays true: its two set-up commands are what CI and a new user run, and the output it shows in the
tour is what jaxfix prints (the findings exactly, the diff's lines, what verify and bench say)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.helpers import invoke_in



ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
SETUP = re.findall(r"```sh\n(.+?)\n```", README)
CONSOLE = re.findall(r"```console\n(.+?)\n```", README, re.DOTALL)
DIFFS = re.findall(r"```diff\n(.+?)\n```", README, re.DOTALL)


def _in_root(*args: str):
    return invoke_in(ROOT, *args, "--no-cache")


def _session(block: str) -> list[tuple[str, list[str]]]:
    """The `$ command` lines of a console block, each with the lines it printed."""
    found: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            found.append((line[2:], []))
        else:
            found[-1][1].append(line)
    return found


def test_two_setup_commands_and_ci_runs_the_test_command() -> None:
    assert len(SETUP) == 2, "the README shows exactly two set-up commands"
    main_job, tests = SETUP
    assert 'pip install -e ".[examples]"' in main_job
    assert "jaxfix check --statistics corpus/" in main_job and "jaxfix apply --diff --unsafe-fixes examples/" in main_job
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    install, _, test_command = tests.rpartition("&& ")
    assert 'pip install -e ".[test]"' in install
    assert 'pip install --quiet -e ".[test]"' in ci or 'pip install -e ".[test]"' in ci
    assert test_command.strip().split()[:3] == ["python", "-m", "pytest"]
    assert "python -m pytest" in ci


def test_the_main_job_runs_as_shown() -> None:
    """The first command's two jaxfix runs (after the install): a table per rule over the corpus, and diffs of
    the example project; both exit 1, as findings and diffs do."""
    statistics = _in_root("check", "--statistics", "corpus/")
    assert statistics.exit_code == 1, statistics.output
    lines = statistics.output.splitlines()
    assert re.fullmatch(r"\s*\d+  JF\d{3}  [a-z-]+.*", lines[0]) and not any(".py:" in line for line in lines)
    assert re.search(r"^Checked \d+ files: \d+ findings, \d+ fixable", statistics.output, re.MULTILINE)
    diff = _in_root("apply", "--diff", "--unsafe-fixes", "examples/")
    assert diff.exit_code == 1 and "--- a/examples/mlp/evaluate.py" in diff.output


def test_the_check_in_the_tour_prints_what_the_readme_shows() -> None:
    (command, shown), = [s for block in CONSOLE for s in _session(block) if s[0] == "jaxfix check examples/"]
    result = _in_root(*command.split()[1:])
    assert result.exit_code == 1
    assert result.output.splitlines() == shown


def test_the_diffs_in_the_readme_are_jaxfix_s() -> None:
    """The loop shown on the first screen is the corpus case's rewrite, and the example's hunk is from
    `apply --diff` on it: each changed line, in order."""
    rnn, example = DIFFS
    case = ROOT / "corpus" / "loop_to_scan" / "rnn"
    for block, text in ((rnn, _changed(case / "before.py", case / "after.py")), (example, _in_root("apply", "--diff", "--unsafe-fixes", "examples/").output)):
        changed = [line for line in block.splitlines() if line[:1] in "+-"]
        actual = [line for line in text.splitlines() if line[:1] in "+-" and not line.startswith(("+++", "---"))]
        position = 0
        for line in changed:
            assert line in actual[position:], f"{line!r} is not in jaxfix's diff"
            position = actual.index(line, position) + 1


def _changed(before: Path, after: Path) -> str:
    from jaxfix.report.diff import unified_diff

    return unified_diff("x.py", before.read_text(encoding="utf-8"), after.read_text(encoding="utf-8"))


def test_record_verify_and_bench_say_what_the_readme_shows(tmp_path: Path) -> None:
    """The tour's last block, on a copy of examples/: record from a run, then verify and bench with its inputs
    (the timings differ from run to run; the verdicts, examples, compilations and memory do not)."""
    copy = tmp_path / "examples"
    shutil.copytree(ROOT / "examples", copy, ignore=shutil.ignore_patterns(".jaxfix", "__pycache__"))
    (block,) = [b for b in CONSOLE if "jaxfix record" in b]
    session = dict(_session(block))
    jaxfix = [sys.executable, "-m", "jaxfix"]
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    for command, shown in session.items():
        if command.startswith("cd "):
            command = command.split("&& ", 1)[1]
        done = subprocess.run([*jaxfix, *command.split()[1:]], cwd=copy, capture_output=True, text=True, env=env, timeout=600)
        assert done.returncode == 0, done.stdout + done.stderr
        lines = done.stdout.splitlines()
        if command.startswith("jaxfix record"):
            assert lines[-1] == shown[-1]
        elif command.startswith("jaxfix verify"):
            assert lines == shown
        else:
            assert lines[0].split() == shown[0].split() and lines[-1] == shown[-1]
            assert lines[1].split()[:3] == shown[1].split()[:3] and lines[1].endswith("1 -> 1 (1x)  31 KiB -> 3.47 KiB (8.94x)")
