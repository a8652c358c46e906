"""Settings from `[tool.jaxfix]` in the nearest pyproject.toml that has such a table, looked for from the checked
path upward; command-line options then override them. This module reads the table and knows no rule: the engine
turns it into its Settings and checks the codes and options against the rules (`engine.settings_from_config`).

    [tool.jaxfix]
    select = ["JF1", "JF9"]       # codes, code prefixes or names; default: every rule that is not opt-in
    extend-select = ["JF902"]     # added to the selection (an opt-in rule is selected only by its code or name)
    ignore = ["print-in-traced"]
    exclude = ["generated/", "*_pb2.py"]
    unsafe-fixes = false
    python = ".venv/bin/python"   # runs the code `verify` and `apply --verify` check (relative to this file's folder)

    [tool.jaxfix.per-file-ignores]  # gitignore-style patterns, relative to this file's folder
    "tests/**" = ["JF6"]

    [tool.jaxfix.codemods.loop-to-fori-loop]  # a codemod's OPTIONS, by name or code
    min-trip-count = 20
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

# verify: read by jaxfix.verify.settings
KNOWN_KEYS = {"select", "extend-select", "ignore", "exclude", "unsafe-fixes", "per-file-ignores", "codemods", "verify", "python"}


class ConfigError(ValueError):
    """pyproject.toml holds something jaxfix cannot use; the message says what and where."""


@dataclass
class Config:
    select: list[str] = field(default_factory=list)
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    unsafe_fixes: bool = False
    per_file_ignores: list[tuple[str, list[str]]] = field(default_factory=list)  # (pattern, codes)
    codemods: dict[str, dict[str, object]] = field(default_factory=dict)  # codemod name or code → its options
    python: str | None = None  # the project's interpreter (relative to `source`'s folder): see jaxfix/verify/interpreter.py
    source: Path | None = None


def find_pyproject(start: Path) -> Path | None:
    start = start.resolve()
    for folder in [start, *start.parents]:
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def find_config(start: Path) -> Path | None:
    """The nearest pyproject.toml at or above `start` (a file or a folder) with a [tool.jaxfix] table."""
    start = Path(os.path.abspath(start))  # not resolve(): a symlink loop is discovery's to report, not a crash here
    folders = [start, *start.parents] if start.is_dir() else list(start.parents)
    for folder in folders:
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            try:
                if "jaxfix" in _read(candidate).get("tool", {}):
                    return candidate
            except ConfigError:
                return candidate  # unreadable: `load` names it rather than silently looking further up
    return None


def _read(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"{path}: cannot read [tool.jaxfix]: {error}") from None


def load(start: Path | None = None) -> Config:
    """The settings for a run on `start` (default: the current folder)."""
    path = find_config(start or Path.cwd())
    if path is None:
        return Config()
    data = _read(path)
    table = data.get("tool", {}).get("jaxfix", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.jaxfix] must be a table")
    unknown = set(table) - KNOWN_KEYS
    if unknown:
        raise ConfigError(f"{path}: unknown [tool.jaxfix] key(s): {', '.join(sorted(unknown))}")
    config = Config(source=path)
    for key in ("select", "extend-select", "ignore", "exclude"):
        value = table.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{path}: [tool.jaxfix] {key} must be a list of strings")
        setattr(config, key.replace("-", "_"), value)
    unsafe = table.get("unsafe-fixes", False)
    if not isinstance(unsafe, bool):
        raise ConfigError(f"{path}: [tool.jaxfix] unsafe-fixes must be true or false")
    config.unsafe_fixes = unsafe
    python = table.get("python")
    if python is not None and (not isinstance(python, str) or not python.strip()):
        raise ConfigError(f"{path}: [tool.jaxfix] python must be a path (a string): the project's interpreter or virtualenv")
    config.python = python
    ignores = table.get("per-file-ignores", {})
    if not isinstance(ignores, dict):
        raise ConfigError(f"{path}: [tool.jaxfix.per-file-ignores] must be a table of pattern = [codes]")
    for pattern, codes in ignores.items():
        if not isinstance(codes, list) or not all(isinstance(c, str) for c in codes):
            raise ConfigError(f"{path}: [tool.jaxfix.per-file-ignores] {pattern!r} must be a list of codes")
        config.per_file_ignores.append((pattern, codes))
    codemods = table.get("codemods", {})
    if not isinstance(codemods, dict) or not all(isinstance(v, dict) for v in codemods.values()):
        raise ConfigError(f"{path}: [tool.jaxfix.codemods] must hold one table per codemod, e.g. [tool.jaxfix.codemods.loop-to-fori-loop]")
    config.codemods = {name: dict(options) for name, options in codemods.items()}
    return config
