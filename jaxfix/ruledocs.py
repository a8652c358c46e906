"""Each rule's documentation page, docs/rules/JFxxx.md: the text `jaxfix rule JFxxx` prints, written by
scripts/rule_docs.py (tests/test_rule_docs.py keeps the pages in sync with the rules). Editors link to them from
a finding (the language server's `codeDescription`)."""

from __future__ import annotations

from pathlib import Path

from jaxfix import registry
from jaxfix.codemod import Codemod

FOLDER = Path(__file__).resolve().parent.parent / "docs" / "rules"  # in a checkout or an editable install
INSTALLED = Path(__file__).resolve().parent / "rule_pages"  # the same pages in an installed wheel (pyproject.toml)


def page(codemod: type[Codemod]) -> str:
    """The page of one rule, as `jaxfix rule CODE` prints it."""
    text = f"# {codemod.code} {codemod.name}\n\n{codemod.summary}\nFix: {codemod.fix_label()}\n"
    if codemod.opt_in:
        text += f"Opt-in: runs only when selected by its code (`--extend-select {codemod.code}`).\n"
    text += f"\n{codemod.docs()}\n"
    if codemod.OPTIONS:
        text += f"## Options\nIn pyproject.toml, under [tool.jaxfix.codemods.{codemod.name}]:\n\n"
        for option in codemod.OPTIONS:
            default = str(option.default).lower() if isinstance(option.default, bool) else repr(option.default)
            text += f"- {option.name} = {default}: {option.doc}\n"
    return text


def uri(code: str) -> str | None:
    """A `file://` link to the rule's page, or None where jaxfix was installed without the pages."""
    for folder in (INSTALLED, FOLDER):
        path = folder / f"{code}.md"
        if path.is_file():
            return path.as_uri()
    return None


def write(folder: Path = FOLDER) -> list[Path]:
    """Write every rule's page into `folder`, removing pages of rules that no longer exist; returns the
    paths whose content changed."""
    folder.mkdir(parents=True, exist_ok=True)
    changed = []
    wanted = {f"{c.code}.md": page(c) for c in registry.all_codemods()}
    for stale in folder.glob("JF*.md"):
        if stale.name not in wanted:
            stale.unlink()
            changed.append(stale)
    for name, text in wanted.items():
        target = folder / name
        if not target.is_file() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")
            changed.append(target)
    return changed
