"""Fuzzing every codemod: programs from hypothesmith and mutations of the corpus cases, each checked for
- no crash: no exception escapes, and no codemod is reported as crashed or as producing code that does not compile;
- every output compiles (`apply --unsafe-fixes` on the program, in memory);
- idempotence: applying to the output changes nothing;
- sound screens: the findings with the screens are those of every codemod run on the program without them.

    python benchmarks/fuzz.py [--programs 10000] [--mutations 2000] [--seed 0] [--jobs N] [--minutes M]

tests/test_fuzz.py runs the same checks on a few seconds of examples.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sys
import textwrap
import time
import traceback
import warnings
from collections import Counter
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PRELUDE = "import jax\nimport jax.numpy as jnp\nfrom jax import lax\n\n"


def compiles(text: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, "<fuzz>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return False
    return True


def variants(program: str) -> list[str]:
    """The program as generated, after JAX imports, and as the body of a jitted function: the last two let the
    codemods' screens pass and their analyses see traced code."""
    out = [program, PRELUDE + program]
    body = textwrap.indent(program, "    ") if program.strip() else "    pass\n"
    out.append(PRELUDE + "@jax.jit\ndef fuzzed(x, y):\n" + body + "    return x\n")
    return [text for text in out if compiles(text)]


def problems_of(text: str, *, bare: bool = True) -> list[str]:
    """What is wrong with jaxfix on `text` (a program that compiles); empty when nothing is. `bare`: also run
    every codemod without its screens (the costly part: a full LibCST analysis)."""
    import libcst as cst
    from libcst.metadata import MetadataWrapper

    from jaxfix import engine, registry
    from jaxfix.suppression import unsuppressed

    settings = engine.Settings(tuple(c.code for c in registry.all_codemods()), unsafe_fixes=True)
    found: list[str] = []
    try:
        fixed, applied, diagnostics, errors = engine.fix_text(text, settings)
    except (RecursionError, MemoryError):
        return []  # contained by process_file as "too deeply nested"; not a finding of the fuzzer
    except cst.ParserSyntaxError:
        return []  # valid Python that LibCST cannot parse: process_file names the file ("cannot parse"), no crash
    except Exception:
        return [f"fix_text raised: {traceback.format_exc().strip().splitlines()[-1]}"]
    found += [f"internal error: {e}" for e in errors]
    if not compiles(fixed):
        found.append("the output does not compile")
    elif applied:
        try:
            again, applied_again, _, _ = engine.fix_text(fixed, settings)
        except Exception:
            found.append(f"second apply raised: {traceback.format_exc().strip().splitlines()[-1]}")
        else:
            if again != fixed:
                found.append(f"not idempotent: a second apply made {applied_again} more fixes")
    if not bare:
        return found
    # Every codemod without its screens: no crash, and the screened run (the `check`-rules answer on `ast` in both)
    # neither misses a finding nor reports one of its own, nor words one otherwise.
    try:
        wrapper = MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)
        bare, bare_errors = engine._run_codemods(wrapper, registry.all_codemods())
        screened_run = engine.analyse(text, registry.all_codemods())[0]
    except (RecursionError, MemoryError, cst.ParserSyntaxError):
        return found  # reported above, through fix_text
    except Exception:
        return found + [f"the bare run raised: {traceback.format_exc().strip().splitlines()[-1]}"]
    found += [f"internal error without screens: {e}" for e in bare_errors if e not in errors]
    if not errors and not bare_errors:
        screened = {(d.code, d.start, d.end, d.message) for d in screened_run}
        everything = {(d.code, d.start, d.end, d.message) for d in unsuppressed(bare, text)}
        found += [f"a screen hid {c} at {start.line}:{start.column}" for c, start, _, _ in sorted(everything - screened, key=str)]
        found += [f"{c} at {start.line}:{start.column} only with screens" for c, start, _, _ in sorted(screened - everything, key=str)]
    return found


# ---- mutations of the corpus cases ------------------------------------------------------------------------

_INSERTS = ["break", "continue", "return x", "x = x + 1", "print(x)", "if x > 0:\n    pass", "del x", "x[0] = 1",
            "global x", "yield x", "for i in range(3):\n    x = x + i", "while x < 3:\n    x = x + 1", "x = jnp.stack([x, x])"]
_IDENTIFIER = re.compile(r"\b[A-Za-z_]\w*\b")
_NUMBER = re.compile(r"\b\d+(?:\.\d*)?\b")
_OPERATORS = ["<", ">", "<=", ">=", "==", "!=", " and ", " or ", "+", "-", "*"]


def corpus_sources() -> list[str]:
    return [p.read_text() for p in sorted((ROOT / "corpus").glob("*/*/before.py"))]


def mutate(source: str, rng: random.Random, steps: int) -> str:
    lines = source.splitlines()
    for _ in range(steps):
        if not lines:
            break
        index = rng.randrange(len(lines))
        line = lines[index]
        indent = line[: len(line) - len(line.lstrip())]
        kind = rng.randrange(7)
        if kind == 0:
            del lines[index]
        elif kind == 1:
            lines.insert(index, line)
        elif kind == 2 and index + 1 < len(lines):
            lines[index], lines[index + 1] = lines[index + 1], line
        elif kind == 3:
            names = _IDENTIFIER.findall(source)
            spots = list(_IDENTIFIER.finditer(line))
            if names and spots:
                spot = rng.choice(spots)
                lines[index] = line[: spot.start()] + rng.choice(names) + line[spot.end():]
        elif kind == 4:
            spots = list(_NUMBER.finditer(line))
            if spots:
                spot = rng.choice(spots)
                lines[index] = line[: spot.start()] + rng.choice(["0", "1", "2", "-1", "3.5", "10"]) + line[spot.end():]
        elif kind == 5:
            insert = textwrap.indent(rng.choice(_INSERTS), indent)
            lines[index:index] = insert.splitlines()
        else:
            present = [op for op in _OPERATORS if op in line]
            if present:
                lines[index] = line.replace(rng.choice(present), rng.choice(_OPERATORS), 1)
    return "\n".join(lines) + "\n"


def mutants(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    sources = corpus_sources()
    found: list[str] = []
    attempts = 0
    while len(found) < count and attempts < count * 20:
        attempts += 1
        text = mutate(rng.choice(sources), rng, rng.randint(1, 3))
        if compiles(text):
            found.append(text)
    return found


# ---- the long run -----------------------------------------------------------------------------------------


def _worker(job: tuple[int, int, int, float]) -> tuple[int, int, int, list[tuple[str, str]]]:
    """One process's share: `programs` hypothesmith programs (half from its grammar, half from LibCST nodes),
    then `mutations` corpus mutants, each checked as it is made, until the time is up. Returns (programs done,
    mutants done, inputs checked, failures)."""
    import hypothesmith
    from hypothesis import HealthCheck, given, seed, settings
    from hypothesis import strategies as st

    seed_value, programs, mutations, stop_at = job
    warnings.simplefilter("ignore", SyntaxWarning)  # the generated programs' own warnings (`1[0]`) are no finding
    failures: list[tuple[str, str]] = []
    counts = [0, 0, 0]

    class _TimeUp(BaseException):  # not an Exception: Hypothesis lets it through instead of shrinking it
        pass

    @seed(seed_value)
    @settings(max_examples=max(programs, 1), deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(st.one_of(hypothesmith.from_grammar(), hypothesmith.from_node()))
    def run(program: str) -> None:
        if time.time() > stop_at:
            raise _TimeUp
        counts[0] += 1
        texts = variants(program)
        for index, text in enumerate(texts):  # the last variant holds the others' code: it alone runs bare
            counts[2] += 1
            failures.extend((problem, text) for problem in problems_of(text, bare=index == len(texts) - 1))

    if programs:
        try:
            run()
        except _TimeUp:
            pass
    for text in mutants(mutations, seed_value):
        if time.time() > stop_at:
            break
        counts[1] += 1
        counts[2] += 1
        failures.extend((problem, text) for problem in problems_of(text))
    return counts[0], counts[1], counts[2], failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=10_000, help="hypothesmith programs (each in up to 3 variants)")
    parser.add_argument("--mutations", type=int, default=2_000, help="mutated corpus cases")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--chunk", type=int, default=500, help="programs (and mutations) per task a process takes")
    parser.add_argument("--minutes", type=float, default=None, help="stop after this long and report what was done")
    parser.add_argument("--save", type=Path, default=None, help="write each failing program into this folder")
    options = parser.parse_args()

    start = time.time()
    stop_at = start + options.minutes * 60 if options.minutes else float("inf")
    # Many small tasks, each with its own seed, rather than one per process: the processes stay busy to the end,
    # progress shows as tasks finish, and an interrupted run still says what it did.
    tasks = []
    for what, total in (("programs", options.programs), ("mutations", options.mutations)):
        for first in range(0, total, options.chunk):
            size = min(options.chunk, total - first)
            tasks.append((size, 0) if what == "programs" else (0, size))
    jobs = [(options.seed * 100_000 + index, programs, mutations, stop_at) for index, (programs, mutations) in enumerate(tasks)]
    programs = mutations = inputs = 0
    failures: list[tuple[str, str]] = []
    saved = 0
    with ProcessPoolExecutor(max_workers=options.jobs) as pool:
        for future in as_completed([pool.submit(_worker, job) for job in jobs]):
            done = future.result()
            programs, mutations, inputs = programs + done[0], mutations + done[1], inputs + done[2]
            failures += done[3]
            if options.save:
                options.save.mkdir(parents=True, exist_ok=True)
                for problem, text in done[3]:
                    (options.save / f"failure_{saved:04}.py").write_text(f"# {problem}\n{text}")
                    saved += 1
            print(f"... {programs} programs, {mutations} mutations, {inputs} inputs, {len(failures)} problems, "
                  f"{time.time() - start:.0f} s", file=sys.stderr, flush=True)
    seconds = time.time() - start
    stopped = " (stopped by --minutes)" if time.time() > stop_at else ""
    print(f"{programs} hypothesmith programs and {mutations} corpus mutations: {inputs} inputs checked through every "
          f"codemod in {seconds:.0f} s on {options.jobs} processes{stopped}.")
    kinds = Counter(re.sub(r"\d+", "N", problem)[:120] for problem, _ in failures)
    print(f"{len(failures)} problems" + (":" if failures else "."))
    for kind, count in kinds.most_common():
        print(f"  {count:5}  {kind}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
