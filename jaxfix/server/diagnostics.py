"""The engine's findings as LSP diagnostics: code, message, severity, source "jaxfix", range in the client's
units, and a link to the rule's page (docs/rules/JFxxx.md)."""

from __future__ import annotations

from lsprotocol import types

from jaxfix import ruledocs
from jaxfix.diagnostics import Diagnostic, Safety
from jaxfix.server.positions import Lines

SOURCE = "jaxfix"


def severity(diagnostic: Diagnostic) -> types.DiagnosticSeverity:
    """A warning; a hint that is never applied (a display-only fix) is information."""
    if diagnostic.fix is not None and diagnostic.fix.safety is Safety.DISPLAY_ONLY:
        return types.DiagnosticSeverity.Information
    return types.DiagnosticSeverity.Warning


def lsp_diagnostic(diagnostic: Diagnostic, lines: Lines) -> types.Diagnostic:
    href = ruledocs.uri(diagnostic.code)
    return types.Diagnostic(
        range=lines.range(diagnostic.start, diagnostic.end),
        message=diagnostic.message,
        severity=severity(diagnostic),
        code=diagnostic.code,
        code_description=types.CodeDescription(href=href) if href else None,
        source=SOURCE,
    )

