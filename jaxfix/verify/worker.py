"""The verification worker: `python -m jaxfix.verify.worker`, started by runner.py. The one place where jaxfix
runs user code.

It reads one job from stdin (options and targets, as JSON), loads each original and rewritten module side by
side under names of their own, and for each target and each device draws inputs with Hypothesis, calls both
functions on them, and compares (compare.py). It writes one JSON line per event to the pipe it was given as
stdout: {"event": "start", "index": i} before a target, {"event": "report", "index": i, "report": {...}} after.
Everything the user's code prints goes to stderr, so it can never be mistaken for a report.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import inspect
import io
import json
import linecache
import os
import signal
import sys
import time
import traceback
import types
import warnings
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np

from jaxfix.verify import compare as cmp
from jaxfix.verify import effects
from jaxfix.verify import strategies, testcases
from jaxfix.verify.targets import (
    DIFFERS,
    VERIFIED,
    DeviceReport,
    Options,
    Report,
    Source,
    Target,
    options_from,
    target_from,
    to_json,
)

SHOWN_VALUES = 6  # values shown per array in a counterexample


class Mismatch(Exception):
    """Raised inside the Hypothesis test when the two functions disagree on an input; carries the report lines."""

    def __init__(self, message: str, lines: list[str]) -> None:
        super().__init__(message)
        self.message, self.lines = message, lines


class Unusable(Exception):
    """No input could be made from a source (its expressions fail, say); the next source is tried."""


# ---- modules ----------------------------------------------------------------------------------------------


def package_of(path: Path) -> tuple[Path, str]:
    """The folder to put on sys.path for `path`'s imports, and the dotted package `path` belongs to ("" for a
    module outside packages)."""
    folder = path.resolve().parent
    parts: list[str] = []
    while (folder / "__init__.py").exists() and folder.parent != folder:
        parts.insert(0, folder.name)
        folder = folder.parent
    return folder, ".".join(parts)


_loaded: dict[tuple[str, str], types.ModuleType | BaseException] = {}


def load_module(path: str, text: str, label: str, role: str, *, cache: bool = True) -> types.ModuleType:
    """Execute `text` as a module of its own (a fresh name per role and text, so that the original and the rewrite
    never share state), importable relative to `path`. Raises what the module raises. With `cache=False` (`jaxfix
    bench`: fresh function objects, which no jit cache knows) the module is executed again and not kept."""
    key = (role, hashlib.sha256((path + "\0" + text).encode()).hexdigest())
    if cache and key in _loaded:
        cached = _loaded[key]
        if isinstance(cached, BaseException):
            raise cached
        return cached
    root, package = package_of(Path(path))
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    name = f"_jaxfix_verify_{role}_{key[1][:16]}"
    filename = label or path
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)  # for inspect.getsource
    spec = importlib.util.spec_from_loader(name, loader=None, origin=filename)
    module = importlib.util.module_from_spec(spec)
    module.__file__ = str(path)
    module.__package__ = package
    sys.modules[name] = module
    try:
        exec(compile(text, filename, "exec", dont_inherit=True), module.__dict__)
    except BaseException as error:  # SystemExit and KeyboardInterrupt from module code count too
        if cache:
            _loaded[key] = error
        else:
            sys.modules.pop(name, None)
        raise
    if cache:
        _loaded[key] = module
    else:
        sys.modules.pop(name, None)  # nothing keeps it: its jitted functions and their executables can go
    return module


def lookup(module: types.ModuleType, name: str) -> Any:
    value: Any = module
    for part in name.split("."):
        value = getattr(value, part)
    return value


# ---- calling ----------------------------------------------------------------------------------------------


def _concretization_errors() -> tuple[type[BaseException], ...]:
    import jax

    names = (
        "ConcretizationTypeError",
        "TracerBoolConversionError",
        "TracerIntegerConversionError",
        "TracerArrayConversionError",
        "NonConcreteBooleanIndexError",
    )
    return tuple(getattr(jax.errors, n) for n in names if hasattr(jax.errors, n))


class _Alarm(BaseException):
    """Raised by SIGALRM inside user code (a BaseException, so that `except Exception` in user code lets it by)."""


class DeadlineExceeded(Exception):
    """The outcome of a call that ran past its deadline."""


_compiled = [0.0]  # seconds JAX has spent tracing, lowering and compiling in this process
GRACE = 1.0  # JAX records a compile's duration just after it ends: an alarm in between waits this long


def _count_compile(event: str, duration: float, **_: Any) -> None:
    if event.startswith("/jax/core/compile/"):
        _compiled[0] += duration


@functools.lru_cache(maxsize=1)
def _listen_to_compiles() -> None:
    import jax.monitoring

    jax.monitoring.register_event_duration_secs_listener(_count_compile)


COMPILER_FILES = ("interpreters/mlir.py", "/_src/compiler.py")  # JAX's lowering and compiling, in Python


def _compiling(frame: Any) -> bool:
    """Whether JAX is tracing a function (for jit, grad, a lax loop body) or lowering or compiling one: time that
    is compile time, which JAX reports only when it ends. Uses JAX internals where they exist; without them, the
    deadline simply counts this time too."""
    try:
        from jax._src import core

        if not isinstance(core.trace_ctx.trace, core.EvalTrace):
            return True
    except (ImportError, AttributeError):
        pass
    while frame is not None:
        if frame.f_code.co_filename.replace("\\", "/").endswith(COMPILER_FILES):
            return True
        frame = frame.f_back
    return False


@contextlib.contextmanager
def deadline(seconds: float | None) -> Iterator[None]:
    """Interrupt Python code that runs longer than `seconds`, not counting the time JAX spends compiling (a
    Python `while` that never ends, run eagerly). Code running inside XLA cannot be interrupted this way; the
    runner's timeout stops the whole worker then."""
    if not seconds or not hasattr(signal, "setitimer"):
        yield
        return
    _listen_to_compiles()
    started, compiled_before, graced = time.monotonic(), _compiled[0], [False]

    def alarm(signum: int, frame: Any) -> None:
        elapsed = time.monotonic() - started
        allowed = seconds + (_compiled[0] - compiled_before)
        if elapsed < allowed:
            signal.setitimer(signal.ITIMER_REAL, allowed - elapsed + 0.01)
            graced[0] = False
        elif _compiling(frame):
            signal.setitimer(signal.ITIMER_REAL, 0.25)  # tracing or lowering: compile time, reported when it ends
        elif not graced[0]:
            graced[0] = True
            signal.setitimer(signal.ITIMER_REAL, GRACE)
        else:
            raise _Alarm()

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


GRAD_WALL = 2.0  # a gradient may take this many deadlines of wall time, its tracing and compiling included


@contextlib.contextmanager
def wall_deadline(seconds: float | None) -> Iterator[None]:
    """Interrupt Python code (tracing included) after `seconds` of wall time. For gradients, which are an extra
    check: one that takes too long is given up, not waited for."""
    if not seconds or not hasattr(signal, "setitimer"):
        yield
        return

    def alarm(signum: int, frame: Any) -> None:
        raise _Alarm()

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def invoke(
    function: Callable[..., Any] | BaseException, call: strategies.Call, device: Any, *, eager: bool = False, limit: float | None = None
) -> cmp.Outcome:
    """Call on `device` with fresh argument buffers and wait for the result, for at most `limit` seconds.
    `function` may be the exception its module raised on import: then that is the outcome."""
    import jax

    if isinstance(function, BaseException):
        return cmp.Outcome(error=function)
    scope = effects.globals_of(function)
    globals_before = effects.snapshot_globals(scope)
    effects.callbacks_called()  # forget those of earlier calls
    args = kwargs = None
    try:
        args, kwargs = strategies.materialize(call, device)
        arguments_before = effects.host_state((args, kwargs))
        with deadline(limit), jax.default_device(device):
            if eager:
                with jax.disable_jit():
                    value = function(*args, **kwargs)
            else:
                value = function(*args, **kwargs)
            outcome = cmp.Outcome(value=jax.block_until_ready(value))
    except _Alarm:
        outcome = cmp.Outcome(error=DeadlineExceeded(f"ran for more than {limit:g} s (the deadline)"))
    except Exception as error:
        outcome = cmp.Outcome(error=error)
    written = effects.globals_written(scope, globals_before)
    written = effects.global_changes(scope, globals_before, written) if written else None
    mutated = effects.mutated(arguments_before, (args, kwargs)) if args is not None else []
    arguments = effects.host_state((args, kwargs)) if args is not None else None
    callbacks = effects.callbacks_called()
    return effects.Seen(value=outcome.value, error=outcome.error, written=written, mutated=mutated, arguments=arguments, callbacks=callbacks)


def grad_of(
    function: Callable[..., Any] | BaseException,
    call: strategies.Call,
    device: Any,
    *,
    eager: bool,
    limit: float | None = None,
    arrays_only: bool = False,
    compiled: bool = False,
) -> cmp.Outcome | None:
    """jax.grad of a weighted sum of the float outputs with respect to the float inputs (with `arrays_only`, the
    float arrays, not Python floats, which a jitted function may take as static arguments); None when there are
    none. `compiled`: the gradient jitted as one program, which rounds otherwise than op by op."""
    import jax
    import jax.numpy as jnp

    if isinstance(function, BaseException):
        return cmp.Outcome(error=function)
    args, kwargs = strategies.materialize(call, device)
    leaves, treedef = jax.tree.flatten((args, kwargs))
    floats = [i for i, leaf in enumerate(leaves) if _is_float(leaf) and not (arrays_only and isinstance(leaf, float))]
    if not floats:
        return None

    def scalar(values: list[Any]) -> Any:
        full = list(leaves)
        for i, value in zip(floats, values):
            full[i] = value
        a, k = jax.tree.unflatten(treedef, full)
        return _weighted_sum(function(*a, **k))

    try:
        with wall_deadline(limit * GRAD_WALL if limit else None), jax.default_device(device):
            primals = [jnp.asarray(leaves[i]) for i in floats]
            if eager:
                with jax.disable_jit():
                    value = jax.grad(scalar)(primals)
            elif compiled:
                value = jax.jit(jax.grad(scalar))(primals)
            else:
                value = jax.grad(scalar)(primals)
            return cmp.Outcome(value=jax.block_until_ready(value))
    except _Alarm:
        return cmp.Outcome(error=DeadlineExceeded(f"its gradient took more than {limit * GRAD_WALL:g} s"))
    except Exception as error:
        return cmp.Outcome(error=error)


def _is_float(leaf: Any) -> bool:
    import jax.numpy as jnp

    if isinstance(leaf, bool):
        return False
    if isinstance(leaf, float):
        return True
    dtype = getattr(leaf, "dtype", None)
    return dtype is not None and jnp.issubdtype(dtype, jnp.floating)


def _weighted_sum(output: Any) -> Any:
    """A scalar that depends on every float output element with a different weight (a plain sum would not see
    two outputs swapped). The weights are pseudo-random (the same for both sides): weights with structure, such
    as a ramp, can be orthogonal to what a function preserves (standardizing evenly spaced values has an exact
    zero gradient along a ramp), and a gradient of pure rounding noise cannot be compared."""
    import jax
    import jax.numpy as jnp

    weights_from = np.random.default_rng(20261124)
    total = jnp.float32(0.0)
    for leaf in jax.tree.leaves(output):
        if not _is_float(leaf):
            continue
        leaf = jnp.asarray(leaf)
        weights = jnp.asarray(weights_from.uniform(0.5, 1.5, size=leaf.shape), dtype=leaf.dtype)
        total = total + jnp.sum(leaf * weights).astype(jnp.float32)
    return total


# ---- describing -------------------------------------------------------------------------------------------


def describe(value: Any) -> str:
    import numpy as np

    if isinstance(value, strategies.Drawn):
        value = value.array
    if isinstance(value, strategies.DrawnKey):
        return f"key<{value.impl}>{list(value.data.shape[:-1])} data={value.data.reshape(-1)[:SHOWN_VALUES].tolist()}"
    if isinstance(value, (bool, int, float, complex, str)) or value is None:
        return repr(value)
    array = cmp.as_array(value)
    if array is None:
        return repr(value)[:120]
    flat = np.asarray(array).reshape(-1)
    shown = ", ".join(_number(v) for v in flat[:SHOWN_VALUES]) + (", ..." if flat.size > SHOWN_VALUES else "")
    shape = ",".join(str(d) for d in array.shape)
    return f"{array.dtype}[{shape}] [{shown}]" if array.ndim else f"{array.dtype}[] {shown}"


def _number(value: Any) -> str:
    import numpy as np

    if isinstance(value, (np.floating, float)) or str(getattr(value, "dtype", "")) == "bfloat16":
        return f"{float(value):.6g}"
    return str(value.item() if hasattr(value, "item") else value)


def describe_tree(prefix: str, value: Any) -> list[str]:
    """One line per leaf: `prefix[path]: dtype[shape] [values]`."""
    import jax

    is_leaf = lambda x: isinstance(x, (strategies.Drawn, strategies.DrawnKey))  # noqa: E731
    pairs, _ = jax.tree_util.tree_flatten_with_path(value, is_leaf=is_leaf)
    if not pairs:
        return [f"{prefix.rstrip(':')}: {value!r}"]
    if len(pairs) == 1 and not pairs[0][0]:
        return [f"{prefix}: {describe(pairs[0][1])}"]
    return [f"{prefix}{jax.tree_util.keystr(path)}: {describe(leaf)}" for path, leaf in pairs]


def describe_call(function: Any, call: strategies.Call) -> list[str]:
    """The arguments by parameter name where the signature tells them."""
    names: list[str] = []
    try:
        parameters = [p for p in inspect.signature(function).parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        names = [p.name for p in parameters]
    except (TypeError, ValueError):
        pass
    lines: list[str] = []
    for index, value in enumerate(call.args):
        lines += describe_tree(names[index] if index < len(names) else f"args[{index}]", value)
    for key, value in call.kwargs.items():
        lines += describe_tree(key, value)
    return lines or ["(no arguments)"]


def describe_outcome(label: str, outcome: cmp.Outcome | None) -> list[str]:
    if outcome is None:
        return [f"{label}: (no gradient)"]
    if outcome.raised:
        return [f"{label}: raises {outcome.error_name()}: {cmp.first_line(outcome.error)}"]
    return describe_tree(label, outcome.value)


# ---- one target on one device -----------------------------------------------------------------------------


class Inputs:
    """What a source gives: a Hypothesis strategy of Calls, and the source's own concrete Calls (run after the
    search, so that a failure the search finds is the one shrunk)."""

    def __init__(self, strategy: Any, explicit: list[strategies.Call], source: Source, expected: Any = None) -> None:
        self.strategy, self.explicit, self.source, self.expected = strategy, explicit, source, expected


def namespace(imports: tuple[str, ...]) -> dict[str, Any]:
    scope: dict[str, Any] = {}
    exec("\n".join(imports or ("import jax", "import jax.numpy as jnp", "import numpy as np", "from jax import lax")), scope)
    return scope


def inputs_from(source: Source, options: Options) -> Inputs:
    nan = options.nan and not source.no_nan
    try:
        scope = namespace(source.imports)
        evaluate = lambda expr: eval(expr, scope)  # noqa: E731
        if source.kind == "examples":
            values = [
                (tuple(evaluate(e) for e in call.get("args", [])), {k: evaluate(e) for k, e in call.get("kwargs", {}).items()})
                for call in source.calls
            ]
            if not values:
                raise Unusable("no calls")
            explicit = [strategies.concrete_call(v) for v in values]
            strategy = strategies.hypothesis_one_of([strategies.example_call(v, nan=nan, constants=source.constants) for v in values])
        elif source.kind == "recorded":
            explicit = []
            choices = [strategies.from_call_specs(c, magnitude=options.magnitude, nan=nan, evaluate=evaluate, constants=source.constants) for c in source.calls]
            strategy = strategies.hypothesis_one_of(choices)
        elif source.kind == "specs":
            explicit = []
            strategy = strategies.from_specs(
                source.params, source.positional, magnitude=options.magnitude, nan=nan, evaluate=evaluate, constants=source.constants
            )
        else:
            raise Unusable(f"unknown source kind {source.kind}")
        expected = evaluate(source.expected) if source.expected else None
    except Unusable:
        raise
    except Exception as error:
        raise Unusable(f"{source.origin}: {type(error).__name__}: {cmp.first_line(error)}") from None
    return Inputs(strategy, explicit, source, expected)


def fingerprint(call: strategies.Call) -> str:
    """A digest of the call: structure, shapes, dtypes and values."""
    import jax
    import numpy as np

    digest = hashlib.sha256()
    is_leaf = lambda x: isinstance(x, (strategies.Drawn, strategies.DrawnKey))  # noqa: E731
    leaves, treedef = jax.tree.flatten((call.args, call.kwargs), is_leaf=is_leaf)
    digest.update(str(treedef).encode())
    for leaf in leaves:
        data = getattr(leaf, "array", getattr(leaf, "data", leaf))
        if isinstance(data, np.ndarray):
            digest.update(f"{data.dtype}{data.shape}".encode() + np.ascontiguousarray(data).tobytes())
        else:
            digest.update(repr(data).encode())
    return digest.hexdigest()


def check_device(
    original: Any,
    rewritten: Any,
    inputs: Inputs,
    device: Any,
    options: Options,
    progress: Callable[[list[str]], None] | None = None,
    fresh_rewrite: Callable[[], Any] | None = None,
) -> DeviceReport:
    """Hypothesis search for an input on which the two differ, on one device. `fresh_rewrite` gives the rewritten
    function from a new execution of its module (no jit cache knows it): see jit_rounding_only."""
    from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
    from hypothesis.errors import Flaky

    report = DeviceReport(device=device.platform, device_kind=getattr(device, "device_kind", ""))
    source = inputs.source
    errors = cmp.Errors()
    concretization = _concretization_errors()
    started = time.monotonic()
    failing: dict[str, Mismatch] = {}
    first_failure: list[float] = []
    counts: dict[str, Any] = {"eager": 0, "both_eager": 0, "jit_rounding": 0, "raised": set(), "skipped": 0, "outside": 0}
    counts.update(grad_outside=0, grad_raised=set(), in_place=0, nothing=0, globals=0, grad_slow="", grad_jit_rounding=0, grad_noise=0, grad_nonfinite=0)

    if source.original_raises:
        return _check_declared(original, rewritten, inputs, device, report)

    def check(call: strategies.Call, *, explicit: bool = False) -> None:
        if "effects" in counts:
            return  # a global was written: nothing more is run
        key = fingerprint(call)
        now = time.monotonic()
        if first_failure and now - first_failure[0] > options.budget:
            if key in failing:
                raise failing[key]
            return  # shrinking has had its time: only inputs already seen to fail still fail
        if not first_failure and not explicit and now - started > options.budget:
            counts["skipped"] += 1
            return  # enough time spent on this function: the remaining draws are not run
        size = cmp.problem_size(jax_leaves(call))
        if progress is not None:
            progress(describe_call(original if not isinstance(original, BaseException) else rewritten, call))
        before = invoke(original, call, device, limit=options.deadline)
        if isinstance(before.error, DeadlineExceeded):
            outside(before, None)  # not the rewrite too: inside XLA (a lax.while_loop on inf), it could not be interrupted
            return
        eager_before = None
        if before.raised and isinstance(before.error, concretization):
            # JAX rejects the original under jit: what it computes is what it computes eagerly
            eager_before = invoke(original, call, device, eager=True, limit=options.deadline)
            if eager_before.raised:
                outside(eager_before, None)
                return
        after = invoke(rewritten, call, device, limit=options.deadline)
        eager = eager_after = False
        if eager_before is not None:
            eager, before = True, eager_before
            counts["eager"] += 1
            if after.raised and isinstance(after.error, concretization):
                # JAX rejects the rewrite under jit too: compare what both compute with jit disabled
                eager_after, after = True, invoke(rewritten, call, device, eager=True, limit=options.deadline)
                counts["both_eager"] += 1
        called = [f"the {side} calls {', '.join(o.callbacks)}" for side, o in (("original", before), ("rewrite", after)) if getattr(o, "callbacks", ())]
        if called:
            if not first_failure and "effects" not in counts:
                counts["effects"] = "; ".join(called) + " (a host callback: its effects are not compared)"
            return
        if before.raised:
            outside(before, after)  # what it wrote on the way does not count either
            return
        globals_difference = None
        written_before, written_after = getattr(before, "written", None) or {}, getattr(after, "written", None) or {}
        if written_before or written_after:
            globals_difference, uncomparable = compare_written(written_before, written_after, size=size, source=source)
            if uncomparable:
                if not first_failure and "effects" not in counts:
                    counts["effects"] = uncomparable
                return
            if set(written_before) == set(written_after):
                counts["globals"] += 1
        difference, found = cmp.compare(before, after, size=size, rtol=source.rtol, atol=source.atol)
        if difference is None and globals_difference is not None and not after.raised:
            difference = globals_difference
            before, after = cmp.Outcome(value=written_before), cmp.Outcome(value=written_after)
        changed_in_place = getattr(before, "mutated", ()) or getattr(after, "mutated", ())
        if difference is None and changed_in_place and not after.raised:
            difference, _ = cmp.compare(
                cmp.Outcome(value=before.arguments), cmp.Outcome(value=after.arguments), size=size, rtol=source.rtol, atol=source.atol
            )
            counts["in_place"] += 1
            if difference is not None:
                names = effects.parameter_names(original if not isinstance(original, BaseException) else rewritten, changed_in_place)
                difference = cmp.Difference(f"arguments after the call ({', '.join(names)} changed in place): " + difference.message)
                before = cmp.Outcome(value=_named_arguments(original, before.arguments, changed_in_place))
                after = cmp.Outcome(value=_named_arguments(original, after.arguments, changed_in_place))
        if difference is None and not after.raised and not changed_in_place and not written_before and not jax_tree_leaves(before.value) and not jax_tree_leaves(after.value):
            if not first_failure:
                counts["nothing"] += 1
            return  # nothing to compare: None (or an empty tree) on both sides, no argument changed
        if difference is not None and eager and not eager_after and fresh_rewrite is not None:
            same_mode = jit_rounding_only(before, after, rewritten, fresh_rewrite, call, device, size=size, source=source, options=options)
            if same_mode is not None:
                difference, found = None, same_mode
                counts["jit_rounding"] += 1
        gradients = difference is None and options.grad and not source.no_grad and not before.raised and not after.raised and not counts["grad_slow"]
        if gradients and not finite_floats(call):
            gradients = False  # a derivative at NaN or inf means nothing: the values were compared there
            if not first_failure:
                counts["grad_nonfinite"] += 1
        if gradients:
            grad_before = grad_of(original, call, device, eager=eager, limit=options.deadline)
            if grad_before is not None and isinstance(grad_before.error, DeadlineExceeded):
                counts["grad_slow"] = cmp.first_line(grad_before.error)  # given up on this device from now on
            elif grad_before is not None and grad_before.raised:
                # the original cannot be differentiated here: outside the inputs whose gradient it defines
                if not first_failure:
                    counts["grad_outside"] += 1
                    counts["grad_raised"].add(grad_before.error_name())
            elif grad_before is not None:
                grad_after = grad_of(rewritten, call, device, eager=eager_after, limit=options.deadline)
                if grad_after is not None and isinstance(grad_after.error, DeadlineExceeded):
                    counts["grad_slow"] = "the rewrite's " + cmp.first_line(grad_after.error)
                elif grad_after is not None:
                    report.grad_checked += 1
                    if grad_after.raised:  # Python floats may be static arguments of the rewrite's jit: without them?
                        again = grad_of(rewritten, call, device, eager=eager_after, limit=options.deadline, arrays_only=True)
                        if again is not None and not again.raised:
                            first = grad_of(original, call, device, eager=eager, limit=options.deadline, arrays_only=True)
                            if first is not None and not first.raised:
                                grad_before, grad_after = first, again
                    if grad_after.raised:
                        difference = cmp.Difference(
                            f"gradient: the original is differentiable; the rewrite raises {grad_after.error_name()}: {cmp.first_line(grad_after.error)}"
                        )
                    else:
                        difference, _ = cmp.compare(grad_before, grad_after, size=size, rtol=source.rtol, atol=source.atol, slack=cmp.GRADIENT_SLACK)
                        if difference is not None and eager and not eager_after:
                            # as for values (jit_rounding_only): the rewrite's gradient with jit disabled too
                            op_by_op = grad_of(rewritten, call, device, eager=True, limit=options.deadline)
                            if op_by_op is not None and not op_by_op.raised and cmp.compare(grad_before, op_by_op, size=size, rtol=source.rtol, atol=source.atol, slack=cmp.GRADIENT_SLACK)[0] is None:
                                difference = None
                                counts["grad_jit_rounding"] += 1
                        if difference is not None:
                            # the original's own gradient compiled as one program: how much rounding this input carries
                            other = None if eager else grad_of(original, call, device, eager=False, compiled=True, limit=options.deadline)
                            if other is not None and not other.raised and cmp.within_noise(grad_before.value, grad_after.value, other.value):
                                difference = None
                                counts["grad_noise"] += 1
                        if difference is not None:
                            difference = cmp.Difference("gradient: " + difference.message)
                    if difference is not None:
                        before, after = grad_before, grad_after
        if difference is not None:
            lines = describe_call(rewritten if not isinstance(rewritten, BaseException) else original, call)
            label = "gradient" if difference.message.startswith("gradient") else "argument after the call:" if difference.message.startswith("arguments") else "globals written:" if difference.message.startswith("global") else "output"
            lines += describe_outcome(f"original {label}", before) + describe_outcome(f"rewrite {label}", after)
            if eager_after:
                lines.append("(both were run with jit disabled: JAX rejects both under jit)")
            elif eager:
                lines.append("(the original was run with jit disabled: JAX rejects it under jit)")
            mismatch = Mismatch(difference.message, lines)
            failing[key] = mismatch
            if not first_failure:
                first_failure.append(time.monotonic())
            raise mismatch
        if first_failure:
            return  # a shrinking step that passed: no example of agreement
        report.examples += 1
        errors.update(found)

    def outside(before: cmp.Outcome, after: cmp.Outcome | None) -> None:
        """An input the original does not accept (it raises, or runs past the deadline): the rewrite may do
        anything there, as a safe fix only has to keep what the original computes where it computes something."""
        if first_failure:
            return
        counts["raised"].add(before.error_name())
        if after is not None and after.raised and type(after.error) is type(before.error):
            report.both_raised += 1
        else:
            counts["outside"] += 1

    def search(call: strategies.Call) -> None:
        check(call)

    test = given(inputs.strategy)(search)
    test = settings(
        max_examples=options.max_examples,
        deadline=None,
        database=None,
        phases=(Phase.generate, Phase.shrink),
        suppress_health_check=list(HealthCheck),
        print_blob=False,
        report_multiple_bugs=False,
        verbosity=Verbosity.quiet,
    )(test)
    test = seed(options.seed)(test)
    try:
        test()
        for call in inputs.explicit:  # the source's own examples, after the search (whatever time it took): a
            check(call, explicit=True)  # failure found by the search is shrunk, one of these is shown as it is
    except Mismatch as mismatch:
        report.status, report.reason, report.counterexample = DIFFERS, mismatch.message, mismatch.lines
        return report
    except Flaky as error:
        report.reason = f"results are not reproducible (the function is not deterministic?): {cmp.first_line(error)}"
        return report
    if "effects" in counts:
        report.reason = f"could not check: {counts['effects']}"
        return report
    report.max_abs_error, report.max_rel_error = errors.abs, errors.rel
    if counts["globals"]:
        report.notes.append(f"both wrote the same globals on {counts['globals']} inputs: what each call wrote was compared too")
    if counts["in_place"]:
        report.notes.append(f"arguments were changed in place on {counts['in_place']} inputs: they were compared after the call too")
    if source.no_grad and options.grad:
        report.notes.append(f"gradients not compared ({source.origin}): {source.no_grad}")
    if source.no_nan and options.nan:
        report.notes.append(f"finite floats only ({source.origin}): {source.no_nan}")
    if counts["grad_slow"] and options.grad:
        report.notes.append(f"gradients were no longer compared after one took too long ({counts['grad_slow']})")
    if counts["grad_jit_rounding"]:
        report.notes.append(
            f"on {counts['grad_jit_rounding']} inputs the jitted rewrite's gradient differed from the original's only by how jit rounds: "
            "with jit disabled as well, it agrees (compared there)"
        )
    if counts["grad_noise"]:
        report.notes.append(
            f"on {counts['grad_noise']} inputs the gradients differed by no more than twice what the original's own gradient "
            "differs by when compiled as one program (rounding of an ill-conditioned gradient)"
        )
    if counts["grad_outside"]:
        report.notes.append(
            f"the original's gradient raised ({', '.join(sorted(counts['grad_raised']))}) on {counts['grad_outside']} inputs: "
            "gradients are compared only where the original's can be taken"
        )
    if counts["grad_nonfinite"] and options.grad and not source.no_grad:
        report.notes.append(f"gradients were not compared on {counts['grad_nonfinite']} inputs holding NaN or infinities (their values were)")
    if counts["skipped"]:
        report.notes.append(f"stopped drawing inputs after {options.budget:g} s (a quarter of --timeout); {counts['skipped']} were not run")
    if counts["eager"]:
        report.notes.append(f"the original ran with jit disabled on {counts['eager']} inputs (JAX rejects it under jit)")
    if counts["both_eager"]:
        report.notes.append(f"the rewrite ran with jit disabled too on {counts['both_eager']} of them (JAX rejects it under jit as well)")
    if counts["jit_rounding"]:
        report.notes.append(
            f"on {counts['jit_rounding']} ill-conditioned input{'s' if counts['jit_rounding'] != 1 else ''} the jitted rewrite differed from the original only by how jit rounds: "
            "run with jit disabled as well, the rewrite agrees with the original (compared there)"
        )
    if counts["outside"]:
        report.notes.append(
            f"the original raised ({', '.join(sorted(counts['raised']))}) on {counts['outside']} more inputs on which the rewrite "
            "did not raise the same (or was not run: past the deadline): inputs the original does not accept are not compared"
        )
    if report.examples:
        report.status = VERIFIED
    elif counts["nothing"]:
        report.reason = (
            f"could not check: it returned None on every input ({counts['nothing']}) and changed no argument: there was nothing to compare"
        )
    elif counts["raised"]:
        report.reason = f"the original raised on every input ({', '.join(sorted(counts['raised']))}): nothing was compared"
    else:
        report.reason = "no input was run within the time budget"
    return report


def jit_rounding_only(
    before: cmp.Outcome,
    after: cmp.Outcome,
    rewritten: Any,
    fresh_rewrite: Callable[[], Any],
    call: strategies.Call,
    device: Any,
    *,
    size: int,
    source: Source,
    options: Options,
) -> cmp.Errors | None:
    """The original ran with jit disabled (JAX rejects it under jit) and the rewrite under jit, and their values
    differ. Op by op and compiled whole are two XLA programs that round differently (compiled, `a*d - b*c` of a
    2x2 determinant becomes one fused multiply-add), and on an ill-conditioned input that moves a result anywhere:
    the log-determinant of a singular matrix is -inf op by op and -16.6 compiled. The rewrite is not at fault
    when, run with jit disabled as well, it agrees with the original within the usual tolerance; then that
    comparison's errors are returned, else None. Only values may differ (not structure, shape or dtype), and the
    jitted value must be what a fresh compile of the rewrite gives on this input: a jit cache hit for another
    input whose static arguments compare equal (0.0 and -0.0) is a difference of the rewrite's own."""
    if after.raised or not cmp.same_layout(before.value, after.value):
        return None
    eager_after = invoke(rewritten, call, device, eager=True, limit=options.deadline)
    if eager_after.raised:
        return None
    difference, found = cmp.compare(before, eager_after, size=size, rtol=source.rtol, atol=source.atol)
    if difference is not None:
        return None
    try:
        fresh = fresh_rewrite()
    except (Exception, SystemExit):  # the module fails when executed again: nothing to confirm the jitted value with
        return None
    again = invoke(fresh, call, device, limit=options.deadline)
    if again.raised or cmp.compare(after, again, size=size)[0] is not None:
        return None
    return found


def compare_written(written_before: dict[str, Any], written_after: dict[str, Any], *, size: int, source: Source) -> tuple[cmp.Difference | None, str]:
    """The globals the two sides wrote on one call (effects.global_changes): how they differ, and why they cannot be
    compared ("" when they can). A global only one side writes differs, as long as what it wrote is a value (not a
    tracer that leaked out of jit): a dropped `LOG.append(loss)` is a difference like a changed result."""
    names = ", ".join(sorted(set(written_before) | set(written_after)))
    if not (cmp.comparable(written_before) and cmp.comparable(written_after)):
        return None, f"the globals written ({names}) cannot be compared: they hold tracers (written under a JAX transformation)"
    if set(written_before) != set(written_after):
        sides = [("original", written_before), ("rewrite", written_after)]
        said = [f"the {side} writes {', '.join(sorted(w))}" for side, w in sides if w] + [f"the {side} does not" for side, w in sides if not w]
        return cmp.Difference("global variables written differ: " + "; ".join(said)), ""
    try:
        difference, _ = cmp.compare_values(written_before, written_after, size=size, rtol=source.rtol, atol=source.atol)
    except Exception as error:  # values that cannot be compared otherwise
        return None, f"the globals written ({names}) cannot be compared: {type(error).__name__}"
    return (cmp.Difference(f"global variables written ({names}): " + difference.message) if difference is not None else None), ""


def finite_floats(call: strategies.Call) -> bool:
    """Whether every float in the call's arguments is finite (no NaN, no infinity)."""
    for leaf in jax_leaves(call):
        data = leaf.array if isinstance(leaf, strategies.Drawn) else leaf
        if isinstance(data, float) or (hasattr(data, "dtype") and (data.dtype.kind in "fc" or strategies.is_bfloat16(data.dtype))):
            if not np.all(np.isfinite(data)):
                return False
    return True


def _named_arguments(function: Any, arguments: Any, paths: tuple[str, ...]) -> dict[str, Any]:
    """The arguments changed in place, by parameter name, as they are after the call."""
    args, kwargs = arguments
    names = effects.parameter_names(function, paths)
    return {name: (args[int(path[5:-1])] if path.startswith("args[") else kwargs[path[len("kwargs['"):-2]]) for name, path in zip(names, paths)}


def jax_tree_leaves(value: Any) -> list[Any]:
    import jax

    return jax.tree.leaves(value)


def jax_leaves(call: strategies.Call) -> list[Any]:
    import jax

    return jax.tree.leaves((call.args, call.kwargs), is_leaf=lambda x: isinstance(x, (strategies.Drawn, strategies.DrawnKey)))


def _check_declared(original: Any, rewritten: Any, inputs: Inputs, device: Any, report: DeviceReport) -> DeviceReport:
    """case.toml says the original raises (a removed API, an in-place update of a JAX array): there is no
    original value to compare with, so the rewrite is compared with the declared `expected` value instead, on
    the case's own arguments."""
    source = inputs.source
    call = inputs.explicit[0]
    before = invoke(original, call, device)
    after = invoke(rewritten, call, device)
    if not before.raised or before.error_name() != source.original_raises:
        what = "returns" if not before.raised else f"raises {before.error_name()}"
        report.status, report.reason = DIFFERS, f"case.toml says the original raises {source.original_raises}, but it {what}"
        report.counterexample = describe_call(original, call) + describe_outcome("original output", before)
        return report
    wanted = cmp.Outcome(value=inputs.expected)
    difference, found = cmp.compare(wanted, after, size=cmp.problem_size(jax_leaves(call)), rtol=source.rtol, atol=source.atol)
    if difference is not None:
        report.status, report.reason = DIFFERS, difference.message
        report.counterexample = describe_call(rewritten, call) + describe_outcome("expected (case.toml)", wanted)
        report.counterexample += describe_outcome("rewrite output", after) + [f"difference: {difference.message}"]
        return report
    report.status, report.examples = VERIFIED, 1
    report.max_abs_error, report.max_rel_error = found.abs, found.rel
    report.notes.append(
        f"the original raises {source.original_raises}, as case.toml declares: the rewrite was compared with the declared expected value"
    )
    return report


def check_tests(before: types.ModuleType | BaseException, after: types.ModuleType | BaseException, name: str, device: Any) -> DeviceReport:
    """A test method, run as its framework runs it (testcases.py) on the original and on the rewrite, on `device`:
    it differs when a test case that passes before the rewrite does not pass after it, and verifies when some
    pass after it and none regressed."""
    import jax

    report = DeviceReport(device=device.platform, device_kind=getattr(device, "device_kind", ""))

    def run(module: types.ModuleType | BaseException) -> dict[str, str] | str:
        if isinstance(module, BaseException):
            return f"its module raises {type(module).__name__}: {cmp.first_line(module)}"
        with jax.default_device(device):
            return testcases.outcomes(module, name)

    try:
        found_before, found_after = run(before), run(after)
    except (testcases.NotRunnable, LookupError) as error:
        report.reason = f"could not run its tests: {error}"
        return report
    if isinstance(found_after, str):
        found_after = {case: "fails: " + found_after for case in (found_before if isinstance(found_before, dict) else {})}
        if not found_after:
            report.reason = "could not run its tests: neither module can be imported"
            return report
    if isinstance(found_before, str):
        report.notes.append(f"before the rewrite its tests could not run ({found_before})")
        found_before = {}
    if not found_after and not found_before:
        report.reason = f"could not run its tests: its class has no test case that comes from {name}"
        return report
    regressed = [case for case, outcome in found_before.items() if outcome == testcases.PASSED and found_after.get(case) != testcases.PASSED]
    passed = [case for case, outcome in found_after.items() if outcome == testcases.PASSED]
    if regressed:
        first = regressed[0]
        report.status = DIFFERS
        report.reason = f"its test {first} passes before the rewrite; after it, it {found_after.get(first, 'is not run')}"
        report.counterexample = [f"{case}: passes before the rewrite; after it: {found_after.get(case, 'not run')}" for case in regressed]
        return report
    if not passed:
        shown = next((o for o in found_after.values() if o != testcases.SKIPPED), None)
        report.reason = f"its tests do not pass after the rewrite ({shown}), nor before" if shown else "every test case it stands for was skipped"
        return report
    report.status, report.tests, report.examples = VERIFIED, len(passed), len(passed)
    fixed = [case for case in passed if case in found_before and found_before[case] != testcases.PASSED]
    failing = [case for case, outcome in found_after.items() if outcome not in (testcases.PASSED, testcases.SKIPPED)]
    if fixed:
        report.notes.append(f"{len(fixed)} test case(s) that did not pass before the rewrite pass after it: {', '.join(fixed[:3])}")
    if failing:
        report.notes.append(f"{len(failing)} test case(s) fail before and after the rewrite: {', '.join(failing[:3])}")
    return report


# ---- one target -------------------------------------------------------------------------------------------


def devices() -> list[Any]:
    """One device per platform and kind: the default backend's, and the CPU."""
    import jax

    found, seen = [], set()
    for backend in (None, "cpu"):
        try:
            candidates = jax.devices(backend) if backend else jax.devices()
        except RuntimeError:
            continue
        for device in candidates:
            key = (device.platform, getattr(device, "device_kind", ""))
            if key not in seen:
                seen.add(key)
                found.append(device)
    return found


def _function(module: types.ModuleType | BaseException, name: str, which: str) -> Any:
    """The function, the import error of its module (an outcome of every call), or raises Unusable."""
    if isinstance(module, BaseException):
        return module
    try:
        value = lookup(module, name)
    except AttributeError:
        raise Unusable(f"the {which} module defines no '{name}'") from None
    if inspect.isclass(value) or not callable(value):
        raise Unusable(f"'{name}' in the {which} module is not a function")
    return value


def _load(target: Target, role: str) -> types.ModuleType | BaseException:
    module = target.before if role == "before" else target.after
    try:
        return load_module(module.path, module.text, module.label, role)
    except BaseException as error:  # noqa: BLE001 - user code may raise anything, SystemExit included
        if isinstance(error, KeyboardInterrupt):
            raise
        return error


def _rejected_every_input(device: DeviceReport) -> bool:
    return device.status != DIFFERS and not device.examples and device.reason.startswith("the original raised on every input")


def verify_target(target: Target, options: Options, progress: Callable[[list[str]], None] | None = None) -> Report:
    started = time.monotonic()
    report = Report(target=target.id, name=target.name)
    try:
        if not target.sources:
            report.no_inputs = True
            raise Unusable(target.missing or "no source of inputs")
        effects.watch_callbacks()  # before the user's modules import them
        before_module, after_module = _load(target, "before"), _load(target, "after")
        if isinstance(after_module, BaseException) and isinstance(before_module, BaseException):
            raise Unusable(f"neither module can be imported: {type(after_module).__name__}: {cmp.first_line(after_module)}")
        if target.sources[0].kind == "tests":
            report.origin = target.sources[0].origin
            report.devices = [check_tests(before_module, after_module, target.name, device) for device in devices()]
            report.seconds = round(time.monotonic() - started, 3)
            return report
        original = _function(before_module, target.name, "original")
        rewritten = _function(after_module, target.name, "rewritten")
        def fresh_rewrite() -> Any:
            after = target.after
            return _function(load_module(after.path, after.text, after.label, "after", cache=False), target.name, "rewritten")

        tried = []
        for position, source in enumerate(target.sources):
            try:
                inputs = inputs_from(source, options)
            except Unusable as why:
                tried.append(str(why))
                continue
            if isinstance(original, BaseException) and not inputs.source.original_raises:
                raise Unusable(
                    f"the original module fails to import ({type(original).__name__}: {cmp.first_line(original)}): "
                    "there is nothing to compare the rewrite with"
                )
            report.origin = inputs.source.origin
            found = [check_device(original, rewritten, inputs, device, options, progress, fresh_rewrite) for device in devices()]
            if position + 1 < len(target.sources) and all(_rejected_every_input(d) for d in found):
                tried.append(f"{source.origin}: the original raised on every input")
                continue  # inputs of the wrong kind (float arrays for a key): the next source may fit
            report.devices = found
            break
        else:
            raise Unusable("no usable inputs: " + "; ".join(tried))
    except Unusable as why:
        report.reason = str(why)
    report.seconds = round(time.monotonic() - started, 3)
    return report


# ---- the process ------------------------------------------------------------------------------------------


def serve(answer: Callable[[Target, dict[str, Any], Callable[[list[str]], None]], Any], failed: Callable[[Target, str], Any]) -> None:
    """The worker's loop, shared with `jaxfix bench`'s worker: read the job from stdin, then for each target write
    a "start" event, call `answer(target, options, progress)` and write its report (`failed(target, reason)` when
    it raises). The report pipe is a copy of stdout; stdout itself is pointed at stderr for user code."""
    channel = io.TextIOWrapper(os.fdopen(os.dup(1), "wb", buffering=0), encoding="utf-8", line_buffering=True)
    os.dup2(2, 1)  # user code that prints writes to stderr
    sys.stdout = sys.stderr
    warnings.simplefilter("ignore")
    job = json.loads(sys.stdin.read())
    for index, data in enumerate(job["targets"]):
        target = target_from(data)
        channel.write(json.dumps({"event": "start", "index": index}) + "\n")

        def progress(lines: list[str], index: int = index) -> None:
            channel.write(json.dumps({"event": "input", "index": index, "lines": lines}) + "\n")

        try:
            report = answer(target, job["options"], progress)
        except Exception:
            report = failed(target, "internal error: " + traceback.format_exc().strip().splitlines()[-1])
        channel.write(json.dumps({"event": "report", "index": index, "report": to_json(report)}) + "\n")
    channel.flush()


def main() -> None:
    serve(
        lambda target, options, progress: verify_target(target, options_from(options), progress),
        lambda target, reason: Report(target=target.id, name=target.name, reason=reason),
    )


if __name__ == "__main__":
    main()
