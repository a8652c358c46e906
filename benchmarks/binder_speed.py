"""What the `ast` binder (jaxfix/facts/binder.py) costs beside `ast.parse`, and whether its names agree with
LibCST's QualifiedNameProvider (its scopes' `get_qualified_names_for`, read as `analysis.names.JaxNames` read it before it read the binder), on trees
of real code.

    python benchmarks/binder_speed.py [TREE ...]           # speed: binder pass, then the names queries
    python benchmarks/binder_speed.py --agree [TREE ...]   # every disagreement with LibCST, one a line

The default trees are the folders of `$JAXFIX_REALSRC` (default /work/realsrc). Speed: per file, `ast.parse`,
the binder's pass, and `qualified` of every name and attribute plus `is_builtin` of every name, in CPU time,
summed over the files, the binder's as a ratio to `ast.parse`'s. `--agree` puts each `ast.Name` and
`ast.Attribute` beside the LibCST node at the same position (LibCST counts columns in characters, `ast` in UTF-8
bytes) and prints each one where `qualified` or `is_builtin` answer otherwise; tests/test_binder.py runs it on
the examples, the corpus and tests/planted.
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
import time
from pathlib import Path
from typing import Iterator, NamedTuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # jaxfix from this checkout

from jaxfix.facts.binder import Binder  # noqa: E402


def default_trees() -> list[Path]:
    realsrc = Path(os.environ.get("JAXFIX_REALSRC", "/work/realsrc"))
    return sorted(p for p in realsrc.iterdir() if p.is_dir() and p.name != "dl") if realsrc.is_dir() else []


def python_files(trees: list[Path]) -> Iterator[Path]:
    for tree in trees:
        yield from sorted(tree.rglob("*.py")) if tree.is_dir() else [tree]


def _name_nodes(tree: ast.AST) -> list[ast.AST]:
    return [node for node in ast.walk(tree) if type(node) in (ast.Name, ast.Attribute)]


class Disagreement(NamedTuple):
    path: str
    line: int
    column: int  # in characters, as LibCST counts
    code: str
    question: str  # "qualified" or "is_builtin"
    binder: object
    libcst: object

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}: {self.code}: {self.question} binder={self.binder!r} libcst={self.libcst!r}"


def disagreements(source: str, path: str = "<string>") -> list[Disagreement]:
    """Where the binder's `qualified`/`is_builtin`/`imported` differ from LibCST's answers (`_libcst_answers`) on
    the LibCST node at the same position (a node with no LibCST node there is one too); none for a file either
    tree cannot parse."""
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider, ScopeProvider

    try:
        tree = ast.parse(source)
        wrapper = MetadataWrapper(cst.parse_module(source))
    except (SyntaxError, ValueError, cst.ParserSyntaxError):
        return []
    lines = source.splitlines()

    def column(line: int, byte: int) -> int:
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        return len(text.encode()[:byte].decode(errors="replace"))

    by_position = {}
    for node, place in wrapper.resolve(PositionProvider).items():
        if type(node) in (cst.Name, cst.Attribute):
            key = (type(node).__name__, place.start.line, place.start.column, place.end.line, place.end.column)
            by_position[key] = node
    scopes, binder = wrapper.resolve(ScopeProvider), Binder(tree)
    found = []
    for node in _name_nodes(tree):
        start = column(node.lineno, node.col_offset)
        key = (type(node).__name__, node.lineno, start, node.end_lineno, column(node.end_lineno, node.end_col_offset))
        here = (path, node.lineno, start, ast.unparse(node))
        twin = by_position.get(key)
        if twin is None:
            found.append(Disagreement(*here, "no LibCST node", None, None))
            continue
        scope = scopes.get(twin)  # QualifiedNameProvider's answer, as LibCST computes it
        libcst = _libcst_answers(scope.get_qualified_names_for(twin) if scope is not None else (), twin, node)
        if binder.qualified(node) != libcst["qualified"]:
            found.append(Disagreement(*here, "qualified", binder.qualified(node), libcst["qualified"]))
        if binder.imported(node) != libcst["imported"]:
            found.append(Disagreement(*here, "imported", binder.imported(node), libcst["imported"]))
        if isinstance(node, ast.Name) and binder.is_builtin(node, node.id) != libcst["is_builtin"]:
            found.append(Disagreement(*here, "is_builtin", binder.is_builtin(node, node.id), libcst["is_builtin"]))
    return found


def _libcst_answers(names, twin, node: ast.AST) -> dict[str, object]:
    """What LibCST's qualified names of `twin` say to the binder's three questions of `node`: `qualified` (the one
    name among those from imports, for a name or attribute chain on a name), `imported` (the one name, from an
    import) and `is_builtin` (every name Python's own `builtins.<id>`)."""
    import libcst as cst
    from libcst.metadata import QualifiedNameSource

    base = twin
    while isinstance(base, cst.Attribute):
        base = base.value
    dotted = isinstance(base, cst.Name)
    imported = {q.name for q in names if q.source is QualifiedNameSource.IMPORT}
    distinct = {(q.name, q.source) for q in names}
    (only, source), = distinct if len(distinct) == 1 else ((None, None),)
    return {
        "qualified": imported.pop() if dotted and len(imported) == 1 else None,
        "imported": only if dotted and source is QualifiedNameSource.IMPORT else None,
        "is_builtin": isinstance(node, ast.Name) and bool(names) and all(
            q.source is QualifiedNameSource.BUILTIN and q.name == f"builtins.{node.id}" for q in names),
    }


def speed(files: list[Path]) -> None:
    parse = bind = ask = 0.0
    count = 0
    for path in files:
        try:
            source = path.read_text(encoding="utf-8")
            started = time.process_time()
            tree = ast.parse(source)
        except (SyntaxError, ValueError, UnicodeDecodeError):
            continue
        parsed = time.process_time()
        binder = Binder(tree)
        bound = time.process_time()
        nodes = _name_nodes(tree)
        listed = time.process_time()
        for node in nodes:
            binder.qualified(node)
            if type(node) is ast.Name:
                binder.is_builtin(node, node.id)
        asked = time.process_time()
        parse += parsed - started
        bind += bound - parsed
        ask += asked - listed
        count += 1
    print(f"{count} files: ast.parse {parse:.2f} s CPU; binder pass {bind:.2f} s ({bind / parse:.2f}x); "
          f"qualified + is_builtin of every name and attribute {ask:.2f} s ({ask / parse:.2f}x); "
          f"together {(bind + ask) / parse:.2f}x ast.parse")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trees", nargs="*", type=Path)
    parser.add_argument("--agree", action="store_true", help="list every disagreement with LibCST's names")
    arguments = parser.parse_args()
    files = list(python_files(arguments.trees or default_trees()))
    if not arguments.agree:
        speed(files)
        return 0
    total = 0
    for path in files:
        try:
            source = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for disagreement in disagreements(source, str(path)):
            total += 1
            print(disagreement)
    print(f"{len(files)} files, {total} disagreements")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
