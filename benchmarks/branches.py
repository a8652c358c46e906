"""Run time of the two rewrites of a cheap branch on a scalar traced test: `jnp.where(t, a, b)` (both sides
computed, then selected) against `lax.cond(t, lambda: a, lambda: b)` (one side computed, behind control flow).

    python benchmarks/branches.py [--sizes 1,1000,100000] [--repeats 5] [--min-time 0.2]

The branch is JF202's example, `x if sum(x) > 0 else 0.01 * x` on a float32 vector of each size (a choice
decided once for the vector): alone, between elementwise work that XLA may fuse with a select but not across
a conditional, and under `jax.vmap` with one test per row (where `lax.cond` becomes a select). Each version is a fresh jitted function, compiled before timing; run time is the
median call in a batch of at least `--min-time` seconds, waited for with `jax.block_until_ready`, best of
`--repeats`. Prints a Markdown table. JF202's docs quote these numbers; this measures, it asserts nothing.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

import jax
import jax.numpy as jnp
from jax import lax


def where_version(x):
    return jnp.where(jnp.sum(x) > 0, x, 0.01 * x)


def cond_version(x):
    return lax.cond(jnp.sum(x) > 0, lambda: x, lambda: 0.01 * x)


def where_in_pipeline(x):
    """The choice between elementwise work before and after it, which XLA can fuse around a select."""
    y = jnp.tanh(x)
    return jnp.sum(jnp.where(jnp.sum(y) > 0, y, 0.01 * y) * 3.0)


def cond_in_pipeline(x):
    y = jnp.tanh(x)
    return jnp.sum(lax.cond(jnp.sum(y) > 0, lambda: y, lambda: 0.01 * y) * 3.0)


def where_batched(xs):
    """One test per row under jax.vmap: cond becomes select there anyway."""
    return jax.vmap(lambda x: jnp.where(jnp.sum(x) > 0, x, 0.01 * x))(xs)


def cond_batched(xs):
    return jax.vmap(lambda x: lax.cond(jnp.sum(x) > 0, lambda: x, lambda: 0.01 * x))(xs)


PAIRS = {
    "alone": (where_version, cond_version),
    "in a pipeline": (where_in_pipeline, cond_in_pipeline),
    "vmap over 8 rows": (where_batched, cond_batched),
}


def run_time(function, x, min_time: float) -> float:
    jax.block_until_ready(function(x))
    calls, start = 0, time.perf_counter()
    samples = []
    while time.perf_counter() - start < min_time or calls < 10:
        begin = time.perf_counter()
        jax.block_until_ready(function(x))
        samples.append(time.perf_counter() - begin)
        calls += 1
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,1000,100000")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--min-time", type=float, default=0.2)
    options = parser.parse_args()
    sizes = [int(s) for s in options.sizes.split(",")]
    print(f"JAX {jax.__version__} on {jax.default_backend()} ({platform.processor() or platform.machine()})\n")
    print("| branch | size | jnp.where (µs) | lax.cond (µs) | cond / where |")
    print("|---|---:|---:|---:|---:|")
    for label, pair in PAIRS.items():
        for size in sizes:
            x = jnp.linspace(-1.0, 1.0, size, dtype=jnp.float32)
            if label.startswith("vmap"):
                x = jnp.stack([x * (i - 3.5) for i in range(8)])
            best = {}
            for name, version in zip(("where", "cond"), pair):
                times = []
                for _ in range(options.repeats):
                    fresh = jax.jit(lambda v, f=version: f(v))  # a new function object: no shared cache
                    times.append(run_time(fresh, x, options.min_time))
                best[name] = min(times) * 1e6
            ratio = best["cond"] / best["where"]
            print(f"| {label} | {size} | {best['where']:.1f} | {best['cond']:.1f} | {ratio:.2f} |")


if __name__ == "__main__":
    main()
