"""`--output-format github`: GitHub Actions workflow commands, which show each finding as an annotation on the
pull request's diff: `::warning file=PATH,line=L,col=C,endLine=L,endColumn=C,title=JF601::message`.

Escaped as GitHub's runner expects (actions/toolkit `command.ts`): `%`, CR and LF in the message, and also `:`
and `,` in property values. A notebook's finding has no `line`: its lines count within a cell, which the file's
diff does not show; the message starts with `cell N:L:C:` instead, and the annotation sits on the file.
"""

from __future__ import annotations

from typing import Iterable

from jaxfix.diagnostics import Diagnostic
from jaxfix.report.locations import repository_path


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(path: str, diagnostic: Diagnostic) -> str:
    properties = {
        "file": repository_path(path) if path != "-" else "-",
        "line": diagnostic.start.line,
        "col": diagnostic.start.column,
        "endLine": diagnostic.end.line,
        "endColumn": diagnostic.end.column,
        "title": diagnostic.code,
    }
    message = diagnostic.message
    if diagnostic.cell is not None:
        properties = {"file": properties["file"], "title": diagnostic.code}
        message = f"{diagnostic.where}: {message}"
    listed = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties.items())
    return f"::warning {listed}::{escape_data(message)}"


def lines(path: str, diagnostics: Iterable[Diagnostic]) -> list[str]:
    return [annotation(path, d) for d in diagnostics]
