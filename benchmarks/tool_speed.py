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


def _python_files(paths: list[str]) -> list[Path]:
    files: list[Path] = []
    for path in map(Path, paths):
        files.extend([path] if path.is_file() else sorted(path.rglob("*.py")))
    return files


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


def ast_parse_seconds(files: list[Path]) -> tuple[float, float]:
    """Wall and CPU seconds of `ast.parse` over the files' bytes (read beforehand)."""
    sources = [f.read_bytes() for f in files]
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
    options = parser.parse_args()
    paths = options.paths
    if options.per_path:
        per_path(paths, options.repeat)
        return
    files = _python_files(paths)
    lines = sum(len(f.read_bytes().splitlines()) for f in files)
    parse, parse_cpu = min(ast_parse_seconds(files) for _ in range(options.repeat))
    cache = Path(tempfile.mkdtemp(prefix="jaxfix-speed-cache-"))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "JAXFIX_NO_CACHE")}
    env["JAXFIX_CACHE_DIR"] = str(cache)
    subprocess.run([sys.executable, "-m", "jaxfix", "--version"], capture_output=True, env=env)  # writes bytecode

    def clear_cache() -> None:  # findings, summaries and project facts: a cold run writes them all
        shutil.rmtree(cache)
        cache.mkdir()

    print(f"{len(files)} files, {lines} lines under {', '.join(paths)}; {os.cpu_count()} cores\n")
    print("| run | wall s (best of %d) | CPU s | files/s | ratio to ast.parse (wall) | ratio to ast.parse (CPU) | "
          "peak MB (biggest process) |\n|---|---|---|---|---|---|---|" % options.repeat)
    print(f"| ast.parse of every file (in process) | {parse:.2f} | {parse_cpu:.2f} | {len(files) / parse:.0f} | 1x | 1x | |")
    runs = [
        ("cold check, 1 process", ["check", "--no-cache", "-j", "1", *paths], None),
        ("cold check, all cores", ["check", "--no-cache", *paths], None),
        ("cold check, all cores, writing the cache", ["check", *paths], clear_cache),
        ("warm check (nothing changed)", ["check", *paths], None),
        ("start-up only (--version)", ["--version"], None),
    ]
    for label, arguments, before in runs:
        wall, cpu, peak = _time(arguments, env, options.repeat, before)
        if arguments[0] == "--version":
            print(f"| {label} | {wall:.2f} | {cpu:.2f} | | | | {peak:.0f} |")
        else:
            print(f"| {label} | {wall:.2f} | {cpu:.2f} | {len(files) / wall:.0f} | {wall / parse:.1f}x | {cpu / parse_cpu:.1f}x | {peak:.0f} |")
    index, index_cpu = min(_index_seconds(paths) for _ in range(options.repeat))
    print(f"| project index alone (in process, no cache: part of each cold check) | {index:.2f} | {index_cpu:.2f} | "
          f"{len(files) / index:.0f} | {index / parse:.1f}x | {index_cpu / parse_cpu:.1f}x | |")
    if files:
        edited, original = files[0], files[0].read_bytes()
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


def per_path(paths: list[str], repeat: int) -> None:
    """A cold check (no cache, all cores) of each path as its own run, against `ast.parse` of its files."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "JAXFIX_NO_CACHE")}
    subprocess.run([sys.executable, "-m", "jaxfix", "--version"], capture_output=True, env=env)  # writes bytecode
    print(f"{os.cpu_count()} cores\n")
    print("| path | files | ast.parse wall s / CPU s | cold check wall s / CPU s | ratio (wall) | ratio (CPU) |\n"
          "|---|---|---|---|---|---|")
    totals = [0.0, 0.0, 0.0, 0.0]
    for path in paths:
        files = _python_files([path])
        parse, parse_cpu = min(ast_parse_seconds(files) for _ in range(repeat))
        wall, cpu, _ = _time(["check", "--no-cache", path], env, repeat)
        for index, value in enumerate((parse, parse_cpu, wall, cpu)):
            totals[index] += value
        print(f"| {Path(path).name} | {len(files)} | {parse:.2f} / {parse_cpu:.2f} | {wall:.2f} / {cpu:.2f} | "
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
