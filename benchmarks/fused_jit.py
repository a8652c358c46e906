"""What one jit around a training step (JF504) buys over three separately jitted pieces: a 2-layer MLP step
(loss, gradient and SGD update as `jax.jit` functions called one after another from a Python step).

    python benchmarks/fused_jit.py [--widths 64,512] [--batch 128] [--steps 200] [--repeats 5]

Three versions of the same step, each built from fresh function objects:
    separate   the Python step calling the three jitted pieces (what JF504 finds)
    fused      `jax.jit` around that step, the pieces keeping their own jit (JF504's fix)
    stripped   `jax.jit` around the step with plain, unjitted pieces (the hand-written idiom)
For each: the compilations its first step triggers (`measure.CompileCounter`), the time per step in a loop of
`--steps` steps dispatched asynchronously (`measure.time_run` over the whole loop: the median of batches of
loops, divided by the steps), in wall time and in CPU time of the process (all threads; on a machine other
jobs share, CPU time is the steadier of the two; the speed-ups are over `separate`), the temporaries of its compiled programs (`memory_analysis()`, summed over the
three pieces for `separate`), and the device's peak memory where the device reports one. The outputs are
compared. Prints one Markdown table per width.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import CompileCounter, device_peak_mib, memory, mib, time_run  # noqa: E402


def _pieces(jit):
    """loss, grad and update of a 2-layer MLP, each wrapped by `jit` (the identity for the stripped version)."""
    import jax
    import jax.numpy as jnp

    def loss(params, x, y):
        hidden = jnp.tanh(x @ params["w1"] + params["b1"])
        return jnp.mean((hidden @ params["w2"] + params["b2"] - y) ** 2)

    def update(params, grads):
        return jax.tree.map(lambda p, g: p - 1e-2 * g, params, grads)

    return jit(loss), jit(jax.grad(loss)), jit(update)


def versions():
    """(name, step, the pieces' jitted functions for memory_analysis or None), each from fresh objects."""
    import jax

    def make(inner_jit, outer_jit):
        loss_fn, grad_fn, update = _pieces(inner_jit)

        def train_step(params, x, y):
            loss = loss_fn(params, x, y)
            grads = grad_fn(params, x, y)
            params = update(params, grads)
            return params, loss

        return outer_jit(train_step), (loss_fn, grad_fn, update)

    same = lambda f: f  # noqa: E731
    separate, pieces = make(jax.jit, same)
    fused, _ = make(jax.jit, jax.jit)
    stripped, _ = make(same, jax.jit)
    return [("separate", separate, pieces), ("fused", fused, None), ("stripped", stripped, None)]


def _arguments(width: int, batch: int):
    import jax
    import jax.numpy as jnp

    k1, k2, k3, k4 = jax.random.split(jax.random.key(0), 4)
    params = {
        "w1": jax.random.normal(k1, (width, width)) / width**0.5,
        "b1": jnp.zeros(width),
        "w2": jax.random.normal(k2, (width, 1)) / width**0.5,
        "b2": jnp.zeros(1),
    }
    x = jax.random.normal(k3, (batch, width))
    y = jax.random.normal(k4, (batch, 1))
    return jax.block_until_ready((params, x, y))


def measure_version(step, pieces, params, x, y, steps: int, min_time: float) -> dict:
    import jax

    with CompileCounter() as counter:
        first = jax.block_until_ready(step(params, x, y))
    if pieces is None:
        temp = memory(step.lower(params, x, y).compile()).get("temp_mib")
    else:
        loss_fn, grad_fn, update = pieces
        grads = grad_fn(params, x, y)
        compiled = [loss_fn.lower(params, x, y), grad_fn.lower(params, x, y), update.lower(params, grads)]
        temp = sum(memory(c.compile()).get("temp_mib", 0.0) for c in compiled)

    def loop(params):
        for _ in range(steps):
            params, loss = step(params, x, y)
        return params, loss

    seconds = time_run(loop, (params,), {}, min_time=min_time)
    cpu = time_run(loop, (params,), {}, min_time=min_time, clock=time.process_time)
    return {
        "compiles": counter.count, "ms_per_step": seconds / steps * 1e3, "cpu_ms_per_step": cpu / steps * 1e3,
        "temp_mib": temp, "output": first,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--widths", default="64,512")
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5, help="best of this many medians")
    parser.add_argument("--min-time", type=float, default=0.5, help="seconds per batch of timed loops")
    options = parser.parse_args()

    import jax
    import numpy as np

    jax.config.update("jax_enable_compilation_cache", False)
    device = jax.devices()[0]
    print(f"{platform.processor() or platform.machine()}, JAX {jax.__version__}, {device.platform} "
          f"({device.device_kind}): batch {options.batch}, {options.steps} steps per loop, best of {options.repeats}\n")
    for width in (int(w) for w in options.widths.split(",")):
        params, x, y = _arguments(width, options.batch)
        rows: dict[str, dict] = {}
        for _ in range(options.repeats):  # interleaved, fresh functions each time
            for name, step, pieces in versions():
                row = measure_version(step, pieces, params, x, y, options.steps, options.min_time)
                best = rows.setdefault(name, row)
                for key in ("ms_per_step", "cpu_ms_per_step"):
                    best[key] = min(best[key], row[key])
        reference = rows["separate"]
        print(f"### width {width}\n")
        print("| version | compilations (first step) | ms/step | speed-up | CPU ms/step | CPU speed-up "
              "| temporaries (MiB) | device peak (MiB) | same result |")
        print("|---|---|---|---|---|---|---|---|---|")
        for name, row in rows.items():
            same = all(
                np.allclose(a, b, rtol=1e-5, atol=1e-6)
                for a, b in zip(jax.tree.leaves(row["output"]), jax.tree.leaves(reference["output"]))
            )
            print(f"| {name} | {row['compiles']} | {row['ms_per_step']:.3f} "
                  f"| {reference['ms_per_step'] / row['ms_per_step']:.2f}x | {row['cpu_ms_per_step']:.3f} "
                  f"| {reference['cpu_ms_per_step'] / row['cpu_ms_per_step']:.2f}x | {mib(row['temp_mib'])} "
                  f"| {mib(device_peak_mib())} | {'yes' if same else 'NO'} |")
        print()


if __name__ == "__main__":
    main()
