"""What JF704's two patterns cost: replicating an array with `jnp.stack([w] * n)` against
`jnp.broadcast_to`, and handing a jitted function a Python list of numbers against one array.

    python benchmarks/replication.py [--n 256] [--size 64] [--lengths 8,16,32,64,128] [--length 1000]

Replication: under jit, compile time of a fresh function (first call minus a warm call) and the median warm
call, waited for with `block_until_ready`; eagerly, the median call. List argument: a fresh jitted sum called
with a list of each length in `--lengths` (compilations counted with a jax.monitoring listener; the time of
those first calls), then with a list of `--length` floats (first call, median warm call), against the same
values as one array made before the call. JAX's start-up compile runs first, untimed. Prints Markdown tables.
"""

from __future__ import annotations

import argparse
import statistics
import time

import jax
import jax.numpy as jnp

_COMPILES = [0]


def _listen(event: str, duration: float, **_) -> None:
    if event == "/jax/core/compile/backend_compile_duration":
        _COMPILES[0] += 1


def _median_call(f, *args, repeats: int = 7) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(f(*args))
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def replication(n: int, size: int) -> list[tuple[str, float, float, float]]:
    w = jax.random.normal(jax.random.key(0), (size, size))
    x = jax.random.normal(jax.random.key(1), (n, size))
    variants = {
        "`jnp.stack([w] * n)`": lambda w, x: jnp.einsum("bi,bij->bj", x, jnp.stack([w] * x.shape[0])),
        "`jnp.broadcast_to(w, (n,) + w.shape)`": lambda w, x: jnp.einsum(
            "bi,bij->bj", x, jnp.broadcast_to(w, (x.shape[0],) + w.shape)
        ),
        "`jax.vmap(..., in_axes=(0, None))`": lambda w, x: jax.vmap(lambda xi, w: xi @ w, in_axes=(0, None))(x, w),
    }
    rows = []
    for label, body in variants.items():
        f = jax.jit(lambda w, x, body=body: body(w, x))
        start = time.perf_counter()
        jax.block_until_ready(f(w, x))
        first = time.perf_counter() - start
        warm = _median_call(f, w, x)
        eager = _median_call(lambda w, x, body=body: body(w, x), w, x, repeats=3)
        rows.append((label, (first - warm) * 1e3, warm * 1e3, eager * 1e3))
    return rows


def list_argument(lengths: list[int], length: int) -> list[tuple[str, int, float, float, float]]:
    jax.monitoring.register_event_duration_secs_listener(_listen)
    rows = []
    for label, make in (
        ("Python list of floats", lambda k: [float(i) for i in range(k)]),
        ("one array (`jnp.asarray` before the call)", lambda k: jnp.asarray([float(i) for i in range(k)])),
    ):
        values = [make(k) for k in lengths]
        big = make(length)
        jax.block_until_ready((values, big))
        f = jax.jit(lambda v: jnp.sum(jnp.asarray(v)))
        _COMPILES[0] = 0
        start = time.perf_counter()
        for value in values:
            jax.block_until_ready(f(value))
        total = time.perf_counter() - start
        compiles = _COMPILES[0]
        start = time.perf_counter()
        jax.block_until_ready(f(big))
        first = time.perf_counter() - start
        warm = _median_call(f, big)
        rows.append((label, compiles, total * 1e3, first * 1e3, warm * 1e3))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=256)
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--lengths", default="8,16,32,64,128")
    parser.add_argument("--length", type=int, default=1000)
    args = parser.parse_args()
    jax.block_until_ready(jax.jit(lambda v: v + 1)(jnp.ones(3)))  # JAX's one-time start-up, outside the timings
    print(f"JAX {jax.__version__}, {jax.devices()[0].platform}")
    print()
    print(f"| replicate w ({args.size}x{args.size}) n={args.n} times, then einsum | compile ms | jit run ms | eager run ms |")
    print("|---|---|---|---|")
    for label, compile_ms, run_ms, eager_ms in replication(args.n, args.size):
        print(f"| {label} | {compile_ms:.1f} | {run_ms:.3f} | {eager_ms:.3f} |")
    print()
    lengths = [int(v) for v in args.lengths.split(",")]
    print(f"| jitted sum | compilations for lengths {lengths} | their first calls, ms | first call, length {args.length}, ms | warm call, length {args.length}, ms |")
    print("|---|---|---|---|---|")
    for label, compiles, total, first, warm in list_argument(lengths, args.length):
        print(f"| {label} | {compiles} | {total:.1f} | {first:.1f} | {warm:.3f} |")


if __name__ == "__main__":
    main()
