"""Benchmark sizes for corpus cases. A case.toml runs its case small (tests must be quick) and may say which
argument sets the work: `size_arg` (a loop's static trip count: an index into `args` or a `kwargs` name) and
`batch_args` (arrays whose rows a loop walks). `--size N` replaces the trip count with N, `--batch N` tiles those
arrays' rows to N (cyclically: `jnp.resize`), so that `jaxfix bench` runs the case at the issue's sizes (300
steps, a batch of 512) without another copy of it. Only the case.toml source is changed, and only expressions
(strings) are rewritten: nothing is evaluated here."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from jaxfix.verify.targets import Target

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def case_spec(path: str) -> dict[str, Any]:
    try:
        return tomllib.loads((Path(path).parent / "case.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}


def resize(target: Target, size: int | None, batch: int | None) -> tuple[Target, list[str]]:
    """The target with its case.toml call set to `size` steps and `batch` rows where the case declares how, and
    what was changed ("steps=300", "batch=512")."""
    if size is None and batch is None:
        return target, []
    spec = case_spec(target.before.path)
    if spec.get("entry") != target.name:
        return target, []
    sources, changed = [], []
    for source in target.sources:
        if source.origin == "case.toml" and source.calls:
            first = source.calls[0]
            args, kwargs = list(first.get("args", [])), dict(first.get("kwargs", {}))
            where = spec.get("size_arg")
            if size is not None and where is not None:
                if isinstance(where, int) and not isinstance(where, bool) and -len(args) <= where < len(args):
                    args[where] = str(int(size))
                    changed.append(f"steps={size}")
                elif isinstance(where, str):
                    kwargs[where] = str(int(size))
                    changed.append(f"steps={size}")
            if batch is not None:
                for index in spec.get("batch_args", []):
                    if isinstance(index, int) and -len(args) <= index < len(args):
                        rows = f"({args[index]})"
                        args[index] = f"jnp.resize({rows}, ({int(batch)},) + jnp.shape({rows})[1:])"
                        if f"batch={batch}" not in changed:
                            changed.append(f"batch={batch}")
            source = replace(source, calls=({**first, "args": args, "kwargs": kwargs},) + tuple(source.calls[1:]))
        sources.append(source)
    return replace(target, sources=tuple(sources)), changed
