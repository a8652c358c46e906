"""The measurements of one function, original against rewrite, on each device: worker side (runs user code).

Each side is called the way the module defines it, which is how its user runs it: a jit-wrapped function
(`@jax.jit`, `f = jax.jit(g)`, anything with `.lower`) is measured as jitted code, any other function is called
as it is, eagerly (a batch loop op by op, a training loop that calls jitted steps). The one exception is an
original that JAX rejects under jit (a Python `while` or `if` on a traced value: TracerBoolConversionError):
nobody can run it jitted, so it is measured with jit disabled, as `jaxfix verify` compares it. The row's `mode`
says which: "jit", "eager", or "eager: the original fails under jit".

Fresh function objects: every measurement below executes the module again (`load_module(cache=False)`), so
the function, the jitted helpers it defines and their caches are new, and no earlier call hides a compile.
Per side and device:

1. warm-up: one untimed call of a fresh copy, for the rewrite (measured first) and for any side that is not
   jit-wrapped. It fills JAX's own caches (its internally jitted helpers, the executables of eager
   primitives), as in any program that has run before, so that the side measured first does not pay for both.
   A jit-wrapped original is not warmed up this way: its compile is the expensive one (a 300-step loop
   unrolled: tens of seconds), and step 2 is its first.
2. compile_s. A jit-wrapped function: `f.lower(*args).compile()` on a fresh copy (tracing, lowering to
   StableHLO, XLA compilation; `lower_s` is the first two), and its `compiled.memory_analysis()` gives
   `temp_bytes` (and the argument, output and code sizes). Any other function has no executable of its own:
   compile_s is its first call minus its steady run time (what the first call costs more, the compiles of the
   jitted functions it calls included), and temp_bytes is None.
3. first call of another fresh copy (`first_call_s`), then `warmup` untimed calls, then `repeats` timed calls:
   `run_s` is their median. Each call gets freshly placed arguments (donated buffers cannot leak between
   calls) and is waited for with `jax.block_until_ready`. `compiles` counts XLA compilations
   ('/jax/core/compile/backend_compile_duration' events) over all of these calls, `first_compiles` those of
   the first: a jit in a loop shows N per call, a hoisted one 1.
4. `peak_bytes`: the device's `memory_stats()["peak_bytes_in_use"]` after the side ran, where the device
   reports memory (GPUs; None on CPU). It is the process's high-water mark, so it only ever grows: read it
   as an upper bound for the original, measured last.

With `jit_rewrite` (`jaxfix bench --jit-rewrite`) a rewrite that is not jit-wrapped is measured a second time,
as a user who accepts it would run it hot: `jax.jit(rewrite)` of a fresh copy, its arguments that are plain
Python ints, bools, strings or None (a trip count, a shape) static, as that user would have to mark them. It is
the row's `after_jit` side, measured as any jitted side (steps 1-4); its `run_as` says what was called. Where
JAX cannot trace the rewrite (a Python branch on a value, a shape from a traced number) that side holds no
numbers, only the error, which starts with "cannot be jitted".
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import statistics
import time
from dataclasses import dataclass
from typing import Any, Callable

from jaxfix.verify import compare as cmp
from jaxfix.verify import strategies
from jaxfix.verify import worker as vw
from jaxfix.verify.targets import Options, Source, Target

from jaxfix.bench.options import BenchOptions

COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"
JIT, EAGER, REJECTED = "jit", "eager", "eager: the original fails under jit"
_compiles = [0]
_fresh = itertools.count()


def _count(event: str, duration: float, **_: Any) -> None:
    if event == COMPILE_EVENT:
        _compiles[0] += 1


_listening = [False]


def listen() -> None:
    if not _listening[0]:
        import jax.monitoring

        jax.monitoring.register_event_duration_secs_listener(_count)
        _listening[0] = True


class SideError(Exception):
    """The side cannot be measured (its module fails to import, its call raises); the message says why."""


# ---- inputs -----------------------------------------------------------------------------------------------


def pick_call(sources: tuple[Source, ...], options: BenchOptions) -> tuple[strategies.Call, Source]:
    """One call to benchmark: the first usable source's own example (case.toml, a call site), or else the largest
    of `options.draws` inputs drawn from it (annotations, pyproject specs, recorded signatures)."""
    tried = []
    for source in sources:
        try:
            inputs = vw.inputs_from(source, Options(seed=options.seed))
        except vw.Unusable as why:
            tried.append(str(why))
            continue
        if inputs.explicit:
            return inputs.explicit[0], source
        drawn = _draw(inputs.strategy, options)
        if drawn:
            return max(drawn, key=lambda call: cmp.problem_size(vw.jax_leaves(call))), source
        tried.append(f"{source.origin}: no input could be drawn")
    raise vw.Unusable("no usable inputs: " + "; ".join(tried))


def _draw(strategy: Any, options: BenchOptions) -> list[strategies.Call]:
    from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings

    drawn: list[strategies.Call] = []

    @seed(options.seed)
    @settings(
        max_examples=options.draws,
        deadline=None,
        database=None,
        phases=(Phase.generate,),
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
    )
    @given(strategy)
    def collect(call: strategies.Call) -> None:
        drawn.append(call)

    collect()
    return drawn


def signature(call: strategies.Call) -> str:
    """The call's arguments in short: `float32[512,3], 300, key`."""
    import jax

    def leaf(value: Any) -> str:
        if isinstance(value, strategies.DrawnKey):
            return "key"
        array = value.array if isinstance(value, strategies.Drawn) else value
        if hasattr(array, "shape") and hasattr(array, "dtype"):
            return f"{array.dtype}[{','.join(str(d) for d in array.shape)}]"
        text = repr(array)
        return text if len(text) <= 20 else text[:17] + "..."

    parts = [leaf(v) for v in jax.tree.leaves(call.args, is_leaf=lambda x: isinstance(x, (strategies.Drawn, strategies.DrawnKey)))]
    for key, value in call.kwargs.items():
        leaves = jax.tree.leaves(value, is_leaf=lambda x: isinstance(x, (strategies.Drawn, strategies.DrawnKey)))
        parts.append(f"{key}=" + ",".join(leaf(v) for v in leaves))
    return ", ".join(parts) or "(no arguments)"


# ---- one side ---------------------------------------------------------------------------------------------


def _fresh_function(target: Target, role: str, jitted: JitCall | None = None) -> Callable[..., Any]:
    """The function of a freshly executed copy of its module; with `jitted`, that function under jax.jit."""
    if jitted is not None:
        import jax

        return jax.jit(_fresh_function(target, role), static_argnums=jitted.argnums, static_argnames=jitted.argnames)
    module = target.before if role == "before" else target.after
    try:
        loaded = vw.load_module(module.path, module.text, module.label, f"bench_{role}_{next(_fresh)}", cache=False)
    except BaseException as error:  # noqa: BLE001 - user code may raise anything at import, SystemExit included
        if isinstance(error, KeyboardInterrupt):
            raise
        raise SideError(f"its module fails to import: {type(error).__name__}: {cmp.first_line(error)}") from None
    try:
        return vw._function(loaded, target.name, "original" if role == "before" else "rewritten")
    except vw.Unusable as why:
        raise SideError(str(why)) from None


def _call(function: Callable[..., Any], call: strategies.Call, device: Any, eager: bool) -> float:
    """Seconds of one call, waited for; its arguments are placed on the device before the clock starts."""
    import jax

    args, kwargs = strategies.materialize(call, device)
    with jax.default_device(device), (jax.disable_jit() if eager else contextlib.nullcontext()):
        start = time.perf_counter()
        jax.block_until_ready(function(*args, **kwargs))
        return time.perf_counter() - start


@dataclass(frozen=True)
class JitCall:
    """How `--jit-rewrite` wraps the rewrite: `jax.jit(f, static_argnums=..., static_argnames=...)`."""

    argnums: tuple[int, ...]
    argnames: tuple[str, ...]

    def describe(self, name: str) -> str:
        static = [f"static_argnums={self.argnums}"] if self.argnums else []
        static += [f"static_argnames={self.argnames}"] if self.argnames else []
        return f"jax.jit({', '.join([name, *static])})"


def jit_call(call: strategies.Call) -> JitCall:
    """The arguments a user must mark static to jit the function for this call: plain Python ints, bools, strings
    and None, alone or in tuples (a trip count, a shape). Floats and arrays are traced."""
    return JitCall(
        tuple(i for i, value in enumerate(call.args) if _static(value)),
        tuple(sorted(name for name, value in call.kwargs.items() if _static(value))),
    )


def _static(value: Any) -> bool:
    if isinstance(value, tuple):
        return all(_static(item) for item in value)
    return value is None or isinstance(value, (bool, int, str))


def measure_side(
    target: Target, role: str, call: strategies.Call, device: Any, options: BenchOptions, *, may_be_rejected: bool, jitted: JitCall | None = None
) -> dict[str, Any]:
    """The numbers of one side on one device (see the module's docstring). `may_be_rejected`: the original, which
    is run with jit disabled when JAX rejects it under jit. `jitted`: the side is measured under jax.jit (the
    rewrite, for --jit-rewrite); an error tracing it is reported as "cannot be jitted"."""
    import jax

    listen()
    side: dict[str, Any] = {
        "compile_s": None, "run_s": None, "compiles": None, "temp_bytes": None,
        "first_call_s": None, "first_compiles": None, "calls": 0, "lower_s": None, "compile_how": None,
        "jitted": False, "eager": False, "memory": None, "peak_bytes": None, "error": None,
    }  # fmt: skip
    if jitted is not None:
        side["run_as"] = jitted.describe(target.name)
    try:
        function = _fresh_function(target, role, jitted)
        side["jitted"] = hasattr(function, "lower")
        if not side["jitted"] or role == "after":  # 1. warm-up
            _warm_up(function, call, device, side, may_be_rejected, target, role)
        gc.collect()
        if side["jitted"]:  # 2. ahead-of-time compile of a fresh copy
            fresh = _fresh_function(target, role, jitted)
            args, kwargs = strategies.materialize(call, device)
            try:
                with jax.default_device(device):
                    start = time.perf_counter()
                    lowered = fresh.lower(*args, **kwargs)
                    lowered_at = time.perf_counter()
                    compiled = lowered.compile()
                    done = time.perf_counter()
            except vw._concretization_errors() as error:
                if not may_be_rejected:
                    raise
                _rejected(side, error)
                _call(_fresh_function(target, role), call, device, eager=True)  # its warm-up, with jit disabled
            else:
                side["lower_s"], side["compile_s"], side["compile_how"] = lowered_at - start, done - start, "lower+compile"
                side["memory"] = _memory(compiled)
                side["temp_bytes"] = (side["memory"] or {}).get("temp_bytes")
                del lowered, compiled
            del fresh
            gc.collect()
        eager = side["eager"]
        function = _fresh_function(target, role, jitted)  # 3. first call, then steady state
        before = _compiles[0]
        side["first_call_s"] = _call(function, call, device, eager)
        side["first_compiles"] = _compiles[0] - before
        for _ in range(options.warmup):
            _call(function, call, device, eager)
        times = [_call(function, call, device, eager) for _ in range(options.repeats)]
        side["compiles"] = _compiles[0] - before
        side["calls"] = 1 + options.warmup + options.repeats
        side["run_s"] = statistics.median(times)
        if not side["jitted"]:
            side["compile_s"], side["compile_how"] = max(0.0, side["first_call_s"] - side["run_s"]), "first call - run"
        stats = _memory_stats(device)
        side["peak_bytes"] = stats.get("peak_bytes_in_use") if stats else None
    except SideError as error:
        side["error"] = str(error)
    except Exception as error:  # noqa: BLE001 - the user's function raised
        what = "raises" if jitted is None else "cannot be jitted:"  # a jitted rewrite ran eagerly first: jit failed
        side["error"] = f"{what} {type(error).__name__}: {cmp.first_line(error)}"
    return side


def _warm_up(function: Callable[..., Any], call: strategies.Call, device: Any, side: dict[str, Any], may_be_rejected: bool, target: Target, role: str) -> None:
    try:
        _call(function, call, device, eager=False)
    except vw._concretization_errors() as error:
        if not may_be_rejected:
            raise
        _rejected(side, error)
        _call(_fresh_function(target, role), call, device, eager=True)


def _rejected(side: dict[str, Any], error: BaseException) -> None:
    """JAX rejects the original under jit: it is measured with jit disabled, as its user would have to run it."""
    side["eager"], side["jitted"] = True, False
    side["rejected"] = f"{type(error).__name__}: {cmp.first_line(error)}"


def _memory(compiled: Any) -> dict[str, int] | None:
    try:
        stats = compiled.memory_analysis()
    except Exception:  # noqa: BLE001 - not every backend implements it
        return None
    if stats is None:
        return None
    names = {
        "temp_bytes": "temp_size_in_bytes",
        "argument_bytes": "argument_size_in_bytes",
        "output_bytes": "output_size_in_bytes",
        "alias_bytes": "alias_size_in_bytes",
        "code_bytes": "generated_code_size_in_bytes",
    }
    found = {key: getattr(stats, attribute, None) for key, attribute in names.items()}
    return {key: int(value) for key, value in found.items() if value is not None}


def _memory_stats(device: Any) -> dict[str, Any] | None:
    try:
        return device.memory_stats()
    except Exception:  # noqa: BLE001 - CPU devices return None; some raise
        return None


# ---- one function -----------------------------------------------------------------------------------------


def bench_target(target: Target, options: BenchOptions) -> dict[str, Any]:
    """{"target", "function", "path", "origin", "input", "reason", "rows": [{"device", "device_kind", "mode",
    "before": {...}, "after": {...}}]}: one row per device."""
    started = time.monotonic()
    result: dict[str, Any] = {
        "target": target.id, "function": target.name, "path": target.before.path,
        "origin": "", "input": "", "reason": "", "rows": [], "seconds": 0.0,
    }  # fmt: skip
    try:
        if not target.sources:
            raise vw.Unusable(target.missing or "no source of inputs")
        call, source = pick_call(target.sources, options)
        result["origin"], result["input"] = source.origin, signature(call)
        for device in vw.devices():
            # the rewrite first: its warm-up call (cheap, by design) fills JAX's own caches for both sides
            after = measure_side(target, "after", call, device, options, may_be_rejected=False)
            after_jit = None
            if options.jit_rewrite and not after["jitted"] and not after["error"]:
                after_jit = measure_side(target, "after", call, device, options, may_be_rejected=False, jitted=jit_call(call))
            before = measure_side(target, "before", call, device, options, may_be_rejected=True)
            if before.get("eager") and before.get("rejected"):
                mode = REJECTED
            else:
                mode = JIT if before["jitted"] else EAGER
            row = {"device": device.platform, "device_kind": getattr(device, "device_kind", ""), "mode": mode, "before": before, "after": after}
            if options.jit_rewrite:  # None: the rewrite is jit-wrapped already (`after` is that), or it failed
                row["after_jit"] = after_jit
            result["rows"].append(row)
    except vw.Unusable as why:
        result["reason"] = str(why)
    result["seconds"] = round(time.monotonic() - started, 3)
    return result
