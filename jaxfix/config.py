"""Settings from `[tool.jaxfix]` in the nearest pyproject.toml, which command-line options then override.

    [tool.jaxfix]
    select = ["JF1", "JF9"]       # codes, code prefixes or names; default: all
    ignore = ["print-in-traced"]
    exclude = ["generated/", "*_pb2.py"]
    unsafe-fixes = false
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

KNOWN_KEYS = {"select", "ignore", "exclude", "unsafe-fixes", "verify"}  # verify: read by jaxfix.verify.settings


class ConfigError(ValueError):
    """pyproject.toml holds something jaxfix cannot use; the message says what and where."""


@dataclass
class Config:
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    unsafe_fixes: bool = False
    source: Path | None = None


def find_pyproject(start: Path) -> Path | None:
    start = start.resolve()
    for folder in [start, *start.parents]:
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def load(start: Path | None = None) -> Config:
    path = find_pyproject(start or Path.cwd())
    if path is None:
        return Config()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"{path}: cannot read [tool.jaxfix]: {error}") from None
    table = data.get("tool", {}).get("jaxfix", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.jaxfix] must be a table")
    unknown = set(table) - KNOWN_KEYS
    if unknown:
        raise ConfigError(f"{path}: unknown [tool.jaxfix] key(s): {', '.join(sorted(unknown))}")
    config = Config(source=path)
    for key in ("select", "ignore", "exclude"):
        value = table.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{path}: [tool.jaxfix] {key} must be a list of strings")
        setattr(config, key, value)
    unsafe = table.get("unsafe-fixes", False)
    if not isinstance(unsafe, bool):
        raise ConfigError(f"{path}: [tool.jaxfix] unsafe-fixes must be true or false")
    config.unsafe_fixes = unsafe
    return config
