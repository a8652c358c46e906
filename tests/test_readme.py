"""The README stays true: its rule table is the registry's, and its test command is what CI runs."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from jaxfix.cli import app

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_rule_table_matches_the_registry() -> None:
    table = CliRunner().invoke(app, ["rules", "--markdown"]).output.strip()
    assert table in README, "regenerate the README's rule table with `jaxfix rules --markdown`"


def test_ci_runs_the_readme_test_command() -> None:
    commands = re.findall(r"```sh\n(.+?)\n```", README)
    assert len(commands) == 2, "the README shows exactly two set-up commands"
    main_job, tests = commands
    assert "jaxfix apply --diff --unsafe-fixes corpus/" in main_job
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    install, _, test_command = tests.rpartition("&& ")
    assert 'pip install --quiet -e ".[test]"' in ci or 'pip install -e ".[test]"' in ci
    assert test_command.strip().split()[:3] == ["python", "-m", "pytest"]
    assert "python -m pytest" in ci
