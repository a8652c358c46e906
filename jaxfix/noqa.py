"""`jaxfix check --add-noqa`: a `# noqa: CODES` comment on a line of each finding, so that a codebase can adopt
jaxfix and see only new findings from then on (Ruff's --add-noqa).

Comments go on the finding's first line, else its last (suppression reads both), merged into a `# noqa` comment
already there. The tokenizer says which lines can take a comment: not one whose end lies inside a multi-line
string, nor one continued with a backslash. Running it twice adds nothing: the findings are then suppressed.
"""

from __future__ import annotations

import dataclasses
import io
import tokenize
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from jaxfix import notebook
from jaxfix.diagnostics import Diagnostic, Position
from jaxfix.files import read_source, write_if_changed
from jaxfix.suppression import UNUSED_SUPPRESSION, directives


@dataclass
class Added:
    added: int = 0  # lines that gained codes
    skipped: list = field(default_factory=list)  # lines of findings no comment could be put beside (`cell N:L` in a notebook)


def commentable_lines(text: str) -> dict[int, tokenize.TokenInfo | None]:
    """Line → its comment token (None if it has none), for each line whose end is outside any string and not a
    backslash continuation: the lines where the tokenizer ends a logical or physical line (NEWLINE, NL)."""
    lines: dict[int, tokenize.TokenInfo | None] = {}
    comments: dict[int, tokenize.TokenInfo] = {}
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT:
            comments[token.start[0]] = token
        elif token.type in (tokenize.NEWLINE, tokenize.NL) or (token.type == tokenize.ENDMARKER and token.start[1] > 0):
            lines[token.start[0]] = comments.get(token.start[0])
    return lines


def with_noqa(text: str, diagnostics: Sequence[Diagnostic]) -> tuple[str, Added]:
    """`text` with the comments added."""
    outcome = Added()
    places = commentable_lines(text)
    wanted: dict[int, list[str]] = {}
    for diagnostic in diagnostics:
        if diagnostic.code == UNUSED_SUPPRESSION:
            continue  # silencing the report that a suppression is unused would only add another
        line = next((n for n in (diagnostic.start.line, diagnostic.end.line) if n in places), None)
        if line is None:
            outcome.skipped.append(diagnostic.start.line)
            continue
        codes = wanted.setdefault(line, [])
        if diagnostic.code not in codes:
            codes.append(diagnostic.code)
    source_lines = text.splitlines(keepends=True)
    for line, codes in wanted.items():
        body = source_lines[line - 1]
        content = body.rstrip("\r\n")
        ending = body[len(content):]
        comment = places[line]
        noqa = next((d for d in directives(comment.string) if d.kind == "noqa"), None) if comment else None
        if noqa is not None and noqa.blanket:
            continue
        if noqa is not None:
            start = comment.start[1]
            merged = list(noqa.codes) + [c for c in codes if c not in noqa.codes]
            new_comment = comment.string[: noqa.start] + f"# noqa: {', '.join(merged)}" + comment.string[noqa.end :]
            content = content[:start] + new_comment + content[start + len(comment.string) :]
        else:
            content = content.rstrip() + f"  # noqa: {', '.join(codes)}"
        source_lines[line - 1] = content + ending
        outcome.added += 1
    return "".join(source_lines), outcome


def add_noqa(path: Path, diagnostics: Sequence[Diagnostic]) -> Added:
    """Add the comments to the file at `path` (same encoding and line endings; written atomically, and only if
    the result still compiles)."""
    if notebook.is_notebook(str(path)):
        return _add_noqa_to_notebook(path, diagnostics)
    source = read_source(path)
    new_text, outcome = with_noqa(source.text, diagnostics)
    if outcome.added:
        compile(new_text, str(path), "exec", dont_inherit=True)  # a comment never breaks code; make sure
        write_if_changed(path, source.encode(new_text))
    return outcome


def _add_noqa_to_notebook(path: Path, diagnostics: Sequence[Diagnostic]) -> Added:
    """The comments added to a notebook's code cells (diagnostics name their cell); only those cells' source is
    written back. `skipped` then holds `cell N:L` places."""
    raw = path.read_bytes()
    book = notebook.read(raw)
    module_text, cells = book.module()
    placed = []
    for diagnostic in diagnostics:
        start = cells.module_line(diagnostic.cell, diagnostic.start.line) if diagnostic.cell else None
        end = cells.module_line(diagnostic.cell, diagnostic.end.line) if diagnostic.cell else None
        if start is not None:
            placed.append(
                dataclasses.replace(
                    diagnostic, start=Position(start, diagnostic.start.column), end=Position(end or start, diagnostic.end.column), cell=None
                )
            )
    new_text, outcome = with_noqa(module_text, placed)
    outcome.skipped = ["cell {}:{}".format(*cells.locate(line)) for line in outcome.skipped]
    if outcome.added:
        compile(new_text, str(path), "exec", dont_inherit=True)
        write_if_changed(path, notebook.rewritten(raw, new_text)[0])
    return outcome
