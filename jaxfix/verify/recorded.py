"""Signatures recorded by `jaxfix record` (record.py), as `verify` reads them: `.jaxfix/signatures.json` at the
project root maps "relative/path.py::qualified_name" to a list of {"args": [spec, ...], "kwargs": {name: spec}}
(specs as in strategies.py: exact shapes and dtypes, value bounds where the arrays were concrete)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jaxfix.verify import callsites, functions

PER_FUNCTION = 8


def signatures_file(root: Path) -> Path:
    return root / ".jaxfix" / "signatures.json"


_cache: dict[Path, tuple[float, dict[str, Any]]] = {}


def _load(path: Path) -> dict[str, Any]:
    try:
        stamp = path.stat().st_mtime
    except OSError:
        return {}
    if path in _cache and _cache[path][0] == stamp:
        return _cache[path][1]
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}
    _cache[path] = (stamp, data if isinstance(data, dict) else {})
    return _cache[path][1]


def lookup(path: Path, name: str, text: str | None = None) -> list[dict[str, Any]]:
    """The recorded calls of `name` in the file at `path`; for `f = jax.jit(g)`, those of `g` (the Python
    function the recorder saw being traced)."""
    root = callsites.project_root(path)
    data = _load(signatures_file(root))
    if not data:
        return []
    try:
        relative = Path(path).resolve().relative_to(root).as_posix()
    except ValueError:
        return []
    found = data.get(f"{relative}::{name}", [])
    if not found and text is not None:
        tree = functions.parse(text)
        node = functions.function_node(tree, name) if tree is not None else None
        if node is not None and node.name != name:
            found = data.get(f"{relative}::{node.name}", [])
    return [s for s in found if isinstance(s, dict)]
