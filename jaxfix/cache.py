"""The per-file result cache: what `check` found in a file, keyed on everything the finding can depend on, so
that a run over an unchanged tree reads answers instead of parsing.

Where: `.jaxfix_cache/` in the project root (the folder of the nearest pyproject.toml, else the working folder),
as Ruff keeps `.ruff_cache/`; `JAXFIX_CACHE_DIR` overrides it. The folder holds a `.gitignore` of `*` and a
CACHEDIR.TAG, so neither git nor backup tools pick it up. `--no-cache` turns it off.

Key: a hash of the file's bytes, its path, the settings (selected codes, fix options), the jaxfix version, a hash
of the source of jaxfix and its codemods (a change to a rule during development invalidates every entry), and
the Python version (`ast` and the tokenizer change between versions).

Layout: everything but the file's bytes names a *run folder* (`.jaxfix_cache/<run>/`). In it, the entries of one
project (the files whose project root is the same) are one *pack*, a marshalled file read once and written once
per run, atomically (temporary file, then rename), and only when an entry changed: Ruff keeps one file per
package for the same reason. One small file per checked file, as before, cost a cold check of 1,449 real files
1,449 file creations, which took 0.6-1.3 s of its 6-7 s on a VM's ext4 disk. An entry is named after its file's
path and holds the hash of the bytes it describes: an edited file replaces its entry instead of adding one, so a
pack holds at most one entry per file. A pack that cannot be read or decoded is empty (every file a miss), and a
cache folder that cannot be written is silently not used. Two runs that write one pack at once lose the entries
of the first to finish: a miss next time, never a wrong answer.

Bounds: each run marks its folder used and prunes the others: those unused for `MAX_AGE_DAYS`, and beyond the
`KEEP` most recently used (other jaxfix versions, other settings, earlier states of the rules), and what an older
layout left there; nothing else in the folder is touched (JAXFIX_CACHE_DIR may name one that holds other things).
`jaxfix clean` removes the cache folders under a path (of a JAXFIX_CACHE_DIR folder, only what jaxfix put there).
A folder another run is writing into may vanish: its writes fail and only mean no cache, its reads are misses.
"""

from __future__ import annotations

import dataclasses
import errno
import functools
import hashlib
import json
import marshal
import os
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jaxfix import __version__
from jaxfix.diagnostics import Diagnostic, Fix, ImportSpec, Position, Safety, TextEdit

FOLDER_NAME = ".jaxfix_cache"
FORMAT = 3  # bump when the entry layout changes (2: run folders, one entry per path; 3: a pack per project)
KEEP = 8  # run folders kept besides the current one
MAX_AGE_DAYS = 7  # a run folder unused for longer is pruned
_USED = ".used"  # its modification time is when a run last used the folder
_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by jaxfix.\n"


@functools.lru_cache(maxsize=1)
def code_hash() -> str:
    """A hash of the Python source of jaxfix and its codemods: any edit to a rule or an analysis changes it."""
    import jaxfix
    import jaxfix.codemods

    digest = hashlib.sha256()
    for package in (jaxfix, jaxfix.codemods):
        root = Path(package.__file__).parent
        for path in sorted(root.rglob("*.py")):
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def default_folder(start: Path | None = None) -> Path:
    override = os.environ.get("JAXFIX_CACHE_DIR")
    if override:
        return Path(override)
    from jaxfix.config import find_pyproject

    start = (start or Path.cwd()).resolve()
    pyproject = find_pyproject(start)
    return (pyproject.parent if pyproject is not None else start) / FOLDER_NAME


@dataclass(frozen=True)
class ResultCache:
    """The cache of one run: its folder and the hash of what every key shares (settings, versions, code).
    Small and immutable, so it travels to worker processes with each job."""

    folder: Path
    run_key: str

    @classmethod
    def for_settings(cls, settings: Any, folder: Path | None = None) -> "ResultCache":
        # Findings do not depend on whether unsafe fixes may be applied (only which are): check and apply share.
        if dataclasses.is_dataclass(settings) and hasattr(settings, "unsafe_fixes"):
            settings = dataclasses.replace(settings, unsafe_fixes=False)
        shared = json.dumps([FORMAT, __version__, code_hash(), sys.version, repr(settings)]).encode()
        return cls(folder or default_folder(), hashlib.sha256(shared).hexdigest())

    @property
    def run_folder(self) -> Path:
        return self.folder / self.run_key[:24]

    def key(self, path: str, data: bytes) -> str:
        """The path's part (which entry) followed by the bytes' part (which content the entry must describe)."""
        where = hashlib.sha256(self.run_key.encode())
        where.update(os.path.abspath(path).encode("utf-8", "surrogateescape"))
        return where.hexdigest()[:32] + hashlib.sha256(data).hexdigest()

    def pack(self, root: object) -> "FindingsPack":
        """The entries of the files of the project at `root` (None: files in no project), read now."""
        return FindingsPack(self, self.run_folder / f"findings-{project_tag(root)}.pack")

    def write(self, target: Path, data: bytes) -> None:
        """Write `data` to `target` in this run's folder (made and marked used first), atomically; any failure
        (read-only folder, full disk, a folder pruned by another run meanwhile) only means no cache."""
        try:
            self._prepare_folder()
            if not self.run_folder.is_dir():
                self._mark_used()
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError:
            return
        write_atomically(target, data)

    def prune(self, now: float | None = None) -> list[Path]:
        """Mark this run's folder used and remove what the policy (module docstring) does not keep: the other run
        folders unused for MAX_AGE_DAYS or beyond the KEEP most recently used, FORMAT 1's entry folders, and
        temporary files older than an hour. Nothing else is touched (JAXFIX_CACHE_DIR may name a folder that
        holds other things). Returns what it removed; never raises (a cache is never worth a failed run)."""
        now = time.time() if now is None else now
        removed: list[Path] = []
        try:
            if not self.folder.is_dir():  # made by the first store, not by a run that may store nothing
                return removed
            self._mark_used()
            candidates: list[tuple[float, Path]] = []
            for child in self.folder.iterdir():
                kind = _kind(child)
                if kind == "run" and child != self.run_folder:
                    try:
                        candidates.append(((child / _USED).stat().st_mtime, child))
                    except OSError:  # no mark yet: a run is creating it right now, unless it is an hour old
                        if now - child.stat().st_mtime > 3600:
                            candidates.append((0.0, child))
                elif kind == "old" or (kind == "temporary" and now - child.lstat().st_mtime > 3600):
                    candidates.append((0.0, child))
            candidates.sort(reverse=True)
            for index, (used, child) in enumerate(candidates):
                if used and index < KEEP and now - used < MAX_AGE_DAYS * 86400:
                    continue
                _remove(child)
                removed.append(child)
        except OSError:
            pass
        return removed

    def _mark_used(self) -> None:
        self.run_folder.mkdir(exist_ok=True)
        (self.run_folder / _USED).touch()  # sets the time of an existing mark too

    def _prepare_folder(self) -> None:
        if (self.folder / ".gitignore").exists():
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        for name, content in ((".gitignore", "# Created by jaxfix.\n*\n"), ("CACHEDIR.TAG", _TAG)):
            path = self.folder / name
            if not path.exists() and not write_atomically(path, content.encode()):
                raise OSError(f"cannot write {path}")


class FindingsPack:
    """The entries of one project's files in a run folder: read once, changed in memory, written once (`save`).
    Entries are keyed by their file's part of the key (`ResultCache.key`), and hold the whole key."""

    def __init__(self, cache: ResultCache, path: Path) -> None:
        self.cache = cache
        self.path = path
        self.entries: dict[str, tuple[str, dict]] = read_marshalled(path)
        self.changed = False

    def load(self, key: str) -> dict | None:
        """The entry stored for `key`'s file, or None when there is none, it describes other bytes, or it is
        malformed (a miss)."""
        found = self.entries.get(key[:32])
        if not isinstance(found, tuple) or len(found) != 2 or found[0] != key or not isinstance(found[1], dict):
            return None
        return found[1]

    def store(self, key: str, entry: dict) -> None:
        """Keep the entry for `key`'s file, replacing the one of its earlier bytes (written by `save`)."""
        if self.entries.get(key[:32]) != (key, entry):
            self.entries[key[:32]] = (key, entry)
            self.changed = True

    def save(self) -> None:
        """Write the pack, if an entry changed since it was read."""
        if not self.changed:
            return
        try:
            data = marshal.dumps(self.entries)
        except ValueError:
            return
        self.cache.write(self.path, data)
        self.changed = False


def project_tag(root: object) -> str:
    """What names a project's files in a cache folder (its packs, its facts): several projects share one."""
    return hashlib.sha256(str(root).encode("utf-8", "surrogateescape")).hexdigest()[:16]


def read_marshalled(path: Path) -> dict:
    """The dict marshalled in `path`; empty where there is none or it cannot be read (a miss, never an error)."""
    try:
        with open(path, "rb") as handle:
            stored = marshal.loads(handle.read())
    except (OSError, ValueError, EOFError, TypeError):
        return {}
    return stored if isinstance(stored, dict) else {}


def write_atomically(target: Path, data: bytes) -> bool:
    """Write `data` to `target` through a temporary file in its folder (named as `prune` recognises one that a
    crash left) and a rename, so that a reader never sees half of it; False, and nothing left, where it fails."""
    try:
        descriptor, temporary = tempfile.mkstemp(dir=target.parent, prefix=".", suffix=".tmp")
    except OSError:
        return False
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        os.replace(temporary, target)
        return True
    except OSError:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        return False


_RUN = re.compile(r"[0-9a-f]{24}")
_OLD = re.compile(r"[0-9a-f]{2}")  # FORMAT 1 kept entries in folders named by their first two hex digits
_TEMPORARY = re.compile(r"\..*\.tmp")


def _kind(child: Path) -> str | None:
    """What `child` of a cache folder is to jaxfix: "run", "old", "temporary", "tag" or None (not jaxfix's)."""
    if child.name in (".gitignore", "CACHEDIR.TAG"):
        return "tag"
    if child.is_symlink():
        return None
    if child.is_dir():
        return "run" if _RUN.fullmatch(child.name) else "old" if _OLD.fullmatch(child.name) else None
    return "temporary" if _TEMPORARY.fullmatch(child.name) else None


def _remove(child: Path) -> None:
    if child.is_dir() and not child.is_symlink():
        shutil.rmtree(child, ignore_errors=True)
    else:
        child.unlink(missing_ok=True)


def is_cache_folder(folder: Path) -> bool:
    """Whether `folder` is one jaxfix made: named `.jaxfix_cache`, or holding jaxfix's CACHEDIR.TAG (a folder
    JAXFIX_CACHE_DIR named may be called anything)."""
    if folder.is_symlink() or not folder.is_dir():
        return False
    if folder.name == FOLDER_NAME:
        return True
    try:
        return (folder / "CACHEDIR.TAG").read_text(encoding="utf-8", errors="replace") == _TAG
    except OSError:
        return False


def clean(paths: list[Path]) -> list[Path]:
    """Remove the cache folders under `paths` (symbolic links are not followed) and the one each path's runs use
    (the project root's, or JAXFIX_CACHE_DIR's); returns those removed. Raises OSError if one cannot be removed.
    A JAXFIX_CACHE_DIR folder into which a concurrent run stores meanwhile keeps what that run stored."""
    found: list[Path] = []
    for path in paths:
        candidates = [default_folder(path if path.is_dir() else path.parent)]
        if path.is_dir():
            for folder, subfolders, _ in os.walk(path):
                if FOLDER_NAME in subfolders:
                    candidates.append(Path(folder) / FOLDER_NAME)
                    subfolders.remove(FOLDER_NAME)
        for candidate in candidates:
            if is_cache_folder(candidate) and candidate.resolve() not in {f.resolve() for f in found}:
                found.append(candidate)
    for folder in found:
        if folder.name == FOLDER_NAME:
            for _ in range(3):  # a run writing into it meanwhile can make one pass fail on a folder it just filled
                shutil.rmtree(folder, ignore_errors=True)
                if not folder.exists():
                    break
            else:
                shutil.rmtree(folder)  # raises: say why
        else:  # a JAXFIX_CACHE_DIR folder: jaxfix's entries and tags, then the folder if nothing else is left
            for child in folder.iterdir():
                if _kind(child) is not None:
                    _remove(child)
            if not any(folder.iterdir()):
                try:
                    folder.rmdir()
                except OSError as error:  # a run stored an entry since: the folder stays, with that run's entry
                    if error.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                        raise
    return found


# ---- entries: the findings of one file, as JSON ------------------------------------------------------------


def dump_diagnostic(d: Diagnostic) -> dict:
    fix = None
    if d.fix is not None:
        fix = {
            "safety": d.fix.safety.value,
            "description": d.fix.description,
            "add_imports": [[s.module, s.obj, s.asname] for s in d.fix.add_imports],
            "remove_imports": [[s.module, s.obj, s.asname] for s in d.fix.remove_imports],
        }
    return {
        "code": d.code,
        "name": d.name,
        "message": d.message,
        "start": [d.start.line, d.start.column],
        "end": [d.end.line, d.end.column],
        "fix": fix,
        "edits": [[e.start, e.end, e.replacement] for e in d.edits],  # JSON output's text edits, where asked for
        "cell": d.cell,
    }


def load_diagnostic(data: dict) -> Diagnostic:
    fix = data["fix"]
    if fix is not None:
        fix = Fix(
            Safety(fix["safety"]),
            fix["description"],
            (),
            tuple(ImportSpec(*spec) for spec in fix["add_imports"]),
            tuple(ImportSpec(*spec) for spec in fix["remove_imports"]),
        )
    return Diagnostic(
        code=data["code"],
        name=data["name"],
        message=data["message"],
        start=Position(*data["start"]),
        end=Position(*data["end"]),
        fix=fix,
        edits=tuple(TextEdit(*edit) for edit in data.get("edits", ())),
        cell=data.get("cell"),
    )


def entry_for(diagnostics: list[Diagnostic], error: str | None) -> dict:
    return {"diagnostics": [dump_diagnostic(d) for d in diagnostics], "error": error}


def read_entry(entry: dict) -> tuple[list[Diagnostic], str | None] | None:
    """(diagnostics, error) of an entry, or None if it is malformed (treated as a miss)."""
    try:
        error = entry["error"]
        if error is not None and not isinstance(error, str):
            return None
        return [load_diagnostic(d) for d in entry["diagnostics"]], error
    except (KeyError, TypeError, ValueError):
        return None
