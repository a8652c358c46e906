"""Import aliases resolved to qualified names (`tm` → `jax.tree_map`, `jnp.sum` → `jax.numpy.sum`), for the
analyses on LibCST.

The names are the `ast` binder's (facts/binder.py, the one answer: it follows `import x as y` and `from x import
y as z` through Python's scopes, so a name that a local variable shadows does not resolve to the JAX function):
a LibCST node is asked about through the `ast` node that spells it (edit/bridge.py's NameTwins).
"""

from __future__ import annotations

import ast
from typing import Iterable

import libcst as cst

from jaxfix.diagnostics import ImportSpec
from jaxfix.edit.bridge import NameTwins
from jaxfix.facts.binder import Binder


class JaxNames:
    def __init__(self, binder: Binder | None, twins: NameTwins | None) -> None:
        """`binder`: the `ast` binder of the module's text (None where Python rejects the text: nothing is then
        named); `twins`: from a LibCST name or attribute to the `ast` node that spells it, which the binder names."""
        self._binder = binder
        self._twins = twins
        # node -> `qualified(node)`: analyses ask again of the same nodes (TracedAnalysis re-solves each binding
        # until a fixed point). Nodes are immutable and the binder fixed for the module.
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
        binder = self._binder
        if binder is None or not binder.may_be_imported(base.value):
            return None
        twin = self._twin(node)
        return binder.qualified(twin) if twin is not None else None

    def is_builtin(self, node: cst.CSTNode, name: str) -> bool:
        """Whether `node` is Python's own `name` (`print`) on every path: not a local or imported object of that
        name, and not one that some branch rebinds."""
        binder = self._binder
        if binder is None:
            return False
        if type(node) is cst.Name and node.value == name and binder.unbound_builtin(name) and self._twins.is_read(node):
            return True  # bound nowhere in the module: the builtin, with no need to find its `ast` node
        twin = self._twin(node)
        return twin is not None and binder.is_builtin(twin, name)

    def imported(self, node: cst.CSTNode) -> str | None:
        """The one name `node` stands for, where that is an import's on every path (no local, builtin or other
        import beside it: `Binder.imported`); None else. What JF901 reports."""
        base = node
        while isinstance(base, cst.Attribute):
            base = base.value
        binder = self._binder
        if not isinstance(base, cst.Name) or binder is None or not binder.may_be_imported(base.value):
            return None
        twin = self._twin(node)
        return binder.imported(twin) if twin is not None else None

    def _twin(self, node: cst.CSTNode) -> ast.AST | None:
        """The `ast` node of the same name or attribute (LibCST's other names, a def's or a keyword's, have none:
        the binder names `ast`'s names and attributes, which are all LibCST's analyses ask about)."""
        return self._twins.ast_of(node) if isinstance(node, (cst.Name, cst.Attribute)) else None

    def matches(self, node: cst.CSTNode, names: Iterable[str]) -> bool:
        qualified = self.qualified(node)
        return qualified is not None and qualified in names

    def callee(self, call: cst.Call) -> str | None:
        return self.qualified(call.func)

    @property
    def _module_aliases(self) -> dict[str, str]:
        """Module name → the local name a top-level `import` binds to it (`jax.numpy` → `jnp`): the binder's."""
        return self._binder.module_aliases if self._binder is not None else {}

    def module_alias(self, module: str) -> str | None:
        """The local name a top-level import binds to `module` itself (`jnp` for `jax.numpy`), or None."""
        return self._module_aliases.get(module)

    def expression_for(self, qualified_name: str) -> tuple[cst.BaseExpression, ImportSpec | None]:
        """An expression that names `qualified_name` here, reusing an imported alias of its module when the
        module has one (`jnp.zeros`), else spelled in full with the import it needs (`jax.tree.map`, `import jax`):
        the binder's `spelling`."""
        if self._binder is None:
            return cst.parse_expression(qualified_name), ImportSpec(qualified_name.split(".")[0])
        spelled, needed = self._binder.spelling(qualified_name)
        return cst.parse_expression(spelled), ImportSpec(needed) if needed is not None else None
