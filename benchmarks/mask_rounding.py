"""Whether JF801's masked reductions give the original's bits: `x[m].sum()` / `jnp.mean(x[m])` run eagerly (the
only way the original runs) against the rewrites `jnp.sum(jnp.where(m, x, 0))` / `jnp.mean(x, where=m)` under jit.

    python benchmarks/mask_rounding.py [--draws 50] [--shapes 7,33,100,1000,4096,100000,64x64,3x1000,8x16x32]

float32 standard normal inputs (scaled by 1, 1e3 or 1e-3), the sum's mask `x > 0`, the mean's `~jnp.isnan(x)` with
30% NaNs, on CPU. Prints, per shape, how many draws differ in any bit and the sum's largest difference in units in
the last place. Slow (about 3 minutes at the defaults): every eager `x[m]` has a new shape and compiles anew.
"""

from __future__ import annotations

import argparse

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=50)
    parser.add_argument("--shapes", default="7,33,100,1000,4096,100000,64x64,3x1000,8x16x32")
    options = parser.parse_args()

    import jax

    jax.config.update("jax_platforms", "cpu")
    import jax.numpy as jnp

    def sum_original(x):
        return x[x > 0].sum()

    def mean_original(x):
        return jnp.mean(x[~jnp.isnan(x)])

    sum_fixed = jax.jit(lambda x: jnp.sum(jnp.where(x > 0, x, 0)))
    mean_fixed = jax.jit(lambda x: jnp.mean(x, where=~jnp.isnan(x)))

    def bits(value) -> int:
        array = np.asarray(value)
        assert array.dtype == np.float32
        return int(array.view(np.int32))

    rng = np.random.default_rng(0)
    totals = [0, 0, 0]
    for text in options.shapes.split(","):
        shape = tuple(int(n) for n in text.split("x"))
        sums = means = worst = 0
        for _ in range(options.draws):
            x = (rng.standard_normal(shape) * rng.choice([1, 1e3, 1e-3])).astype(np.float32)
            y = x.copy()
            y[rng.random(shape) < 0.3] = np.nan
            a, b = bits(sum_original(jnp.asarray(x))), bits(sum_fixed(jnp.asarray(x)))
            sums += a != b
            worst = max(worst, abs(a - b))
            means += bits(mean_original(jnp.asarray(y))) != bits(mean_fixed(jnp.asarray(y)))
        totals = [totals[0] + sums, totals[1] + means, totals[2] + options.draws]
        print(f"{text:>10}: sum differs in {sums:3}/{options.draws}, mean in {means:3}/{options.draws}, sum at most {worst} ulp")
    print(f"{'all':>10}: sum differs in {totals[0]}/{totals[2]}, mean in {totals[1]}/{totals[2]}")


if __name__ == "__main__":
    main()
