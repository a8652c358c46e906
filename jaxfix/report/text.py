"""The human-readable report: one `path:line:col: CODE [*] message` line per finding, then a summary."""

from __future__ import annotations

from typing import Sequence

from jaxfix.diagnostics import Diagnostic, Safety
from jaxfix.engine import FileResult


def finding_line(path: str, diagnostic: Diagnostic) -> str:
    marker = ""
    if diagnostic.fix is not None:
        marker = {Safety.SAFE: "[*] ", Safety.UNSAFE: "[*unsafe] ", Safety.DISPLAY_ONLY: "[hint] "}[diagnostic.fix.safety]
    return f"{path}:{diagnostic.start.line}:{diagnostic.start.column}: {diagnostic.code} {marker}{diagnostic.message}"


def problem_lines(results: Sequence[FileResult]) -> list[str]:
    lines = []
    for result in results:
        if result.error:
            lines.append(f"{result.path}: error: {result.error}")
        for message in result.internal_errors:
            lines.append(f"{result.path}: internal error: {message}")
    return lines


def plural(count: int, word: str) -> str:
    if count == 1:
        return f"{count} {word}"
    return f"{count} {word}{'es' if word.endswith(('x', 's')) else 's'}"


def check_summary(results: Sequence[FileResult], unsafe_fixes: bool) -> str:
    findings = [d for r in results for d in r.diagnostics]
    safe = sum(1 for d in findings if d.fix is not None and d.fix.safety is Safety.SAFE)
    unsafe = sum(1 for d in findings if d.fix is not None and d.fix.safety is Safety.UNSAFE)
    errors = sum(1 for r in results if r.error)
    text = f"Checked {plural(len(results), 'file')}: {plural(len(findings), 'finding')}, {safe + unsafe} fixable"
    if unsafe:
        text += f" (of which {unsafe} unsafe)"
    if errors:
        text += f", {plural(errors, 'file')} with errors"
    text += "."
    if safe:
        text += f"\n{plural(safe, 'fix')} available with `jaxfix apply`."
    if unsafe:
        text += (
            f"\n{plural(unsafe, 'more fix')} with `jaxfix apply --unsafe-fixes`."
            if not unsafe_fixes
            else f"\n{plural(unsafe, 'unsafe fix')} included by --unsafe-fixes."
        )
    return text


def apply_summary(results: Sequence[FileResult], *, diff_only: bool) -> str:
    applied = sum(r.fixes_applied for r in results)
    changed = sum(1 for r in results if r.changed)
    remaining = sum(len(r.diagnostics) for r in results)
    errors = sum(1 for r in results if r.error)
    verb = "would apply" if diff_only else "applied"
    where = "would change" if diff_only else "changed"
    text = f"{verb.capitalize()} {plural(applied, 'fix')} in {plural(len(results), 'file')} ({changed} {where})"
    text += f"; {plural(remaining, 'finding')} left without an applicable fix"
    if errors:
        text += f"; {plural(errors, 'file')} with errors"
    return text + "."
