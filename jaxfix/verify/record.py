"""`jaxfix record -- COMMAND`: run the user's own tests (or any Python command) and keep the shapes and dtypes
each of the project's functions was called with, for `jaxfix verify` to draw inputs from (input source 4).

The command runs with hook/ first on PYTHONPATH, whose sitecustomize.py records calls in every Python process
the command starts; each process writes its own file, and they are merged into `.jaxfix/signatures.json` at the
project root (the folder of the nearest pyproject.toml or .git). Functions recorded again replace their old
entries; others are kept.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from jaxfix.verify.recorded import PER_FUNCTION, signatures_file

HOOK = Path(__file__).resolve().parent / "hook"


@dataclass
class Recording:
    returncode: int
    path: Path
    functions: int  # functions recorded by this run
    signatures: int


def record(command: Sequence[str], root: Path) -> Recording:
    root = root.resolve()
    with tempfile.TemporaryDirectory(prefix="jaxfix-record-") as out:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(HOOK)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        env["JAXFIX_RECORD_ROOT"] = str(root)
        env["JAXFIX_RECORD_DIR"] = out
        try:
            returncode = subprocess.call(list(command), env=env)
        except OSError as error:
            raise FileNotFoundError(f"cannot run {command[0]}: {error.strerror or error}") from None
        recorded: dict[str, list] = {}
        for part in sorted(Path(out).glob("*.json")):
            try:
                data = json.loads(part.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            for key, signatures in data.items():
                kept = recorded.setdefault(key, [])
                kept.extend(s for s in signatures if s not in kept)
    recorded = {key: signatures[:PER_FUNCTION] for key, signatures in recorded.items()}
    path = signatures_file(root)
    merged = {}
    if path.exists():
        try:
            merged = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            merged = {}
    merged.update(recorded)
    if recorded:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(merged, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return Recording(returncode, path, len(recorded), sum(len(s) for s in recorded.values()))
