"""The layers under the engine: the analysis reads no file and `config` knows no rule (issue 34). A module that
reads files, caches or fans work out to workers belongs to the engine side (project_io.py, cache.py, workers.py,
notebook.py); an analysis that did so could not be asked the same question twice and get the same answer."""

from __future__ import annotations

import ast
from pathlib import Path

import jaxfix

PACKAGE = Path(jaxfix.__file__).parent
# The modules that read or write files, cache, or run work in other processes.
IO_MODULES = {"jaxfix.cache", "jaxfix.files", "jaxfix.parsed", "jaxfix.workers", "jaxfix.notebook",
              "jaxfix.project_io", "jaxfix.engine", "jaxfix.config"}  # fmt: skip
# What reads or writes a file, or lists a folder (a method of Path, or `os.walk`: `ast.walk` is no I/O).
IO_CALLS = {"open", "read_text", "read_bytes", "write_text", "write_bytes", "is_file", "is_dir", "exists", "glob",
            "rglob", "iterdir", "mkdir", "unlink", "stat", "os.walk", "os.listdir", "os.scandir"}  # fmt: skip


def _imported(tree: ast.Module) -> set[str]:
    """Every module that `tree` imports, at the top or in a function (`from jaxfix import cache` as jaxfix.cache)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _called(tree: ast.Module) -> set[str]:
    """The names that `tree` calls: a function's (`open`), a method's (`read_text`), and `os.walk` as written."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            callee = node.func
            if isinstance(callee, ast.Attribute):
                names.add(callee.attr)
                if isinstance(callee.value, ast.Name):
                    names.add(f"{callee.value.id}.{callee.attr}")
            elif isinstance(callee, ast.Name):
                names.add(callee.id)
    return names


def test_the_analysis_reads_no_file_and_imports_nothing_that_does() -> None:
    found = {}
    for path in sorted((PACKAGE / "analysis").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        wrong = sorted((_imported(tree) & IO_MODULES) | (_called(tree) & IO_CALLS))
        if wrong:
            found[path.name] = wrong
    assert found == {}


def test_config_imports_no_part_of_jaxfix() -> None:
    """config.py reads [tool.jaxfix]; the engine checks its codes and options against the rules."""
    tree = ast.parse((PACKAGE / "config.py").read_text(encoding="utf-8"))
    assert sorted(m for m in _imported(tree) if m.split(".")[0] == "jaxfix") == []
