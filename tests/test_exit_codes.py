"""Exit codes and summaries as docs/cli.md documents them (Ruff's conventions): `check` exits 1 with findings;
`apply` exits 1 while findings are left, 0 once everything was fixed; `--diff` exits 1 with a diff to show;
`--exit-zero` and `--exit-non-zero-on-fix` change that; errors exit 2 whatever else happened."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from jaxfix.cli import app
from tests.helpers import invoke_in

FIXABLE = "import jax\n\n\n@jax.jit\ndef f(x):\n    print(x)\n    return x\n"  # JF601, safe fix
FIXED = 'import jax\n\n\n@jax.jit\ndef f(x):\n    jax.debug.print("{}", x)\n    return x\n'
UNSAFE_ONLY = "import jax\n\n\n@jax.jit\ndef f(x):\n    if x > 0:\n        return x\n    return -x\n"  # JF201, unsafe fix
NO_FIX = (  # JF804, no fix
    "import jax\n\nrate = 0.1\n\n\n@jax.jit\ndef sgd(p, g):\n    return p - rate * g\n\n\n"
    "def decay():\n    global rate\n    rate = rate * 0.5\n"
)
CLEAN = "import jax\n\n\ndef f(x):\n    return x\n"
OPT_IN = "import jax\n\nkey = jax.random.PRNGKey(0)\n"  # JF902, opt-in


def run(folder: Path, *args: str):
    return invoke_in(folder, *args) if args[0] == "bench" else invoke_in(folder, *args, "--no-cache")


@pytest.fixture
def project(tmp_path: Path):
    def make(**files: str) -> Path:
        for name, text in files.items():
            (tmp_path / f"{name}.py").write_text(text)
        return tmp_path

    return make


@pytest.mark.parametrize(
    "files,args,code",
    [
        ({"a": CLEAN}, ["check", "."], 0),
        ({"a": FIXABLE}, ["check", "."], 1),
        ({"a": NO_FIX}, ["check", "."], 1),
        ({"a": FIXABLE}, ["check", ".", "--exit-zero"], 0),
        ({"a": FIXABLE, "b": "def f(:\n"}, ["check", ".", "--exit-zero"], 2),  # errors stay 2
        ({"a": OPT_IN}, ["check", "."], 0),  # opt-in rules are not in the default selection
        ({"a": OPT_IN}, ["check", ".", "--extend-select", "JF902"], 1),
        ({"a": OPT_IN}, ["check", ".", "--select", "JF9"], 0),  # a prefix does not select an opt-in rule
        ({"a": CLEAN}, ["apply", "."], 0),
        ({"a": FIXABLE}, ["apply", "."], 0),  # everything fixed
        ({"a": FIXABLE}, ["apply", ".", "--exit-non-zero-on-fix"], 1),
        ({"a": UNSAFE_ONLY}, ["apply", "."], 1),  # left: its fix needs --unsafe-fixes
        ({"a": UNSAFE_ONLY}, ["apply", ".", "--unsafe-fixes"], 0),
        ({"a": NO_FIX}, ["apply", "."], 1),
        ({"a": NO_FIX}, ["apply", ".", "--exit-zero"], 0),
        ({"a": FIXABLE}, ["apply", ".", "--diff"], 1),  # a diff to show
        ({"a": CLEAN}, ["apply", ".", "--diff"], 0),
        ({"a": UNSAFE_ONLY}, ["apply", ".", "--diff"], 1),  # no diff, a finding left
        ({"a": FIXABLE, "b": "def f(:\n"}, ["apply", "."], 2),
    ],
)
def test_exit_code(project, files, args, code) -> None:
    result = run(project(**files), *args)
    assert result.exit_code == code, result.output


def test_apply_summary_counts_files_once(project) -> None:
    folder = project(a=FIXABLE, b=CLEAN, c=NO_FIX)
    result = run(folder, "apply", ".", "--diff")
    assert "3 files checked, 1 would change (1 fix); 1 finding left: 1 without a fix." in result.output
    assert (folder / "a.py").read_text() == FIXABLE
    result = run(folder, "apply", ".")
    assert "3 files checked, 1 changed (1 fix); 1 finding left: 1 without a fix." in result.output
    assert (folder / "a.py").read_text() == FIXED


def test_apply_summary_names_unsafe_fixes_when_only_those_are_left(project) -> None:
    result = run(project(a=UNSAFE_ONLY), "apply", ".", "--diff")
    assert "1 file checked, 0 would change; 1 finding left: 1 fixable with --unsafe-fixes." in result.output


def test_check_summary(project) -> None:
    result = run(project(a=FIXABLE, b=UNSAFE_ONLY), "check", ".")
    assert "Checked 2 files: 2 findings, 2 fixable (of which 1 unsafe)." in result.output
    assert "1 fix available with `jaxfix apply`." in result.output
    assert "1 more fix with `jaxfix apply --unsafe-fixes`." in result.output


def test_check_statistics_is_one_line_per_rule(project) -> None:
    result = run(project(a=FIXABLE, b=FIXABLE, c=UNSAFE_ONLY, d=NO_FIX), "check", ".", "--statistics")
    lines = result.output.splitlines()
    assert lines[:3] == [
        "2  JF601  print-in-traced      2 [*]",
        "1  JF201  branch-to-cond       1 [*unsafe] (--unsafe-fixes)",
        "1  JF804  stale-global-in-jit",
    ]
    assert not any(".py:" in line for line in lines)
    assert result.exit_code == 1


def test_apply_statistics_counts_fixes_and_leftovers_per_rule(project) -> None:
    folder = project(a=FIXABLE, b=UNSAFE_ONLY)
    result = run(folder, "apply", ".", "--diff", "--statistics")
    assert result.output.splitlines()[:3] == [
        "would fix  left  code   rule",
        "        1     0  JF601  print-in-traced",
        "        0     1  JF201  branch-to-cond",
    ]
    assert "---" not in result.output  # no diffs: the table instead


def test_help_is_clean() -> None:
    for command in ("check", "apply", "verify", "bench", "record", "clean", "rules", "rule", "lsp"):
        text = CliRunner().invoke(app, [command, "--help"]).output
        assert "<bool>" not in text and "{" not in text.split("\n\n")[0] and "<list" not in text, text
    assert "check [OPTIONS] PATH..." in CliRunner().invoke(app, ["check", "--help"]).output
    assert "<bool>" not in CliRunner().invoke(app, ["--help"]).output


def test_bench_exits_2_when_both_sides_raise(tmp_path: Path) -> None:
    """A function both of whose sides raise measured nothing: the summary says so and the exit code is 2."""
    raising = "def f(x: float):\n    raise ValueError('no')\n"
    (tmp_path / "before.py").write_text(raising)
    (tmp_path / "after.py").write_text(raising)
    result = run(tmp_path, "bench", "before.py", "after.py", "--repeats", "1", "--warmup", "0")
    assert result.exit_code == 2, result.output
    assert "Measured 0 functions (1 not measured)" in result.output

