"""What to verify: Targets from two files (`jaxfix verify BEFORE.py AFTER.py`), or from the rewrites the engine
would make (`jaxfix verify PATH...`, `apply --verify`), computed in memory and never written."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from jaxfix.engine import FileResult, Settings, process_files
from jaxfix.files import SourceError, read_source
from jaxfix.verify import functions, inputs
from jaxfix.verify.settings import VerifySettings
from jaxfix.verify.targets import DIFFERS, VERIFIED, Module, Report, Target


class PairError(ValueError):
    """The two files cannot be compared (unreadable, unparsable, no function in common); the message says why."""


def target(path: Path, name: str, before: str, after: str, settings: VerifySettings, *, after_path: Path | None = None) -> Target:
    """A Target for `name`, with the input sources found for it in the original."""
    found, missing = inputs.sources(path, before, name, settings)
    after_label = str(after_path) if after_path is not None else f"<{path} (rewritten)>"
    tree = functions.parse(before)
    return Target(
        kind=functions.kind(tree, name, str(path), before) if tree is not None else "function",
        id=f"{path}::{name}",
        name=name,
        before=Module(str(path), before, str(path)),
        after=Module(str(after_path or path), after, after_label),
        sources=tuple(found),
        missing=missing,
    )


def pair_targets(before: Path, after: Path, names: Sequence[str], settings: VerifySettings) -> list[Target]:
    """Targets for the functions both files define (or those named, which both must define)."""
    texts = []
    for path in (before, after):
        try:
            texts.append(read_source(path).text)
        except SourceError as error:
            raise PairError(f"{path}: {error}") from None
    trees = [functions.parse(text) for text in texts]
    for path, tree in zip((before, after), trees):
        if tree is None:
            raise PairError(f"{path}: does not parse")
    defined = [functions.definitions(tree) for tree in trees]
    if names:
        for name in names:
            for path, found in zip((before, after), defined):
                if name not in found:
                    raise PairError(f"{path} defines no function '{name}'")
        chosen = list(names)
    else:
        chosen = [name for name in defined[1] if name in defined[0]]
        if not chosen:
            raise PairError(f"{before} and {after} define no function in common")
    found = [target(before, name, texts[0], texts[1], settings, after_path=after) for name in chosen]
    found.sort(key=lambda t: not t.sources)  # those without inputs last: by then their callers have answered
    return found


@dataclass
class Pending:
    """One file's pending rewrite and the functions it changes."""

    result: FileResult
    changed: list[str] = field(default_factory=list)


def pending(files: Sequence[str], engine_settings: Settings, *, jobs: int | None = None) -> list[Pending]:
    """The rewrite `apply` would make of each file, in memory, and the functions each changes."""
    found = []
    for result in process_files(files, engine_settings, fix=True, write=False, jobs=jobs):
        changed = functions.changed(result.original, result.fixed) if result.changed else []
        found.append(Pending(result, changed))
    return found


def pending_targets(rewrites: Sequence[Pending], names: Sequence[str], settings: VerifySettings) -> list[Target]:
    chosen = []
    for rewrite in rewrites:
        chosen += file_targets(Path(rewrite.result.path), rewrite.result.original, rewrite.result.fixed, settings, names=names)
    return chosen


def file_targets(path: Path, before: str, after: str, settings: VerifySettings, *, names: Sequence[str] = ()) -> list[Target]:
    """The functions a rewrite of one file changed, then the functions that call them (a helper is often run
    only through its jitted or vmapped caller, which is where the inputs are known)."""
    changed = functions.changed(before, after)
    tree = functions.parse(after)
    calling = functions.callers(tree, set(changed)) if tree is not None and changed else []
    chosen = []
    for name in changed + calling:
        if not names or name in names:
            found = target(path, name, before, after, settings)
            chosen.append(Target(**{**found.__dict__, "changed": name in changed}))
    chosen.sort(key=lambda t: not t.sources)  # those without inputs last: by then their callers have answered
    return chosen


def credit_callers(targets: Sequence[Target], reports: Sequence[Report]) -> None:
    """A changed function with no inputs of its own counts as verified through its callers when at least one
    caller that reaches it verified and none differs. A caller that returns None on every input is not
    verified (nothing was compared), so it credits nothing."""
    by_id = {r.target: r for r in reports}
    for target_ in targets:
        report = by_id.get(target_.id)
        if report is None or not report.no_inputs:
            continue
        tree = functions.parse(target_.after.text)
        if tree is None:
            continue
        reaching = [by_id.get(f"{target_.before.path}::{name}") for name in functions.callers(tree, {target_.name})]
        reaching = [r for r in reaching if r is not None]
        if reaching and all(r.status != DIFFERS for r in reaching):
            report.through = [r.name for r in reaching if r.status == VERIFIED and r.devices]
