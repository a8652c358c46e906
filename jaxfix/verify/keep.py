"""`apply --verify`: keep a rewrite only where its function verifies, or could not be checked and has safe fixes only.

Each file is rewritten in memory and every function the rewrite changed is verified, each by its own report
(see _judge). The fixes inside the functions that differ, or that could not be checked and have an unsafe fix,
are then left out and the file is rewritten again (other fixes may depend on
them, so the result is verified again), until every changed function verifies. When a function that has
already been left out still fails (a module-level fix, such as a rewritten import, changed it), the whole file
is left as it was. All files of a round share one worker.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from jaxfix import notebook
from jaxfix.diagnostics import Diagnostic, Safety
from jaxfix.engine import FileResult, Settings, fix_text
from jaxfix.files import SourceError, read_source, write_if_changed
from jaxfix.verify import collect, functions, runner
from jaxfix.verify.settings import VerifySettings
from jaxfix.verify.targets import DIFFERS, VERIFIED, Options, Report, Target

MAX_ROUNDS = 5


@dataclass
class FileVerdict:
    path: str
    original: str
    text: str  # what is kept: the original, or a rewrite whose changed functions all verified
    fixes_applied: int = 0
    verified: list[Report] = field(default_factory=list)  # the changed functions of the kept text
    reverted: list[Report] = field(default_factory=list)  # the functions whose fixes were left out, and why
    kept_unverified: list[Report] = field(default_factory=list)  # could not be checked, kept: all their fixes are safe
    because: dict[str, Report] = field(default_factory=dict)  # reverted because this caller (its code unchanged) differs
    kinds: dict[str, str] = field(default_factory=dict)  # what each checked name is: "function", "test method"... (Target.kind)
    whole_file_reverted: str = ""  # why nothing was kept, when a function left out still failed
    written: bool = False
    diagnostics: list[Diagnostic] = field(default_factory=list)
    internal_errors: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.text != self.original


def outside(excluded: set[str]) -> Callable[[Diagnostic, str], bool]:
    """A `keep` for fix_text: the fix's diagnostic does not lie in one of the `excluded` functions."""
    trees: dict[str, object] = {}

    def keep(diagnostic: Diagnostic, text: str) -> bool:
        if not excluded:
            return True
        if text not in trees:
            trees.clear()
            trees[text] = functions.parse(text)
        tree = trees[text]
        return tree is None or functions.owner_at(tree, diagnostic.start.line) not in excluded

    return keep


@dataclass
class _State:
    verdict: FileVerdict
    encoding: str
    excluded: set[str] = field(default_factory=set)
    targets: list[Target] = field(default_factory=list)
    done: bool = False
    safe: set[str] = field(default_factory=set)  # functions whose applied fixes are all safe ones


def apply_verified(
    results: Sequence[FileResult],
    engine_settings: Settings,
    settings: VerifySettings,
    options: Options,
    *,
    write: bool,
    on_report: Callable[[Report], None] | None = None,
) -> list[FileVerdict]:
    """The verdict for each changed file of `results` (rewrites made in memory by the engine)."""
    states: list[_State] = []
    for result in results:
        if not result.changed:
            continue
        try:
            encoding = read_source(Path(result.path)).encoding
        except SourceError:
            continue
        verdict = FileVerdict(result.path, result.original, result.fixed, result.fixes_applied, diagnostics=result.diagnostics)
        verdict.internal_errors = list(result.internal_errors)
        states.append(_State(verdict, encoding))
    for _ in range(MAX_ROUNDS):
        active = [s for s in states if not s.done]
        if not active:
            break
        for state in active:
            _prepare(state, engine_settings, settings)
        targets = [t for s in active for t in s.targets]
        reports = {}
        for report in runner.run(targets, options, python=settings.python):
            reports[report.target] = report
            if on_report is not None:
                on_report(report)
        for state in active:
            _judge(state, [reports[t.id] for t in state.targets if t.id in reports])
    for state in states:
        if not state.done:  # did not settle: keep nothing
            state.verdict.whole_file_reverted = f"verification did not settle in {MAX_ROUNDS} rounds"
            state.verdict.text, state.verdict.fixes_applied = state.verdict.original, 0
        if write and state.verdict.changed:
            try:
                data = _file_bytes(state)
            except notebook.NotebookError as error:
                state.verdict.whole_file_reverted = str(error)
                state.verdict.text, state.verdict.fixes_applied = state.verdict.original, 0
            else:
                state.verdict.written = write_if_changed(Path(state.verdict.path), data)
    return [s.verdict for s in states]


def _file_bytes(state: _State) -> bytes:
    """What the file becomes: the kept text, or for a notebook the notebook with its changed cells rewritten."""
    path = Path(state.verdict.path)
    if not notebook.is_notebook(str(path)):
        return state.verdict.text.encode(state.encoding)
    return notebook.rewritten(path.read_bytes(), state.verdict.text)[0]


@functools.lru_cache(maxsize=256)
def _facts(path: str):
    """The project facts of `path`, as `apply` used them for its first rewrite: fixes made again here must be the
    same fixes."""
    from jaxfix.engine import _project_facts

    return _project_facts([path], None, None)[path] or None


def _prepare(state: _State, engine_settings: Settings, settings: VerifySettings) -> None:
    verdict = state.verdict
    if state.excluded:
        text, applied, diagnostics, errors = fix_text(
            verdict.original, engine_settings, path=verdict.path, keep=outside(state.excluded), project=_facts(verdict.path)
        )
        verdict.text, verdict.fixes_applied, verdict.diagnostics = text, applied, diagnostics
    state.targets = collect.file_targets(Path(verdict.path), verdict.original, verdict.text, settings) if verdict.changed else []
    verdict.kinds.update({t.name: t.kind for t in state.targets})
    state.safe = _safe_functions(verdict, engine_settings, state.excluded, {t.name for t in state.targets}) if state.targets else set()
    if not state.targets:
        state.done = True


def _judge(state: _State, reports: list[Report]) -> None:
    """Judge each rewritten function by its own report: it differs, or a caller that differs runs it, and its
    fixes are left out; it could not be checked (no inputs, its original raises on every input, it returns
    None), and its fixes are kept when all are safe fixes and left out otherwise. A caller whose own code did not
    change is only a way to reach the functions it calls: that it could not be checked reverts nothing."""
    verdict = state.verdict
    collect.credit_callers(state.targets, reports)
    by_name = {t.name: t for t in state.targets}
    own = [r for r in reports if by_name.get(r.name) is None or by_name[r.name].changed]
    tree = functions.parse(verdict.text)
    differing_callers = [r for r in reports if r.status == DIFFERS and not (by_name.get(r.name) is None or by_name[r.name].changed)]
    reached_by_differing: dict[str, Report] = {}
    for report in differing_callers:
        for name in functions.reached(tree, report.name) if tree is not None else set():
            reached_by_differing.setdefault(name, report)
    safe = state.safe
    failing, kept_unverified = [], []
    for report in own:
        if report.status == DIFFERS:
            failing.append(report)
        elif report.name in reached_by_differing:
            verdict.because[report.name] = reached_by_differing[report.name]
            failing.append(report)
        elif report.status != VERIFIED:
            (kept_unverified if report.name in safe else failing).append(report)
    verdict.kept_unverified = kept_unverified
    if not failing:
        verdict.verified = [r for r in own if r.status == VERIFIED]
        state.done = True
        return
    again = [r for r in failing if r.name in state.excluded]
    if again and tree is not None:  # it still differs with its own fixes left out: through a function it runs?
        changed = {t.name for t in state.targets if t.changed}
        suspects = {name for r in again if r.status == DIFFERS for name in functions.reached(tree, r.name)} & changed
        if suspects - state.excluded:
            state.excluded |= suspects
            _revert(verdict, [r for r in own if r.name in suspects - {f.name for f in failing}])
            again = []
    if again:
        _revert(verdict, failing)
        verdict.whole_file_reverted = (
            f"{', '.join(r.name for r in again)} still fails with its own fixes left out (a module-level fix changed it)"
        )
        verdict.text, verdict.fixes_applied, verdict.verified, verdict.kept_unverified = verdict.original, 0, [], []
        state.done = True
        return
    _revert(verdict, failing)
    state.excluded |= {r.name for r in failing}


def _revert(verdict: FileVerdict, reports: list[Report]) -> None:
    """Notes the reports of functions whose fixes are left out, each name once: a function left out in one
    round that fails again in a later one keeps the report that first reverted it."""
    named = {r.name for r in verdict.reverted}
    for report in reports:
        if report.name not in named:
            named.add(report.name)
            verdict.reverted.append(report)


def _safe_functions(verdict: FileVerdict, engine_settings: Settings, excluded: set[str], checked: set[str]) -> set[str]:
    """The functions all of whose applied fixes are safe ones (same values wherever the original computes any),
    found by rewriting the file again and noting each fix the engine applies, pass by pass. A function of
    `checked` with no fix of its own changed through fixes that reach module level (module-level code, or an
    import added or removed: jraph's test methods read the `jax` that JF901's `import jax.extend.backend`
    binds): it is safe when every fix that reaches module level is."""
    unsafe, fixed = set(), set()
    module_level: set[bool] = set()  # whether each fix that reaches module level is safe
    inner = outside(excluded)

    def note(diagnostic: Diagnostic, text: str) -> bool:
        if not inner(diagnostic, text):
            return False
        tree = functions.parse(text)
        owner = functions.owner_at(tree, diagnostic.start.line) if tree is not None else None
        fixed.add(owner)
        safe = diagnostic.fix is not None and diagnostic.fix.safety is Safety.SAFE
        if not safe:
            unsafe.add(owner)
        if owner is None or (diagnostic.fix is not None and (diagnostic.fix.add_imports or diagnostic.fix.remove_imports)):
            module_level.add(safe)
        return True

    fix_text(verdict.original, engine_settings, path=verdict.path, keep=note, project=_facts(verdict.path))
    through_module_level = checked - fixed if module_level == {True} else set()
    return {name for name in fixed - unsafe if name is not None} | through_module_level
