"""jaxfix on real JAX libraries: `check` and `apply --unsafe-fixes` on a copy of each, with the figures.

    python benchmarks/real_code.py ROOT [--tests LIB ...] [--all-tests] [--screens N] [--only LIB ...] [--work DIR]

ROOT holds one folder per library (the unpacked wheels or sdists: `pip download --no-deps flax optax ... -d W`,
then each wheel unzipped into ROOT/<name>/). For each library, on a fresh copy under --work:
- `check` with every rule, cold (empty cache) and warm (the same again), each in a fresh interpreter as a user
  runs it; the warm run must print what the cold one printed;
- `apply --unsafe-fixes`, then: every file still compiles, and a second `apply --unsafe-fixes` changes nothing;
- no crash: exit code 0 or 1, and no `internal error` line;
- the time `ast.parse` takes over the same files, for the ratio.
With --tests LIB, LIB's own tests run with pytest on the original copy and on the rewritten one, and the counts
must agree: the test files that apply changed and those of the modules it changed (`x.py` -> `x_test.py`), or
with --all-tests every `*_test.py` of the wheel. With --screens N, N files of each library spread over it are
analysed in this process with the screens and without them (every codemod on a full LibCST analysis), and the
findings must agree: the screens hide nothing. Exit status 1 when any check above fails; one table at the end.

Reproducing the run in docs/benchmarks.md (8 libraries, 782 files; the wheels of brax 0.14, chex 0.1.92, diffrax 0.7,
dm-haiku 0.0.16, equinox 0.13.8, flax 0.12.8, numpyro 0.22.0, optax 0.2.8 unzipped into /tmp/realcode8; optax's
tests need `pip install chex==0.1.92` beside jax):

    python benchmarks/real_code.py /tmp/realcode8 --tests optax --screens 40
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tool_speed import ast_parse_seconds, floor_sources  # noqa: E402  (one measure of the baseline for both scripts)

FINDING = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<code>JF\d+) ")
APPLIED = re.compile(r"\d+ files? checked, (?P<changed>\d+) changed(?: \((?P<fixes>\d+) fix(?:es)?\))?")
PYTEST_COUNTS = re.compile(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed)")


def python_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if p.is_file())


def tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in python_files(root):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()




def jaxfix(arguments: list[str], cache: Path) -> tuple[subprocess.CompletedProcess, float]:
    env = {**os.environ, "JAXFIX_CACHE_DIR": str(cache)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's interpreter keeps its bytecode
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "jaxfix", *arguments], capture_output=True, text=True, env=env)
    return done, time.perf_counter() - start


def crash_lines(done: subprocess.CompletedProcess) -> list[str]:
    lines = [line for line in (done.stdout + done.stderr).splitlines() if "internal error" in line]
    if done.returncode not in (0, 1) and not lines:
        lines = [f"exit code {done.returncode}: {done.stderr.strip()[-300:]}"]
    return lines


def not_compiling(files: list[Path]) -> list[str]:
    broken = []
    for path in files:
        try:
            compile(path.read_bytes(), str(path), "exec", dont_inherit=True)
        except (SyntaxError, ValueError) as error:
            broken.append(f"{path}: {error}")
    return broken


def test_files(original: Path, rewritten: Path, everything: bool) -> list[Path]:
    """The library's `*_test.py` files (relative) to run: all of them, or those apply changed and those of the
    modules it changed."""
    tests = [p.relative_to(original) for p in python_files(original) if p.name.endswith("_test.py")]
    if everything:
        return tests
    changed = {p.relative_to(original) for p in python_files(original) if p.read_bytes() != (rewritten / p.relative_to(original)).read_bytes()}
    modules = {c.with_name(c.stem + "_test.py") for c in changed}
    return [t for t in tests if t in changed or t in modules]


def run_tests(root: Path, tests: list[Path]) -> tuple[str, dict[str, int]]:
    """pytest over `tests` under `root` (on PYTHONPATH, so the copy is what is imported): its last line and counts."""
    if not tests:
        return "no test to run", {}
    env = {**os.environ, "PYTHONPATH": str(root), "JAX_PLATFORMS": "cpu"}
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--no-header", *map(str, tests)],
        cwd=root, capture_output=True, text=True, env=env,
    )
    tail = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr.strip()[-200:]
    counts = {kind.rstrip("s") if kind.startswith("error") else kind: int(n) for n, kind in PYTEST_COUNTS.findall(tail)}
    return f"{tail} ({time.perf_counter() - start:.0f} s, exit {done.returncode})", counts


def sample(files: list[Path], count: int) -> list[Path]:
    """`count` files spread evenly over the sorted list."""
    if count >= len(files):
        return files
    return [files[(index * len(files)) // count] for index in range(count)]


def screen_check(path: Path) -> tuple[str, int, int, float, float, list[str]]:
    """One file with the screens and without: (path, findings screened, findings without, seconds screened,
    seconds without, findings only the unscreened run made or the problem that stopped the comparison)."""
    import libcst as cst
    from libcst.metadata import MetadataWrapper

    from jaxfix import engine, registry
    from jaxfix.suppression import unsuppressed

    codemods = registry.all_codemods()
    try:
        text = path.read_bytes().decode("utf-8")
        start = time.perf_counter()
        screened, errors, _ = engine.analyse(text, codemods)
        middle = time.perf_counter()
        bare, bare_errors = engine._run_codemods(MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True), codemods)
        bare = unsuppressed(bare, text)
        end = time.perf_counter()
    except (UnicodeDecodeError, cst.ParserSyntaxError, RecursionError, MemoryError) as error:
        return str(path), 0, 0, 0.0, 0.0, [f"not compared: {type(error).__name__}"]
    if errors or bare_errors:
        return str(path), len(screened), len(bare), middle - start, end - middle, [f"internal error: {e}" for e in errors + bare_errors]
    hidden = {(d.code, d.start.line, d.start.column) for d in bare} - {(d.code, d.start.line, d.start.column) for d in screened}
    return str(path), len(screened), len(bare), middle - start, end - middle, [f"{c} at {l}:{col} hidden by a screen" for c, l, col in sorted(hidden)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--tests", nargs="*", default=[], help="libraries whose tests run before and after apply")
    parser.add_argument("--all-tests", action="store_true", help="every *_test.py, not only those of changed modules")
    parser.add_argument("--screens", type=int, default=0, metavar="N", help="compare screened and unscreened findings on N files per library")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes for --screens")
    parser.add_argument("--work", type=Path, default=None)
    options = parser.parse_args()
    work = options.work or Path(tempfile.mkdtemp(prefix="jaxfix-realcode-"))
    libraries = sorted(p for p in options.root.iterdir() if p.is_dir() and (options.only is None or p.name in options.only))
    problems: list[str] = []
    rows = []
    per_rule: dict[str, collections.Counter] = {}
    tests: dict[str, tuple[int, str, str]] = {}
    for library in libraries:
        original = work / "original" / library.name
        copy = work / "rewritten" / library.name
        for target in (original, copy):
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(library, target, symlinks=True)
        files = python_files(copy)
        lines = sum(len(f.read_bytes().splitlines()) for f in files)
        parse = ast_parse_seconds(floor_sources([str(copy)])[0])[0]  # wall seconds, as the cold check is timed
        cache = work / "cache" / library.name
        shutil.rmtree(cache, ignore_errors=True)
        cold, cold_s = jaxfix(["check", str(copy)], cache)
        warm, warm_s = jaxfix(["check", str(copy)], cache)
        (work / f"{library.name}.check.txt").write_text(cold.stdout + cold.stderr)
        findings = collections.Counter(m["code"] for m in map(FINDING.match, cold.stdout.splitlines()) if m)
        per_rule[library.name] = findings
        if cold.stdout != warm.stdout:
            problems.append(f"{library.name}: the warm check printed something else than the cold one")
        applied, apply_s = jaxfix(["apply", "--unsafe-fixes", str(copy)], cache)
        (work / f"{library.name}.apply.txt").write_text(applied.stdout + applied.stderr)
        match = APPLIED.search(applied.stdout)
        fixes, changed = (int(match["fixes"] or 0), int(match["changed"])) if match else (0, 0)
        before_second = tree_digest(copy)
        second, _ = jaxfix(["apply", "--unsafe-fixes", "--no-cache", str(copy)], cache)
        crashes = []
        for done, what in ((cold, "check"), (warm, "warm check"), (applied, "apply"), (second, "second apply")):
            crashes += [f"{library.name} {what}: {line}" for line in crash_lines(done)]
        problems += crashes
        broken = not_compiling(files)
        problems += [f"{library.name}: does not compile after apply: {b}" for b in broken]
        second_changed = tree_digest(copy) != before_second
        if second_changed:
            problems.append(f"{library.name}: a second apply changed files")
        errors = sum(1 for line in cold.stderr.splitlines() if ": error: " in line)
        hidden = "-"
        if options.screens:
            chosen = sample(python_files(original), options.screens)
            with ProcessPoolExecutor(max_workers=options.jobs) as pool:
                compared = list(pool.map(screen_check, chosen))
            misses = [f"{library.name}: {path}: {m}" for path, *_, found in compared for m in found if "hidden" in m or "internal" in m]
            problems += misses
            screened_s, bare_s = sum(c[3] for c in compared), sum(c[4] for c in compared)
            hidden = f"{sum(1 for m in misses if 'hidden' in m)} of {sum(c[2] for c in compared)} in {len(compared)} files ({screened_s:.0f} s / {bare_s:.0f} s)"
        test_cell = "-"
        if library.name in options.tests:
            selected = test_files(original, copy, options.all_tests)
            before, before_counts = run_tests(original, selected)
            after, after_counts = run_tests(copy, selected)
            tests[library.name] = (len(selected), before, after)
            test_cell = f"{before_counts.get('passed', 0)} / {after_counts.get('passed', 0)} passed in {len(selected)} files"
            if before_counts != after_counts:
                problems.append(f"{library.name}: its tests give other counts after apply: {before_counts} / {after_counts}")
        rows.append((library.name, len(files), lines, sum(findings.values()), fixes, changed, len(crashes), len(broken),
                     int(second_changed), errors, parse, cold_s, warm_s, apply_s, hidden, test_cell))
        print(f"... {library.name}: {len(files)} files, cold {cold_s:.1f} s, warm {warm_s:.2f} s, screens {hidden}, tests {test_cell}",
              file=sys.stderr, flush=True)

    print("| library | files | lines | findings | fixes applied | files changed | crashes | not compiling | changed by 2nd apply "
          "| unreadable | ast.parse s | cold check s | files/s | ratio to ast.parse | warm check s | apply s "
          "| hidden by screens (unscreened findings, screened s / unscreened s) | tests before / after apply |")
    print("|---" * 18 + "|")
    totals = [0] * 13
    for row in rows:
        name, files, lines, found, fixes, changed, crashes, broken, second, errors, parse, cold_s, warm_s, apply_s, hidden, test_cell = row
        print(
            f"| {name} | {files} | {lines} | {found} | {fixes} | {changed} | {crashes} | {broken} | {second} | {errors} | "
            f"{parse:.2f} | {cold_s:.1f} | {files / cold_s:.0f} | {cold_s / parse:.0f}x | {warm_s:.2f} | {apply_s:.1f} | {hidden} | {test_cell} |"
        )
        totals = [t + v for t, v in zip(totals, row[1:14])]
    files, lines, found, fixes, changed, crashes, broken, second, errors, parse, cold_s, warm_s, apply_s = totals
    print(
        f"| **all** | {files} | {lines} | {found} | {fixes} | {changed} | {crashes} | {broken} | {second} | {errors} | "
        f"{parse:.2f} | {cold_s:.1f} | {files / cold_s:.0f} | {cold_s / parse:.0f}x | {warm_s:.2f} | {apply_s:.1f} | | |"
    )
    print("\nFindings per rule: " + ", ".join(f"{name}: {dict(sorted(c.items()))}" for name, c in per_rule.items()))
    for name, (count, before, after) in tests.items():
        print(f"\n{name} tests ({count} files), original: {before}\n{name} tests, after apply --unsafe-fixes: {after}")
    print(f"\nWork folder: {work} (each library's check and apply output in <library>.check.txt, .apply.txt)")
    print("\nProblems:\n" + "\n".join(f"- {p}" for p in problems) if problems else "\nNo problem: no crash, every output compiles, a second apply changes nothing.")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
