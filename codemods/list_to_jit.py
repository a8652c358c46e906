"""JF704: a Python list of numbers passed to a jitted function: a pytree of scalars, one trace per length."""

from __future__ import annotations

import ast

import libcst as cst
from libcst.metadata import ScopeProvider

from jaxfix.analysis.jit import calls_compiled
from jaxfix.analysis.syntax import is_number, target_names, walk
from jaxfix.codemod import Codemod, Invalid, Valid


class ListToJit(Codemod):
    """A Python list of numbers handed to a jitted function.

    ## What it does
    Finds calls of a jitted function (`@jax.jit`, `f = jax.jit(...)`, `jax.jit(f)(...)`) with an argument
    that is a Python list of numbers: a list literal of numbers, `list(range(...))`, a list comprehension of
    arithmetic on `range` items, or a local name bound only to one of those. It reports; there is no fix.

    ## Why is this bad?
    jit treats a list as a pytree: each element becomes its own scalar input, traced on its own and copied to
    the device on its own, and a list of another length is another pytree structure, so it compiles again.
    The reference's example (`process_list(list(range(1000)))`, summing `jnp.array(x)` inside) traces 1000
    scalar inputs. Measured with `python benchmarks/replication.py` (JAX 0.10.2, this 2-core CPU, shared
    with other jobs): a fresh jitted sum called with a list of 1000 floats took 15.3 s on its first call
    (tracing and compiling 1000 inputs) against 0.63 s for one array of the same values, and 1.6 ms against
    0.048 ms (33 times longer) on every call after (1000 transfers instead of one); lists of 8 to 128 floats
    compiled once per length, as arrays of those shapes do.

    ## Example
    ```python
    values = list(range(1000))
    result = process_list(values)
    ```

    ## Use instead
    ```python
    values = jnp.arange(1000)  # convert before the jit boundary
    result = process_list(values)
    ```

    ## Fix safety
    No fix: the function receives a list, and code that uses it as one (`len(x)`, iteration, `x + [0]`,
    an `isinstance` test) would change meaning with an array. Convert it where the list is made, once.

    ## When it stays quiet
    - Lists of arrays or of anything else (a list of layer parameters is a legitimate pytree), tuples, and
      lists whose elements jaxfix cannot tell are numbers.
    - Calls of functions not known to be jitted, and names bound to something else on some path.
    """

    code = "JF704"
    name = "list-to-jit"
    summary = "Python list of numbers passed to a jitted function (a pytree of scalars, a trace per length): pass an array"
    fix_safety = None
    screen = ("jit",)

    VALID = (
        Valid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    return jnp.sum(x)\n\n"
            "result = f(jnp.arange(1000))\n"
        ),
        Valid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef forward(layers, x):\n    for w in layers:\n"
            "        x = jnp.tanh(x @ w)\n    return x\n\ndef run(x):\n    return forward([jnp.eye(3), jnp.eye(3)], x)\n"
        ),
    )
    INVALID = (
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef process_list(x):\n    return jnp.sum(jnp.array(x))\n\n"
            "values = list(range(1000))\nresult = process_list(values)\n",
            None,
            message="pytree of",
        ),
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\nscale = jax.jit(lambda x, w: x * jnp.asarray(w))\n\n"
            "def run(x):\n    return scale(x, [0.5, 1.0, 2.0])\n",
            None,
            message="3 scalars",
        ),
    )

    @classmethod
    def may_match_tree(cls, screen) -> bool:
        """A finding needs something that may be jax.jit or jax.pmap, and a call argument that is a list of number
        literals, a list comprehension over `range`, `list(range(...))`, or a name some assignment binds to one."""
        if not any(
            isinstance(n, (ast.Name, ast.Attribute)) and screen.may_resolve_to(n, frozenset({"jax.jit", "jax.pmap"}))
            for n in screen.nodes
        ):
            return False

        def number(e: ast.AST) -> bool:
            if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd)):
                e = e.operand
            return isinstance(e, ast.Constant) and isinstance(e.value, (int, float))

        def listy(e: ast.AST) -> bool:
            if isinstance(e, ast.List):
                return bool(e.elts) and all(number(x) for x in e.elts)
            if isinstance(e, ast.ListComp):
                return True
            return isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "list"

        bound = {
            t.id for n in screen.nodes if isinstance(n, ast.Assign) and listy(n.value)
            for t in n.targets if isinstance(t, ast.Name)
        }
        return any(
            listy(a) or (isinstance(a, ast.Name) and a.id in bound)
            for n in screen.nodes if isinstance(n, ast.Call)
            for a in [*n.args, *(k.value for k in n.keywords)]
        )

    def visit_Call(self, node: cst.Call) -> None:
        if not any(self._numbers(a.value) for a in node.args if not a.star):
            return
        if not calls_compiled(self.context, node):
            return
        for arg in node.args:
            if arg.star:
                continue
            size = self._numbers(arg.value)
            if size is None:
                continue
            what = f"{size} scalars" if type(size) is int else "as many scalars as it has items"
            self.report(
                arg.value,
                f"`{self.context.code_for(arg.value)}` is a Python list of numbers: jit takes it as a pytree of {what} "
                f"(each traced and copied to the device on its own) and compiles again for each new length; "
                f"pass an array made once (`jnp.asarray(...)`) instead",
            )

    def _numbers(self, expr: cst.BaseExpression, *, follow: bool = True):
        """The list's length (an int where it is written out, True otherwise) when `expr` is surely a Python list
        of numbers, else None."""
        if isinstance(expr, cst.List):
            elements = expr.elements
            if elements and all(not isinstance(e, cst.StarredElement) and is_number(e.value) for e in elements):
                return len(elements)
            return None
        if isinstance(expr, cst.Call) and self.context.names.is_builtin(expr.func, "list"):
            if len(expr.args) == 1 and self._is_range(expr.args[0].value):
                return True
            return None
        if isinstance(expr, cst.ListComp) and expr.for_in.inner_for_in is None and self._is_range(expr.for_in.iter):
            bound = set(target_names(expr.for_in.target))
            if _arithmetic_of(expr.elt, bound):
                return True
            return None
        if follow and isinstance(expr, cst.Name):
            scope = self.context.wrapper.resolve(ScopeProvider).get(expr)
            if scope is None:
                return None
            assignments = list(scope[expr.value])
            sizes = []
            for assignment in assignments:
                node = getattr(assignment, "node", None)  # a builtin (`list`, `len`) has none
                target = self.context.parents.get(node) if isinstance(node, cst.Name) else None
                statement = self.context.parents.get(target) if isinstance(target, cst.AssignTarget) else None
                if not (isinstance(statement, cst.Assign) and len(statement.targets) == 1 and target.target is node):
                    return None
                size = self._numbers(statement.value, follow=False)
                if size is None:
                    return None
                sizes.append(size)
            if not sizes:
                return None
            return sizes[0] if len(set(sizes)) == 1 else True
        return None

    def _is_range(self, expr: cst.BaseExpression) -> bool:
        return isinstance(expr, cst.Call) and self.context.names.is_builtin(expr.func, "range")


def _arithmetic_of(expr: cst.BaseExpression, names: set[str]) -> bool:
    """Arithmetic of number literals and `names` (the integers of a range) only: a Python number."""
    for node in walk(expr):
        if isinstance(node, cst.Name) and node.value not in names:
            return False
        if isinstance(node, (cst.Call, cst.Attribute, cst.Subscript, cst.Lambda)):
            return False
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.MatrixMultiply):
            return False
    return True
