"""Compile and run time of every loop corpus case: the original, jaxfix's rewrite, and a hand-written idiom.

    python benchmarks/loops.py [--cases GLOB] [--repeats N] [--sizes 10,300,1000] [--root CORPUS_DIR] [--grad]

For each case under corpus/loop_*/ (GLOB is matched against the case id `<codemod>/<case>`, or the codemod
alone; default `loop_*`), the case's `entry` is called on its `args`/`kwargs` from case.toml in up to three
versions, each loaded from its own file:

    before.py   the Python loop as a user wrote it (unrolled by tracing)
    after.py    jaxfix's rewrite (absent for a negative case, which jaxfix leaves alone)
    idiom.py    optional: the same entry written by hand the way a JAX user would (lax.fori_loop / lax.scan /
                lax.while_loop), the yardstick the rewrite must come within 1.1x of

Negative cases are timed only when they have an idiom.py (to show, say, that a short loop is better left alone).

Trip count. Issue 3 asks for a 300-step loop to compile >= 5x faster after the rewrite. A case carries its trip
count in its arguments, static for the entry, and may name which argument it is, so `--sizes` can vary it:

    # case.toml                                   # before.py
    entry = "decay"                               @partial(jax.jit, static_argnums=1)   # or static_argnames="n"
    args = ["jnp.ones(1000)", "300"]              def decay(x, n):
    size_arg = 1    # index into args,                for i in range(n):
                    # or a kwargs name: "n"                x = x * 1.01 + jnp.sin(x)
                                                      return x

The argument must stay a Python int where the loop runs: on a jitted entry, mark it static (`static_argnums`
or `static_argnames`), since a traced trip count cannot drive a Python loop. With `--sizes 10,300,1000`, every
case that declares `size_arg` runs once per size, with that argument replaced by the integer; the others run
once on their own args. A loop whose trip count is a literal (`range(300)`) needs no knob: the size is what
the file says.

Measurement. Compile time is the first call of a FRESH function minus the steady run time: each measurement
imports the file again as a new module (`jaxfix.corpus.load_function` with a new tag), so the jitted entry, its
loop body and its helpers are new objects and no jit or tracing cache hides the cost; the persistent
compilation cache is switched off. It is what a user pays on the first call, tracing and XLA compilation
included. Run time is the median call of the compiled function, waited for with `jax.block_until_ready`, in
a batch of at least `--min-time` seconds. Versions are interleaved within each repeat and every number is
the best of `--repeats` (the minimum is the least disturbed by other processes on the machine). One untimed
warm-up compile first fills JAX's own caches, as in any running program. Outputs are compared with the case's
rtol/atol, so a rewrite or idiom that computes something else shows.

Gradient. With `--grad`, each version is timed under reverse-mode differentiation instead: the jitted
gradient, with respect to the entry's first argument, of the sum of squares of its (inexact) outputs, the other
arguments held fixed (`jax.jit(jax.grad(lambda a: loss(entry(a, *rest))))`, built afresh for every
measurement). This is where a `fori_loop` that writes its outputs with `.at[i].set` pays: its gradient saves
the whole output array at every step. Gradients are compared with a float32 gradient tolerance (2e-3 at the
least, as JAX's own tests use).

Prints Markdown: one table per case, then a summary table (one row per case and size) for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import fnmatch
import gc
import itertools
import math
import os
import platform
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script from anywhere: jaxfix from this checkout

from jaxfix import corpus  # noqa: E402

sys.path.insert(0, str(ROOT / "benchmarks"))
from measure import time_run  # noqa: E402  (the timing loop every benchmark shares)

DEFAULT_CASES = "loop_*"
LABELS = {"before": "before.py (Python loop)", "after": "after.py (jaxfix rewrite)", "idiom": "idiom.py (hand-written)"}
_tags = itertools.count()


@dataclass
class Version:
    name: str  # before | after | idiom
    path: Path
    compile_s: float = math.nan
    run_s: float = math.nan
    error: str | None = None
    output: Any = None
    same: str = "-"  # against before.py's output: yes | no: reason | -
    jitted: bool = True  # the entry is a jax.jit function (compile s is then one trace + compile)


@dataclass
class CaseResult:
    case: corpus.Case
    size: int | None
    repeats: int
    versions: list[Version] = field(default_factory=list)
    grad: bool = False  # timed under jax.grad (see --grad)

    def version(self, name: str) -> Version | None:
        return next((v for v in self.versions if v.name == name and v.error is None), None)

    @property
    def title(self) -> str:
        return self.case.id + ("" if self.size is None else f" (N = {self.size})") + (", gradient" if self.grad else "")


# --- arguments ---------------------------------------------------------------------------------------------


def size_of(case: corpus.Case, args: list[Any], kwargs: dict[str, Any]) -> int | None:
    """The trip count the case declares through `size_arg`, as its arguments hold it."""
    where = case.spec.get("size_arg")
    value = None
    if isinstance(where, int) and not isinstance(where, bool) and -len(args) <= where < len(args):
        value = args[where]
    elif isinstance(where, str):
        value = kwargs.get(where)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def arguments(case: corpus.Case, size: int | None = None) -> tuple[list[Any], dict[str, Any]]:
    """The case's arguments, with the trip count replaced by `size` where the case declares `size_arg`."""
    args, kwargs = corpus.arguments(case)
    where = case.spec.get("size_arg")
    if size is not None:
        if isinstance(where, int) and not isinstance(where, bool):
            args[where] = size
        elif isinstance(where, str):
            kwargs[where] = size
        else:
            raise ValueError(f"{case.id}: no size_arg in case.toml, cannot set the trip count to {size}")
    return args, kwargs


# --- timing ------------------------------------------------------------------------------------------------


def _load_fresh(path: Path, entry: str) -> tuple[Callable[..., Any], list[str]]:
    """Import `path` as a new module; returns the entry and the module names to drop afterwards."""
    known = set(sys.modules)
    function = corpus.load_function(path, entry, tag=f"bench{next(_tags)}")
    return function, [name for name in sys.modules if name not in known]


def gradient_of(function: Callable[..., Any], args, kwargs) -> tuple[Callable[..., Any], list[Any], dict[str, Any]]:
    """The jitted gradient of `sum of squares of function(a, *args[1:], **kwargs)` with respect to `a`, and the
    arguments to call it with (`args[0]` alone): the other arguments are held fixed, so static ones stay Python
    values."""
    import jax
    import jax.numpy as jnp

    rest = list(args[1:])

    def loss(first):
        leaves = jax.tree.leaves(function(first, *rest, **kwargs))
        return sum(jnp.sum(jnp.square(leaf)) for leaf in leaves if jnp.issubdtype(leaf.dtype, jnp.inexact))

    return jax.jit(jax.grad(loss)), [args[0]], {}


def _measure_once(
    version: Version, entry: str, args, kwargs, min_time: float, grad: bool = False
) -> tuple[float, float] | None:
    """(first call, steady run) seconds of a freshly loaded entry (or of its gradient), or None after recording
    an error."""
    import jax

    modules: list[str] = []
    try:
        function, modules = _load_fresh(version.path, entry)
        version.jitted = hasattr(function, "lower")
        if grad:
            function, args, kwargs = gradient_of(function, args, kwargs)
            version.jitted = True
        gc.collect()
        start = time.perf_counter()
        output = jax.block_until_ready(function(*args, **kwargs))
        first = time.perf_counter() - start
        run = time_run(function, args, kwargs, min_time=min_time)
    except Exception as error:  # noqa: BLE001 - a version that fails is reported, not fatal
        version.error = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"[:120]
        return None
    finally:
        for name in modules:
            sys.modules.pop(name, None)
    version.output = output
    return first, run


_warm = False


def warm_up() -> None:
    """Once per process, untimed: fill JAX's own caches (backend, lowering rules, jnp helpers, the loop
    primitives), which would otherwise be charged to whichever version is compiled first."""
    global _warm
    if _warm:
        return
    import jax
    import jax.numpy as jnp
    from jax import lax

    def f(x):
        x = lax.fori_loop(0, 3, lambda i, x: x * 1.01 + jnp.sin(x), x)
        x, ys = lax.scan(lambda c, y: (c + y, jnp.tanh(c)), x, jnp.stack([x, x]))
        x = lax.while_loop(lambda c: c[0] < 0, lambda c: c + 1, x)
        return x + ys.sum(0) + jnp.zeros_like(x).at[0].set(1.0)

    jax.block_until_ready(jax.jit(f)(jnp.ones(4)))
    _warm = True


def bench_case(
    case: corpus.Case, *, repeats: int = 3, size: int | None = None, min_time: float = 0.05, grad: bool = False
) -> CaseResult:
    """Time before.py, after.py (if any) and idiom.py (if any) of one runnable case (their gradients with
    `grad`)."""
    warm_up()
    args, kwargs = arguments(case, size)
    entry = case.spec["entry"]
    versions = [Version("before", case.before)]
    if not case.negative:
        versions.append(Version("after", case.folder / "after.py"))
    if (case.folder / "idiom.py").exists():
        versions.append(Version("idiom", case.folder / "idiom.py"))
    first = {v.name: math.inf for v in versions}
    run = {v.name: math.inf for v in versions}
    for _ in range(max(repeats, 1)):  # interleaved: a burst of load on the machine hits every version alike
        for version in versions:
            if version.error is not None:
                continue
            measured = _measure_once(version, entry, args, kwargs, min_time, grad)
            if measured is not None:
                first[version.name] = min(first[version.name], measured[0])
                run[version.name] = min(run[version.name], measured[1])
    for version in versions:
        if version.error is None:
            version.run_s = run[version.name]
            version.compile_s = max(first[version.name] - version.run_s, 0.0)
    before = versions[0]
    tolerance = {"rtol": case.spec.get("rtol", 1e-6), "atol": case.spec.get("atol", 1e-6)}
    if grad:
        tolerance = {key: max(value, 2e-3) for key, value in tolerance.items()}
    for version in versions[1:]:
        if version.error is None and before.error is None:
            try:
                corpus.assert_same(version.output, before.output, **tolerance)
                version.same = "yes"
            except AssertionError as error:
                version.same = "NO: " + (str(error).strip().splitlines() or [""])[0][:80]
    return CaseResult(case, size if size is not None else size_of(case, args, kwargs), repeats, versions, grad)


# --- reporting ---------------------------------------------------------------------------------------------


def _x(numerator: float, denominator: float) -> str:
    if math.isnan(numerator) or math.isnan(denominator) or denominator <= 0:
        return "-"
    return f"{numerator / denominator:.2f}x"


def _verdicts(result: CaseResult) -> list[str]:
    before, after, idiom = result.version("before"), result.version("after"), result.version("idiom")
    lines = []
    if after and idiom:
        compile_ratio, run_ratio = after.compile_s / idiom.compile_s, after.run_s / idiom.run_s
        within = "yes" if compile_ratio <= 1.1 and run_ratio <= 1.1 else "no"
        lines.append(
            f"rewrite / idiom: compile {compile_ratio:.2f}x, run {run_ratio:.2f}x (within 1.1x: {within})"
        )
    if before and after:
        speedup = before.compile_s / after.compile_s if after.compile_s > 0 else math.inf
        verdict = "yes" if speedup >= 5 else "no"
        lines.append(f"compile speed-up of the rewrite over the original: {speedup:.1f}x (>= 5x: {verdict})")
    return lines


def format_case(result: CaseResult) -> str:
    before = result.version("before")
    lines = [
        f"### {result.title}",
        "",
        "| version | compile s | run ms | compile speed-up | run speed-up | same result as before.py |",
        "|---|---|---|---|---|---|",
    ]
    for version in result.versions:
        label = LABELS[version.name]
        if version.name == "before" and result.case.negative:
            label = "before.py (left alone by jaxfix)"
        if version.error is not None:
            lines.append(f"| {label} | fails: {version.error} | | | | |")
            continue
        compile_up = _x(before.compile_s, version.compile_s) if before else "-"
        run_up = _x(before.run_s, version.run_s) if before else "-"
        timings = f"{version.compile_s:.3f} | {version.run_s * 1e3:.4f}"
        lines.append(f"| {label} | {timings} | {compile_up} | {run_up} | {version.same} |")
    verdicts = _verdicts(result)
    eager = [v.path.name for v in result.versions if v.error is None and not v.jitted]
    if eager:
        verdicts.append(
            f"not a jitted entry in {', '.join(eager)}: its calls trace or dispatch op by op, so compile s "
            "(first call minus run) and run ms are not those of one compiled program"
        )
    if verdicts:
        lines += [""] + verdicts
    return "\n".join(lines)


def summary(results: list[CaseResult]) -> str:
    lines = [
        "| case | N | compile s before / after / idiom | run ms before / after / idiom "
        "| compile speed-up | run speed-up | rewrite/idiom compile | rewrite/idiom run |",
        "|---|---|---|---|---|---|---|---|",
    ]

    def cell(version: Version | None, attribute: str, scale: float, digits: int) -> str:
        return "-" if version is None else f"{getattr(version, attribute) * scale:.{digits}f}"

    for result in results:
        b, a, i = result.version("before"), result.version("after"), result.version("idiom")
        nan = math.nan
        lines.append(
            f"| {result.case.id}{' (gradient)' if result.grad else ''} | {'-' if result.size is None else result.size} "
            f"| {' / '.join(cell(v, 'compile_s', 1, 3) for v in (b, a, i))} "
            f"| {' / '.join(cell(v, 'run_s', 1e3, 4) for v in (b, a, i))} "
            f"| {_x(b.compile_s if b else nan, a.compile_s if a else nan)} "
            f"| {_x(b.run_s if b else nan, a.run_s if a else nan)} "
            f"| {_x(a.compile_s if a else nan, i.compile_s if i else nan)} "
            f"| {_x(a.run_s if a else nan, i.run_s if i else nan)} |"
        )
    return "\n".join(lines)


def select(cases: list[corpus.Case], pattern: str) -> list[corpus.Case]:
    return [c for c in cases if fnmatch.fnmatch(c.id, pattern) or fnmatch.fnmatch(c.codemod, pattern)]


def header(repeats: int) -> str:
    import jax

    device = jax.devices()[0]
    return (
        f"# Loop corpus benchmark on {device.platform} ({device.device_kind}), jax {jax.__version__}, "
        f"Python {platform.python_version()}, {os.cpu_count()} CPU cores; best of {repeats}\n\n"
        "compile s = first call of a freshly imported entry minus its run time; run ms = one call, waited for; "
        "speed-up = before.py's time / this version's; rewrite/idiom > 1 means the rewrite is slower."
    )


def _ints(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", default=DEFAULT_CASES, help="glob over case ids <codemod>/<case> or codemods")
    parser.add_argument("--repeats", type=int, default=3, help="best of this many fresh compiles (default 3)")
    parser.add_argument("--sizes", type=_ints, default=None, help="trip counts for cases with size_arg, e.g. 10,300")
    parser.add_argument("--root", type=Path, default=corpus.ROOT, help="the corpus folder (default: corpus/)")
    parser.add_argument("--min-time", type=float, default=0.05, help="seconds per batch of timed runs")
    parser.add_argument("--grad", action="store_true", help="time the gradient w.r.t. the first argument instead")
    options = parser.parse_args(argv)

    import jax

    jax.config.update("jax_enable_compilation_cache", False)
    chosen = select(corpus.cases(options.root), options.cases)
    skipped = []
    results = []
    print(header(options.repeats) + "\n")
    for case in chosen:
        if not case.runnable:
            skipped.append(f"{case.id} (no entry in case.toml)")
            continue
        if case.negative and not (case.folder / "idiom.py").exists():
            skipped.append(f"{case.id} (negative case without idiom.py: nothing to compare)")
            continue
        sizes = options.sizes if options.sizes and "size_arg" in case.spec else [None]
        for size in sizes:
            result = bench_case(case, repeats=options.repeats, size=size, min_time=options.min_time, grad=options.grad)
            results.append(result)
            print(format_case(result) + "\n", flush=True)
    if not chosen:
        print(f"No corpus case matches {options.cases!r} under {options.root}.")
        return 1
    if results:
        print("## Summary\n\n" + summary(results) + "\n")
    if skipped:
        print("Skipped:\n" + "\n".join(f"- {line}" for line in skipped))
    return 0


if __name__ == "__main__":
    sys.exit(main())
