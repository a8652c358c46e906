"""Suppression comments: `# noqa`, `# noqa: JF101, JF2`, `# jaxfix: ignore` and `# jaxfix: ignore[JF101]` on a
line; `# jaxfix: ignore-file` or `# jaxfix: ignore-file[JF101]` anywhere for the whole file.

A line comment on the first or last line of a finding silences it. Codes match as prefixes, and rule names work
too. Comments are found with the tokenizer, so a `# noqa` inside a string literal does not count. JF001
(codemods/unused_suppression.py) reports the line comments that silence nothing; `jaxfix.noqa` adds them.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass
from typing import Iterable

from jaxfix.diagnostics import Diagnostic

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[\w\-]+(?:[\s,]+[\w\-]+)*))?", re.IGNORECASE)
_IGNORE = re.compile(r"#\s*jaxfix:\s*ignore(?!-file)(?:\[(?P<codes>[^\]]*)\])?", re.IGNORECASE)
_IGNORE_FILE = re.compile(r"#\s*jaxfix:\s*ignore-file(?:\[(?P<codes>[^\]]*)\])?", re.IGNORECASE)

ALL = frozenset({"*"})
UNUSED_SUPPRESSION = "JF001"  # codemods/unused_noqa.py
FILE = 0  # the key of file-level suppressions in the table `suppressions` returns


@dataclass(frozen=True)
class Directive:
    """One suppression inside a comment: its kind, where it sits in the comment, and the codes as written
    (empty for a blanket one)."""

    kind: str  # "noqa", "ignore" or "ignore-file"
    start: int  # offsets into the comment's text
    end: int
    codes: tuple[str, ...]

    @property
    def blanket(self) -> bool:
        return not self.codes


def directives(comment: str) -> list[Directive]:
    """The suppressions in one comment's text (`# note  # noqa: JF601` has one)."""
    found = []
    for kind, pattern in (("noqa", _NOQA), ("ignore", _IGNORE), ("ignore-file", _IGNORE_FILE)):
        for match in pattern.finditer(comment):
            codes = match.group("codes")
            written = tuple(c for c in re.split(r"[\s,]+", codes.strip()) if c) if codes else ()
            found.append(Directive(kind, match.start(), match.end(), written))
    return sorted(found, key=lambda d: d.start)


def _codes(directive: Directive) -> frozenset[str]:
    return ALL if directive.blanket else frozenset(c.upper() for c in directive.codes)


def suppressions(text: str) -> dict[int, frozenset[str]]:
    """Line number → the codes silenced there (ALL for a bare comment); FILE (0) → those silenced everywhere."""
    lowered = text.lower()
    if "noqa" not in lowered and "jaxfix:" not in lowered:
        return {}
    found: dict[int, frozenset[str]] = {}
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return {}
    for token in tokens:
        if token.type != tokenize.COMMENT:
            continue
        for directive in directives(token.string):
            line = FILE if directive.kind == "ignore-file" else token.start[0]
            found[line] = found.get(line, frozenset()) | _codes(directive)
    return found


def matches(diagnostic: Diagnostic, codes: frozenset[str]) -> bool:
    """Whether `codes` (upper case; ALL for a blanket comment) silence `diagnostic`."""
    if codes is ALL or "*" in codes:
        return diagnostic.code != UNUSED_SUPPRESSION  # a bare comment cannot silence the report that it is unused
    return any(diagnostic.code.upper().startswith(c) or diagnostic.name.upper() == c for c in codes)


def is_suppressed(diagnostic: Diagnostic, table: dict[int, frozenset[str]]) -> bool:
    for line in {FILE, diagnostic.start.line, diagnostic.end.line}:
        codes = table.get(line)
        if codes is not None and matches(diagnostic, codes):
            return True
    return False


def unsuppressed(diagnostics: Iterable[Diagnostic], text: str) -> list[Diagnostic]:
    diagnostics = list(diagnostics)
    if not diagnostics:  # no need to tokenize the module for its comments
        return diagnostics
    table = suppressions(text)
    return [d for d in diagnostics if not is_suppressed(d, table)] if table else diagnostics


def codes_end(comment: str) -> int | None:
    """Where the code list of a `# noqa: ...` or `# jaxfix: ignore[...]` comment ends (an index into
    `comment`), to add one more code there; None when the comment names no codes."""
    for pattern in (_NOQA, _IGNORE):
        match = pattern.search(comment)
        if match and match.group("codes") and match.group("codes").strip():
            return match.end("codes")
    return None
