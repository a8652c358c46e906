"""A `while` on a traced test cannot run under jit at all, so benchmarks/loops.py has no "before" time for
JF103's cases. The only way to run the original is eagerly (`jax.disable_jit()`, one dispatch per operation
and iteration); this times that against the rewrite compiled with jit.

    python benchmarks/while_eager.py [--cases GLOB] [--repeats N]

For each positive case of corpus/while_to_while_loop/ (GLOB over case names, default all): the first call and
the median of 20 further calls, each version freshly imported (new function objects, so no jit cache helps),
best of --repeats. Prints one Markdown table.
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


def _time(path: Path, entry: str, args, kwargs, *, eager: bool) -> tuple[float, float]:
    """(first call, median later call) in seconds for a freshly imported `entry`."""
    import jax

    function = corpus.load_function(path, entry, tag=f"while-eager-{next(_tags)}")

    def call():
        if eager:
            with jax.disable_jit():
                return jax.block_until_ready(function(*args, **kwargs))
        return jax.block_until_ready(function(*args, **kwargs))

    return first_and_later(call, 20)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="*", help="glob over case names (default: all positive cases)")
    parser.add_argument("--repeats", type=int, default=3)
    options = parser.parse_args(argv)
    import jax

    jax.config.update("jax_enable_compilation_cache", False)
    print(f"# JF103: eager original vs compiled rewrite, jax {jax.__version__}, {platform.processor() or 'cpu'}, best of {options.repeats}\n")
    print("| case | eager original: first / later call ms | rewrite: first call (trace + compile) / later call ms | later-call speed-up |")
    print("|---|---|---|---|")
    for case in corpus.cases():
        if case.codemod != "while_to_while_loop" or case.negative or not fnmatch.fnmatch(case.name, options.cases):
            continue
        args, kwargs = corpus.arguments(case)
        entry = case.spec["entry"]
        _time(case.after, entry, args, kwargs, eager=False)  # warm JAX's own caches once
        _time(case.before, entry, args, kwargs, eager=True)
        eager = rewrite = (float("inf"), float("inf"))
        for _ in range(options.repeats):
            e = _time(case.before, entry, args, kwargs, eager=True)
            r = _time(case.after, entry, args, kwargs, eager=False)
            eager = (min(eager[0], e[0]), min(eager[1], e[1]))
            rewrite = (min(rewrite[0], r[0]), min(rewrite[1], r[1]))
        print(
            f"| {case.name} | {eager[0] * 1e3:.1f} / {eager[1] * 1e3:.2f} | {rewrite[0] * 1e3:.1f} / "
            f"{rewrite[1] * 1e3:.3f} | {eager[1] / rewrite[1]:.0f}x |"
        )


if __name__ == "__main__":
    main()
