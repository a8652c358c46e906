"""What `jaxfix bench` asks of its worker: plain data, sent as JSON (see jaxfix/verify/runner.py)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BenchOptions:
    repeats: int = 10  # timed steady-state calls per function, side and device (their median is run_s)
    warmup: int = 1  # untimed calls between the first call and the timed ones
    timeout: float = 600.0  # seconds for one function, both sides and all devices; the worker is killed past it
    seed: int = 0  # draws inputs from annotations or recorded signatures (not needed for concrete examples)
    draws: int = 20  # inputs drawn from such a source; the largest is benchmarked
    jit_rewrite: bool = False  # also measure a rewrite that is not jit-wrapped under jax.jit (the row's after_jit)


def options_from(data: dict) -> BenchOptions:
    return BenchOptions(**data)
