"""How fast `jaxfix check` runs over a tree of real code: files/s and lines/s, serial and parallel.

    python benchmarks/tool_speed.py [PATH ...]      (default: the bundled corpus/)

Each configuration runs in a fresh interpreter (`python -m jaxfix check`), so import and start-up costs count
as a user pays them. Prints a Markdown table.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _python_files(paths: list[str]) -> list[Path]:
    files: list[Path] = []
    for path in map(Path, paths):
        files.extend([path] if path.is_file() else sorted(path.rglob("*.py")))
    return files


def _time(arguments: list[str], repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "jaxfix", *arguments], capture_output=True, check=False)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    paths = sys.argv[1:] or [str(ROOT / "corpus")]
    files = _python_files(paths)
    lines = sum(len(f.read_bytes().splitlines()) for f in files)
    print(f"{len(files)} files, {lines} lines under {', '.join(paths)}\n")
    print("| run | seconds (best of 3) | files/s | lines/s |\n|---|---|---|---|")
    for label, extra in [("check, 1 process", ["-j", "1"]), ("check, all cores", []), ("start-up only (--version)", None)]:
        seconds = _time(["--version"] if extra is None else ["check", *extra, *paths])
        if extra is None:
            print(f"| {label} | {seconds:.2f} | | |")
        else:
            print(f"| {label} | {seconds:.2f} | {len(files) / seconds:.0f} | {lines / seconds:.0f} |")


if __name__ == "__main__":
    main()
