"""Import aliases resolved to qualified names (`tm` → `jax.tree_map`, `jnp.sum` → `jax.numpy.sum`).

Built on LibCST's qualified names (QualifiedNameProvider's answers, computed per node asked), which follow
`import x as y` and `from x import y as z` through scopes, so a name that a local variable shadows does not
resolve to the JAX function.
"""

from __future__ import annotations

from functools import cached_property
from typing import Iterable

import libcst as cst
from libcst.metadata import MetadataWrapper, QualifiedNameSource

from jaxfix.analysis.metadata import QualifiedNames

from jaxfix.analysis.syntax import dotted_name
from jaxfix.diagnostics import ImportSpec


class JaxNames:
    def __init__(
        self, wrapper: MetadataWrapper, qualified: QualifiedNames | None = None, imported: frozenset[str] | None = None
    ) -> None:
        """`imported`: every name an import of the module binds (`Screen.bound_by_imports`), where known: a name
        or attribute whose first name is none of them has no imported name, and LibCST's scopes need not be
        asked (with JF901's `_qualified`, 14.9k of the 26.9k scope look-ups of a cold check of the 10 real trees)."""
        self._wrapper = wrapper
        self._qualified = qualified if qualified is not None else QualifiedNames(wrapper)
        self._imported = imported
        # node -> `qualified(node)`: analyses ask again of the same nodes (TracedAnalysis re-solves each binding
        # until a fixed point), and LibCST's scope answers anew each time (94k calls for 20k nodes on the 123 real
        # files the screens pass). Nodes are immutable and the scopes fixed for the wrapper.
        self._answers: dict[cst.CSTNode, str | None] = {}

    def qualified(self, node: cst.CSTNode) -> str | None:
        """The dotted name an expression refers to through imports, or None: a local, an attribute of a value,
        or a name bound to different imports on different paths (a compatibility shim), which is no one name."""
        try:
            return self._answers[node]
        except KeyError:
            answer = self._answers[node] = self._qualified_now(node)
            return answer

    def _qualified_now(self, node: cst.CSTNode) -> str | None:
        base = node
        while isinstance(base, cst.Attribute):
            base = base.value
        if not isinstance(base, cst.Name):
            return None  # an attribute of a value (`jnp.zeros(3).sum`), not an imported name
        if self._imported is not None and base.value not in self._imported:
            return None
        names = self._qualified.get(node, ())
        imported = {q.name for q in names if q.source is QualifiedNameSource.IMPORT}
        return imported.pop() if len(imported) == 1 else None

    def is_builtin(self, node: cst.CSTNode, name: str) -> bool:
        """Whether `node` is Python's own `name` (`print`) on every path: not a local or imported object of that
        name, and not one that some branch rebinds."""
        names = self._qualified.get(node, ())
        return bool(names) and all(q.source is QualifiedNameSource.BUILTIN and q.name == f"builtins.{name}" for q in names)

    def matches(self, node: cst.CSTNode, names: Iterable[str]) -> bool:
        qualified = self.qualified(node)
        return qualified is not None and qualified in names

    def callee(self, call: cst.Call) -> str | None:
        return self.qualified(call.func)

    @cached_property
    def _module_aliases(self) -> dict[str, str]:
        """Module name → the local name a top-level `import` binds to it (`jax.numpy` → `jnp`)."""
        aliases: dict[str, str] = {}
        for statement in self._wrapper.module.body:
            if not isinstance(statement, cst.SimpleStatementLine):
                continue
            for small in statement.body:
                if isinstance(small, cst.Import):
                    for alias in small.names:
                        dotted = dotted_name(alias.name)
                        if alias.asname is not None:
                            aliases.setdefault(dotted, dotted_name(alias.asname.name))
                        else:
                            aliases.setdefault(dotted.split(".")[0], dotted.split(".")[0])
                            aliases.setdefault(dotted, dotted)
                elif isinstance(small, cst.ImportFrom) and small.module is not None and not small.relative:
                    if isinstance(small.names, cst.ImportStar):
                        continue
                    base = dotted_name(small.module)
                    for alias in small.names:
                        local = dotted_name(alias.asname.name) if alias.asname else dotted_name(alias.name)
                        aliases.setdefault(f"{base}.{dotted_name(alias.name)}", local)
        return aliases

    def module_alias(self, module: str) -> str | None:
        """The local name a top-level import binds to `module` itself (`jnp` for `jax.numpy`), or None."""
        return self._module_aliases.get(module)

    def expression_for(self, qualified_name: str) -> tuple[cst.BaseExpression, ImportSpec | None]:
        """An expression that names `qualified_name` here, reusing an imported alias of its module when the
        module has one (`jnp.zeros`), else spelled in full with the import it needs (`jax.tree.map`, `import jax`)."""
        parts = qualified_name.split(".")
        for cut in range(len(parts), 0, -1):
            module = ".".join(parts[:cut])
            local = self._module_aliases.get(module)
            if local is not None:
                return cst.parse_expression(".".join([local, *parts[cut:]])), None
        return cst.parse_expression(qualified_name), ImportSpec(parts[0])
