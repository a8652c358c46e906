"""jaxfix on real JAX libraries: `check` and `apply --unsafe-fixes` on a copy of each, with the figures.

    python benchmarks/real_code.py ROOT [--tests LIB ...] [--only LIB ...] [--work DIR]

ROOT holds one folder per library (the unpacked wheels or sdists: `pip download --no-deps flax optax ... -d W`,
then each wheel unzipped into ROOT/<name>/). For each library, on a fresh copy under --work:
- `check`, cold (empty cache) and warm (the same again), each in a fresh interpreter as a user runs it;
- `apply --unsafe-fixes`, then: every file still compiles, and a second `apply --unsafe-fixes` changes nothing;
- no crash: exit code 0 or 1, and no `internal error` line;
- the time `ast.parse` takes over the same files, for the ratio.
With --tests LIB, LIB's own test suite (the `*_test.py` files in its wheel) runs with pytest on the original copy
and on the rewritten one, and the counts are compared. Exit status 1 when any check above fails.
"""

from __future__ import annotations

import argparse
import ast
import collections
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FINDING = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<code>JF\d+) ")
APPLIED = re.compile(r"Applied (?P<fixes>\d+) fix(?:es)? in \d+ files? \((?P<changed>\d+) changed\)")
PYTEST_COUNTS = re.compile(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed)")


def python_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if p.is_file())


def tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in python_files(root):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def ast_parse_seconds(files: list[Path]) -> float:
    sources = [f.read_bytes() for f in files]
    start = time.perf_counter()
    for source in sources:
        try:
            ast.parse(source)
        except (SyntaxError, ValueError):
            pass
    return time.perf_counter() - start


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


def run_tests(root: Path, name: str) -> str:
    package = next((p for p in root.iterdir() if p.is_dir() and (p / "__init__.py").exists()), None)
    if package is None:
        return "no package"
    tests = [str(p) for p in python_files(package) if p.name.endswith("_test.py")]
    env = {**os.environ, "PYTHONPATH": str(root), "JAX_PLATFORMS": "cpu"}
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", "--no-header", *tests],
        cwd=root, capture_output=True, text=True, env=env,
    )
    tail = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr.strip()[-200:]
    return f"{tail} ({time.perf_counter() - start:.0f} s, exit {done.returncode})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--tests", nargs="*", default=[])
    parser.add_argument("--work", type=Path, default=None)
    options = parser.parse_args()
    work = options.work or Path(tempfile.mkdtemp(prefix="jaxfix-realcode-"))
    libraries = sorted(p for p in options.root.iterdir() if p.is_dir() and (options.only is None or p.name in options.only))
    problems: list[str] = []
    rows = []
    per_rule: dict[str, collections.Counter] = {}
    tests: dict[str, tuple[str, str]] = {}
    for library in libraries:
        original = work / "original" / library.name
        copy = work / "rewritten" / library.name
        for target in (original, copy):
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(library, target, symlinks=True)
        files = python_files(copy)
        lines = sum(len(f.read_bytes().splitlines()) for f in files)
        parse = ast_parse_seconds(files)
        cache = work / "cache" / library.name
        shutil.rmtree(cache, ignore_errors=True)
        cold, cold_s = jaxfix(["check", str(copy)], cache)
        warm, warm_s = jaxfix(["check", str(copy)], cache)
        findings = collections.Counter(m["code"] for m in map(FINDING.match, cold.stdout.splitlines()) if m)
        per_rule[library.name] = findings
        if cold.stdout != warm.stdout:
            problems.append(f"{library.name}: the warm check printed something else than the cold one")
        applied, apply_s = jaxfix(["apply", "--unsafe-fixes", str(copy)], cache)
        match = APPLIED.search(applied.stdout)
        fixes, changed = (int(match["fixes"]), int(match["changed"])) if match else (0, 0)
        before_second = tree_digest(copy)
        second, _ = jaxfix(["apply", "--unsafe-fixes", "--no-cache", str(copy)], cache)
        for done, what in ((cold, "check"), (warm, "warm check"), (applied, "apply"), (second, "second apply")):
            problems += [f"{library.name} {what}: {line}" for line in crash_lines(done)]
        problems += [f"{library.name}: does not compile after apply: {b}" for b in not_compiling(files)]
        if tree_digest(copy) != before_second:
            problems.append(f"{library.name}: a second apply changed files")
        errors = sum(1 for line in cold.stderr.splitlines() if ": error: " in line)
        rows.append((library.name, len(files), lines, sum(findings.values()), fixes, changed, errors, parse, cold_s, warm_s, apply_s))
        print(f"... {library.name}: {len(files)} files, cold {cold_s:.1f} s, warm {warm_s:.2f} s", file=sys.stderr)
        if library.name in options.tests:
            tests[library.name] = (run_tests(original, library.name), run_tests(copy, library.name))

    print("| library | files | lines | findings | fixes applied | files changed | unreadable | ast.parse s | cold check s | files/s | ratio to ast.parse | warm check s | apply s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    totals = [0] * 10
    for row in rows:
        name, files, lines, found, fixes, changed, errors, parse, cold_s, warm_s, apply_s = row
        print(
            f"| {name} | {files} | {lines} | {found} | {fixes} | {changed} | {errors} | {parse:.2f} | {cold_s:.1f} | "
            f"{files / cold_s:.0f} | {cold_s / parse:.0f}x | {warm_s:.2f} | {apply_s:.1f} |"
        )
        totals = [t + v for t, v in zip(totals, row[1:])]
    files, lines, found, fixes, changed, errors, parse, cold_s, warm_s, apply_s = totals
    print(
        f"| **all** | {files} | {lines} | {found} | {fixes} | {changed} | {errors} | {parse:.2f} | {cold_s:.1f} | "
        f"{files / cold_s:.0f} | {cold_s / parse:.0f}x | {warm_s:.2f} | {apply_s:.1f} |"
    )
    print("\nFindings per rule: " + ", ".join(f"{name}: {dict(sorted(c.items()))}" for name, c in per_rule.items()))
    for name, (before, after) in tests.items():
        print(f"\n{name} tests, original: {before}\n{name} tests, after apply --unsafe-fixes: {after}")
        if PYTEST_COUNTS.findall(before) != PYTEST_COUNTS.findall(after):
            problems.append(f"{name}: its tests give other counts after apply")
    print(f"\nWork folder: {work}")
    print("\nProblems:\n" + "\n".join(f"- {p}" for p in problems) if problems else "\nNo problem: no crash, every output compiles, a second apply changes nothing.")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
