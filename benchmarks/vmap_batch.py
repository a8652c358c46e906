"""JF301's payoff: a list of per-element results stacked into an array, against its jax.vmap rewrite, at a
realistic batch size.

    python benchmarks/vmap_batch.py [--cases GLOB] [--batch 512] [--repeats N]

For each positive case of corpus/batch_loop_to_vmap/ (GLOB over case names, default all), the arguments that
case.toml's `batch_args` names are tiled along their first axis to --batch rows, and the argument `size_arg`
names (a `range(n)` loop's count) is set to --batch (static under `jax.jit`). Times, each with a freshly
imported function (new function objects, so no jit cache helps) and `block_until_ready`, best of --repeats:
- the original run eagerly (`jax.disable_jit()`: one dispatch per operation and element, which is how the
  loop runs outside `jit`);
- the rewrite run eagerly (one dispatch per operation for the whole batch);
- the rewrite under `jax.jit`: the first call (trace + compile) and later calls.
Later calls are the median of 10. Prints one Markdown table; the speed-up is eager original / rewrite.
"""

from __future__ import annotations

import argparse
import fnmatch
import itertools
import platform
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # jaxfix from this checkout

from jaxfix import corpus  # noqa: E402
sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import first_and_later  # noqa: E402  (the timing loop every benchmark shares)

_tags = itertools.count()


def batched_arguments(case: corpus.Case, batch: int):
    """The case's arguments with those in `batch_args` tiled to `batch` rows, and `size_arg` set to `batch`."""
    import jax.numpy as jnp

    args, kwargs = corpus.arguments(case)
    if isinstance(case.spec.get("size_arg"), int):
        args[case.spec["size_arg"]] = batch
    for index in case.spec.get("batch_args", []):
        rows = args[index]
        reps = -(-batch // rows.shape[0])
        args[index] = jnp.concatenate([rows] * reps)[:batch]
    return args, kwargs


def timed(path: Path, entry: str, args, kwargs, *, mode: str, calls: int = 10, static=()) -> tuple[float, float]:
    """(first call, median of later calls) in seconds for a freshly imported `entry`; mode "eager" runs it
    with jit disabled, "jit" wraps it in a new `jax.jit` (with `static` as its static_argnums)."""
    import jax

    function = corpus.load_function(path, entry, tag=f"vmap-batch-{next(_tags)}")
    if mode == "jit":
        function = jax.jit(function, static_argnums=static)

    def call():
        if mode == "eager":
            with jax.disable_jit():
                return jax.block_until_ready(function(*args, **kwargs))
        return jax.block_until_ready(function(*args, **kwargs))

    return first_and_later(call, calls)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="*", help="glob over case names (default: all positive cases)")
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--calls", type=int, default=10, help="later calls timed per measurement")
    options = parser.parse_args(argv)
    import jax

    jax.config.update("jax_enable_compilation_cache", False)
    print(f"# JF301 at batch {options.batch}: jax {jax.__version__}, {platform.processor() or 'cpu'}, best of {options.repeats}\n")
    print("| case | eager original ms | eager rewrite ms | jit rewrite: first / later ms | speed-up eager | speed-up jit |")
    print("|---|---|---|---|---|---|")
    for case in corpus.cases():
        if case.codemod != "batch_loop_to_vmap" or case.negative or not fnmatch.fnmatch(case.name, options.cases):
            continue
        args, kwargs = batched_arguments(case, options.batch)
        entry = case.spec["entry"]
        static = (case.spec["size_arg"],) if isinstance(case.spec.get("size_arg"), int) else ()
        timed(case.after, entry, args, kwargs, mode="jit", calls=1, static=static)  # warm JAX's own caches once
        timed(case.before, entry, args, kwargs, mode="eager", calls=1)
        best = {"before": float("inf"), "after": float("inf"), "first": float("inf"), "jit": float("inf")}
        for _ in range(options.repeats):
            best["before"] = min(best["before"], timed(case.before, entry, args, kwargs, mode="eager", calls=options.calls)[1])
            best["after"] = min(best["after"], timed(case.after, entry, args, kwargs, mode="eager", calls=options.calls)[1])
            first, later = timed(case.after, entry, args, kwargs, mode="jit", calls=options.calls, static=static)
            best["first"], best["jit"] = min(best["first"], first), min(best["jit"], later)
        print(
            f"| {case.name} | {best['before'] * 1e3:.1f} | {best['after'] * 1e3:.2f} | {best['first'] * 1e3:.1f} / "
            f"{best['jit'] * 1e3:.3f} | {best['before'] / best['after']:.0f}x | {best['before'] / best['jit']:.0f}x |"
        )


if __name__ == "__main__":
    main()
