"""Where a Python loop under `jax.jit` stops paying: compile and run time against `lax.fori_loop` / `lax.scan`.

    python benchmarks/loop_crossover.py [--sizes 2,3,5,...] [--repeats 5] [--runs 1,100,10000]
                                        [--experiments state,rnn,rnn-grad] [--dim 1000] [--rnn-dim 128]

This measurement sets the default trip-count threshold of the loop codemods (issue 3): below it a loop is left
alone. Two experiments by default, a third on request:

- `state`: `x = x * 1.01 + jnp.sin(x)` on a float32 vector (`--dim`, default 1000), N times: a Python
  `for i in range(N)` loop (unrolled by tracing) against `lax.fori_loop(0, N, ...)` and `lax.scan(..., length=N)`.
- `rnn`: `h = tanh(W @ h + xs[t])` collecting every `h` (`--rnn-dim`, default 128): a Python loop with
  `ys.append(h)` + `jnp.stack(ys)` against `lax.scan` and `lax.fori_loop` writing `ys.at[i].set(h)`.
- `rnn-grad`: the same under `jax.grad` of the sum of the outputs (slow to compile unrolled: opt in).

Compile time is `jit(f).lower(*args).compile()`: tracing, lowering and XLA compilation, what the first call of a
jitted function pays beyond running it. Every measurement builds a FRESH function (a new closure, with a new
loop body), so no jit or tracing cache hides the cost; the persistent compilation cache is switched off. One
untimed warm-up compile per variant first fills JAX's own internal caches, as in any running program. Run
time is the compiled executable called with `jax.block_until_ready`: the median call in a batch of at least
`--min-time` seconds. Both are the best of `--repeats` (the minimum is the least disturbed by other processes
on the machine); a compile that takes more than `--long` seconds (default 2) is only taken twice. Prints
Markdown: one table per experiment, then from which N each loop primitive stays ahead.

"<primitive> wins compile + k runs" compares compile + k runs: `always` (faster to compile and to run), `never`,
or the range of k (number of calls after compiling) in which the loop primitive's total is the smaller one.
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import platform
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable

DEFAULT_SIZES = (2, 3, 5, 8, 10, 15, 20, 30, 50, 100, 300, 1000)


# --- the functions under test: each factory returns a NEW jitted function per call --------------------------


def _state_loop(n: int) -> Callable[..., Any]:
    import jax
    import jax.numpy as jnp

    def f(x):
        for _ in range(n):
            x = x * 1.01 + jnp.sin(x)
        return x

    return jax.jit(f)


def _state_fori(n: int) -> Callable[..., Any]:
    import jax
    import jax.numpy as jnp
    from jax import lax

    def f(x):
        def body(i, x):
            return x * 1.01 + jnp.sin(x)

        return lax.fori_loop(0, n, body, x)

    return jax.jit(f)


def _state_scan(n: int) -> Callable[..., Any]:
    import jax
    import jax.numpy as jnp
    from jax import lax

    def f(x):
        def step(x, _):
            return x * 1.01 + jnp.sin(x), None

        x, _ = lax.scan(step, x, None, length=n)
        return x

    return jax.jit(f)


def _rnn_loop(n: int, grad: bool = False) -> Callable[..., Any]:
    import jax
    import jax.numpy as jnp

    def f(w, xs, h):
        ys = []
        for t in range(n):
            h = jnp.tanh(w @ h + xs[t])
            ys.append(h)
        return jnp.stack(ys)

    return _finish(f, grad)


def _rnn_scan(n: int, grad: bool = False) -> Callable[..., Any]:
    import jax.numpy as jnp
    from jax import lax

    def f(w, xs, h):
        def step(h, x):
            h = jnp.tanh(w @ h + x)
            return h, h

        _, ys = lax.scan(step, h, xs)
        return ys

    return _finish(f, grad)


def _rnn_fori_set(n: int, grad: bool = False) -> Callable[..., Any]:
    import jax.numpy as jnp
    from jax import lax

    def f(w, xs, h):
        def body(i, carry):
            h, ys = carry
            h = jnp.tanh(w @ h + xs[i])
            return h, ys.at[i].set(h)

        _, ys = lax.fori_loop(0, n, body, (h, jnp.zeros(xs.shape, xs.dtype)))
        return ys

    return _finish(f, grad)


def _finish(f: Callable[..., Any], grad: bool) -> Callable[..., Any]:
    import jax

    if grad:
        inner = f

        def f(w, xs, h):  # noqa: F811 - the gradient of the same computation, w.r.t. the weights
            return jax.grad(lambda w: inner(w, xs, h).sum())(w)

    return jax.jit(f)


@dataclass(frozen=True)
class Experiment:
    name: str
    title: str
    variants: dict[str, Callable[[int], Callable[..., Any]]]  # first = the Python loop, the baseline
    arguments: Callable[[int], tuple[Any, ...]]


def _experiments(dim: int, rnn_dim: int) -> dict[str, Experiment]:
    import functools

    import jax.numpy as jnp
    import numpy as np

    def state_args(n: int) -> tuple[Any, ...]:
        return (jnp.linspace(-1.0, 1.0, dim, dtype=jnp.float32),)

    def rnn_args(n: int) -> tuple[Any, ...]:
        rng = np.random.default_rng(0)
        w = jnp.asarray(rng.normal(size=(rnn_dim, rnn_dim)) / math.sqrt(rnn_dim), jnp.float32)
        xs = jnp.asarray(rng.normal(size=(n, rnn_dim)), jnp.float32)
        return w, xs, jnp.zeros((rnn_dim,), jnp.float32)

    legend = (
        "loop = Python loop with `ys.append(h)` and `jnp.stack(ys)`; scan = `lax.scan(step, h, xs)`; "
        "fori+set = `lax.fori_loop` writing `ys.at[i].set(h)`"
    )
    rnn = {"loop": _rnn_loop, "scan": _rnn_scan, "fori+set": _rnn_fori_set}
    return {
        "state": Experiment(
            "state",
            f"carried state: `x = x * 1.01 + jnp.sin(x)`, float32[{dim}]\n\n"
            "loop = Python `for i in range(N)` under jit; fori = `lax.fori_loop(0, N, body, x)`; "
            "scan = `lax.scan(step, x, None, length=N)`",
            {"loop": _state_loop, "fori": _state_fori, "scan": _state_scan},
            state_args,
        ),
        "rnn": Experiment(
            "rnn", f"RNN collecting outputs: `h = tanh(W @ h + xs[t])`, float32[{rnn_dim}]\n\n{legend}", rnn, rnn_args
        ),
        "rnn-grad": Experiment(
            "rnn-grad",
            f"the RNN under `jax.grad` (w.r.t. W), float32[{rnn_dim}]\n\n{legend}",
            {label: functools.partial(factory, grad=True) for label, factory in rnn.items()},
            rnn_args,
        ),
    }


# --- timing ----------------------------------------------------------------------------------------------


def time_compile(factory: Callable[[int], Callable[..., Any]], n: int, args: tuple[Any, ...]):
    """Seconds to trace, lower and compile a fresh function; returns (seconds, compiled executable)."""
    jitted = factory(n)
    gc.collect()
    start = time.perf_counter()
    compiled = jitted.lower(*args).compile()
    return time.perf_counter() - start, compiled


def time_run(compiled: Callable[..., Any], args: tuple[Any, ...], *, min_time: float = 0.05, batches: int = 3) -> float:
    """Seconds per call, waiting for the result: the median call of a batch of at least `min_time` seconds (and 5
    calls), which ignores the calls another process interrupted; the best of `batches` batches."""
    import jax

    jax.block_until_ready(compiled(*args))
    best = math.inf
    for _ in range(batches):
        times: list[float] = []
        begin = time.perf_counter()
        while len(times) < 5 or time.perf_counter() - begin < min_time:
            start = time.perf_counter()
            jax.block_until_ready(compiled(*args))
            times.append(time.perf_counter() - start)
        best = min(best, statistics.median(times))
    return best


@dataclass
class Point:
    n: int
    compile_s: dict[str, float]
    run_s: dict[str, float]
    agree: bool


def measure(experiment: Experiment, n: int, repeats: int, min_time: float, long: float = 2.0) -> Point:
    import jax
    import numpy as np

    args = experiment.arguments(n)
    compile_s: dict[str, float] = {}
    run_s: dict[str, float] = {}
    outputs = {}
    executables = {}
    for repeat in range(repeats):  # interleaved, so a burst of load on the machine hits every variant alike
        for label, factory in experiment.variants.items():
            if repeat >= 2 and compile_s[label] > long:
                continue  # a compile this long varies by a few percent: two are enough
            seconds, executables[label] = time_compile(factory, n, args)
            compile_s[label] = min(compile_s.get(label, math.inf), seconds)
    for label, compiled in executables.items():
        run_s[label] = time_run(compiled, args, min_time=min_time, batches=max(repeats, 1))
        outputs[label] = np.asarray(jax.block_until_ready(compiled(*args)))
    baseline = next(iter(outputs.values()))
    agree = all(np.allclose(out, baseline, rtol=1e-4, atol=1e-4) for out in outputs.values())
    return Point(n, compile_s, run_s, agree)


# --- reporting -------------------------------------------------------------------------------------------


def wins_total(c_loop: float, r_loop: float, c_new: float, r_new: float) -> str:
    """For which k (calls after compiling) compile + k runs of the loop primitive beats the Python loop."""
    dc, dr = c_new - c_loop, r_new - r_loop  # < 0 where the loop primitive is better
    if dc <= 0 and dr <= 0:
        return "always"
    if dc >= 0 and dr >= 0:
        return "never"
    k = -dc / dr
    return f"k < {_count(k)}" if dc < 0 else f"k > {_count(k)}"


def _count(k: float) -> str:
    if k >= 1e6:
        return f"{k:.1e}"
    return f"{k:,.0f}"


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b > 0 else "-"


def table(experiment: Experiment, points: list[Point], runs: list[int]) -> str:
    labels = list(experiment.variants)
    loop, others = labels[0], labels[1:]
    header = ["N"]
    header += [f"compile s {label}" for label in labels]
    header += [f"run ms {label}" for label in labels]
    header += [f"compile {loop}/{other}" for other in others]
    header += [f"run {loop}/{other}" for other in others]
    header += [f"{other} wins compile + k runs" for other in others]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for p in points:
        row = [str(p.n) + ("" if p.agree else " (outputs differ!)")]
        row += [f"{p.compile_s[label]:.3f}" for label in labels]
        row += [f"{p.run_s[label] * 1e3:.4f}" for label in labels]
        row += [_ratio(p.compile_s[loop], p.compile_s[other]) for other in others]
        row += [_ratio(p.run_s[loop], p.run_s[other]) for other in others]
        row += [wins_total(p.compile_s[loop], p.run_s[loop], p.compile_s[o], p.run_s[o]) for o in others]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def crossover(experiment: Experiment, points: list[Point], runs: list[int]) -> list[str]:
    """The smallest N from which each loop primitive stays ahead (for every larger N measured)."""
    labels = list(experiment.variants)
    loop = labels[0]
    found = []

    def from_n(better: Callable[[Point], bool]) -> str:
        start = None
        for p in reversed(points):
            if not better(p):
                break
            start = p.n
        return "never (in the sizes measured)" if start is None else f"N >= {start}"

    for other in labels[1:]:
        faster = from_n(lambda p: p.compile_s[other] < p.compile_s[loop])
        found.append(f"- {other} compiles faster than {loop} from {faster}")
        for k in runs:
            ahead = from_n(lambda p: p.compile_s[other] + k * p.run_s[other] < p.compile_s[loop] + k * p.run_s[loop])
            found.append(f"- {other}: compile + {k} run{'s' if k != 1 else ''} is smaller from {ahead}")
    return found


def _ints(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=_ints, default=list(DEFAULT_SIZES), help="trip counts N, comma-separated")
    parser.add_argument("--repeats", type=int, default=5, help="best of this many compiles and run batches (default 5)")
    parser.add_argument("--runs", type=_ints, default=[1, 100, 10000], help="k for the compile + k runs totals")
    parser.add_argument("--experiments", default="state,rnn", help="state, rnn, rnn-grad (comma-separated)")
    parser.add_argument("--dim", type=int, default=1000, help="length of the carried vector in `state`")
    parser.add_argument("--rnn-dim", type=int, default=128, help="hidden size in `rnn`")
    parser.add_argument("--min-time", type=float, default=0.05, help="seconds per batch of timed runs")
    parser.add_argument("--long", type=float, default=2.0, help="compiles longer than this are repeated twice only")
    options = parser.parse_args(argv)

    import jax

    jax.config.update("jax_enable_compilation_cache", False)
    experiments = _experiments(options.dim, options.rnn_dim)
    chosen = [experiments[name.strip()] for name in options.experiments.split(",") if name.strip()]

    device = jax.devices()[0]
    print(
        f"# Loop crossover on {device.platform} ({device.device_kind}), jax {jax.__version__}, "
        f"Python {platform.python_version()}, {os.cpu_count()} CPU cores\n"
    )
    print(
        f"Compile = trace + lower + XLA compile of a fresh function; run = one call, waited for. "
        f"Best of {options.repeats}.\n"
    )
    for experiment in chosen:
        for factory in experiment.variants.values():  # warm JAX's own caches, untimed
            time_compile(factory, 2, experiment.arguments(2))
        points = []
        for n in options.sizes:
            points.append(measure(experiment, n, options.repeats, options.min_time, options.long))
            print(f"  {experiment.name} N={n} done", file=sys.stderr, flush=True)
        print(f"## {experiment.title}\n")
        print(table(experiment, points, options.runs))
        print()
        print("\n".join(crossover(experiment, points, options.runs)))
        print()


if __name__ == "__main__":
    main()
