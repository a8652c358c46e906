"""What a call does besides returning: module globals it writes, and arguments it changes in place.

Return values are not all a function computes: `LOG.append(x)` or `np.clip(x, 0, 1, out=x)` change what the
caller sees afterwards. The worker snapshots the module's globals and the call's host arguments (NumPy arrays,
lists, dicts) before each call and compares after it. The rule (docs/verification.md):

- an argument changed in place, by either side, is part of the output: the arguments as they are after the call
  are compared, like the return values;
- a global written (rebound, or a list, dict, set or NumPy array in it changed) is compared call by call when
  both sides write the same globals: the items each call appended to a list, else the global's new value. When
  only one side writes a global, or what was written cannot be compared (a tracer leaked out of jit), the
  function is reported "could not check";
- a host callback with effects (`jax.debug.callback`, `jax.experimental.io_callback`) on either side: its
  effects are outside the process's values, so the function is reported "could not check".
"""

from __future__ import annotations

import inspect
import types
from dataclasses import dataclass
from typing import Any

from jaxfix.verify import compare as cmp


@dataclass
class Seen(cmp.Outcome):
    """An Outcome with what the call did besides: the globals it wrote, the arguments it changed (their paths),
    and the host state of all arguments after the call."""

    written: dict[str, Any] | None = None  # global name -> what the call did to it (global_changes)
    mutated: tuple[str, ...] = ()
    arguments: Any = None
    callbacks: tuple[str, ...] = ()  # host callbacks it staged or called (jax.debug.callback, io_callback)


_called: list[str] = []  # host callbacks entered since the last `callbacks_called()`
WATCHED = (("jax.debug", "callback"), ("jax.experimental", "io_callback"))


def watch_callbacks() -> None:
    """Wrap the public host-callback functions, once, before user modules import them, so that a call (at trace
    time under jit) is noted. `pure_callback` is pure by contract, and `jax.debug.print` output for people: both
    are left alone."""
    import functools
    import importlib

    for module_name, name in WATCHED:
        try:
            module = importlib.import_module(module_name)
            original = getattr(module, name)
        except (ImportError, AttributeError):
            continue
        if getattr(original, "_jaxfix_watched", False):
            continue

        def watched(*args: Any, _original: Any = original, _name: str = f"{module_name}.{name}", **kwargs: Any) -> Any:
            _called.append(_name)
            return _original(*args, **kwargs)

        functools.update_wrapper(watched, original)
        watched._jaxfix_watched = True  # type: ignore[attr-defined]
        setattr(module, name, watched)


def callbacks_called() -> tuple[str, ...]:
    """The host callbacks entered since the last call, once each."""
    found = tuple(dict.fromkeys(_called))
    _called.clear()
    return found


_MISSING = object()


def globals_of(function: Any) -> dict[str, Any] | None:
    """The module namespace `function` reads its globals from (through jit and functools.wraps wrappers)."""
    seen = 0
    while function is not None and seen < 10:
        scope = getattr(function, "__globals__", None)
        if isinstance(scope, dict):
            return scope
        function = getattr(function, "__wrapped__", None) or getattr(function, "__func__", None)
        seen += 1
    return None


def _is_state(value: Any) -> bool:
    import numpy as np

    return isinstance(value, (list, dict, set, bytearray, np.ndarray))


def snapshot_globals(scope: dict[str, Any] | None) -> dict[str, tuple[int, Any]]:
    """Each global's identity, and a copy of the contents of those that can change in place."""
    if scope is None:
        return {}
    found = {}
    for name, value in list(scope.items()):
        if name.startswith("__") or isinstance(value, (types.ModuleType, types.FunctionType, type)):
            continue
        found[name] = (id(value), host_state(value) if _is_state(value) else _MISSING)
    return found


def globals_written(scope: dict[str, Any] | None, before: dict[str, tuple[int, Any]]) -> tuple[str, ...]:
    """The globals a call bound, rebound or changed in place."""
    if scope is None:
        return ()
    after = snapshot_globals(scope)
    written = []
    for name, (identity, state) in after.items():
        old = before.get(name)
        if old is None or old[0] != identity or (state is not _MISSING and not _same(old[1], state)):
            written.append(name)
    return tuple(written)


def global_changes(scope: dict[str, Any] | None, before: dict[str, tuple[int, Any]], names: tuple[str, ...]) -> dict[str, Any]:
    """What the call did to each global of `names`: the items it appended to a list that was there, else the
    global's new value (a copy)."""
    changes = {}
    for name in names:
        value = scope.get(name, _MISSING) if scope is not None else _MISSING
        old = before.get(name)
        if value is _MISSING:
            changes[name] = "(deleted)"
        elif old is not None and isinstance(value, list) and isinstance(old[1], list) and old[0] == id(value) and _same(old[1], host_state(value[: len(old[1])])):
            changes[name] = ("appended", host_state(value[len(old[1]):]))
        else:
            changes[name] = host_state(value)
    return changes


def host_state(value: Any) -> Any:
    """A copy of the parts of `value` that code can change in place: lists, tuples, dicts and sets rebuilt,
    NumPy arrays copied; anything else (JAX arrays, numbers, strings) is kept as it is."""
    import numpy as np

    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, (list, tuple)):
        return type(value)(host_state(v) for v in value) if type(value) in (list, tuple) else value
    if isinstance(value, dict):
        return {k: host_state(v) for k, v in value.items()}
    if isinstance(value, (set, bytearray)):
        return type(value)(value)
    return value


def _same(a: Any, b: Any) -> bool:
    import numpy as np

    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
            return False
        return a.shape == b.shape and a.dtype == b.dtype and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (set, bytearray)):
        return a == b
    return a is b or _equal_scalar(a, b)


def _equal_scalar(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:  # JAX arrays and the like: the same object or not
        return False


def mutated(before: Any, after: Any) -> tuple[str, ...]:
    """The arguments (`args[i]`, `kwargs['k']`) whose host state differs after the call."""
    (args_before, kwargs_before), (args_after, kwargs_after) = before, after
    changed = [f"args[{i}]" for i, (a, b) in enumerate(zip(args_before, args_after)) if _is_mutable(b) and not _same(a, host_state(b))]
    changed += [f"kwargs[{k!r}]" for k in kwargs_after if _is_mutable(kwargs_after[k]) and not _same(kwargs_before.get(k), host_state(kwargs_after[k]))]
    return tuple(changed)


def _is_mutable(value: Any) -> bool:
    if _is_state(value):
        return True
    if isinstance(value, (list, tuple)):
        return any(_is_mutable(v) for v in value)
    return False


def parameter_names(function: Any, paths: tuple[str, ...]) -> list[str]:
    """`args[0]` as the parameter's name where the signature tells it."""
    try:
        names = [p.name for p in inspect.signature(function).parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        names = []
    out = []
    for path in paths:
        if path.startswith("args[") and int(path[5:-1]) < len(names):
            out.append(names[int(path[5:-1])])
        else:
            out.append(path[len("kwargs['"):-2] if path.startswith("kwargs[") else path)
    return out
