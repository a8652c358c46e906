"""Facts about a module's import statements, over the binder: what each local name may stand for, which imports
bind a name, whether the name an import binds is read, and where a simple statement stands (alone on its line, in
which block), as a fix that rewrites or removes an import needs them (JF901)."""

from __future__ import annotations

import ast

from jaxfix.facts.binder import Binder


def imported_names(binder: Binder) -> set[str]:
    """The full names the module's absolute imports name (`jax.experimental.stax`, `jax.numpy`); star imports and
    relative ones left out."""
    found = set()
    for statement in binder.nodes_of(ast.Import, ast.ImportFrom):
        if type(statement) is ast.Import:
            found.update(alias.name for alias in statement.names)
        elif statement.module and not statement.level:
            found.update(f"{statement.module}.{alias.name}" for alias in statement.names if alias.name != "*")
    return found


def module_imports(binder: Binder) -> dict[str, set[str]]:
    """Local name → every full name an absolute import anywhere in the module binds to it (`import jax.numpy as
    jnp`: jnp → jax.numpy; `import jax.numpy`: jax → jax; `from jax import lax`: lax → jax.lax)."""
    bound: dict[str, set[str]] = {}
    for node in binder.nodes_of(ast.Import, ast.ImportFrom):
        if type(node) is ast.Import:
            for alias in node.names:
                if alias.asname:
                    bound.setdefault(alias.asname, set()).add(alias.name)
                else:
                    head = alias.name.split(".")[0]
                    bound.setdefault(head, set()).add(head)
        elif not node.level and node.module:
            for alias in node.names:
                if alias.name != "*":
                    bound.setdefault(alias.asname or alias.name, set()).add(f"{node.module}.{alias.name}")
    return bound


def import_bindings(binder: Binder, reference: ast.expr) -> list[tuple[ast.stmt, ast.alias, str]]:
    """The absolute imports that bind `reference`'s leftmost name (every one of the scope that answers it):
    (statement, alias, the full name the alias imports). `import a.b` binds no name of its own here."""
    base = reference
    while type(base) is ast.Attribute:
        base = base.value
    scope = binder.scope_of.get(base) if type(base) is ast.Name else None
    found = []
    for binding in scope.resolve(base.id) if scope is not None else ():
        statement = binding.node
        if type(statement) is ast.ImportFrom:
            if statement.level or not statement.module or any(a.name == "*" for a in statement.names):
                continue
            found.extend(
                (statement, alias, f"{statement.module}.{alias.name}")
                for alias in statement.names if (alias.asname or alias.name) == base.id
            )  # fmt: skip
        elif type(statement) is ast.Import:
            found.extend((statement, alias, alias.name) for alias in statement.names if alias.asname == base.id)
    return found


def import_is_read(binder: Binder, statement: ast.stmt, local: str, annotated: set[str]) -> bool:
    """Whether the name `local` that the import `statement` binds in its scope is read anywhere (True where its
    scope is unknown; `Binder.read_bindings`), or spelled in a string annotation (`annotated`:
    `string_annotation_names`)."""
    scope = binder.scope_of.get(statement)
    if scope is None or local in annotated:
        return True
    read = binder.read_bindings()
    return any(b.node is statement and b in read for b in scope.bindings.get(local, ()))


def block_of(binder: Binder, statement: ast.stmt) -> list[ast.stmt]:
    """The statements of the block `statement` stands in (a body, an `else`, a `finally`)."""
    parent = binder.parent(statement)
    for field in ("body", "orelse", "finalbody"):
        block = getattr(parent, field, None)
        if isinstance(block, list) and any(s is statement for s in block):
            return block
    return [statement]


def alone_on_line(binder: Binder, positions, statement: ast.stmt) -> bool:
    """Whether a simple statement is the only one of its line (LibCST's `SimpleStatementLine` of one statement):
    no `;` joins it to another, and it does not stand in a one-line suite (`if x: import a`). `positions`:
    `FileFacts.positions`."""
    if positions.source_bytes((statement.lineno, 0), (statement.lineno, statement.col_offset)).strip():
        return False
    block = block_of(binder, statement)
    place = next(i for i, s in enumerate(block) if s is statement)
    return place + 1 == len(block) or block[place + 1].lineno != statement.end_lineno


def string_annotation_names(binder: Binder) -> set[str]:
    """The names spelled inside string annotations (`x: "Mesh"`), which LibCST's scopes count as reads of their
    imports: the strings of an annotation, of a subscript of a `typing` name, of `typing.cast`'s first argument
    and of `TypeVar`'s or `NewType`'s others, parsed (a string nested in one too). Over all scopes at once, and
    `Literal`'s strings among them: a name it holds is only ever said to be read."""
    roots: list[ast.AST] = [a.annotation for a in binder.nodes_of(ast.arg) if a.annotation is not None]
    roots += [d.returns for d in binder.nodes_of(ast.FunctionDef, ast.AsyncFunctionDef) if d.returns is not None]
    roots += [a.annotation for a in binder.nodes_of(ast.AnnAssign)]
    for node in binder.nodes_of(ast.Subscript):
        if (binder.qualified(node.value) or "").startswith(("typing.", "typing_extensions.")):
            roots.append(node.slice)
    for call in binder.calls:
        callee = binder.qualified(call.func)
        if callee == "typing.cast":
            roots += call.args[:1]
        elif callee in ("typing.TypeVar", "typing.NewType"):
            roots += [*call.args[1:], *(k.value for k in call.keywords)]
    found: set[str] = set()
    while roots:
        for node in ast.walk(roots.pop()):
            if type(node) is ast.Name:
                found.add(node.id)
            elif type(node) is ast.Constant and type(node.value) is str and len(roots) < 1000:
                try:
                    roots.append(ast.parse(node.value))
                except (SyntaxError, ValueError, RecursionError, MemoryError):
                    pass
    return found
