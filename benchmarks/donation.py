"""What `donate_argnums` (JF501) buys on this machine: a momentum SGD step on MiB-sized parameters, compiled
without donation, donating the parameters (what JF501 adds when only they are proven), and donating both.

    python benchmarks/donation.py [--mib 64] [--steps 20] [--repeats 3]

Each variant runs in its own process, so that peak memory is its own: the compiled step's
`memory_analysis()` (bytes of outputs, of outputs aliased to donated inputs, of temporaries), the growth of
the process's peak RSS over the steps (ru_maxrss after the loops minus the RSS once the inputs exist and the
step is compiled), the device's peak
memory where it reports one (`memory_stats()`; CPU reports none), and the time of `--steps` steps dispatched
asynchronously (one `block_until_ready` at the end), the median of --repeats loops after a warm-up loop.
Prints one Markdown table.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import statistics
import subprocess
import sys
import time

VARIANTS = {"none": (), "params": (0,), "params+velocity": (0, 1)}


def _rss_mib() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize() / 2**20


def run(variant: str, mib: int, steps: int, repeats: int) -> dict:
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
    compiled = step.lower(params, velocity, x).compile()
    analysis = compiled.memory_analysis()
    before = _rss_mib()  # inputs live, step compiled: what follows is the steps' own memory
    params, velocity = jax.block_until_ready(compiled(params, velocity, x))  # warm up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(steps):
            params, velocity = compiled(params, velocity, x)
        jax.block_until_ready((params, velocity))
        times.append((time.perf_counter() - start) / steps)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    stats = jax.devices()[0].memory_stats() or {}
    return {
        "variant": variant,
        "outputs_mib": analysis.output_size_in_bytes / 2**20,
        "aliased_mib": analysis.alias_size_in_bytes / 2**20,
        "temp_mib": analysis.temp_size_in_bytes / 2**20,
        "rss_growth_mib": max(0.0, peak - before),
        "device_peak_mib": stats.get("peak_bytes_in_use", 0) / 2**20 or None,
        "ms_per_step": statistics.median(times) * 1e3,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=64, help="size of the parameters (and of the velocity)")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--variant", choices=VARIANTS, help=argparse.SUPPRESS)  # one child process
    args = parser.parse_args()
    if args.variant:
        print(json.dumps(run(args.variant, args.mib, args.steps, args.repeats)))
        return
    import jax

    print(f"{platform.processor() or platform.machine()}, JAX {jax.__version__}, {jax.devices()[0].platform}: "
          f"{args.mib} MiB parameters + {args.mib} MiB velocity, {args.steps} steps\n")
    print("| donated | outputs (MiB) | aliased to inputs (MiB) | temporaries (MiB) | peak RSS growth (MiB) "
          "| device peak (MiB) | ms/step |")
    print("|---|---|---|---|---|---|---|")
    for variant in VARIANTS:
        command = [sys.executable, __file__, "--variant", variant, "--mib", str(args.mib),
                   "--steps", str(args.steps), "--repeats", str(args.repeats)]
        row = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
        device = "n/a" if row["device_peak_mib"] is None else f"{row['device_peak_mib']:.0f}"
        print(f"| {variant} | {row['outputs_mib']:.0f} | {row['aliased_mib']:.0f} | {row['temp_mib']:.0f} "
              f"| {row['rss_growth_mib']:.0f} | {device} | {row['ms_per_step']:.1f} |")


if __name__ == "__main__":
    main()
