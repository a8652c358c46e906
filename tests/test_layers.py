"""Who may import whom (docs/how-it-works.md), and how big a rule may grow: jaxfix's modules import each other
without a cycle, function-level imports included; the analyses are typed against the `ModuleModel` Protocol and
never import the context that builds them; the analysis reads no file; `config` knows no rule; a rule reads facts,
never another rule (which rule takes a place is `yields_to`, applied by the registry). Each layer can then be read,
tested and loaded on its own."""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

from jaxfix.diagnostics import Safety

ROOT = Path(__file__).resolve().parent.parent
JAXFIX = ROOT / "jaxfix"
PACKAGES = {"jaxfix": JAXFIX, "jaxfix.codemods": ROOT / "codemods"}  # codemods/ is installed as jaxfix.codemods
# The modules that read or write files, cache, or run work in other processes.
IO_MODULES = {"jaxfix.cache", "jaxfix.files", "jaxfix.parsed", "jaxfix.workers", "jaxfix.notebook",
              "jaxfix.project_io", "jaxfix.engine", "jaxfix.config"}  # fmt: skip
# What reads or writes a file, or lists a folder (a method of Path, or `os.walk`: `ast.walk` is no I/O).
IO_CALLS = {"open", "read_text", "read_bytes", "write_text", "write_bytes", "is_file", "is_dir", "exists", "glob",
            "rglob", "iterdir", "mkdir", "unlink", "stat", "os.walk", "os.listdir", "os.scandir"}  # fmt: skip


def modules() -> dict[str, Path]:
    """Every module of jaxfix/ and codemods/ by its dotted name."""
    found = {}
    for package, folder in PACKAGES.items():
        for path in folder.rglob("*.py"):
            parts = [*package.split("."), *path.relative_to(folder).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


MODULES = modules()


def imported(module: str) -> set[str]:
    """The dotted names `module` imports anywhere in it, at the top or in a function (`from jaxfix.analysis import
    arrays` imports `jaxfix.analysis` and `jaxfix.analysis.arrays`; a relative import is resolved)."""
    path = MODULES[module]
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package[: len(package) - node.level + 1], *([base] if base else [])])
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def owner(name: str) -> str | None:
    """The module of jaxfix that an imported dotted name is or lives in."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def import_graph() -> dict[str, set[str]]:
    """Module -> the modules of jaxfix it imports (a package's own `__init__` is loaded with any of its modules,
    so an import of a name from one's own package is not an edge)."""
    graph = {}
    for module in MODULES:
        targets = {owner(name) for name in imported(module)} - {None, module}
        graph[module] = {t for t in targets if not module.startswith(f"{t}.")}
    return graph


def test_the_graph_sees_function_level_and_relative_imports() -> None:
    graph = import_graph()
    assert "jaxfix.engine" in graph["jaxfix.cli"]
    assert "jaxfix.analysis.traced" in graph["jaxfix.analysis.context"]  # built lazily, in a function
    assert all(target in MODULES for targets in graph.values() for target in targets)


def test_no_import_cycle() -> None:
    graphlib.TopologicalSorter(import_graph()).prepare()  # CycleError names the cycle


def test_a_cycle_is_reported() -> None:
    with pytest.raises(graphlib.CycleError):
        graphlib.TopologicalSorter({"a": {"b"}, "b": {"c"}, "c": {"a"}}).prepare()


def test_no_analysis_imports_the_context_that_builds_it() -> None:
    graph = import_graph()
    importers = {m for m, targets in graph.items() if "jaxfix.analysis.context" in targets}
    assert sorted(m for m in importers if m.startswith("jaxfix.analysis.")) == []


def test_the_model_protocol_imports_nothing_of_jaxfix() -> None:
    assert {owner(name) for name in imported("jaxfix.facts.model")} == {None}


def test_the_facts_import_graph_leaves_the_facts_only_for_diagnostics() -> None:
    """DESIGN.md: `facts/` imports nothing of jaxfix but itself (`knowledge/` among it) and `diagnostics`, and
    `ast` is its tree: LibCST only builds fixes. `facts/model.py`, the Protocol of the LibCST analyses, names
    LibCST's types for typing only."""
    graph = import_graph()
    facts = sorted(m for m in MODULES if m.startswith("jaxfix.facts."))
    assert "jaxfix.facts.keys" in facts and "jaxfix.facts.binder" in graph["jaxfix.facts.keys"]
    outside = {m: sorted(t for t in graph[m] if not t.startswith("jaxfix.facts") and t != "jaxfix.diagnostics") for m in facts}
    assert {m: found for m, found in outside.items() if found} == {}
    libcst = [m for m in facts if m != "jaxfix.facts.model" and any(n.split(".")[0] == "libcst" for n in imported(m))]
    assert libcst == []


def test_no_rule_imports_another_rule() -> None:
    rules = {m for m in MODULES if m.startswith("jaxfix.codemods.")}
    assert {rule: sorted(import_graph()[rule] & rules) for rule in rules if import_graph()[rule] & rules} == {}


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
    for module, path in sorted(MODULES.items()):
        if module.startswith(("jaxfix.analysis.", "jaxfix.facts.")):
            io_modules = {owner(name) for name in imported(module)} & IO_MODULES
            wrong = sorted(io_modules | (_called(ast.parse(path.read_text(encoding="utf-8"))) & IO_CALLS))
            if wrong:
                found[module] = wrong
    assert found == {}


def test_config_imports_no_part_of_jaxfix() -> None:
    """config.py reads [tool.jaxfix]; the engine checks its codes and options against the rules."""
    assert {owner(name) for name in imported("jaxfix.config")} == {None}


RULE_MODULE_LINES = 800  # past this, a rule holds facts that belong in jaxfix/analysis/ or data in facts/knowledge/


def test_no_rule_module_is_over_800_lines() -> None:
    rules = PACKAGES["jaxfix.codemods"].glob("*.py")
    sizes = {path.name: len(path.read_text(encoding="utf-8").splitlines()) for path in rules}
    assert {name: lines for name, lines in sizes.items() if lines > RULE_MODULE_LINES} == {}


def test_the_facts_import_only_the_facts_and_diagnostics_and_no_libcst() -> None:
    """DESIGN.md: `facts/` imports nothing of jaxfix but itself (knowledge/ included) and `diagnostics`; it is the
    model on `ast`, and LibCST only builds fixes."""
    for module in (m for m in MODULES if m == "jaxfix.facts" or m.startswith("jaxfix.facts.")):
        names = imported(module)
        outside = {owner(n) for n in names} - {None, "jaxfix.diagnostics"}
        assert all(o == "jaxfix.facts" or o.startswith("jaxfix.facts.") for o in outside), (module, outside)
        if module != "jaxfix.facts.model":  # the LibCST analyses' Protocol: LibCST's types, under TYPE_CHECKING only
            assert not any(n == "libcst" or n.startswith("libcst.") for n in names), module


def test_a_rule_without_a_visitor_imports_no_libcst() -> None:
    """A rule that answers on `ast` alone (a `check`, no visit_ method left) reads facts; it has no use for LibCST
    until it builds a fix."""
    from jaxfix import registry
    from jaxfix.codemod import _visitor_names

    moved = [c for c in registry.all_codemods() if c.answers_on_ast() and not _visitor_names(c) and c.fix_safety in (None, Safety.DISPLAY_ONLY)]
    assert {c.code for c in moved} >= {"JF704", "JF803", "JF902"}
    for codemod in moved:
        names = imported(codemod.__module__)
        assert not any(n == "libcst" or n.startswith("libcst.") for n in names), codemod.code
