"""Small facts about `ast` syntax that the screens and the rules share: the dotted spelling of a name (`dotted`,
which lives in `jaxfix.facts.module`), and a module's defs by the names the project index gives them."""

from __future__ import annotations

import ast

from jaxfix.facts.module import dotted  # noqa: F401 (read from here by the screens and the analyses)


def ast_qualified_defs(tree: ast.Module) -> dict[str, ast.AST]:
    """The module's functions by the names the index gives them: `f`, `C.m` (a method of a module-level class),
    `f.<locals>.g` (nested in a function); inside module-level `if`/`try` blocks too."""
    found: dict[str, ast.AST] = {}
    _walk(tree.body, "", found)
    return found


# Module-level, not closures over `found`: two closures that call each other form a reference cycle, which would
# keep `found`, and through it the module's tree, alive until the cyclic collector runs.
def _walk(statements, prefix: str, found: dict[str, ast.AST]) -> None:
    for statement in statements:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found[prefix + statement.name] = statement
            _in_function(statement.body, prefix + statement.name, found)
        elif isinstance(statement, ast.ClassDef) and not prefix:
            _walk(statement.body, statement.name + ".", found)
        elif isinstance(statement, (ast.If, ast.Try)) or type(statement).__name__ == "TryStar":
            if not prefix:
                for block in ("body", "orelse", "finalbody"):
                    _walk(getattr(statement, block, ()), prefix, found)
                for handler in getattr(statement, "handlers", ()):
                    _walk(handler.body, prefix, found)


def _in_function(statements, qual: str, found: dict[str, ast.AST]) -> None:
    for statement in statements:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inner = f"{qual}.<locals>.{statement.name}"
            found[inner] = statement
            _in_function(statement.body, inner, found)
        elif not isinstance(statement, ast.ClassDef):
            for block in ("body", "orelse", "finalbody", "handlers", "cases"):
                children = getattr(statement, block, None)
                if isinstance(children, list):
                    _in_function([c for c in children if isinstance(c, ast.AST)], qual, found)
