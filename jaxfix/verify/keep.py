"""`apply --verify`: keep a rewrite only where its function verifies.

Each file is rewritten in memory and every function the rewrite changed is verified. The fixes inside the
functions that did not verify are then left out and the file is rewritten again (other fixes may depend on
them, so the result is verified again), until every changed function verifies. When a function that has
already been left out still fails (a module-level fix, such as a rewritten import, changed it), the whole file
is left as it was. All files of a round share one worker.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from jaxfix import notebook
from jaxfix.diagnostics import Diagnostic
from jaxfix.engine import FileResult, Settings, fix_text
from jaxfix.files import SourceError, read_source, write_if_changed
from jaxfix.verify import collect, functions, runner
from jaxfix.verify.settings import VerifySettings
from jaxfix.verify.targets import VERIFIED, Options, Report, Target

MAX_ROUNDS = 5


@dataclass
class FileVerdict:
    path: str
    original: str
    text: str  # what is kept: the original, or a rewrite whose changed functions all verified
    fixes_applied: int = 0
    verified: list[Report] = field(default_factory=list)  # the changed functions of the kept text
    reverted: list[Report] = field(default_factory=list)  # the functions whose fixes were left out, and why
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
        for report in runner.run(targets, options):
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


def _prepare(state: _State, engine_settings: Settings, settings: VerifySettings) -> None:
    verdict = state.verdict
    if state.excluded:
        text, applied, diagnostics, errors = fix_text(verdict.original, engine_settings, path=verdict.path, keep=outside(state.excluded))
        verdict.text, verdict.fixes_applied, verdict.diagnostics = text, applied, diagnostics
    state.targets = collect.file_targets(Path(verdict.path), verdict.original, verdict.text, settings) if verdict.changed else []
    if not state.targets:
        state.done = True


def _judge(state: _State, reports: list[Report]) -> None:
    verdict = state.verdict
    collect.credit_callers(state.targets, reports)
    failing = [r for r in reports if r.status != VERIFIED]
    if not failing:
        verdict.verified = reports
        state.done = True
        return
    again = [r for r in failing if r.name in state.excluded]
    if again:
        verdict.reverted += failing
        verdict.whole_file_reverted = (
            f"{', '.join(r.name for r in again)} still fails with its own fixes left out (a module-level fix changed it)"
        )
        verdict.text, verdict.fixes_applied, verdict.verified = verdict.original, 0, []
        state.done = True
        return
    verdict.reverted += failing
    tree = functions.parse(verdict.text)
    own = {t.name for t in state.targets if t.changed}
    for report in failing:  # a caller that differs may differ through any changed function it runs
        state.excluded |= {report.name} | (functions.reached(tree, report.name) & own if tree is not None else set())
