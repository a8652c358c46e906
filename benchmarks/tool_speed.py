"""How fast `jaxfix check` runs over a tree of real code: cold (no cache) on one process and on all cores, warm
(nothing changed since the last run, and after an edit to one file), the project index alone, and start-up alone;
files/s and the ratio to `ast.parse` of the same files, and the peak memory of the biggest process of each run.

    python benchmarks/tool_speed.py [PATH ...]      (default: the bundled corpus/)
    python benchmarks/tool_speed.py --per-path PATH ...   (a cold check of each path alone, one row each)

Each configuration runs in a fresh interpreter (`python -m jaxfix check`), so import and start-up costs count
as a user pays them (with bytecode caching on, as a user has it). The cache goes to a temporary folder. Wall time
is the best of --repeat runs; CPU time (user + system of `python -m jaxfix` and the workers it forks) is given
too, with its ratio to the CPU time of `ast.parse`, since on a shared machine it moves less than wall time does.
Prints a Markdown table.

The floor is `ast.parse` of the files `check` looks at (jaxfix's own discovery): each Python file, and each
notebook's code cells as the one module jaxfix reads (jaxfix/notebook.py; extracting them from the JSON is not
timed). Issue 34's targets are printed under the table: a cold check on all cores within 3x the floor in wall
time and within 4x in CPU time, a warm check under 0.5 s. The load average before and after is printed too: on a
shared machine other processes take cores, which lengthens wall time more than CPU time.

    python benchmarks/tool_speed.py --profile PATH ...    (where the CPU of a cold one-process check goes, by
                                                           stage: benchmarks/where_cpu_goes.py)
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _checked_files(paths: list[str]) -> list[Path]:
    """The Python files and notebooks `jaxfix check` looks at under `paths`."""
    from jaxfix.discovery import discover

    return [Path(f) for f in discover(paths).files]


def floor_sources(paths: list[str]) -> tuple[list[bytes | str], int, int]:
    """What the `ast.parse` floor parses under `paths`: each Python file's bytes and each notebook's code cells as
    jaxfix's one module; with the number of Python files and of notebooks that have such a module."""
    from jaxfix import notebook

    sources: list[bytes | str] = []
    notebooks = 0
    for path in _checked_files(paths):
        raw = path.read_bytes()
        if notebook.is_notebook(str(path)):
            module = notebook.python_source(raw)
            if module is not None:
                sources.append(module)
                notebooks += 1
        else:
            sources.append(raw)
    return sources, len(sources) - notebooks, notebooks


def _time(arguments: list[str], env: dict[str, str], repeat: int, before=None) -> tuple[float, float, float]:
    """Best wall seconds, and the CPU seconds and the peak memory (MB resident, of its biggest process: the
    command line or one of its workers) of that run."""
    best = (float("inf"), 0.0, 0.0)
    for _ in range(repeat):
        if before is not None:
            before()
        start = time.perf_counter()
        child = subprocess.Popen([sys.executable, "-m", "jaxfix", *arguments], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL, env=env)
        _, _, usage = os.wait4(child.pid, 0)  # the child's usage, with that of the workers it waited for
        child.returncode = 0  # reaped by wait4 above: Popen must not wait for it again
        wall = time.perf_counter() - start
        best = min(best, (wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024))
    return best


def ast_parse_seconds(sources: list[bytes | str]) -> tuple[float, float]:
    """Wall and CPU seconds of `ast.parse` over the sources (read beforehand)."""
    start, cpu = time.perf_counter(), time.process_time()
    for source in sources:
        try:
            ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass
    return time.perf_counter() - start, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", default=[str(ROOT / "corpus")])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--per-path", action="store_true", help="only a cold check of each path on its own, one row each")
    parser.add_argument("--profile", action="store_true", help="only where the CPU of a cold one-process check goes")
    options = parser.parse_args()
    paths = options.paths
    if options.profile:  # in a fresh interpreter, so that its imports count
        sys.exit(subprocess.run([sys.executable, str(Path(__file__).with_name("where_cpu_goes.py")), *paths]).returncode)
    load_before = os.getloadavg()
    if options.per_path:
        per_path(paths, options.repeat)
        _print_load(load_before)
        return
    sources, python_files, notebooks = floor_sources(paths)
    lines = sum(len(s.splitlines()) for s in sources)
    parse, parse_cpu = min(ast_parse_seconds(sources) for _ in range(options.repeat))
    cores = os.cpu_count() or 1
    cache = Path(tempfile.mkdtemp(prefix="jaxfix-speed-cache-"))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "JAXFIX_NO_CACHE")}
    env["JAXFIX_CACHE_DIR"] = str(cache)
    subprocess.run([sys.executable, "-m", "jaxfix", "--version"], capture_output=True, env=env)  # writes bytecode

    def clear_cache() -> None:  # findings, summaries and project facts: a cold run writes them all
        shutil.rmtree(cache)
        cache.mkdir()

    print(f"{python_files} Python files and {notebooks} notebooks (their code cells), {lines} lines under "
          f"{', '.join(paths)}; {cores} cores\n")
    print("| run | wall s (best of %d) | CPU s | files/s | ratio to ast.parse (wall) | ratio to ast.parse (CPU) | "
          "peak MB (biggest process) |\n|---|---|---|---|---|---|---|" % options.repeat)
    print(f"| ast.parse of every file and notebook's code cells (in process) | {parse:.2f} | {parse_cpu:.2f} | {len(sources) / parse:.0f} | 1x | 1x | |")
    runs = [
        ("cold check, 1 process", ["check", "--no-cache", "-j", "1", *paths], None),
        (f"cold check, all cores (-j {cores})", ["check", "--no-cache", "-j", str(cores), *paths], None),
        ("cold check, all cores, writing the cache", ["check", *paths], clear_cache),
        ("warm check (nothing changed)", ["check", *paths], None),
        ("start-up only (--version)", ["--version"], None),
    ]
    measured = {}
    for label, arguments, before in runs:
        wall, cpu, peak = _time(arguments, env, options.repeat, before)
        measured[label] = wall, cpu
        if arguments[0] == "--version":
            print(f"| {label} | {wall:.2f} | {cpu:.2f} | | | | {peak:.0f} |")
        else:
            print(f"| {label} | {wall:.2f} | {cpu:.2f} | {len(sources) / wall:.0f} | {wall / parse:.1f}x | {cpu / parse_cpu:.1f}x | {peak:.0f} |")
    index, index_cpu = min(_index_seconds(paths) for _ in range(options.repeat))
    print(f"| project index alone (in process, no cache: part of each cold check) | {index:.2f} | {index_cpu:.2f} | "
          f"{len(sources) / index:.0f} | {index / parse:.1f}x | {index_cpu / parse_cpu:.1f}x | |")
    python_paths = [f for f in _checked_files(paths) if f.suffix != ".ipynb"]
    if python_paths:
        edited, original = python_paths[0], python_paths[0].read_bytes()
        edits = iter(range(1, 1_000_000))

        def edit_one() -> None:  # a new content each time: the cache must miss for this file, and hit for the rest
            edited.write_bytes(original + b"\n# edited %d\n" % next(edits))

        def import_one() -> None:  # a code edit: the file's summary changes, so its project is solved again
            edited.write_bytes(original + b"\nimport os as _jaxfix_edit_%d\n" % next(edits))

        try:
            wall, cpu, peak = _time(["check", *paths], env, options.repeat, edit_one)
            print(f"| warm check after a comment added to one file | {wall:.2f} | {cpu:.2f} | | {wall / parse:.1f}x | {cpu / parse_cpu:.1f}x | {peak:.0f} |")
            wall, cpu, peak = _time(["check", *paths], env, options.repeat, import_one)
            print(f"| warm check after an import added to one file | {wall:.2f} | {cpu:.2f} | | {wall / parse:.1f}x | {cpu / parse_cpu:.1f}x | {peak:.0f} |")
        finally:
            edited.write_bytes(original)
    wall, cpu = measured[f"cold check, all cores (-j {cores})"]
    warm, _ = measured["warm check (nothing changed)"]
    print(f"\nIssue 34's targets: cold check on all cores {wall / parse:.1f}x the floor in wall time (target 3x), "
          f"{cpu / parse_cpu:.1f}x in CPU time (target 4x); warm check {warm:.2f} s (target under 0.5 s)")
    _print_load(load_before)


def _print_load(before: tuple[float, float, float]) -> None:
    after = os.getloadavg()
    print(f"Load average (1, 5, 15 min) before: {before[0]:.2f} {before[1]:.2f} {before[2]:.2f}; "
          f"after: {after[0]:.2f} {after[1]:.2f} {after[2]:.2f}")


def per_path(paths: list[str], repeat: int) -> None:
    """A cold check (no cache, all cores) of each path as its own run, against `ast.parse` of its files."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "JAXFIX_NO_CACHE")}
    subprocess.run([sys.executable, "-m", "jaxfix", "--version"], capture_output=True, env=env)  # writes bytecode
    print(f"{os.cpu_count()} cores\n")
    print("| path | files (Python + notebooks) | ast.parse wall s / CPU s | cold check wall s / CPU s | ratio (wall) | ratio (CPU) |\n"
          "|---|---|---|---|---|---|")
    totals = [0.0, 0.0, 0.0, 0.0]
    for path in paths:
        sources, python_files, notebooks = floor_sources([path])
        parse, parse_cpu = min(ast_parse_seconds(sources) for _ in range(repeat))
        wall, cpu, _ = _time(["check", "--no-cache", path], env, repeat)
        for index, value in enumerate((parse, parse_cpu, wall, cpu)):
            totals[index] += value
        print(f"| {Path(path).name} | {python_files} + {notebooks} | {parse:.2f} / {parse_cpu:.2f} | {wall:.2f} / {cpu:.2f} | "
              f"{wall / parse:.1f}x | {cpu / parse_cpu:.1f}x |")
    parse, parse_cpu, wall, cpu = totals
    print(f"| **sum** | | {parse:.2f} / {parse_cpu:.2f} | {wall:.2f} / {cpu:.2f} | {wall / parse:.1f}x | {cpu / parse_cpu:.1f}x |")


def _index_seconds(paths: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of the project index of `paths` built from scratch (every file summarised, nothing
    cached)."""
    from jaxfix.project_io import build_project

    start, cpu = time.perf_counter(), time.process_time()
    project = build_project(paths)
    project.solve()
    return time.perf_counter() - start, time.process_time() - cpu


if __name__ == "__main__":
    main()
