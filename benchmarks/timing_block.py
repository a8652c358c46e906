"""What timing a jitted call without `block_until_ready` reports (JF702), and what a per-step host transfer
of the loss costs a training loop (JF703).

    python benchmarks/timing_block.py [--size 500] [--repeats 7] [--steps 3000]

Timing: a jitted chain of matrix products sized to take tens of milliseconds on this CPU, compiled and run
once first (a warm-up); then timed `--repeats` times with `time.perf_counter()` around the call alone
(what the anti-pattern measures: dispatch) and around the call and `.block_until_ready()` (the work). Medians.

Host transfer: a small jitted SGD step on a linear model, `--steps` steps per loop, three loops on fresh
function objects after a warm-up: no transfer, `float(loss)` every step, and `float(loss)` every 100 steps;
the last result is waited for before the clock stops. Best of 5, reported as steps per second.
Prints Markdown tables.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

import jax
import jax.numpy as jnp


def _work(x):
    for _ in range(4):
        x = jnp.tanh(x @ x) / x.shape[0]
    return x


def timing(size: int, repeats: int) -> list[tuple[str, float]]:
    f = jax.jit(_work)
    x = jax.random.normal(jax.random.key(0), (size, size))
    f(x).block_until_ready()  # compile and warm up
    rows = []
    for label, wait in (("`out = f(x)` only (no block)", False), ("`f(x).block_until_ready()`", True)):
        times = []
        for _ in range(repeats):
            out = None
            start = time.perf_counter()
            out = f(x)
            if wait:
                out.block_until_ready()
            times.append(time.perf_counter() - start)
            out.block_until_ready()  # never let one repeat's work spill into the next
        rows.append((label, statistics.median(times) * 1e3))
    return rows


def _make_step():
    @jax.jit
    def step(w, x, y):
        def loss_fn(w):
            return jnp.mean((x @ w - y) ** 2)

        loss, grad = jax.value_and_grad(loss_fn)(w)
        return w - 0.01 * grad, loss

    return step


def host_transfer(steps: int) -> list[tuple[str, float]]:
    x = jax.random.normal(jax.random.key(1), (256, 64))
    y = jax.random.normal(jax.random.key(2), (256,))
    rows = []
    for label, every in (("no transfer", 0), ("`float(loss)` every step", 1), ("`float(loss)` every 100 steps", 100)):
        best = float("inf")
        for _ in range(5):
            step = _make_step()
            w = jnp.zeros(64)
            w, loss = step(w, x, y)  # compile
            jax.block_until_ready(w)
            losses = []
            start = time.perf_counter()
            for i in range(steps):
                w, loss = step(w, x, y)
                if every and i % every == 0:
                    losses.append(float(loss))
            jax.block_until_ready((w, loss))
            best = min(best, time.perf_counter() - start)
        rows.append((label, steps / best))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--steps", type=int, default=3000)
    args = parser.parse_args()
    print(f"JAX {jax.__version__}, {platform.processor() or platform.machine()}, {jax.devices()[0].platform}")
    print()
    print(f"| timed with perf_counter ({args.size}x{args.size}, 4 matmuls) | median ms |")
    print("|---|---|")
    for label, ms in timing(args.size, args.repeats):
        print(f"| {label} | {ms:.3f} |")
    print()
    print(f"| training loop ({args.steps} steps, jitted SGD step, 256x64) | steps/s |")
    print("|---|---|")
    for label, rate in host_transfer(args.steps):
        print(f"| {label} | {rate:.0f} |")


if __name__ == "__main__":
    main()
