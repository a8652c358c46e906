"""Notebooks in the editor (LSP 3.17 notebook document sync): the client sends a notebook's cells as text
documents of their own; jaxfix analyses the code cells as one module, as `jaxfix check` does a .ipynb
(jaxfix/notebook.py), publishes each cell's findings on that cell, and turns a fix of the module back into edits
of the cells it changes (usually one; an added import may touch the first code cell too)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from lsprotocol import types

from jaxfix import notebook
from jaxfix.diagnostics import Diagnostic, Position
from jaxfix.server.edits import lsp_edits

PYTHON_LANGUAGES = ("python", "", None)


@dataclass(frozen=True)
class CellText:
    uri: str
    version: int | None
    text: str
    code: bool  # a Python code cell (Markdown cells and other languages are only counted)


@dataclass(frozen=True)
class NotebookSnapshot:
    """A notebook as the client holds it when a request comes (its cells may change meanwhile)."""

    uri: str
    version: int | None
    cells: tuple[CellText, ...]

    @classmethod
    def of(cls, workspace: Any, notebook_uri: str) -> "NotebookSnapshot | None":
        document = workspace.get_notebook_document(notebook_uri=notebook_uri)
        if document is None:
            return None
        cells = []
        for cell in document.cells:
            text = workspace.text_documents.get(cell.document)
            if text is None:
                continue
            code = cell.kind == types.NotebookCellKind.Code and text.language_id in PYTHON_LANGUAGES
            cells.append(CellText(cell.document, text.version, text.source, code))
        return cls(document.uri, document.version, tuple(cells))

    def book(self) -> notebook.Notebook:
        return notebook.from_sources([("code" if c.code else "markdown", c.text) for c in self.cells])

    def module(self) -> tuple[str, notebook.CellMap]:
        return self.book().module()

    def cell_number(self, uri: str) -> int | None:
        return next((i + 1 for i, c in enumerate(self.cells) if c.uri == uri), None)


def per_cell(snapshot: NotebookSnapshot, cells: notebook.CellMap, diagnostics: list[Diagnostic]) -> dict[str, list[Diagnostic]]:
    """The module's diagnostics, placed in their cells (cell-relative lines), by cell URI; every cell listed."""
    found: dict[str, list[Diagnostic]] = {c.uri: [] for c in snapshot.cells}
    for diagnostic in diagnostics:
        number, line = cells.locate(diagnostic.start.line)
        end_number, end_line = cells.locate(diagnostic.end.line)
        end = Position(end_line, diagnostic.end.column) if end_number == number else Position(line + 1, 1)
        placed = dataclasses.replace(diagnostic, start=Position(line, diagnostic.start.column), end=end, cell=number)
        found[snapshot.cells[number - 1].uri].append(placed)
    return found


@dataclass(frozen=True)
class CellEdits:
    """Turns a rewrite of the notebook's module into edits of the cells it changes (`actions.Target.notebook`)."""

    snapshot: NotebookSnapshot

    def workspace_edit(self, new_module: str, encoding: str, versioned: bool) -> types.WorkspaceEdit | None:
        try:
            sources = self.snapshot.book().cell_sources(new_module)
        except notebook.NotebookError:
            return None
        if not sources:
            return None
        changes = []
        for number, new in sorted(sources.items()):
            cell = self.snapshot.cells[number - 1]
            changes.append((cell, lsp_edits(cell.text, new, encoding)))
        if versioned:
            return types.WorkspaceEdit(
                document_changes=[
                    types.TextDocumentEdit(
                        text_document=types.OptionalVersionedTextDocumentIdentifier(uri=cell.uri, version=cell.version), edits=edits
                    )
                    for cell, edits in changes
                ]
            )
        return types.WorkspaceEdit(changes={cell.uri: edits for cell, edits in changes})

    def place(self, module_line: int) -> str:
        """`line 3 of cell 4`, for an action's title."""
        number, line = self.snapshot.module()[1].locate(module_line)
        return f"line {line} of cell {number}"
