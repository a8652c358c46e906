"""The human-readable report: one `path:line:col: CODE [*] message` line per finding, then a summary."""

from __future__ import annotations

from typing import Sequence

from jaxfix.diagnostics import Diagnostic, Safety
from jaxfix.engine import FileResult


def finding_line(path: str, diagnostic: Diagnostic) -> str:
    marker = ""
    if diagnostic.fix is not None:
        marker = {Safety.SAFE: "[*] ", Safety.UNSAFE: "[*unsafe] ", Safety.DISPLAY_ONLY: "[hint] "}[diagnostic.fix.safety]
    return f"{path}:{diagnostic.where}: {diagnostic.code} {marker}{diagnostic.message}"


def problem_lines(results: Sequence[FileResult]) -> list[str]:
    lines = []
    for result in results:
        if result.error:
            lines.append(f"{result.path}: error: {result.error}")
        for message in result.internal_errors:
            lines.append(f"{result.path}: internal error: {message}")
        for message in result.notes:
            lines.append(f"{result.path}: note: {message}")
    return lines


def plural(count: int, word: str) -> str:
    if count == 1:
        return f"{count} {word}"
    return f"{count} {word}{'es' if word.endswith(('x', 's')) else 's'}"


def by_safety(findings: Sequence[Diagnostic]) -> tuple[int, int, int]:
    """How many findings have a safe fix, an unsafe one, and a hint (the rest have no fix)."""
    counts = {Safety.SAFE: 0, Safety.UNSAFE: 0, Safety.DISPLAY_ONLY: 0}
    for diagnostic in findings:
        if diagnostic.fix is not None:
            counts[diagnostic.fix.safety] += 1
    return counts[Safety.SAFE], counts[Safety.UNSAFE], counts[Safety.DISPLAY_ONLY]


def check_summary(results: Sequence[FileResult], unsafe_fixes: bool) -> str:
    findings = [d for r in results for d in r.diagnostics]
    safe, unsafe, _ = by_safety(findings)
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


def apply_summary(results: Sequence[FileResult], left: Sequence[Diagnostic], *, diff_only: bool) -> str:
    """`558 files checked, 176 would change (213 fixes); 87 findings left: ...`: the files counted once, the
    changed ones apart, and what kept each finding that is left."""
    applied = sum(r.fixes_applied for r in results)
    changed = sum(1 for r in results if r.changed)
    errors = sum(1 for r in results if r.error)
    where = "would change" if diff_only else "changed"
    text = f"{plural(len(results), 'file')} checked, {changed} {where}"
    if applied:
        text += f" ({plural(applied, 'fix')})"
    if errors:
        text += f", {plural(errors, 'file')} with errors"
    if left:
        text += f"; {plural(len(left), 'finding')} left: {left_breakdown(left)}"
    else:
        text += "; no finding left"
    return text + "."


def left_breakdown(left: Sequence[Diagnostic]) -> str:
    """Why the findings `apply` leaves were left: an unsafe fix not asked for, a hint, or no fix at all."""
    _, unsafe, hints = by_safety(left)
    parts = []
    if unsafe:
        parts.append(f"{unsafe} fixable with --unsafe-fixes")
    if hints:
        parts.append(plural(hints, "hint"))
    if len(left) - unsafe - hints:
        parts.append(f"{len(left) - unsafe - hints} without a fix")
    return ", ".join(parts)


def statistics_lines(findings: Sequence[Diagnostic], unsafe_fixes: bool) -> list[str]:
    """`check --statistics`: one line per rule, most findings first: count, code, name, and how many are fixable
    (`jaxfix apply` makes the safe fixes; the unsafe ones need --unsafe-fixes)."""
    by_code: dict[str, list[Diagnostic]] = {}
    for diagnostic in findings:
        by_code.setdefault(diagnostic.code, []).append(diagnostic)
    rows = []
    for code, found in sorted(by_code.items(), key=lambda item: (-len(item[1]), item[0])):
        safe, unsafe, hints = by_safety(found)
        notes = []
        if safe:
            notes.append(f"{safe} [*]")
        if unsafe:
            notes.append(f"{unsafe} [*unsafe]" + ("" if unsafe_fixes else " (--unsafe-fixes)"))
        if hints:
            notes.append(f"{hints} [hint]")
        rows.append((str(len(found)), code, found[0].name, ", ".join(notes)))
    return _columns(rows)


def apply_statistics_lines(results: Sequence[FileResult], left: Sequence[Diagnostic], *, diff_only: bool) -> list[str]:
    """`apply --statistics`: one line per rule: fixes made (or, with --diff, that would be), findings left."""
    fixed: dict[str, int] = {}
    for result in results:
        for code, count in result.fixes_by_code.items():
            fixed[code] = fixed.get(code, 0) + count
    names = {d.code: d.name for d in left}
    names.update({c.code: c.name for c in _codemods() if c.code in fixed and c.code not in names})
    remaining: dict[str, int] = {}
    for diagnostic in left:
        remaining[diagnostic.code] = remaining.get(diagnostic.code, 0) + 1
    codes = sorted(set(fixed) | set(remaining), key=lambda c: (-fixed.get(c, 0), -remaining.get(c, 0), c))
    header = ("would fix" if diff_only else "fixed", "left", "code", "rule")
    rows = [(str(fixed.get(c, 0)), str(remaining.get(c, 0)), c, names.get(c, "")) for c in codes]
    return _columns([header, *rows]) if rows else []


def _codemods():
    from jaxfix import registry

    return registry.all_codemods()


def _columns(rows: Sequence[tuple[str, ...]]) -> list[str]:
    """Rows as aligned columns: numbers right-aligned, text left-aligned; no trailing spaces."""
    if not rows:
        return []
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [cell.rjust(widths[i]) if cell.isdigit() or i == 0 else cell.ljust(widths[i]) for i, cell in enumerate(row)]
        lines.append("  ".join(cells).rstrip())
    return lines
