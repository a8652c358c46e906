"""`jaxfix explain FILE:LINE`: rule by rule, whether a codemod matched at one line and what decided it.

Nothing here re-implements a matcher, nor the run loop: the selected codemods run over the module once, in the
engine's own loop (`engine.run_rules`) as `check` runs them, with `explaining` on (`ModuleContext`'s and `FileFacts`'): their findings
say what matched (and whether a fix was offered), and the places they recognised but left alone come back as
`Decision`s that they recorded themselves (`Codemod.decline`). A codemod that looks at none of the node kinds that
start on the line is summarised as not applicable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from jaxfix import notebook, registry
from jaxfix.analysis.context import ModuleContext
from jaxfix.analysis import fastnodes
from jaxfix.analysis.metadata import fast_visits
from jaxfix.analysis.project import ModuleFacts
from jaxfix.codemod import Codemod, _visitor_names
from jaxfix.diagnostics import Decision, Diagnostic, Safety
from jaxfix.facts.module import FileFacts
from jaxfix.suppression import unsuppressed

_SAFETY_WORDS = {
    Safety.SAFE: "safe fix (`jaxfix apply` makes it)",
    Safety.UNSAFE: "unsafe fix (`jaxfix apply --unsafe-fixes` makes it)",
    Safety.DISPLAY_ONLY: "suggested fix, never applied",
}


class ExplainError(Exception):
    """Input `explain` cannot answer for (no such file, a line out of range, a syntax error): one line."""


@dataclass(frozen=True)
class Target:
    """What `FILE:LINE` (or `NOTEBOOK:cell N:LINE`) names."""

    path: str
    line: int
    cell: int | None = None

    @property
    def label(self) -> str:
        return f"{self.path}:{self.line}" if self.cell is None else f"{self.path}:cell {self.cell}:{self.line}"


@dataclass(frozen=True)
class Verdict:
    """One rule at the line: `outcome` is "fix", "report", "suppressed", "declined", "no match" or "crashed"."""

    code: str
    name: str
    outcome: str
    detail: str = ""


@dataclass
class Explanation:
    target: Target
    source_line: str
    context: str  # the enclosing function and whether (and through what) it is traced
    verdicts: list[Verdict] = field(default_factory=list)
    not_applicable: list[str] = field(default_factory=list)  # codes of the rules that look at nothing on the line
    not_selected: list[str] = field(default_factory=list)  # codes left out by the selection (opt-in, --ignore)

    def lines(self) -> list[str]:
        out = [f"{self.target.label}: {self.source_line.strip()}", f"  {self.context}"]
        quiet = [v.code for v in self.verdicts if v.outcome == "no match"]
        for verdict in self.verdicts:
            if verdict.outcome != "no match":
                text = f"{verdict.code} {verdict.name}: {verdict.outcome}"
                out.append(f"{text}: {verdict.detail}" if verdict.detail else text)
        if quiet:
            out.append(f"no match: {', '.join(quiet)} (they look at this line's code and found nothing of their pattern)")
        if self.not_applicable:
            out.append(f"not applicable: {len(self.not_applicable)} rules (none of them looks at this line's kind of code)")
        if self.not_selected:
            out.append(f"not selected: {', '.join(self.not_selected)} (--extend-select adds a rule)")
        return out


_TARGET = re.compile(r"^(?P<path>.+?):(?:cell ?(?P<cell>\d+):)?(?P<line>\d+)$")


def parse_target(text: str) -> Target:
    """`FILE:LINE`, or `NOTEBOOK.ipynb:cell N:LINE` (also `cellN:LINE`)."""
    match = _TARGET.match(text.strip())
    if match is None:
        raise ExplainError(f"expected FILE:LINE (or NOTEBOOK.ipynb:cell N:LINE), not {text!r}")
    cell = int(match.group("cell")) if match.group("cell") else None
    path = match.group("path")
    if cell is not None and not notebook.is_notebook(path):
        raise ExplainError(f"{path}: `cell N:LINE` names a line of a notebook (.ipynb)")
    if cell is None and notebook.is_notebook(path):
        raise ExplainError(f"{path}: name a notebook line as {path}:cell N:LINE")
    return Target(path, int(match.group("line")), cell)


def explain(target: Target, codemods: Sequence[type[Codemod]], project: ModuleFacts | None = None) -> Explanation:
    """Read `target.path` and explain its line. Raises ExplainError for input it cannot read or parse."""
    path = Path(target.path)
    if not path.is_file():
        raise ExplainError(f"{target.path}: no such file")
    if target.cell is None:
        from jaxfix.files import SourceError, read_bytes, decode

        try:
            text = decode(read_bytes(path)).text
        except SourceError as error:
            raise ExplainError(f"{target.path}: {error}") from None
        return explain_text(text, target, codemods, project)
    try:
        book = notebook.read(path.read_bytes())
    except (OSError, notebook.NotebookError) as error:
        raise ExplainError(f"{target.path}: {error}") from None
    text, cells = book.module()
    line = cells.module_line(target.cell, target.line)
    if line is None:
        raise ExplainError(f"{target.label}: no such code cell line")
    return explain_text(text, target, codemods, None, module_line=line)


def explain_text(
    text: str, target: Target, codemods: Sequence[type[Codemod]], project: ModuleFacts | None = None,
    *, module_line: int | None = None,
) -> Explanation:
    """Explain line `module_line` (default `target.line`) of `text`."""
    from jaxfix.engine import _checked_tree, run_rules

    line = module_line if module_line is not None else target.line
    lines = text.splitlines()
    if not 1 <= line <= len(lines):
        raise ExplainError(f"{target.label}: line out of range (the file has {len(lines)} lines)")
    tree, syntax = _checked_tree(text, target.path)
    if syntax is not None:
        raise ExplainError(f"{target.path}: syntax error, {syntax}")
    try:
        wrapper = MetadataWrapper(fastnodes.parse_module(text), unsafe_skip_copy=True)
    except cst.ParserSyntaxError as error:
        raise ExplainError(f"{target.path}: cannot parse: {str(error).splitlines()[0]}") from None
    facts = FileFacts(text, tree, project, explaining=True)  # one binder for the check-rules and the visitors
    context = ModuleContext(wrapper, tree, project, facts=facts)
    facts.screen = context.screen
    context.explaining = True
    positions = wrapper.resolve(PositionProvider)
    kinds = _kinds_on_line(wrapper.module, positions, line)
    explanation = Explanation(target, lines[line - 1], _traced_context(context, positions, line))
    yielded_to = registry.yielded_to(codemods)  # run for their precedence only, unreported, as `check` runs them
    hidden = {c.code for c in yielded_to}
    with fast_visits():
        visitors, crashed, _ = run_rules(facts, [*codemods, *yielded_to], lambda: (wrapper, context))
    kept = {id(d) for d in unsuppressed([d for v in visitors for d in v.diagnostics], text)}
    for visitor in (v for v in visitors if v.code not in hidden):
        verdict = _verdict(visitor, line, kept)
        if verdict is not None:
            explanation.verdicts.append(verdict)
        elif _looks_at(type(visitor), kinds):
            explanation.verdicts.append(Verdict(visitor.code, visitor.name, "no match"))
        else:
            explanation.not_applicable.append(visitor.code)
    for codemod in crashed:
        explanation.verdicts.append(Verdict(codemod.code, codemod.name, "crashed", "an internal error: see `jaxfix check`"))
    explanation.verdicts.sort(key=lambda v: v.code)
    chosen = {c.code for c in codemods}
    explanation.not_selected = [c.code for c in registry.all_codemods() if c.code not in chosen]
    return explanation


def _covers(start: int, end: int, line: int) -> bool:
    return start <= line <= end


def _verdict(visitor: Codemod, line: int, kept: set[int]) -> Verdict | None:
    """What the codemod's findings and recorded decisions say about `line`: the innermost of them."""
    found = [d for d in visitor.diagnostics if _covers(d.start.line, d.end.line, line)]
    decided = [d for d in visitor.decisions if _covers(d.start.line, d.end.line, line)]
    if found:
        diagnostic = max(found, key=lambda d: (d.start.line, d.start.column))
        if decided and max(d.start.line for d in decided) > diagnostic.start.line:
            return _declined(visitor, decided)
        return _matched(visitor, diagnostic, kept)
    if decided:
        return _declined(visitor, decided)
    return None


def _matched(visitor: Codemod, diagnostic: Diagnostic, kept: set[int]) -> Verdict:
    if id(diagnostic) not in kept:
        return Verdict(visitor.code, visitor.name, "suppressed", f"a noqa comment silences: {diagnostic.message}")
    if diagnostic.fix is None:
        return Verdict(visitor.code, visitor.name, "matched, no fix", diagnostic.message)
    fix = diagnostic.fix
    return Verdict(
        visitor.code, visitor.name, f"matched, {_SAFETY_WORDS[fix.safety]}", f"{fix.description}: {diagnostic.message}"
    )


def _declined(visitor: Codemod, decided: list[Decision]) -> Verdict:
    decision = max(decided, key=lambda d: (d.start.line, d.start.column))
    return Verdict(visitor.code, visitor.name, "recognised, left alone", decision.reason)


def _kinds_on_line(module: cst.Module, positions, line: int) -> set[str]:
    """The node classes (`For`, `Call`, ...) whose code starts on `line`, and the statement around it."""
    kinds: set[str] = set()

    class Collect(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            where = positions.get(node)
            if where is None:
                return True
            if where.start.line == line:
                kinds.add(type(node).__name__)
            if isinstance(node, cst.SimpleStatementLine) and where.start.line <= line <= where.end.line:
                kinds.add(type(node).__name__)
            return where.start.line <= line <= where.end.line

    module.visit(Collect())
    return kinds


def _looks_at(codemod: type[Codemod], kinds: set[str]) -> bool:
    """Whether the rule looks at some kind of node on the line (LibCST's names of kinds): a visitor by its visit_
    methods, a `check`-rule by what it declares (`Codemod.looks_at`)."""
    if any(kind in kinds for kind in codemod.looks_at):
        return True
    names = _visitor_names(codemod)
    return any(n.split("_", 1)[1].split("_")[0] in kinds for n in names if n not in ("visit_Module", "leave_Module"))


def _traced_context(context: ModuleContext, positions, line: int) -> str:
    """`in `f`: traced (jax.jit)`, or why not: the fact every loop and branch rule starts from."""
    function = None
    for node, where in positions.items():
        if isinstance(node, (cst.FunctionDef, cst.Lambda)) and where.start.line < line <= where.end.line:
            if function is None or positions[function].start.line <= where.start.line:
                function = node
    if function is None:
        return "module-level code: it runs eagerly, never under tracing"
    traced = context.traced
    name = function.name.value if isinstance(function, cst.FunctionDef) else "lambda"
    if not traced.is_traced(function):
        return f"in `{name}`: not traced (nothing in this module or project jits, vmaps or transforms it)"
    how = ", ".join(sorted(traced.transforms(function))) or "a traced caller"
    notes = []
    if not traced.staged(function):
        notes.append("run eagerly: only jax.grad-like transformations reach it")
    elif not traced.compiled(function):
        notes.append("staged but not compiled: no jax.jit reaches it")
    if any(key == name or key.endswith("." + name) for key in context.project.traced):
        notes.append(f"the project index says how other modules trace `{name}`")
    extra = f"; {'; '.join(notes)}" if notes else ""
    return f"in `{name}`: traced through {how}{extra}"
