"""Which files a run looks at: Python files and Jupyter notebooks under the given paths, minus what .gitignore, the excludes,
version-control folders, virtual environments and build output hide. A file named on the command line is
always taken, as Ruff does: naming it is asking for it."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import pathspec

from jaxfix.files import Resolver

SKIPPED_FOLDERS = frozenset(
    {
        ".git", ".hg", ".svn", ".bzr", "__pycache__", ".venv", "venv", ".tox", ".nox", ".eggs",
        ".mypy_cache", ".pytest_cache", ".ruff_cache", ".jaxfix_cache", ".ipynb_checkpoints", "build", "dist",
        "node_modules", "site-packages", "__pypackages__",
    }
)
PYTHON_SUFFIXES = (".py", ".pyi")
NOTEBOOK_SUFFIXES = (".ipynb",)  # their code cells, as one module (jaxfix/notebook.py)


@dataclass
class Discovered:
    files: list[str] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)


def _gitignore(folder: Path) -> pathspec.GitIgnoreSpec | None:
    ignore_file = folder / ".gitignore"
    try:
        lines = ignore_file.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    return pathspec.GitIgnoreSpec.from_lines(lines)


def _ancestor_ignores(folder: Path) -> list[tuple[Path, pathspec.GitIgnoreSpec]]:
    """The .gitignore files of the folders above `folder`, up to the root of its git repository (none when
    it is in no repository: a stray .gitignore above it says nothing about these files)."""
    found = []
    for parent in folder.resolve().parents:
        spec = _gitignore(parent)
        if spec is not None:
            found.append((parent, spec))
        if (parent / ".git").exists():
            return found
    return []


def _ignored(resolved: Path, is_dir: bool, specs: list[tuple[Path, pathspec.GitIgnoreSpec]]) -> bool:
    for base, spec in specs:
        try:
            relative = resolved.relative_to(base).as_posix()
        except ValueError:
            continue
        if spec.match_file(relative + ("/" if is_dir else "")):
            return True
    return False


def _unresolvable(error: Exception) -> str:
    if isinstance(error, RuntimeError) or getattr(error, "errno", None) == 40:  # ELOOP
        return "symbolic link loop"
    return f"cannot resolve: {getattr(error, 'strerror', None) or error}"


def discover(
    paths: Iterable[str], exclude: Iterable[str] = (), *, config_exclude: Iterable[str] = (), config_root: Path | None = None
) -> Discovered:
    """The files under `paths` to look at. `exclude` (the command line's) matches paths relative to the current
    folder; `config_exclude` (pyproject.toml's) relative to `config_root`, the folder of that file, so that a
    project excludes the same files wherever jaxfix runs, as the language server does."""
    found = Discovered()
    cwd = Path.cwd().resolve()
    specs_by_base = [
        (base, pathspec.GitIgnoreSpec.from_lines(list(patterns)))
        for base, patterns in ((cwd, exclude), ((config_root or cwd).resolve(), config_exclude))
        if list(patterns)
    ]

    def is_excluded(resolved: Path, is_dir: bool) -> bool:
        for base, spec in specs_by_base:
            try:
                relative = resolved.relative_to(base).as_posix()
            except ValueError:
                relative = resolved.as_posix().lstrip("/")
            if spec.match_file(relative + ("/" if is_dir else "")):
                return True
        return False

    seen: set[Path] = set()
    resolve = Resolver()

    def add(path: Path, key: Path) -> None:
        if key not in seen:
            seen.add(key)
            found.files.append(str(path))

    for given in paths:
        root = Path(given)
        if root.is_symlink() and not root.exists():
            found.errors.append((given, "broken symbolic link or symbolic link loop"))
        elif not root.exists():
            found.errors.append((given, "no such file or folder"))
        elif root.is_file():
            add(root, root.resolve())
        elif root.is_dir():
            specs = _ancestor_ignores(root)
            for folder, folders, files in os.walk(root):
                here = Path(folder)
                spec = _gitignore(here)
                if spec is not None:  # applies only below `here`: _ignored skips paths it is no ancestor of
                    specs = [*specs, (here.resolve(), spec)]
                kept = []
                for name in sorted(folders):
                    if name in SKIPPED_FOLDERS or name.endswith(".egg-info"):
                        continue
                    try:
                        if (here / name / "pyvenv.cfg").exists():
                            continue
                        resolved = (here / name).resolve()
                        if _ignored(resolved, True, specs) or is_excluded(resolved, True):
                            continue
                    except (OSError, RuntimeError) as error:  # a symlink loop: Path.resolve raises RuntimeError
                        found.errors.append((str(here / name), _unresolvable(error)))
                        continue
                    kept.append(name)
                folders[:] = kept
                for name in sorted(files):
                    path = here / name
                    if not name.endswith(PYTHON_SUFFIXES + NOTEBOOK_SUFFIXES):
                        continue
                    try:
                        resolved = resolve(path)
                        if not _ignored(resolved, False, specs) and not is_excluded(resolved, False):
                            add(path, resolved)
                    except (OSError, RuntimeError) as error:
                        found.errors.append((str(path), _unresolvable(error)))
        else:
            found.errors.append((given, "not a regular file or folder"))
    return found
