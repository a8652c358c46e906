"""The "suppress on this line" quick fix: a `# noqa: JF123` comment, or one more code in the line's existing
`# noqa: ...` or `# jaxfix: ignore[...]`, in the syntax jaxfix.suppression reads (a comment on the first or last
line of a finding silences it)."""

from __future__ import annotations

import io
import tokenize

from jaxfix.diagnostics import Diagnostic
from jaxfix.noqa import commentable_lines
from jaxfix.suppression import codes_end, is_suppressed, suppressions


def _with_code(line: str, comment: tokenize.TokenInfo | None, code: str) -> str:
    end = codes_end(comment.string) if comment is not None else None
    if end is not None:
        at = comment.start[1] + end
        return f"{line[:at]}, {code}{line[at:]}"
    body = line.rstrip("\r\n")
    ending = line[len(body) :]
    return f"{body.rstrip()}  # noqa: {code}{ending}"


def suppressed(text: str, diagnostic: Diagnostic) -> tuple[int, str] | None:
    """(the line, from 1, that gets the comment; the text with it), or None where no comment can go on the
    finding's first or last line (inside a string, after a backslash) or the text does not tokenize."""
    try:
        places = commentable_lines(text)
    except (tokenize.TokenError, SyntaxError):
        return None
    lines = io.StringIO(text).readlines()  # split as tokenize splits
    for number in dict.fromkeys((diagnostic.start.line, diagnostic.end.line)):
        if number not in places or number > len(lines):
            continue
        lines[number - 1] = _with_code(lines[number - 1], places[number], diagnostic.code)
        new = "".join(lines)
        return (number, new) if is_suppressed(diagnostic, suppressions(new)) else None
    return None
