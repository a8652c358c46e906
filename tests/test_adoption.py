"""Adopting jaxfix on a codebase: file-level suppression, --add-noqa, unused suppressions (JF001), and the
[tool.jaxfix] settings: where they are found, per-file-ignores and codemod options."""

from __future__ import annotations

from pathlib import Path

import pytest

from jaxfix.codemods.loop_to_fori import LoopToForiLoop
from jaxfix.codemod import OptionError
from jaxfix.noqa import with_noqa
from tests.helpers import findings
from tests.test_cli import CLEAN, FINDING, FIXED, run

LOOP = (
    "import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\ndef f(x):\n    for i in range(12):\n"
    "        x = jnp.sin(x) + i\n    return x\n"
)


# ---- suppressions --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "comment,silenced",
    [
        ("# jaxfix: ignore-file", True),
        ("# jaxfix: ignore-file[JF601]", True),
        ("# jaxfix: ignore-file[print-in-traced]", True),
        ("# jaxfix: ignore-file[JF101]", False),
    ],
)
def test_ignore_file(tmp_path: Path, comment: str, silenced: bool) -> None:
    (tmp_path / "m.py").write_text(comment + "\n" + FINDING)
    result = run("check", "m.py", cwd=tmp_path)
    assert (result.exit_code == 0) == silenced, result.output


def test_ignore_file_is_not_a_line_ignore(tmp_path: Path) -> None:
    """`ignore-file[JF101]` on a line is no bare `# jaxfix: ignore` for that line."""
    (tmp_path / "m.py").write_text(FINDING.replace("print(x)", "print(x)  # jaxfix: ignore-file[JF101]"))
    assert run("check", "m.py", cwd=tmp_path).exit_code == 1


def test_add_noqa_then_check_is_clean_and_a_second_run_adds_nothing(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(FINDING)
    first = run("check", "--add-noqa", ".", cwd=tmp_path)
    assert first.exit_code == 0 and "Added 1 noqa comment in 1 file." in first.output
    assert (tmp_path / "m.py").read_text() == FINDING.replace("print(x)", "print(x)  # noqa: JF601")
    assert run("check", ".", cwd=tmp_path).exit_code == 0
    again = run("check", "--add-noqa", ".", cwd=tmp_path)
    assert "Added 0 noqa comments" in again.output
    assert (tmp_path / "m.py").read_text() == FINDING.replace("print(x)", "print(x)  # noqa: JF601")


def test_add_noqa_merges_and_never_lands_in_a_string(tmp_path: Path) -> None:
    source = (
        "import jax\n\n\n@jax.jit\ndef f(x):\n    print(x)  # noqa: E501\n    print(x)  # why\n"
        '    print("""a\nb""", x)\n    print(\n        x\n    )\n    return x\n'
    )
    (tmp_path / "m.py").write_text(source)
    run("check", "--add-noqa", ".", cwd=tmp_path)
    lines = (tmp_path / "m.py").read_text().splitlines()
    assert lines[5] == "    print(x)  # noqa: E501, JF601"
    assert lines[6] == "    print(x)  # why  # noqa: JF601"
    assert lines[7] == '    print("""a', "a comment here would be part of the string"
    assert lines[8] == 'b""", x)  # noqa: JF601'
    assert lines[9] == "    print(  # noqa: JF601"
    assert run("check", ".", cwd=tmp_path).exit_code == 0


def test_add_noqa_skips_a_line_it_cannot_comment() -> None:
    text = "x = 1 + \\\n    2\n"
    from jaxfix.diagnostics import Diagnostic, Position

    first_line_only = Diagnostic("JF601", "print-in-traced", "m", Position(1, 1), Position(1, 5))
    new, outcome = with_noqa(text, [first_line_only])
    assert new == text and outcome.skipped == [1], "a comment after a backslash is a syntax error"


def test_add_noqa_leaves_unused_suppressions_to_jf001(tmp_path: Path) -> None:
    stale = CLEAN.replace("return x", "return x  # noqa: JF601")
    (tmp_path / "m.py").write_text(stale)
    assert "Added 0 noqa comments" in run("check", "--add-noqa", ".", cwd=tmp_path).output
    assert (tmp_path / "m.py").read_text() == stale


def test_unused_noqa_reported_and_removed_by_apply(tmp_path: Path) -> None:
    stale = CLEAN.replace("return x", "return x  # noqa: JF601")
    (tmp_path / "m.py").write_text(stale)
    result = run("check", ".", cwd=tmp_path)
    assert result.exit_code == 1
    assert "m.py:5:15: JF001 [*] unused suppression in `# noqa: JF601`: JF601 finds nothing" in result.output
    assert run("apply", ".", cwd=tmp_path).exit_code == 0
    assert (tmp_path / "m.py").read_text() == CLEAN


def test_a_used_noqa_stays_even_when_its_rule_is_not_selected(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(FINDING.replace("print(x)", "print(x)  # noqa: JF601"))
    (tmp_path / "pyproject.toml").write_text('[tool.jaxfix]\nignore = ["JF601"]\n')
    assert run("check", ".", cwd=tmp_path).exit_code == 0
    assert run("check", "--select", "JF001", ".", cwd=tmp_path).exit_code == 0


def test_blanket_and_foreign_noqa_are_left_alone(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(CLEAN.replace("return x", "return x  # noqa") + "y = 1  # noqa: E501, F401\n")
    assert run("check", ".", cwd=tmp_path).exit_code == 0


# ---- configuration -------------------------------------------------------------------------------------------


def test_config_is_found_upward_from_the_checked_path(tmp_path: Path) -> None:
    (tmp_path / "proj" / "src").mkdir(parents=True)
    (tmp_path / "proj" / "pyproject.toml").write_text('[tool.jaxfix]\nignore = ["JF601"]\n')
    (tmp_path / "proj" / "src" / "pyproject.toml").write_text("[project]\nname = 'sub'\n")  # no table: passed over
    (tmp_path / "proj" / "src" / "m.py").write_text(FINDING)
    assert run("check", "proj/src", cwd=tmp_path).exit_code == 0
    assert run("check", "m.py", cwd=tmp_path / "proj" / "src").exit_code == 0


def test_per_file_ignores_are_relative_to_the_config(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "t.py").write_text(FINDING)
    (tmp_path / "m.py").write_text(FINDING)
    (tmp_path / "pyproject.toml").write_text('[tool.jaxfix.per-file-ignores]\n"tests/**" = ["print-in-traced"]\n')
    result = run("check", ".", cwd=tmp_path)
    assert "m.py:6:5: JF601" in result.output and "t.py" not in result.output
    run("apply", ".", cwd=tmp_path)
    assert (tmp_path / "tests" / "t.py").read_text() == FINDING and (tmp_path / "m.py").read_text() == FIXED
    (tmp_path / "pyproject.toml").write_text('[tool.jaxfix.per-file-ignores]\n"tests/**" = ["JF777"]\n')
    bad = run("check", ".", cwd=tmp_path)
    assert bad.exit_code == 2 and "'JF777' matches no codemod" in bad.output


def test_codemod_option_changes_the_loop_threshold(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(LOOP)
    assert "JF101" in run("check", ".", cwd=tmp_path).output, "12 steps: over the default of 10"
    (tmp_path / "pyproject.toml").write_text("[tool.jaxfix.codemods.loop-to-fori-loop]\nmin-trip-count = 20\n")
    assert "JF101" not in run("check", ".", cwd=tmp_path).output
    (tmp_path / "pyproject.toml").write_text("[tool.jaxfix.codemods.JF101]\nmin-trip-count = 12\n")
    assert "JF101" in run("check", ".", cwd=tmp_path).output, "by code too; 12 is not below 12"


@pytest.mark.parametrize(
    "table,message",
    [
        ("[tool.jaxfix.codemods.loop-to-fori-loop]\nmin-trips = 3\n", "has no option 'min-trips'"),
        ("[tool.jaxfix.codemods.loop-to-fori-loop]\nmin-trip-count = 'ten'\n", "min-trip-count must be an integer"),
        ("[tool.jaxfix.codemods.loop-to-fori-loop]\nmin-trip-count = true\n", "min-trip-count must be an integer"),
        ("[tool.jaxfix.codemods.no-such-rule]\nx = 1\n", "names no codemod"),
        ("[tool.jaxfix]\ncodemods = 3\n", "one table per codemod"),
        ("[tool.jaxfix]\nper-file-ignores = 3\n", "per-file-ignores] must be a table"),
    ],
)
def test_bad_options_are_one_line_errors(tmp_path: Path, table: str, message: str) -> None:
    (tmp_path / "m.py").write_text(LOOP)
    (tmp_path / "pyproject.toml").write_text(table)
    result = run("check", ".", cwd=tmp_path)
    assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_options_live_on_a_subclass_only() -> None:
    configured = LoopToForiLoop.with_options({"min-trip-count": 20})
    assert configured.option("min-trip-count") == 20 and LoopToForiLoop.option("min-trip-count") == 10
    assert configured is LoopToForiLoop.with_options({"min-trip-count": 20}), "one class per setting"
    assert findings(LOOP, LoopToForiLoop) and not findings(LOOP, configured)
    with pytest.raises(OptionError):
        LoopToForiLoop.with_options({"min-trip-count": 1.5})


def test_rule_shows_its_options(tmp_path: Path) -> None:
    result = run("rule", "JF101", cwd=tmp_path)
    assert "[tool.jaxfix.codemods.loop-to-fori-loop]" in result.output
    assert "- min-trip-count = 10: " in result.output and "- report-trip-count = 100: " in result.output
