"""Each rule's documentation page, docs/rules/JFxxx.md: the text `jaxfix rule JFxxx` prints, written by
scripts/rule_docs.py (tests/test_rule_docs.py keeps the pages in sync with the rules). Editors link to them from
a finding (the language server's `codeDescription`). The same script writes the table of every rule into
docs/rules.md, between marker comments, each code linking to its page."""

from __future__ import annotations

from pathlib import Path

from jaxfix import registry
from jaxfix.codemod import Codemod

FOLDER = Path(__file__).resolve().parent.parent / "docs" / "rules"  # in a checkout or an editable install
INSTALLED = Path(__file__).resolve().parent / "rule_pages"  # the same pages in an installed wheel (pyproject.toml)
INDEX = FOLDER.parent / "rules.md"  # the table of every rule; the text around it is written by hand
TABLE_START, TABLE_END = "<!-- rules-table:start -->", "<!-- rules-table:end -->"


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


def table() -> str:
    """The Markdown table of every rule (`jaxfix rules --markdown`'s columns), each code linking to its page."""
    lines = ["| Code | Name | Fix | What it finds |", "|---|---|---|---|"]
    for c in registry.all_codemods():
        cells = (f"[{c.code}]({FOLDER.name}/{c.code}.md)", c.name, c.fix_label(), c.summary)
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(lines) + "\n"


def between_markers(text: str, start_marker: str, end_marker: str, body: str, where: object = "the text") -> str:
    """`text` with what lies between two marker comments replaced by `body`: generated parts of a page written
    by hand (the rules table here, benchmark tables in docs/benchmarks.md). ValueError when a marker is missing."""
    before, start, rest = text.partition(start_marker)
    _, end, after = rest.partition(end_marker)
    if not start or not end:
        raise ValueError(f"{where} lacks the markers {start_marker} and {end_marker}")
    return f"{before}{start_marker}\n{body}{end_marker}{after}"


def with_table(text: str) -> str:
    """`text` (docs/rules.md) with the table between its markers replaced by the current one."""
    return between_markers(text, TABLE_START, TABLE_END, table(), INDEX)


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


def write_table(index: Path = INDEX) -> bool:
    """Bring the table in docs/rules.md up to date; whether it changed."""
    text = index.read_text(encoding="utf-8")
    if with_table(text) == text:
        return False
    index.write_text(with_table(text), encoding="utf-8")
    return True
