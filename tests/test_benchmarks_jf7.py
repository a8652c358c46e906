"""The JF702-JF705 benchmarks run end to end at tiny sizes and print their tables (speed is never asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.mark.parametrize(
    "script, args, rows",
    [
        ("timing_block.py", ["--size", "8", "--repeats", "1", "--steps", "3"], ["no block", "every step", "every 100 steps"]),
        ("replication.py", ["--n", "2", "--size", "4", "--lengths", "2,3", "--length", "4"], ["broadcast_to", "Python list"]),
    ],
)
def test_benchmark_prints_its_tables(script: str, args: list[str], rows: list[str]) -> None:
    done = subprocess.run([sys.executable, str(BENCHMARKS / script), *args], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    for row in rows:
        assert row in done.stdout, done.stdout
