"""Suppression comments: `# noqa`, `# noqa: JF101, JF2`, `# jaxfix: ignore` and `# jaxfix: ignore[JF101]`.

A comment on the first or last line of a finding silences it. Codes match as prefixes, and rule names work too.
Comments are found with the tokenizer, so a `# noqa` inside a string literal does not count.
"""

from __future__ import annotations

import io
import re
import tokenize
from typing import Iterable

from jaxfix.diagnostics import Diagnostic

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[\w\-]+(?:[\s,]+[\w\-]+)*))?", re.IGNORECASE)
_IGNORE = re.compile(r"#\s*jaxfix:\s*ignore(?:\[(?P<codes>[^\]]*)\])?", re.IGNORECASE)

ALL = frozenset({"*"})


def suppressions(text: str) -> dict[int, frozenset[str]]:
    """Line number → the codes silenced there (ALL for a bare comment)."""
    if "noqa" not in text.lower() and "jaxfix:" not in text.lower():
        return {}
    found: dict[int, frozenset[str]] = {}
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return {}
    for token in tokens:
        if token.type != tokenize.COMMENT:
            continue
        for pattern in (_NOQA, _IGNORE):
            match = pattern.search(token.string)
            if match:
                codes = match.group("codes")
                parsed = ALL if not codes else frozenset(c.upper() for c in re.split(r"[\s,]+", codes.strip()) if c)
                found[token.start[0]] = found.get(token.start[0], frozenset()) | parsed
    return found


def is_suppressed(diagnostic: Diagnostic, table: dict[int, frozenset[str]]) -> bool:
    for line in {diagnostic.start.line, diagnostic.end.line}:
        codes = table.get(line)
        if codes is None:
            continue
        if codes is ALL or "*" in codes:
            return True
        if any(diagnostic.code.upper().startswith(c) or diagnostic.name.upper() == c for c in codes):
            return True
    return False


def unsuppressed(diagnostics: Iterable[Diagnostic], text: str) -> list[Diagnostic]:
    table = suppressions(text)
    return [d for d in diagnostics if not is_suppressed(d, table)] if table else list(diagnostics)


def codes_end(comment: str) -> int | None:
    """Where the code list of a `# noqa: ...` or `# jaxfix: ignore[...]` comment ends (an index into
    `comment`), to add one more code there; None when the comment names no codes."""
    for pattern in (_NOQA, _IGNORE):
        match = pattern.search(comment)
        if match and match.group("codes") and match.group("codes").strip():
            return match.end("codes")
    return None
