"""The per-file pipeline: read → syntax check (one `ast` parse, then compiled) → screen → parse → codemods →
(apply: merge fixes to a fixed point → compile) → write. It prints nothing and renders nothing: it returns
FileResults that the faces render.

The screen asks each codemod `may_match(text)`. The rules with a `check` then answer on the `ast` that the syntax
check made (`run_rules`); the others are asked `may_match_tree(screen)` on it (see codemod.py). LibCST parses
only files that some visitor rule may match, or where a `check` finding has a fix plan and fixes are wanted
(`fixes`: apply, --diff, a code action, JSON's edits; `Settings.text_edits` says so for `check`).

Each pass parses once and runs every selected codemod in one batched traversal. Fixes whose nodes overlap are
deferred to the next pass, so every pass applies only independent fixes; passes repeat until nothing applies.
A codemod that crashes, or whose fix yields code that does not compile, is reported as an internal error and
left out for that file; the others still run.
"""

from __future__ import annotations

import ast
import dataclasses
import os
import traceback
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Sequence

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from jaxfix import registry
from jaxfix.analysis.context import ModuleContext
from jaxfix.analysis import fastnodes
from jaxfix.analysis.metadata import fast_visits
from jaxfix.analysis.project import EMPTY as EMPTY_FACTS
from jaxfix.analysis.project import ModuleFacts, Project
from jaxfix.analysis.screen import Screen
from jaxfix.codemod import Codemod, OptionError
from jaxfix.config import Config, ConfigError
from jaxfix.diagnostics import Diagnostic, Fix, Position, Safety, TextEdit
from jaxfix.facts.module import FileFacts
from jaxfix.cache import FindingsPack, ResultCache, entry_for, read_entry
from jaxfix.files import SourceError, decode, read_bytes, write_if_changed
from jaxfix import notebook, parsed
from jaxfix.project_io import begin_project, project_root
from jaxfix.suppression import unsuppressed
from jaxfix.workers import Workers, collections_deferred

if TYPE_CHECKING:
    from jaxfix.edit.bridge import Bridge

MAX_PASSES = 10


@dataclass(frozen=True)
class Settings:
    codes: tuple[str, ...]  # the selected codemods' codes
    unsafe_fixes: bool = False
    # code → ((option, value), ...): the codemods' OPTIONS from [tool.jaxfix.codemods.NAME]
    options: tuple[tuple[str, tuple[tuple[str, object], ...]], ...] = ()
    # (gitignore-style pattern relative to `root`, codes or names it turns off), from per-file-ignores
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    root: str | None = None  # the folder of the config file that per_file_ignores come from
    # `check` also turns each fix into text edits (Diagnostic.edits), for JSON output: fixes are wanted, so the
    # `check`-rules' fix plans are built (a LibCST parse); without it `check` builds none
    text_edits: bool = False

    @property
    def codemods(self) -> tuple[type[Codemod], ...]:
        wanted = set(self.codes)
        configured = dict(self.options)
        return tuple(
            c.with_options(dict(configured[c.code])) if c.code in configured else c
            for c in registry.all_codemods()
            if c.code in wanted
        )

    def codemods_for(self, path: str) -> tuple[type[Codemod], ...]:
        """The codemods that run on `path`: the selected ones less those its per-file-ignores turn off."""
        if not self.per_file_ignores:
            return self.codemods
        off = _ignored_for(path, self.per_file_ignores, self.root)
        return tuple(c for c in self.codemods if not any(c.code.upper().startswith(o.upper()) or c.name == o for o in off))

    def allows(self, fix: Fix) -> bool:
        return fix.safety is Safety.SAFE or (self.unsafe_fixes and fix.safety is Safety.UNSAFE)


def _ignored_for(path: str, table: tuple[tuple[str, tuple[str, ...]], ...], root: str | None) -> set[str]:
    """The codes that per-file-ignores turn off for `path` (patterns are gitignore-style, relative to `root`)."""
    import pathspec

    resolved = Path(path).resolve()
    try:
        relative = resolved.relative_to(Path(root or os.getcwd()).resolve()).as_posix()
    except ValueError:
        return set()
    off: set[str] = set()
    for pattern, codes in table:
        if pathspec.GitIgnoreSpec.from_lines([pattern]).match_file(relative):
            off.update(codes)
    return off


def settings_from_config(
    config: Config, *, select=(), extend_select=(), ignore=(), unsafe_fixes: bool = False, text_edits: bool = False
) -> Settings:
    """The Settings for a run under `config` ([tool.jaxfix], read by config.py, which knows no rule), with the
    command line's (or an editor's) `select`, `extend_select`, `ignore` and `unsafe_fixes` on top (`select`
    replaces the file's select and extend-select, as Ruff's does). Raises ConfigError for a code or option that
    names nothing."""
    where = config.source or "pyproject.toml"
    try:
        extend = list(extend_select) if select else [*config.extend_select, *extend_select]
        codemods = registry.select(list(select) or config.select, [*config.ignore, *ignore], extend)
        for _, codes in config.per_file_ignores:
            registry.select(codes)
    except registry.UnknownSelector as error:
        raise ConfigError(str(error)) from None
    options = []
    for name, values in config.codemods.items():
        codemod = registry.by_code(name)
        if codemod is None:
            raise ConfigError(f"{where}: [tool.jaxfix.codemods.{name}] names no codemod (see `jaxfix rules`)")
        try:
            codemod.with_options(values)
        except OptionError as error:
            raise ConfigError(f"{where}: [tool.jaxfix.codemods.{name}]: {error}") from None
        options.append((codemod.code, tuple(sorted(values.items()))))
    return Settings(
        tuple(c.code for c in codemods),
        unsafe_fixes or config.unsafe_fixes,
        options=tuple(options),
        per_file_ignores=tuple((pattern, tuple(codes)) for pattern, codes in config.per_file_ignores),
        root=str(config.source.parent) if config.source else None,
        text_edits=text_edits,
    )


@dataclass
class FileResult:
    path: str
    diagnostics: list[Diagnostic] = field(default_factory=list)  # in `original`, or what remains in `fixed`
    error: str | None = None  # the file could not be read, decoded or parsed: it was left untouched
    internal_errors: list[str] = field(default_factory=list)
    original: str | None = None
    fixed: str | None = None  # the rewritten text, when applying changed it
    fixes_applied: int = 0
    fixes_by_code: dict[str, int] = field(default_factory=dict)  # of fixes_applied, how many each rule made
    written: bool = False
    # A notebook's result: `original` and `fixed` are its code cells as one module (what verify and bench run);
    # `cells` maps that module's lines to cells, `cell_changes` holds (cell, old source, new source) of each
    # cell a fix changes, and the diagnostics name their cell.
    cells: notebook.CellMap | None = None
    cell_changes: list[tuple[int, str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what the user should hear that is no error (a cell skipped)
    # What the result cache should keep for this file, (key, entry), where a cache was given: the process that
    # asked writes it (the cache's pack of the file's project), not the worker that made it.
    cache_entry: tuple[str, dict] | None = None

    @property
    def changed(self) -> bool:
        return self.fixed is not None and self.fixed != self.original


# ---- one module in memory ----------------------------------------------------------------------------------


def analyse(
    text: str, codemods: Sequence[type[Codemod]], *, tree: ast.Module | None = None, project: ModuleFacts | None = None,
    fixes: bool = False,
) -> tuple[list[Diagnostic], list[str], MetadataWrapper | None]:
    """Diagnostics of every codemod on `text` (suppressed ones dropped), internal errors, and the wrapper whose
    nodes the diagnostics' fixes refer to (None where nothing was parsed with LibCST). `tree`, the `ast` of `text`
    where the caller has it, saves the screen a parse. `project`: the module's facts from the project index
    (project.py). `fixes`: whether the caller wants fixes (`apply`, `--diff`, a code action, JSON's edits): only
    then are the `check`-rules' fix plans built, which parses the module with LibCST; the visitor rules need it
    anyway. Raises cst.ParserSyntaxError for unparsable text."""
    active, screen = _screened(text, codemods, tree, project)
    if not active:
        return [], [], None
    consulted = _consulted(active, text, screen, project)
    facts = FileFacts(text, tree, project, screen)
    parsed_module: list[tuple[MetadataWrapper, ModuleContext]] = []

    def parse() -> tuple[MetadataWrapper, ModuleContext]:
        if not parsed_module:  # once: the fix plans are built on the module the visitors saw, with its positions
            wrapper = MetadataWrapper(fastnodes.parse_module(text), unsafe_skip_copy=True)  # freshly parsed: nobody shares it
            parsed_module.append((wrapper, ModuleContext(wrapper, _tree_of(screen), project, screen, facts)))
        return parsed_module[0]

    with fast_visits():
        runs, _, errors = run_rules(facts, [*active, *consulted], parse)
    diagnostics = [d for run in runs for d in run.diagnostics]
    if consulted:  # run only for what they tell the codemods that consult them, not reported
        silent = {c.code for c in consulted}
        diagnostics = [d for d in diagnostics if d.code not in silent]
    diagnostics = unsuppressed(diagnostics, text)
    if fixes and any(d.plan is not None and d.fixable for d in diagnostics):
        diagnostics = _planned_fixes(diagnostics, parse()[1].bridge, active, errors)
    wrapper = parsed_module[0][0] if parsed_module else None
    diagnostics = [dataclasses.replace(d, plan=None) if d.plan is not None else d for d in diagnostics]
    facts.release()  # nothing reads them now: freed by reference counting, not by the cyclic collector
    return sorted(diagnostics, key=Diagnostic.sort_key), errors, wrapper


def _planned_fixes(
    diagnostics: list[Diagnostic], bridge: Bridge, codemods: Sequence[type[Codemod]], errors: list[str],
) -> list[Diagnostic]:
    """The diagnostics with each fix plan built on LibCST (`Codemod.fix_finding`, through the node bridge, which
    computes positions only for the statements it is asked about). A rule that fails to build one is reported as
    an internal error, and its finding keeps no fix."""
    by_code = {c.code: c for c in codemods}
    built = []
    for diagnostic in diagnostics:
        if diagnostic.plan is None or not diagnostic.fixable:
            built.append(diagnostic)
            continue
        try:
            fix = by_code[diagnostic.code].fix_finding(diagnostic, bridge)
        except Exception:
            error = f"{diagnostic.code} crashed building a fix and was left unfixed: {_last_line(traceback.format_exc())}"
            if error not in errors:
                errors.append(error)
            fix = None
        built.append(dataclasses.replace(diagnostic, fix=fix, plan=None))
    return built


def screened(
    text: str, codemods: Sequence[type[Codemod]], *, tree: ast.Module | None = None, project: ModuleFacts | None = None
) -> list[type[Codemod]]:
    """The codemods that may find something in `text`: the text screens first, then, for those that pass, the
    `ast` screens (the module is parsed for them only if `tree` is not given and one of them needs it). A screen
    that cannot decide (`ast` rejects the text, or it nests too deeply) lets its codemod through."""
    return _screened(text, codemods, tree, project)[0]


def _screened(
    text: str, codemods: Sequence[type[Codemod]], tree: ast.Module | None, project: ModuleFacts | None = None,
    screen: Screen | None = None,
) -> tuple[list[type[Codemod]], Screen | None]:
    # A module whose functions another module traces (or a library's convention does) may hold traced code without
    # mentioning jax: text screens that ask for "jax" are asked as if it did. One that mentions jax is asked once:
    # a line `jax` added completes no word or pattern a text screen looks for (asking again cost 0.11 s of CPU
    # over the 533 such modules of the 1,401 real files).
    seeded = text + "\njax" if project is not None and project.traced and "jax" not in text else None
    active = [c for c in codemods if c.may_match(text) or (seeded is not None and c.may_match(seeded))]
    if not active:
        return active, None
    screen = Screen(text, tree, project) if screen is None else screen
    return [c for c in active if c.answers_on_ast() or _may_match_tree(c, screen)], screen


def _tree_of(screen: Screen) -> ast.Module | None:
    try:
        return screen.tree
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _consulted(
    active: Sequence[type[Codemod]], text: str, screen: Screen | None, project: ModuleFacts | None = None
) -> list[type[Codemod]]:
    """The codemods whose findings an active codemod asks to see (`Codemod.consults`: JF001 asks for those that
    suppression comments name) or that it yields to (`registry.yielded_to`), and that are not running anyway,
    screened like any other (with the same `screen`)."""
    asked = {selector.upper() for codemod in active for selector in codemod.consults(text)}
    asked |= {codemod.code for codemod in registry.yielded_to(active)}
    if not asked:
        return []
    running = {c.code for c in active}
    wanted = [
        c
        for c in registry.all_codemods()
        if c.code not in running and any(c.code.upper().startswith(a) or c.name.upper() == a for a in asked)
    ]
    return _screened(text, wanted, None, project, screen)[0] if wanted else []


def _may_match_tree(codemod: type[Codemod], screen: Screen) -> bool:
    try:
        return codemod.may_match_tree(screen)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return True


def _run_codemods(
    wrapper: MetadataWrapper, codemods: Sequence[type[Codemod]], tree: ast.Module | None = None,
    project: ModuleFacts | None = None, screen: Screen | None = None,
) -> tuple[list[Diagnostic], list[str]]:
    """Every finding of `codemods` on the parsed module, without any screen (the tests' and benchmarks' bare run:
    a `check`-rule's `check`, the others' visit), and the internal errors."""
    screen = Screen(wrapper.module.code, tree, project) if screen is None else screen  # one tree for facts and visits
    facts = FileFacts(wrapper.module.code, tree, project, screen)
    runs, _, errors = run_rules(facts, codemods, lambda: (wrapper, ModuleContext(wrapper, tree, project, screen, facts)))
    return [d for run in runs for d in run.diagnostics], errors


def run_rules(
    facts: FileFacts, codemods: Sequence[type[Codemod]], parse: Callable[[], tuple[MetadataWrapper, ModuleContext]]
) -> tuple[list[Codemod], list[type[Codemod]], list[str]]:
    """Every codemod's run on one module, the codemods left out because they crashed, and the internal errors that
    say so. The one place the rules run: `check` and `apply` here, and `explain` with `explaining` on (the runs
    then hold the decisions they recorded). The `check`-rules answer first, on `ast` (a run of one is its class
    holding what `check` gave); the others, and a `check`-rule that answers None for this module, run as visitors
    in one batched traversal of the LibCST module that `parse()` gives, asked for only then. `judge` (JF001's
    judgement of suppressions) sees every finding of both."""
    runs: list[Codemod] = []
    crashed: list[type[Codemod]] = []
    errors: list[str] = []
    visiting: list[type[Codemod]] = []
    for codemod in codemods:
        if not codemod.answers_on_ast():
            visiting.append(codemod)
            continue
        try:
            answer = codemod.check(facts)
        except Exception:
            errors.append(f"{codemod.code} crashed and was skipped for this file: {_last_line(traceback.format_exc())}")
            crashed.append(codemod)
            continue
        if answer is None:
            visiting.append(codemod)
            continue
        run = codemod(None)
        run.diagnostics = list(answer)
        run.decisions = [d for d in facts.decisions if d.code == codemod.code]
        runs.append(run)
    registry.yield_checked(runs, facts)
    if visiting:
        wrapper, context = parse()
        visitors, left_out, visit_errors = _visit(wrapper, context, visiting, runs)
        registry.yield_answered(runs, visitors, context, facts.explaining)
        runs.extend(visitors)
        crashed.extend(left_out)
        errors.extend(visit_errors)
    if not errors:  # with a codemod's findings lost to a crash, `judge` would judge on too little
        _judge(runs, facts, errors)
    return runs, crashed, errors


def _visit(
    wrapper: MetadataWrapper, context: ModuleContext, codemods: Sequence[type[Codemod]], answered: Sequence[Codemod] = ()
) -> tuple[list[Codemod], list[type[Codemod]], list[str]]:
    """The visitors of `codemods` after one batched traversal of the module, those left out because they crashed,
    and the internal errors that say so. `answered`: the runs of the `check`-rules, which a visitor may yield to
    (`registry.with_precedence` guards its visits with their findings too)."""
    remaining = list(codemods)
    crashed: list[type[Codemod]] = []
    errors: list[str] = []
    while remaining:
        try:
            ordered = registry.with_precedence([*answered, *(codemod(context) for codemod in remaining)])
            visitors = [v for v in ordered if not any(v is run for run in answered)]
            wrapper.visit_batched(visitors)
            return visitors, crashed, errors
        except Exception:
            culprit = _find_crashing(wrapper, context, remaining)
            errors.append(f"{culprit.code} crashed and was skipped for this file: {_last_line(traceback.format_exc())}")
            remaining.remove(culprit)
            crashed.append(culprit)
    return [], crashed, errors


def _judge(runs: Sequence[Codemod], facts: FileFacts, errors: list[str]) -> None:
    """Each rule's `judge`, given every finding of the module's rules (JF001 judges suppressions there)."""
    found = [d for run in runs for d in run.diagnostics]
    for run in runs:
        try:
            run.diagnostics.extend(type(run).judge(facts, found))
        except Exception:
            errors.append(f"{run.code} crashed and was skipped for this file: {_last_line(traceback.format_exc())}")
            run.diagnostics = []


def _find_crashing(wrapper: MetadataWrapper, context: ModuleContext, codemods: Sequence[type[Codemod]]) -> type[Codemod]:
    for codemod in codemods:
        try:
            wrapper.visit_batched([codemod(context)])
        except Exception:
            return codemod
    return codemods[0]  # the crash came from their combination; drop the first and go on


def fix_text(
    text: str,
    settings: Settings,
    *,
    path: str = "<string>",
    tree: ast.Module | None = None,
    keep: Callable[[Diagnostic, str], bool] | None = None,
    by_code: Counter | None = None,
    project: ModuleFacts | None = None,
) -> tuple[str, int, list[Diagnostic], list[str]]:
    """Apply the allowed fixes to a fixed point. Returns (new text, fixes applied, remaining diagnostics,
    internal errors); `by_code`, if given, counts the fixes applied per rule. The new text always compiles when the original did. `tree`: the `ast` of `text`, if known
    (each pass's syntax check hands its tree on to the next pass's screen). `keep(diagnostic, current text)`, if
    given, decides which allowed fixes are applied (`apply --verify` leaves out those in functions that did not
    verify)."""
    codemods = list(settings.codemods_for(path))
    errors: list[str] = []
    applied = 0
    current = text
    for _ in range(MAX_PASSES):
        diagnostics, pass_errors, wrapper = analyse(current, codemods, tree=tree, project=project, fixes=True)
        errors.extend(e for e in pass_errors if e not in errors)
        allowed = [d for d in diagnostics if d.fix is not None and settings.allows(d.fix)]
        if keep is not None:
            allowed = [d for d in allowed if keep(d, current)]
        fixes = _independent([d.fix for d in allowed], wrapper)
        if not fixes:
            return current, applied, diagnostics, errors
        candidate = apply_fixes(wrapper.module, fixes).code
        candidate_tree, failure = _checked_tree(candidate, path)
        if failure is not None:
            for culprit in _codes_breaking_compile(wrapper.module, fixes, diagnostics, path):
                errors.append(f"{culprit} produced code that does not compile ({failure}); its fixes were not applied")
                codemods = [c for c in codemods if c.code != culprit]
            continue
        if candidate == current:
            return current, applied, diagnostics, errors
        current, tree = candidate, candidate_tree
        applied += len(fixes)
        if by_code is not None:
            code_of = {id(d.fix): d.code for d in allowed}
            by_code.update(code_of[id(f)] for f in fixes)
    diagnostics, pass_errors, _ = analyse(current, codemods, tree=tree, project=project, fixes=True)
    errors.extend(e for e in pass_errors if e not in errors)
    errors.append(f"fixes did not settle after {MAX_PASSES} passes; the last result was kept")
    return current, applied, diagnostics, errors


@dataclass
class TextAnalysis:
    """A text in memory (an editor's buffer) as `check` sees it: its findings, whose fixes still hold the CST
    nodes of `module` (so that any one of them can be applied alone), or why it could not be analysed."""

    text: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    internal_errors: list[str] = field(default_factory=list)
    error: str | None = None  # the text does not parse: no diagnostics
    module: cst.Module | None = None  # None when no codemod could match


def analyse_text(text: str, settings: Settings, *, path: str = "<string>", project: ModuleFacts | None = None) -> TextAnalysis:
    """`check` on a text in memory. Never raises for bad input: the reason lands in `error`. Only parses: no user
    code is imported or run. `project`: the module's facts from the project index."""
    tree, syntax = _checked_tree(text, path)
    if syntax is not None:
        return TextAnalysis(text, error=f"syntax error, {syntax}")
    try:
        diagnostics, errors, wrapper = analyse(text, settings.codemods_for(path), tree=tree, project=project, fixes=True)
    except cst.ParserSyntaxError as error:
        return TextAnalysis(text, error=f"cannot parse: {str(error).splitlines()[0]} (line {error.raw_line})")
    except RecursionError:
        return TextAnalysis(text, error="too deeply nested to analyse")
    return TextAnalysis(text, diagnostics, errors, module=wrapper.module if wrapper is not None else None)


def fix_alone(analysis: TextAnalysis, diagnostic: Diagnostic, *, path: str = "<string>") -> str | None:
    """The analysed text with `diagnostic`'s fix applied and nothing else (its imports included), or None when
    the diagnostic has no applicable fix or the result does not compile. An editor's quick fix is this: one
    finding repaired, not the fixed point that `apply` reaches. The diagnostic must come from `analysis`."""
    fix = diagnostic.fix
    if fix is None or not fix.applicable or analysis.module is None:
        return None
    if not any(d is diagnostic for d in analysis.diagnostics):  # its nodes would not be in `module`
        return None
    try:
        new = apply_fixes(analysis.module, [fix]).code
    except Exception:  # a fix that cannot be applied is that rule's bug; the editor just gets no quick fix
        return None
    return new if _compile_error(new, path) is None else None


def _independent(fixes: list[Fix], wrapper: MetadataWrapper | None) -> list[Fix]:
    """The fixes of one pass: those whose changed nodes overlap an earlier fix's wait for the next pass."""
    if not fixes or wrapper is None:
        return []
    positions = wrapper.resolve(PositionProvider)
    chosen: list[Fix] = []
    taken: list[tuple[tuple[int, int], tuple[int, int]]] = []
    for fix in fixes:
        spans = [positions[node] for node, _ in fix.changes if node in positions]
        if not spans and fix.changes:
            continue
        span = (
            (min((s.start.line, s.start.column) for s in spans), max((s.end.line, s.end.column) for s in spans))
            if spans
            else None
        )
        if span is not None and any(span[0] < end and start < span[1] for start, end in taken):
            continue
        if span is not None:
            taken.append(span)
        chosen.append(fix)
    return chosen


class _Replacer(cst.CSTTransformer):
    def __init__(self, replacements: dict[int, object]) -> None:
        super().__init__()
        self.replacements = replacements

    def on_leave(self, original_node, updated_node):
        return self.replacements.get(id(original_node), updated_node)


def apply_fixes(module: cst.Module, fixes: Iterable[Fix]) -> cst.Module:
    """The module with the fixes' node replacements made and their imports added and pruned."""
    # Imported here: libcst.codemod pulls in libcst.matchers (0.2 s), which `check` never needs.
    from libcst.codemod import CodemodContext
    from libcst.codemod.visitors import AddImportsVisitor, ImportItem, RemoveImportsVisitor

    fixes = list(fixes)
    replacements = {id(node): new for fix in fixes for node, new in fix.changes}
    if replacements:
        module = module.visit(_Replacer(replacements))
    additions = list(dict.fromkeys(spec for fix in fixes for spec in fix.add_imports))
    if additions:
        items = [ImportItem(spec.module, spec.obj, spec.asname) for spec in additions]
        module = AddImportsVisitor(CodemodContext(), items).transform_module(module)
    removals = list(dict.fromkeys(spec for fix in fixes for spec in fix.remove_imports))
    if removals:
        unused = [(spec.module, spec.obj, spec.asname) for spec in removals]
        module = RemoveImportsVisitor(CodemodContext(), unused).transform_module(module)
    return module


def fix_as_text_edit(text: str, module: cst.Module, fix: Fix) -> TextEdit:
    """One fix as a single text edit of `text` (the smallest span that differs), for editors and JSON output."""
    new = apply_fixes(module, [fix]).code
    start = 0
    limit = min(len(text), len(new))
    while start < limit and text[start] == new[start]:
        start += 1
    end_old, end_new = len(text), len(new)
    while end_old > start and end_new > start and text[end_old - 1] == new[end_new - 1]:
        end_old -= 1
        end_new -= 1
    return TextEdit(start, end_old, new[start:end_new])


def _compile_error(code: str, path: str) -> str | None:
    """Why Python rejects `code` (its parser or its compiler), or None."""
    return _checked_tree(code, path)[1]


def _checked_tree(
    code: str, path: str, *, compiled: bool = True, tree: ast.Module | None = None
) -> tuple[ast.Module | None, str | None]:
    """The `ast` of `code` and None, or None and why it does not compile. One parse serves both: the tree is
    compiled on to bytecode, which raises what compiling the text would (`return` outside a function, ...).
    Not `compiled`: the parse alone (`_bytecode_error` then tells the rest). `tree`: the parse of `code`, made
    already (parsed.take)."""
    if tree is None:
        try:
            tree = parsed.parse(code, path)
        except (SyntaxError, ValueError) as error:
            return None, _describe(error)
    error = _bytecode_error(tree, path) if compiled else None
    return (None, error) if error is not None else (tree, None)


def _bytecode_error(tree: ast.Module, path: str) -> str | None:
    """Why Python's compiler rejects a tree its parser accepted (`return` outside a function, `nonlocal` at
    module level, a duplicate argument), or None."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(tree, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as error:
        return _describe(error)
    return None


def _describe(error: SyntaxError | ValueError) -> str:
    line = getattr(error, "lineno", None)
    return f"line {line}: {getattr(error, 'msg', error)}" if line else str(error)


def _codes_breaking_compile(module: cst.Module, fixes: list[Fix], diagnostics: list[Diagnostic], path: str) -> list[str]:
    code_of = {id(d.fix): d.code for d in diagnostics if d.fix is not None}
    by_code: dict[str, list[Fix]] = {}
    for fix in fixes:
        by_code.setdefault(code_of.get(id(fix), "?"), []).append(fix)
    broken = [code for code, group in by_code.items() if _compile_error(apply_fixes(module, group).code, path)]
    return broken or list(by_code)


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else "unknown error"


# ---- files -------------------------------------------------------------------------------------------------


def process_file(
    path: str, settings: Settings, *, fix: bool, write: bool, cache: ResultCache | None = None,
    project: ModuleFacts | None = None,
) -> FileResult:
    """Everything jaxfix does to one file. Never raises for bad input: the reason lands in `error`. With a
    `cache`, the result carries the entry to store (`cache_entry`), keyed on the file's bytes and the digest of
    the project facts it reads (`project`), so that an edit elsewhere that changes those facts re-checks it;
    `process_files` answers from the cache first and stores what the files it did not answer carry."""
    try:
        raw = read_bytes(Path(path))
    except SourceError as error:
        return FileResult(path, error=str(error))
    key = _key(cache, path, raw, project) if cache is not None else None
    if notebook.is_notebook(path):
        return _process_notebook(path, raw, settings, fix=fix, write=write, key=key, project=project)
    try:
        source = decode(raw)
    except SourceError as error:
        return _stored(FileResult(path, error=str(error)), key, [], str(error))
    result = process_text(path, source.text, settings, fix=fix, project=project, tree=parsed.take(raw))
    if result.error is not None:
        if not result.error.startswith("too deeply nested"):  # the interpreter's limits may differ next time
            _stored(result, key, [], result.error)
        return result
    if cache is not None and not result.internal_errors:
        # The diagnostics are those of the final text (the original when nothing was fixed): store them under
        # that text's key, so that the next run over the rewritten file is a hit.
        try:
            final = raw if not result.changed else source.encode(result.fixed)
        except UnicodeEncodeError:
            final = None
        if final is not None:
            _stored(result, key if final is raw else _key(cache, path, final, project), result.diagnostics, None)
    if write and result.changed:
        try:
            result.written = write_if_changed(Path(path), source.encode(result.fixed))
        except (OSError, UnicodeEncodeError) as error:
            result.error = f"cannot write: {getattr(error, 'strerror', None) or error}"
            result.fixed, result.fixes_applied, result.fixes_by_code = None, 0, {}  # nothing was applied to the file
    return result


def process_notebook(
    path: str, raw: bytes, settings: Settings, *, fix: bool, project: ModuleFacts | None = None
) -> FileResult:
    """What jaxfix finds in (or, with `fix`, makes of) the notebook whose bytes are `raw`, in memory (`check -`
    and `apply -` with a `--stdin-filename` ending in .ipynb). Writes nothing."""
    return _process_notebook(path, raw, settings, fix=fix, write=False, key=None, project=project)


def _process_notebook(
    path: str, raw: bytes, settings: Settings, *, fix: bool, write: bool, key: str | None,
    project: ModuleFacts | None = None,
) -> FileResult:
    """A notebook's code cells through the same pipeline as a module; findings named by cell; only the changed
    cells' source written back into the notebook (jaxfix/notebook.py). `key`: the cache key its entry goes
    under (None: no cache)."""
    try:
        book = parsed.take_notebook(raw) or notebook.read(raw)  # read already for the project index, where it was
    except notebook.NotebookError as error:
        return _stored(FileResult(path, error=str(error)), key, [], str(error))
    skipped = book.skip_reason()
    if skipped is not None:
        return FileResult(path, notes=[skipped])
    module_text, cells = book.module()
    kept = parsed.take(module_text.encode("utf-8", "surrogateescape"))  # parsed for the project index
    result = process_text(path, module_text, settings, fix=fix, project=project, tree=kept)
    result.cells, result.notes = cells, book.notes()
    if result.error is not None:
        result.error = _in_cell_terms(result.error, cells)
        return result
    data = raw
    refused: set[int] = set()  # cells whose fixes cannot be put back: fixed again without them
    while result.changed:
        try:
            data, result.cell_changes = notebook.rewritten(raw, result.fixed)
            break
        except notebook.NotebookError as error:
            if error.cell is None or error.cell in refused:
                unfixed = process_text(path, module_text, settings, fix=False, project=project)
                result.diagnostics, result.fixed, result.fixes_applied, result.fixes_by_code = unfixed.diagnostics, None, 0, {}
                result.notes.append(f"{error}: no fix was applied to this notebook")
                break
            refused.add(error.cell)
            result.notes.append(f"{error}: the fixes in cell {error.cell} were not applied")
            _fix_outside(result, module_text, settings, refused, project)
    if data != raw and write:
        try:
            result.written = write_if_changed(Path(path), data)
        except OSError as error:
            result.error = f"cannot write: {getattr(error, 'strerror', None) or error}"
            result.fixed, result.fixes_applied, result.fixes_by_code, result.cell_changes = None, 0, {}, []
            return result
    result.diagnostics = [_in_cell(d, cells, module_text) for d in result.diagnostics]
    if not result.internal_errors and not result.notes and not result.changed:
        _stored(result, key, result.diagnostics, None)  # a changed notebook's next run is a miss: its bytes differ
    return result


def _fix_outside(
    result: FileResult, module_text: str, settings: Settings, cells: set[int], project: ModuleFacts | None = None
) -> None:
    """`result` fixed again, leaving out the fixes of findings in `cells` (read from each pass's marker lines)."""

    def keep(diagnostic: Diagnostic, text: str) -> bool:
        return (notebook.place(text, diagnostic.start.line) or (0, 0))[0] not in cells

    by_code: Counter = Counter()
    fixed, applied, diagnostics, errors = fix_text(
        module_text, settings, path=result.path, keep=keep, by_code=by_code, project=project
    )
    result.fixed, result.fixes_applied, result.fixes_by_code = fixed, applied, dict(by_code)
    result.diagnostics = [_unfixed(d) if keep(d, fixed) is False else _detached(d) for d in diagnostics]
    result.internal_errors = list(dict.fromkeys([*result.internal_errors, *errors]))


def _unfixed(diagnostic: Diagnostic) -> Diagnostic:
    """A finding whose fix could not be put back into its notebook cell: reported without it."""
    message = f"{diagnostic.message} (not fixed: the fix would move this cell's IPython lines)" if diagnostic.fix else diagnostic.message
    return _detached(dataclasses.replace(diagnostic, fix=None, message=message))


def _in_cell(diagnostic: Diagnostic, cells: notebook.CellMap, module_text: str) -> Diagnostic:
    """A diagnostic on the module of a notebook's code cells, placed in its cell (its end clamped to that cell).
    Its text edits (JSON output) stay offsets into the module, which the JSON report places in cells; they are
    dropped where they span cells or touch a masked IPython line, which no cell could take as they are."""
    cell, line = cells.locate(diagnostic.start.line)
    end_cell, end_line = cells.locate(diagnostic.end.line)
    end = diagnostic.end if end_cell == cell else None
    if end is None:
        end = Position(max(r for c, r in cells.lines if c == cell), 1)
    else:
        end = Position(end_line, diagnostic.end.column)
    edits = diagnostic.edits
    if any(not notebook.edit_fits_a_cell(module_text, e.start, e.end, e.replacement) for e in edits):
        edits = ()
    message = _in_cell_terms(diagnostic.message, cells)
    return dataclasses.replace(
        diagnostic, start=Position(line, diagnostic.start.column), end=end, cell=cell, edits=edits, message=message
    )


def _in_cell_terms(message: str, cells: notebook.CellMap) -> str:
    """`line 12` of the module, as `cell 4, line 3`: in an error, and in a finding's message that names another
    line (`state` is also read at line 131)."""
    import re

    def cell_line(match: re.Match) -> str:
        cell, line = cells.locate(int(match.group(1)))
        return f"cell {cell}, line {line}"

    return re.sub(r"\bline (\d+)", cell_line, message)


def _from_cache(
    result: FileResult, raw: bytes, key: str, pack: FindingsPack, settings: Settings, fix: bool
) -> FileResult | None:
    """The result of a file whose findings the cache holds, or None: not stored, or (when fixing) some finding
    has a fix to apply, which needs the analysis again."""
    entry = pack.load(key)
    stored = read_entry(entry) if entry is not None else None
    if stored is None:
        return None
    diagnostics, error = stored
    if fix and any(d.fix is not None and settings.allows(d.fix) for d in diagnostics):
        return None
    try:
        if notebook.is_notebook(result.path):  # its module and cell map, as a run makes them, where they are used
            if error is None and (diagnostics or fix):
                result.original, result.cells = notebook.read(raw).module()
        else:
            result.original = decode(raw).text
    except (SourceError, notebook.NotebookError):
        pass
    result.error = error
    if error is None:
        result.diagnostics = diagnostics
        if fix:
            result.fixed = result.original
    return result


def _key(cache: ResultCache, path: str, raw: bytes, project: ModuleFacts | None) -> str:
    """The cache key of a file's findings: its bytes, and the digest of the project facts it reads."""
    if project:
        raw = raw + b"\0jaxfix-project-facts\0" + project.digest().encode()
    return cache.key(path, raw)


def _stored(result: FileResult, key: str | None, diagnostics: list[Diagnostic], error: str | None) -> FileResult:
    """`result`, carrying the cache entry of these findings under `key` (None: no cache)."""
    if key is not None:
        result.cache_entry = (key, entry_for(diagnostics, error))
    return result


def process_text(
    path: str, text: str, settings: Settings, *, fix: bool, project: ModuleFacts | None = None,
    tree: ast.Module | None = None,
) -> FileResult:
    """What jaxfix finds in (or, with `fix`, makes of) `text`, the content of `path`, in memory (`check -` and
    `apply -` read it from stdin). Never raises for bad input: the reason lands in `error`. `tree`: the `ast` of
    `text`, where it was parsed already."""
    result = FileResult(path, original=text)
    try:
        # Checking, the compiler's own checks wait for a finding to report: a file with none is neither reported
        # on nor rewritten, and compiling every file cost 4% of a cold check (1.3 s of CPU over 1,401 real files).
        tree, syntax = _checked_tree(text, path, compiled=fix, tree=tree)
    except (RecursionError, MemoryError) as error:  # CPython's own parser gives up on very deep nesting
        result.error = f"too deeply nested to parse ({type(error).__name__})"
        return result
    if syntax is not None:
        result.error = f"syntax error, {syntax}"
        return result
    try:
        if fix:
            by_code: Counter = Counter()
            new_text, applied, diagnostics, errors = fix_text(
                text, settings, path=path, tree=tree, by_code=by_code, project=project
            )
            result.fixed, result.fixes_applied, result.fixes_by_code = new_text, applied, dict(by_code)
        else:
            diagnostics, errors, wrapper = analyse(text, settings.codemods_for(path), tree=tree, project=project, fixes=settings.text_edits)
            if diagnostics and (syntax := _bytecode_error(tree, path)) is not None:
                result.error = f"syntax error, {syntax}"
                return result
            if settings.text_edits and wrapper is not None:
                diagnostics = [_with_edits(text, wrapper.module, d) for d in diagnostics]
    except cst.ParserSyntaxError as error:
        result.error = f"cannot parse: {str(error).splitlines()[0]} (line {error.raw_line})"
        return result
    except (RecursionError, MemoryError) as error:
        result.error = f"too deeply nested to analyse ({type(error).__name__})"
        return result
    result.diagnostics = [_detached(d) for d in diagnostics]
    result.internal_errors = errors
    return result


def _with_edits(text: str, module: cst.Module, diagnostic: Diagnostic) -> Diagnostic:
    if diagnostic.fix is None or not diagnostic.fix.applicable:
        return diagnostic
    return dataclasses.replace(diagnostic, edits=(fix_as_text_edit(text, module, diagnostic.fix),))


def _detached(diagnostic: Diagnostic) -> Diagnostic:
    """The diagnostic without CST nodes or a fix plan (which holds the module's `ast` nodes and its name supply):
    cheap to send between processes, and all a renderer needs."""
    fix = diagnostic.fix
    if fix is not None:
        fix = dataclasses.replace(fix, changes=())
    return dataclasses.replace(diagnostic, fix=fix, node=None, plan=None)


def _process_one(job: tuple[str, Settings, bool, bool, ResultCache | None, ModuleFacts | None]) -> FileResult:
    path, settings, fix, write, cache, project = job
    with collections_deferred():
        return process_file(path, settings, fix=fix, write=write, cache=cache, project=project)


def process_files(
    paths: Sequence[str],
    settings: Settings,
    *,
    fix: bool,
    write: bool,
    jobs: int | None = None,
    cache: ResultCache | None = None,
    project: Project | None = None,
) -> Iterator[FileResult]:
    """FileResults in the order of `paths`, worked on in parallel across processes when there are many. With a
    `cache`, the files it answers are answered here first, so that a run over an unchanged tree starts no
    worker at all, and what the others found is stored once they are all done (one pack per project).
    `project`: the project index the files' facts come from (by default, the project around `paths`, its
    summaries cached beside the findings)."""
    answered: dict[int, FileResult] = {}
    computed: dict[int, _InOrder] = {}  # the results of the files not answered from the cache
    packs: list[FindingsPack] = []  # each project's entries in the cache
    pack_of: dict[int, FindingsPack] = {}  # by the position of each of its paths
    with Workers(jobs or os.cpu_count() or 1) as workers:
        # notebooks read the facts too: a cell may call the project's code
        for indices, facts, root in _facts_by_project(paths, cache, project, workers.map):
            work = []
            pack = cache.pack(root) if cache is not None else None
            if pack is not None:
                packs.append(pack)
                pack_of.update((index, pack) for index in indices)
            for index in indices:
                path = paths[index]
                hit = _cached(path, settings, fix, pack, facts[path]) if pack is not None else None
                if hit is not None:
                    answered[index] = hit
                else:
                    work.append((index, (path, settings, fix, write, cache, facts[path] or None)))
            # Handed to the workers now, so that they check this project while the next one is solved. Small
            # chunks: a few files cost most of the time (those the screens send to LibCST), and big chunks would
            # leave one worker with several of them while the others idle; for the same reason the biggest
            # files go first, so that the run does not end waiting on one of them.
            if workers.parallel(len(work)):
                work.sort(key=lambda item: -_size(item[1][0]))
            # Each file goes, where it can, to the worker that summarised it: that worker holds its `ast`.
            handed = workers.map(
                _process_one, [job for _, job in work], small_chunks=True, keys=[os.path.abspath(job[0]) for _, job in work]
            )
            results = _InOrder(handed, [i for i, _ in work])
            computed.update((index, results) for index, _ in work)
        for index in range(len(paths)):
            if index in answered:
                yield answered[index]
                continue
            result = computed[index].take(index)
            if result.cache_entry is not None and index in pack_of:
                pack_of[index].store(*result.cache_entry)
            result.cache_entry = None
            yield result
    for pack in packs:
        pack.save()


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


class _InOrder:
    """Results that come in the order their jobs were handed out, taken by the position of each job's path."""

    def __init__(self, results: Iterator[FileResult], indices: list[int]) -> None:
        self._results = results
        self._indices = iter(indices)
        self._waiting: dict[int, FileResult] = {}

    def take(self, index: int) -> FileResult:
        while index not in self._waiting:
            self._waiting[next(self._indices)] = next(self._results)
        return self._waiting.pop(index)


def _cached(path: str, settings: Settings, fix: bool, pack: FindingsPack, project: ModuleFacts | None) -> FileResult | None:
    try:
        raw = read_bytes(Path(path))
    except SourceError:
        return None
    return _from_cache(FileResult(path), raw, _key(pack.cache, path, raw, project), pack, settings, fix)


def _project_facts(
    paths: Sequence[str], cache: ResultCache | None, project: Project | None, mapper=None
) -> dict[str, ModuleFacts]:
    """Each path's facts from the project index (`project`, or the project each path lies in)."""
    facts: dict[str, ModuleFacts] = {}
    for _, found, _ in _facts_by_project(paths, cache, project, mapper):
        facts.update(found)
    return facts


def _facts_by_project(
    paths: Sequence[str], cache: ResultCache | None, project: Project | None, mapper=None
) -> Iterator[tuple[list[int], dict[str, ModuleFacts], object]]:
    """The positions in `paths` of each project's files, with their facts and the project's root (None: the
    paths lie in no project), one project at a time: every index is begun (its summaries handed to `mapper`'s
    workers) before the first is solved. The index is evidence, never a reason to fail: should it break on
    some code, every file of that project is judged alone, as it would be without it."""
    grouped = [(project.root, list(range(len(paths))))] if project is not None else _by_project(paths)
    groups = [group for _, group in grouped]
    begun = []
    for group in groups:
        try:
            given = [paths[i] for i in group]
            begun.append((lambda: project) if project is not None else _begin_project(given, cache, mapper=mapper))
        except (Exception, RecursionError):  # noqa: BLE001
            begun.append(None)
    for (root, group), finish in zip(grouped, begun):
        try:
            index = finish() if finish is not None else None
            facts = {paths[i]: index.facts_for(paths[i]) for i in group} if index is not None else None
        except (Exception, RecursionError):  # noqa: BLE001
            facts = None
        yield group, facts if facts is not None else {paths[i]: EMPTY_FACTS for i in group}, root


def _by_project(paths: Sequence[str]) -> list[tuple[object, list[int]]]:
    """The positions of `paths`, grouped by the project each lies in (project_io.project_root of its folder), with
    that root, so that two projects checked in one run are indexed as two (their facts apart, and an edit in
    one solves that one again). Paths in no project form one group: they are the project."""
    root_of: dict[str, object] = {}
    groups: dict[object, list[int]] = {}
    for index, path in enumerate(paths):
        folder = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
        if folder not in root_of:
            root_of[folder] = project_root([folder])
        groups.setdefault(root_of[folder], []).append(index)
    return list(groups.items())


def project_of(
    paths: Sequence[str], cache: ResultCache | None = None, texts: dict[str, str] | None = None, mapper=None
) -> Project:
    """The project index around `paths` (project.py), its summaries cached beside the findings' cache.
    `texts`: contents to read instead of the disk's (stdin, an editor's buffers), by path; `mapper`: a `map`
    that may summarise files in worker processes."""
    return _begin_project(paths, cache, texts, mapper)()


def _begin_project(
    paths: Sequence[str], cache: ResultCache | None = None, texts: dict[str, str] | None = None, mapper=None
) -> Callable[[], Project]:
    """`project_of` in two steps (project_io.begin_project): the function returned finishes the index."""
    if cache is None:
        return begin_project(paths, texts=texts, mapper=mapper)

    def prepare() -> None:
        cache._prepare_folder()
        cache._mark_used()

    return begin_project(paths, cache.run_folder, texts=texts, prepare=prepare, mapper=mapper)
