"""JF704: a Python list of numbers passed to a jitted function: a pytree of scalars, one trace per length."""

from __future__ import annotations

import ast

import libcst as cst
from libcst.metadata import ScopeProvider

from jaxfix.analysis.jit import calls_compiled
from jaxfix.analysis.screen import may_call_compiled, may_call_compiled_here
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
    screen = ("jit", "pmap")  # calls_compiled counts both

    VALID = (
        # a list of strings: jit rejects it (not a JAX type) rather than tracing each item
        Valid('import jax\n\n@jax.jit\ndef f(x):\n    return x\n\nf(["a" for i in range(3)])\n'),
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
        """A finding needs a call that may call a compiled function (`may_call_compiled`: a name some binding may
        make jitted, or `jax.jit(f)(...)`) with an argument (not `*`/`**`) that may be a list of numbers (`_listy`)
        or a name that some single-target assignment binds to one; and a called name that its own function binds
        only by what may compile it (`may_call_compiled_here`, asked last: it walks the functions)."""
        calls = [n for n in screen.nodes_of(ast.Call) if may_call_compiled(screen, n)]
        if not calls:
            return False
        bound = {
            n.targets[0].id for n, _ in screen.statements
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) and _listy(n.value)
        }
        return any(
            (_listy(a) or (isinstance(a, ast.Name) and a.id in bound)) and may_call_compiled_here(screen, n)
            for n in calls
            for a in [*(a for a in n.args if not isinstance(a, ast.Starred)), *(k.value for k in n.keywords if k.arg)]
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


def _listy(expr: ast.AST) -> bool:
    """A superset of `_numbers(expr, follow=False)` on the `ast`: a non-empty list of number literals,
    `list(<one argument that is a call of the name range>)`, or a one-`for` list comprehension over a call of
    `range` whose element reads only the names its target binds, with no call, attribute, index or lambda."""
    if isinstance(expr, ast.List):
        return bool(expr.elts) and all(_number(e) for e in expr.elts)
    if isinstance(expr, ast.Call):
        if not (isinstance(expr.func, ast.Name) and expr.func.id == "list"):
            return False
        values = [a.value if isinstance(a, ast.Starred) else a for a in expr.args] + [k.value for k in expr.keywords]
        return len(values) == 1 and _range_call(values[0])
    if isinstance(expr, ast.ListComp) and len(expr.generators) == 1 and _range_call(expr.generators[0].iter):
        bound = {n.id for n in ast.walk(expr.generators[0].target) if isinstance(n, ast.Name)}
        return all(
            not isinstance(n, (ast.Call, ast.Attribute, ast.Subscript, ast.Lambda))
            and not (isinstance(n, ast.Name) and n.id not in bound)
            and not (isinstance(n, ast.BinOp) and isinstance(n.op, ast.MatMult))
            for n in ast.walk(expr.elt)
        )
    return False


def _number(expr: ast.AST) -> bool:
    """A superset of syntax.is_number: an int, float or bool literal, with or without a sign."""
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
        expr = expr.operand
    return isinstance(expr, ast.Constant) and isinstance(expr.value, (int, float))


def _range_call(expr: ast.AST) -> bool:
    return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "range"


def _arithmetic_of(expr: cst.BaseExpression, names: set[str]) -> bool:
    """Arithmetic of number literals and `names` (the integers of a range) only: a Python number."""
    for node in walk(expr):
        if isinstance(node, cst.Name) and node.value not in names:
            return False
        if isinstance(node, (cst.Call, cst.Attribute, cst.Subscript, cst.Lambda)):
            return False
        if isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
            return False  # `["a" * i for i in range(3)]` holds strings: jit rejects them, it does not retrace
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.MatrixMultiply):
            return False
    return True
