"""The objects every part of jaxfix speaks: a Diagnostic, its optional Fix, and the Fix's safety.

A Fix is a set of LibCST node replacements plus the imports it needs. Keeping fixes as CST changes (not text)
lets the engine merge many of them in one pass; `jaxfix.engine.fix_as_text_edit` turns any one of them into a
text edit for the language server and the JSON renderer.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Union

import libcst as cst


class Safety(enum.Enum):
    """How sure jaxfix is that a fix keeps the program's meaning (Ruff's applicability levels)."""

    SAFE = "safe"  # same values for every input the original accepted: `apply` uses it
    UNSAFE = "unsafe"  # valid, but may differ in corner cases: only with --unsafe-fixes or --verify
    DISPLAY_ONLY = "display-only"  # a suggestion shown to the user, never applied


Replacement = Union[cst.CSTNode, cst.RemovalSentinel, cst.FlattenSentinel]


@dataclass(frozen=True)
class ImportSpec:
    """An import a fix needs (`module`, `obj`, `asname` as in LibCST's AddImportsVisitor)."""

    module: str
    obj: str | None = None
    asname: str | None = None


def spelled_with_import(binder, qualified_name: str) -> tuple[str, ImportSpec | None]:
    """How a fix writes `qualified_name` in a module (`facts.binder.Binder.spelling`), with the import it must add
    (None: the module binds it already)."""
    text, module = binder.spelling(qualified_name)
    return text, ImportSpec(module) if module is not None else None


@dataclass(frozen=True)
class Fix:
    """Node replacements that together repair one diagnostic.

    `changes` maps original nodes (by identity) to their replacements; `add_imports` are added when missing;
    `remove_imports` are removed only if nothing uses them after the rewrite.
    """

    safety: Safety
    description: str
    changes: tuple[tuple[cst.CSTNode, Replacement], ...]
    add_imports: tuple[ImportSpec, ...] = ()
    remove_imports: tuple[ImportSpec, ...] = ()

    @property
    def applicable(self) -> bool:
        return self.safety is not Safety.DISPLAY_ONLY


@dataclass(frozen=True)
class Position:
    line: int  # 1-based
    column: int  # 1-based, as editors and `path:line:col` show it


@dataclass(frozen=True)
class Diagnostic:
    """One finding: which rule, where, what, and how to repair it (if jaxfix knows how)."""

    code: str
    name: str
    message: str
    start: Position
    end: Position
    fix: Fix | None = None
    node: cst.CSTNode | None = field(default=None, compare=False, repr=False)
    edits: tuple["TextEdit", ...] = ()  # the fix as text edits of the checked text, where asked for (JSON output)
    cell: int | None = None  # in a notebook: the cell (1-based, every cell counted); start and end are in it
    # A `check`-rule's fix plan: what its `fix_finding` needs to build `fix.changes` on LibCST (an `ast` node, ...),
    # where it has an applicable fix; the engine builds the changes only where fixes are wanted.
    plan: object = field(default=None, compare=False, repr=False)

    @property
    def where(self) -> str:
        """`line:col`, or `cell N:line:col` in a notebook, as `path:WHERE: CODE message` shows it."""
        place = f"{self.start.line}:{self.start.column}"
        return place if self.cell is None else f"cell {self.cell}:{place}"

    @property
    def fixable(self) -> bool:
        return self.fix is not None and self.fix.applicable

    def sort_key(self) -> tuple[int, int, int, str]:
        return (self.cell or 0, self.start.line, self.start.column, self.code)


@dataclass(frozen=True)
class Decision:
    """Why a codemod left a place alone after recognising its pattern there (a loop in untraced code, a trip
    count it cannot prove): recorded only while `jaxfix explain` asks, so that the explanation comes from the
    matcher itself and never from a copy of it."""

    code: str
    start: Position
    end: Position
    reason: str


@dataclass(frozen=True)
class TextEdit:
    """Replace the characters [start, end) of the original text with `replacement` (offsets in characters)."""

    start: int
    end: int
    replacement: str
