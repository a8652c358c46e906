"""What `donate_argnums` (JF501) buys on this machine: a momentum SGD step on MiB-sized parameters, compiled
without donation, donating the parameters (what JF501 adds when only they are proven), and donating both.

    python benchmarks/donation.py [--mib 64] [--steps 20] [--min-time 1.0]

Each variant runs in its own process, so that peak memory is its own: the compilations of its step
(`measure.CompileCounter`, over compiling and running: 1 when nothing recompiles), the compiled step's
`memory_analysis()` (bytes of outputs, of outputs aliased to donated inputs, of temporaries), the growth of
the process's peak RSS over the steps (the peak after the loops minus the RSS once the inputs exist and the
step is compiled), the device's peak memory where it reports one (`memory_stats()`; CPU reports none), and
the time of `--steps` steps dispatched asynchronously (one `block_until_ready` at the end), the median of
loops timed by `measure.time_run` after a warm-up loop. Prints one Markdown table.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import CompileCounter, device_peak_mib, memory, peak_rss_mib, rss_mib, time_run  # noqa: E402

VARIANTS = {"none": (), "params": (0,), "params+velocity": (0, 1)}


def run(variant: str, mib: int, steps: int, min_time: float) -> dict:
    import jax
    import jax.numpy as jnp

    donate = VARIANTS[variant]

    def loss(params, x):
        return jnp.sum((params * x - 1.0) ** 2)

    def update(params, velocity, x):
        grads = jax.grad(loss)(params, x)
        velocity = 0.9 * velocity + grads
        return params - 1e-3 * velocity, velocity

    step = jax.jit(update, donate_argnums=donate)
    n = mib * 2**20 // 4
    x = jnp.full((n,), 0.5, jnp.float32)
    params, velocity = jnp.ones((n,), jnp.float32), jnp.zeros((n,), jnp.float32)
    with CompileCounter() as counter:
        compiled = step.lower(params, velocity, x).compile()
        analysis = memory(compiled)
        before = rss_mib()  # inputs live, step compiled: what follows is the steps' own memory
        state = list(jax.block_until_ready(compiled(params, velocity, x)))  # warm up
        del params, velocity

        def loop():
            params, velocity = state
            for _ in range(steps):
                params, velocity = compiled(params, velocity, x)
            state[:] = params, velocity
            return params, velocity

        seconds = time_run(loop, (), {}, min_time=min_time)
    return {
        "variant": variant,
        "compiles": counter.count,
        "outputs_mib": analysis["outputs_mib"],
        "aliased_mib": analysis["aliased_mib"],
        "temp_mib": analysis["temp_mib"],
        "rss_growth_mib": max(0.0, peak_rss_mib() - before),
        "device_peak_mib": device_peak_mib(),
        "ms_per_step": seconds / steps * 1e3,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=64, help="size of the parameters (and of the velocity)")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--min-time", type=float, default=1.0, help="seconds of timed loops per variant")
    parser.add_argument("--variant", choices=VARIANTS, help=argparse.SUPPRESS)  # one child process
    args = parser.parse_args()
    if args.variant:
        print(json.dumps(run(args.variant, args.mib, args.steps, args.min_time)))
        return
    import jax

    print(f"{platform.processor() or platform.machine()}, JAX {jax.__version__}, {jax.devices()[0].platform}: "
          f"{args.mib} MiB parameters + {args.mib} MiB velocity, {args.steps} steps\n")
    print("| donated | compilations | outputs (MiB) | aliased to inputs (MiB) | temporaries (MiB) "
          "| peak RSS growth (MiB) | device peak (MiB) | ms/step |")
    print("|---|---|---|---|---|---|---|---|")
    for variant in VARIANTS:
        command = [sys.executable, __file__, "--variant", variant, "--mib", str(args.mib),
                   "--steps", str(args.steps), "--min-time", str(args.min_time)]
        row = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
        device = "n/a" if row["device_peak_mib"] is None else f"{row['device_peak_mib']:.0f}"
        print(f"| {variant} | {row['compiles']} | {row['outputs_mib']:.0f} | {row['aliased_mib']:.0f} | {row['temp_mib']:.0f} "
              f"| {row['rss_growth_mib']:.0f} | {device} | {row['ms_per_step']:.1f} |")


if __name__ == "__main__":
    main()
