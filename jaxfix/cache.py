"""The per-file result cache: what `check` found in a file, keyed on everything the finding can depend on, so
that a run over an unchanged tree reads answers instead of parsing.

Where: `.jaxfix_cache/` in the project root (the folder of the nearest pyproject.toml, else the working folder),
as Ruff keeps `.ruff_cache/`; `JAXFIX_CACHE_DIR` overrides it. The folder holds a `.gitignore` of `*` and a
CACHEDIR.TAG, so neither git nor backup tools pick it up. `--no-cache` turns it off.

Key: a hash of the file's bytes, its path, the settings (selected codes, fix options), the jaxfix version, a hash
of the source of jaxfix and its codemods (a change to a rule during development invalidates every entry), and
the Python version (`ast` and the tokenizer change between versions). One small JSON file per entry, written
atomically (temporary file, then rename); an entry that cannot be read or decoded is a miss, and a cache folder
that cannot be written is silently not used. Entries are never pruned: delete the folder to reclaim the space.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jaxfix import __version__
from jaxfix.diagnostics import Diagnostic, Fix, ImportSpec, Position, Safety, TextEdit

FOLDER_NAME = ".jaxfix_cache"
FORMAT = 1  # bump when the entry layout changes
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

    def key(self, path: str, data: bytes) -> str:
        digest = hashlib.sha256(self.run_key.encode())
        digest.update(os.path.abspath(path).encode("utf-8", "surrogateescape"))
        digest.update(b"\0")
        digest.update(data)
        return digest.hexdigest()

    def _entry(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def load(self, key: str) -> dict | None:
        """The stored entry, or None when there is none or it is unreadable (a corrupt entry is a miss)."""
        try:
            with open(self._entry(key), "rb") as handle:
                entry = json.loads(handle.read())
        except (OSError, ValueError):
            return None
        if not isinstance(entry, dict) or entry.get("key") != key:
            return None
        return entry

    def store(self, key: str, entry: dict) -> None:
        """Write the entry atomically; any failure (read-only folder, full disk) only means no cache."""
        target = self._entry(key)
        try:
            self._prepare_folder()
            target.parent.mkdir(exist_ok=True)
            descriptor, temporary = tempfile.mkstemp(dir=target.parent, prefix=".", suffix=".tmp")
        except OSError:
            return
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                json.dump({**entry, "key": key}, handle)
            os.replace(temporary, target)
        except OSError:
            try:
                os.unlink(temporary)
            except OSError:
                pass

    def _prepare_folder(self) -> None:
        if (self.folder / ".gitignore").exists():
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        for name, content in ((".gitignore", "# Created by jaxfix.\n*\n"), ("CACHEDIR.TAG", _TAG)):
            path = self.folder / name
            if not path.exists():
                descriptor, temporary = tempfile.mkstemp(dir=self.folder, prefix=".", suffix=".tmp")
                with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                    handle.write(content)
                os.replace(temporary, path)


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
