"""Code actions on a document's latest analysis: a quick fix per finding that has one (unsafe fixes too, one
at a time, saying so), "suppress JF123 on this line", and `source.fixAll.jaxfix`, which applies the safe fixes
as `jaxfix apply` would. Each edit is the few text edits between the buffer and its rewrite.

A client that can resolve code actions gets them without their edits, which are computed when one is chosen:
a rewrite costs about as much as an analysis, and editors ask for code actions at every cursor move."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from lsprotocol import types

from jaxfix.diagnostics import Diagnostic, Safety
from jaxfix.engine import Settings, TextAnalysis, fix_alone, fix_text
from jaxfix.server import noqa
from jaxfix.server.diagnostics import SOURCE
from jaxfix.server.edits import lsp_edits

FIX_ALL = f"{types.CodeActionKind.SourceFixAll.value}.jaxfix"


@dataclass(frozen=True)
class Target:
    """The document the actions edit, and how the client wants edits."""

    uri: str
    version: int | None
    path: str  # for messages about code that does not compile
    encoding: str
    versioned: bool  # the client takes `documentChanges` (edits refused if the buffer moved on)
    lazy: bool  # the client resolves code actions: leave the costly edits out until one is chosen
    # a notebook's cell (jaxfix.server.notebooks.CellEdits): the analysed text is the notebook's module, and an
    # edit of it becomes edits of the cells it changes
    notebook: Any = None


def wanted(kind: str, only: Sequence[str] | None) -> bool:
    """LSP kinds are hierarchical: asking for `source` or `source.fixAll` includes `source.fixAll.jaxfix`."""
    return not only or any(kind == k or kind.startswith(f"{k}.") for k in only)


def on_lines(analysis: TextAnalysis, first: int, last: int) -> list[Diagnostic]:
    """The findings on any of the lines `first`..`last` (from 0): those under the cursor or selection."""
    return [d for d in analysis.diagnostics if d.start.line - 1 <= last and d.end.line - 1 >= first]


def key(diagnostic: Diagnostic) -> list[Any]:
    return [diagnostic.code, diagnostic.start.line, diagnostic.start.column, diagnostic.end.line, diagnostic.end.column]


def find(analysis: TextAnalysis, wanted_key: Sequence[Any]) -> Diagnostic | None:
    return next((d for d in analysis.diagnostics if key(d) == list(wanted_key)), None)


def workspace_edit(target: Target, old: str, new: str) -> types.WorkspaceEdit | None:
    """The edit that turns `old` into `new`; None where a notebook's cells cannot take it."""
    if target.notebook is not None:
        return target.notebook.workspace_edit(new, target.encoding, target.versioned)
    edits = lsp_edits(old, new, target.encoding)
    if target.versioned:
        document = types.OptionalVersionedTextDocumentIdentifier(uri=target.uri, version=target.version)
        return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(text_document=document, edits=edits)])
    return types.WorkspaceEdit(changes={target.uri: edits})


def fix_title(diagnostic: Diagnostic) -> str:
    assert diagnostic.fix is not None
    unsafe = " (unsafe)" if diagnostic.fix.safety is Safety.UNSAFE else ""
    return f"{diagnostic.code}: {diagnostic.fix.description}{unsafe}"


def _lsp_diagnostics(diagnostic: Diagnostic, reported: Sequence[types.Diagnostic]) -> list[types.Diagnostic] | None:
    """The client's copy of the finding, which lets it show which diagnostic an action resolves."""
    same = [r for r in reported if r.source == SOURCE and r.code == diagnostic.code and r.range.start.line == diagnostic.start.line - 1]
    return same or None


def quick_fix(analysis: TextAnalysis, diagnostic: Diagnostic, target: Target, reported: Sequence[types.Diagnostic]) -> types.CodeAction | None:
    if not diagnostic.fixable:
        return None
    action = types.CodeAction(
        title=fix_title(diagnostic),
        kind=types.CodeActionKind.QuickFix,
        diagnostics=_lsp_diagnostics(diagnostic, reported),
        is_preferred=diagnostic.fix.safety is Safety.SAFE,
    )
    if target.lazy:
        action.data = {"uri": target.uri, "version": target.version, "fix": key(diagnostic)}
        return action
    return with_fix(action, analysis, diagnostic, target)


def with_fix(action: types.CodeAction, analysis: TextAnalysis, diagnostic: Diagnostic, target: Target) -> types.CodeAction | None:
    """The action with the edit of `diagnostic`'s fix alone; None when that fix does not compile."""
    new = fix_alone(analysis, diagnostic, path=target.path)
    if new is None:
        return None
    action.edit = workspace_edit(target, analysis.text, new)
    return action if action.edit is not None else None


def suppress(analysis: TextAnalysis, diagnostic: Diagnostic, target: Target, reported: Sequence[types.Diagnostic]) -> types.CodeAction | None:
    found = noqa.suppressed(analysis.text, diagnostic)
    if found is None:
        return None
    line, new = found
    edit = workspace_edit(target, analysis.text, new)
    if edit is None:
        return None
    where = target.notebook.place(line) if target.notebook is not None else f"line {line}"
    return types.CodeAction(
        title=f"Suppress {diagnostic.code} on {where} (# noqa)",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=_lsp_diagnostics(diagnostic, reported),
        edit=edit,
    )


def fix_all(analysis: TextAnalysis, settings: Settings, target: Target) -> types.CodeAction | None:
    """Offered when the document has a safe fix; its edit applies them all, to a fixed point."""
    if not any(d.fix is not None and d.fix.safety is Safety.SAFE for d in analysis.diagnostics):
        return None
    action = types.CodeAction(title="jaxfix: fix all safely fixable problems", kind=FIX_ALL)
    if target.lazy:
        action.data = {"uri": target.uri, "version": target.version, "fixAll": True}
        return action
    return with_fix_all(action, analysis, settings, target)


def with_fix_all(action: types.CodeAction, analysis: TextAnalysis, settings: Settings, target: Target) -> types.CodeAction | None:
    if analysis.error is not None:
        return None
    safe_only = Settings(settings.codes, unsafe_fixes=False)
    new, applied, _, _ = fix_text(analysis.text, safe_only, path=target.path)
    if not applied or new == analysis.text:
        return None
    action.edit = workspace_edit(target, analysis.text, new)
    return action if action.edit is not None else None


def actions(
    analysis: TextAnalysis,
    settings: Settings,
    target: Target,
    lines: tuple[int, int],
    only: Sequence[str] | None,
    reported: Sequence[types.Diagnostic],
) -> list[types.CodeAction]:
    """Every action for the findings on `lines` (from 0), then fix-all, filtered by the kinds asked for."""
    found: list[types.CodeAction] = []
    if wanted(types.CodeActionKind.QuickFix, only):
        here = on_lines(analysis, *lines)
        found += [a for d in here if (a := quick_fix(analysis, d, target, reported)) is not None]
        seen = set()
        for diagnostic in here:
            action = suppress(analysis, diagnostic, target, reported)
            if action is not None and action.title not in seen:
                seen.add(action.title)
                found.append(action)
    if wanted(FIX_ALL, only):
        action = fix_all(analysis, settings, target)
        if action is not None:
            found.append(action)
    return found
