"""What hoisting a jit out of a loop (JF502) buys: compilations and time of a 50-step loop, per kind of
jitted callable, with the jit in the loop body and hoisted before the loop.

    python benchmarks/jit_in_loop.py [--steps 50] [--size 1000]

Compilations are counted with a jax.monitoring listener on '/jax/core/compile/backend_compile_duration';
each variant runs once on fresh function objects (so no earlier run's cache helps), timed to the last
`block_until_ready`. Prints one Markdown table.
"""

from __future__ import annotations

import argparse
import platform
import time
from functools import partial

import jax
import jax.numpy as jnp

_COMPILES = [0]


def _listen(event: str, duration: float, **_) -> None:
    if event == "/jax/core/compile/backend_compile_duration":
        _COMPILES[0] += 1


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
    """(kind, in the loop, hoisted): each call builds fresh function objects."""

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

    model = _Model(0.1)
    return [
        ("lambda", lam_in, lam_out),
        ("partial", partial_in, partial_out),
        ("nested def", def_in, def_out),
        ("bound method", model.in_loop, model.hoisted),
    ]


def measure(function, x, steps) -> tuple[int, float]:
    _COMPILES[0] = 0
    start = time.perf_counter()
    jax.block_until_ready(function(x, steps))
    return _COMPILES[0], time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--size", type=int, default=1000)
    args = parser.parse_args()
    jax.monitoring.register_event_duration_secs_listener(_listen)
    x = jax.block_until_ready(jnp.linspace(-1.0, 1.0, args.size))
    print(f"{platform.processor() or platform.machine()}, JAX {jax.__version__}, {jax.devices()[0].platform}: "
          f"{args.steps} steps on {args.size} floats\n")
    print("| jitted | compilations in loop | hoisted | time in loop (ms) | hoisted (ms) | speed-up |")
    print("|---|---|---|---|---|---|")
    for kind, in_loop, hoisted in variants():
        n_in, t_in = measure(in_loop, x, args.steps)
        n_out, t_out = measure(hoisted, x, args.steps)
        print(f"| {kind} | {n_in} | {n_out} | {t_in * 1e3:.0f} | {t_out * 1e3:.1f} | {t_in / t_out:.0f}x |")


if __name__ == "__main__":
    main()
