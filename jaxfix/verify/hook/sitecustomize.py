"""`jaxfix record`'s hook, loaded by every Python process the recorded command starts (this folder is put first
on PYTHONPATH). It records, for each function defined in the project's own files, the shapes and dtypes of the
arguments it is called with, and writes them to $JAXFIX_RECORD_DIR/<pid>.json at exit.

Self-contained on purpose: the command may run under another interpreter than jaxfix's, without jaxfix
installed. It imports nothing but the standard library (and NumPy, only to bound the values of a concrete
array that is already there). Any other sitecustomize on the path still runs after it.
"""

from __future__ import annotations

import atexit
import importlib.machinery
import importlib.util
import json
import os
import sys
import threading

ROOT = os.environ.get("JAXFIX_RECORD_ROOT", "")
OUT = os.environ.get("JAXFIX_RECORD_DIR", "")
HERE = os.path.dirname(os.path.abspath(__file__))
PER_FUNCTION = 8  # distinct signatures kept per function
MAX_DEPTH = 4  # pytree nesting recorded
BOUND_SIZE = 1_000_000  # arrays up to this size have their magnitude measured
SKIPPED = ("/site-packages/", "/dist-packages/", "/.venv/", "/venv/", "/.tox/", "/.nox/", "/build/", "/.git/")

_decisions: dict = {}  # code object -> (relative path, qualified name) or None
_signatures: dict = {}  # "path::name" -> list of signatures (JSON strings, for deduplication)


def _target(code) -> tuple[str, str] | None:
    decision = _decisions.get(code, False)
    if decision is not False:
        return decision
    decision = None
    filename = code.co_filename
    if filename.startswith(ROOT) and not any(part in filename for part in SKIPPED) and filename != __file__:
        base = os.path.basename(filename)
        qualname = getattr(code, "co_qualname", code.co_name)
        testing = base.startswith("test_") or base.endswith("_test.py") or base == "conftest.py"
        if not testing and "<" not in qualname and qualname.count(".") <= 1 and filename.endswith(".py"):
            decision = (os.path.relpath(filename, ROOT).replace(os.sep, "/"), qualname)
    _decisions[code] = decision
    return decision


def _spec(value, depth: int = 0):
    """A JSON spec of `value` (the format of jaxfix/verify/strategies.py), or None when it cannot be redrawn."""
    if value is None:
        return {"kind": "none"}
    if isinstance(value, bool):
        return {"kind": "bool"}
    if isinstance(value, int):
        return {"kind": "int", "choices": sorted({0, 1, value} if value >= 1 else {value, 0})}
    if isinstance(value, float):
        bound = max(1.0, 2.0 * abs(value)) if value == value and abs(value) != float("inf") else 1.0
        return {"kind": "float", "min": -bound, "max": bound}
    if isinstance(value, str):
        return {"kind": "value", "expr": repr(value)}
    if depth < MAX_DEPTH and isinstance(value, (tuple, list)) and type(value) in (tuple, list):
        items = [_spec(v, depth + 1) for v in value]
        return None if None in items else {"kind": "tuple" if isinstance(value, tuple) else "list", "items": items}
    if depth < MAX_DEPTH and type(value) is dict and all(isinstance(k, str) for k in value):
        items = {k: _spec(v, depth + 1) for k, v in value.items()}
        return None if None in items.values() else {"kind": "dict", "items": items}
    return _array_spec(value)


def _array_spec(value):
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if shape is None or dtype is None:
        return None
    try:
        shape = [int(d) for d in shape]
    except (TypeError, ValueError):  # symbolic dimensions
        return None
    module = type(value).__module__ or ""
    name = str(dtype)
    if name.startswith("key<"):
        return {"kind": "key", "shape": shape}
    if module.startswith("numpy") and type(value).__name__ == "ndarray":
        spec = {"kind": "array", "dtype": name, "shape": shape, "numpy": True}
    elif module.startswith("jax") or module.startswith("jaxlib"):
        spec = {"kind": "array", "dtype": name, "shape": shape, "numpy": False}
    else:
        return None
    _add_bound(spec, value)
    return spec


def _add_bound(spec: dict, value) -> None:
    """Twice the largest magnitude of a concrete float array (tracers have none)."""
    if "Tracer" in type(value).__name__ or not spec["dtype"].startswith(("float", "bfloat")):
        return
    size = 1
    for d in spec["shape"]:
        size *= d
    if not 0 < size <= BOUND_SIZE:
        return
    try:
        import numpy as np

        values = np.abs(np.asarray(value, dtype=np.float64))
        finite = values[np.isfinite(values)]
        if finite.size:
            spec["bound"] = max(1.0, 2.0 * float(finite.max()))
    except Exception:
        pass


def _record(frame) -> None:
    target = _target(frame.f_code)
    if target is None:
        return
    key = f"{target[0]}::{target[1]}"
    kept = _signatures.setdefault(key, [])
    if len(kept) >= PER_FUNCTION:
        return
    code = frame.f_code
    local = frame.f_locals
    names = code.co_varnames
    positional = code.co_argcount
    keyword_only = code.co_kwonlyargcount
    args, kwargs = [], {}
    for index in range(positional):
        if index == 0 and names[0] in ("self", "cls") and "." in target[1]:
            return  # a method: verification cannot make the object
        spec = _spec(local.get(names[index]))
        if spec is None:
            return
        args.append(spec)
    for name in names[positional : positional + keyword_only]:
        spec = _spec(local.get(name))
        if spec is None:
            return
        kwargs[name] = spec
    extra = positional + keyword_only
    if code.co_flags & 0x04:  # *args
        for value in local.get(names[extra], ()):
            spec = _spec(value)
            if spec is None:
                return
            args.append(spec)
        extra += 1
    if code.co_flags & 0x08:  # **kwargs
        for name, value in local.get(names[extra], {}).items():
            spec = _spec(value)
            if spec is None:
                return
            kwargs[name] = spec
    text = json.dumps({"args": args, "kwargs": kwargs}, sort_keys=True)
    if text not in kept:
        kept.append(text)


def _profile(frame, event, arg):
    if event == "call":
        try:
            _record(frame)
        except Exception:
            pass


def _write() -> None:
    sys.setprofile(None)
    if not OUT or not _signatures:
        return
    data = {key: [json.loads(s) for s in kept] for key, kept in _signatures.items() if kept}
    path = os.path.join(OUT, f"{os.getpid()}.json")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(data))


def _chain() -> None:
    """Run the sitecustomize this one shadows, if there is one."""
    path = [p for p in sys.path if os.path.abspath(p or ".") != HERE]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


if ROOT and OUT:
    ROOT = os.path.join(os.path.abspath(ROOT), "")
    atexit.register(_write)
    sys.setprofile(_profile)
    threading.setprofile(_profile)
_chain()
