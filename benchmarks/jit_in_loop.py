"""What hoisting a jit out of a loop (JF502) buys: compilations and time of a 50-step loop, per kind of
jitted callable, with the jit in the loop body and hoisted before the loop.

    python benchmarks/jit_in_loop.py [--steps 50] [--size 1000]

Compilations are counted with `measure.CompileCounter` (a jax.monitoring listener on the backend compile
event); each variant runs once on fresh function objects (so no earlier run's cache helps), timed to the last
`block_until_ready`. Memory: the compiled update's `memory_analysis()` (one program, the same in both
placements: hoisting changes how often it is compiled, not what it holds), the growth of the process's
resident memory over the loop (the traces and executables each compilation leaves behind), and the
device's peak memory where the device reports one (n/a on CPU). Prints one Markdown table.
"""

from __future__ import annotations

import argparse
import gc
import platform
import sys
import time
from functools import partial
from pathlib import Path

import jax
import jax.numpy as jnp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import CompileCounter, device_peak_mib, memory, mib, rss_mib  # noqa: E402


def _update(v, lr):
    return v - lr * jnp.tanh(v)


class _Model:
    def __init__(self, lr):
        self.lr = lr

    def apply(self, v):
        return v - self.lr * jnp.tanh(v)

    def in_loop(self, x, steps):
        for _ in range(steps):
            x = jax.jit(self.apply)(x)
        return x

    def hoisted(self, x, steps):
        jitted = jax.jit(self.apply)
        for _ in range(steps):
            x = jitted(x)
        return x


def variants():
    """(kind, in the loop, hoisted): each call builds fresh function objects. The last kind jits one function
    object on every iteration (a module-level, imported or nested def): it compiles once either way."""

    def lam_in(x, steps):
        for _ in range(steps):
            x = jax.jit(lambda v: v - 0.1 * jnp.tanh(v))(x)
        return x

    def lam_out(x, steps):
        jitted = jax.jit(lambda v: v - 0.1 * jnp.tanh(v))
        for _ in range(steps):
            x = jitted(x)
        return x

    def partial_in(x, steps):
        for _ in range(steps):
            x = jax.jit(partial(_update, lr=0.1))(x)
        return x

    def partial_out(x, steps):
        step = jax.jit(partial(_update, lr=0.1))
        for _ in range(steps):
            x = step(x)
        return x

    def def_in(x, steps):
        for _ in range(steps):

            @jax.jit
            def update(v):
                return v - 0.1 * jnp.tanh(v)

            x = update(x)
        return x

    def def_out(x, steps):
        @jax.jit
        def update(v):
            return v - 0.1 * jnp.tanh(v)

        for _ in range(steps):
            x = update(x)
        return x

    def step_a(v):  # one function object for the loop, another for the hoisted jit: each compiles once
        return v - 0.1 * jnp.tanh(v)

    def step_b(v):
        return v - 0.1 * jnp.tanh(v)

    def function_in(x, steps):  # jit's cache finds the compiled code; the wrapper is new each iteration
        for _ in range(steps):
            x = jax.jit(step_a)(x)
        return x

    def function_out(x, steps):
        step = jax.jit(step_b)
        for _ in range(steps):
            x = step(x)
        return x

    def energy_a(v):  # differentiated in the loop; `energy_b` hoisted: each compiles apart
        return jnp.sum(jnp.log(jnp.cosh(v)))

    def energy_b(v):
        return jnp.sum(jnp.log(jnp.cosh(v)))

    def grad_in(x, steps):  # jax.grad makes a new function object on every iteration: jit's cache misses
        for _ in range(steps):
            x = jax.jit(jax.grad(energy_a))(x)
        return x

    def grad_out(x, steps):
        step = jax.jit(jax.grad(energy_b))
        for _ in range(steps):
            x = step(x)
        return x

    model = _Model(0.1)
    return [
        ("lambda", lam_in, lam_out),
        ("partial", partial_in, partial_out),
        ("nested def", def_in, def_out),
        ("bound method", model.in_loop, model.hoisted),
        ("jax.grad of a function", grad_in, grad_out),
        ("one function object", function_in, function_out),
    ]


def measure(function, x, steps) -> tuple[int, float, float]:
    """(compilations, seconds, MiB of resident memory the loop left behind) of one run of `function`."""
    gc.collect()
    resident = rss_mib()
    with CompileCounter() as counter:
        start = time.perf_counter()
        jax.block_until_ready(function(x, steps))
        seconds = time.perf_counter() - start
    gc.collect()
    return counter.count, seconds, rss_mib() - resident


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--size", type=int, default=1000)
    args = parser.parse_args()
    x = jax.block_until_ready(jnp.linspace(-1.0, 1.0, args.size))
    program = memory(jax.jit(lambda v: v - 0.1 * jnp.tanh(v)).lower(x).compile())
    print(f"{platform.processor() or platform.machine()}, JAX {jax.__version__}, {jax.devices()[0].platform}: "
          f"{args.steps} steps on {args.size} floats; the compiled update: {program['arguments_mib']:.3f} MiB in, "
          f"{program['outputs_mib']:.3f} MiB out, {program['temp_mib']:.3f} MiB temporaries\n")
    print("| jitted | compilations in loop | hoisted | time in loop (ms) | hoisted (ms) | speed-up "
          "| RSS growth in loop (MiB) | hoisted (MiB) |")
    print("|---|---|---|---|---|---|---|---|")
    for kind, in_loop, hoisted in variants():
        n_in, t_in, m_in = measure(in_loop, x, args.steps)
        n_out, t_out, m_out = measure(hoisted, x, args.steps)
        print(f"| {kind} | {n_in} | {n_out} | {t_in * 1e3:.0f} | {t_out * 1e3:.1f} | {t_in / t_out:.0f}x "
              f"| {m_in:.1f} | {m_out:.1f} |")
    in_loop_us, hoisted_us = warm_dispatch(x)
    print(f"\none function object, warm (compiled before): {in_loop_us:.1f} µs per call with the jit in the loop, "
          f"{hoisted_us:.1f} µs hoisted (best of 3 runs of {WARM_CALLS} calls)")
    print(f"\ndevice peak memory (MiB): {mib(device_peak_mib())}")


WARM_CALLS = 500


def warm_dispatch(x) -> tuple[float, float]:
    """µs per call of one function object's jit, once compiled: re-wrapped in the loop against hoisted. Nothing
    compiles here; the difference is the jit wrapper's dispatch path (a new wrapper has an empty fast path)."""

    def update(v):
        return v - 0.1 * jnp.tanh(v)

    jitted = jax.jit(update)
    jax.block_until_ready(jitted(x))
    best = {"in loop": float("inf"), "hoisted": float("inf")}
    for _ in range(3):
        for mode in best:
            y = x
            start = time.perf_counter()
            for _ in range(WARM_CALLS):
                y = (jax.jit(update) if mode == "in loop" else jitted)(y)
            jax.block_until_ready(y)
            best[mode] = min(best[mode], (time.perf_counter() - start) / WARM_CALLS * 1e6)
    return best["in loop"], best["hoisted"]


if __name__ == "__main__":
    main()
