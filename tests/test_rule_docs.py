"""docs/rules/JFxxx.md, the pages the language server links to, stay what `jaxfix rule` prints (regenerate them
with `python scripts/rule_docs.py`)."""

from __future__ import annotations

import re

from typer.testing import CliRunner

from jaxfix import registry, ruledocs
from jaxfix.cli import app


def test_one_page_per_rule_and_no_other():
    assert sorted(p.stem for p in ruledocs.FOLDER.glob("*.md")) == [c.code for c in registry.all_codemods()]


def test_pages_are_what_jaxfix_rule_prints():
    for codemod in registry.all_codemods():
        page = ruledocs.page(codemod)
        assert (ruledocs.FOLDER / f"{codemod.code}.md").read_text(encoding="utf-8") == page, (
            f"docs/rules/{codemod.code}.md is out of date: run `python scripts/rule_docs.py`"
        )
        assert CliRunner().invoke(app, ["rule", codemod.code]).output == page


def test_uri_points_at_the_page():
    assert ruledocs.uri("JF601") == (ruledocs.FOLDER / "JF601.md").as_uri()
    assert ruledocs.uri("JF000") is None


def test_rules_table_is_up_to_date():
    text = ruledocs.INDEX.read_text(encoding="utf-8")
    assert ruledocs.with_table(text) == text, "docs/rules.md's table is out of date: run `python scripts/rule_docs.py`"


def test_rules_table_has_the_columns_of_jaxfix_rules():
    """The docs table is `jaxfix rules --markdown` with each code linked to its page."""
    printed = CliRunner().invoke(app, ["rules", "--markdown"]).output.strip().splitlines()
    linked = ruledocs.table().strip().splitlines()
    assert [re.sub(r"\[(JF\d{3})\]\(rules/\1\.md\)", r"\1", line) for line in linked] == printed
