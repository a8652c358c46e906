"""JF401 inplace-array-update: `x[idx] = v` on a JAX array becomes `x = x.at[idx].set(v)`."""

from __future__ import annotations

import re

import libcst as cst

from jaxfix.analysis.screen import Screen
from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.diagnostics import Safety

# The `.at[idx]` method that does what each augmented assignment does to the selected elements.
_AT_METHOD = {
    cst.AddAssign: "add",
    cst.SubtractAssign: "subtract",
    cst.MultiplyAssign: "multiply",
    cst.DivideAssign: "divide",
    cst.PowerAssign: "power",
}
_ERROR_EXPECTING = frozenset(
    {"raises", "assertRaises", "assertRaisesRegex", "assertRaisesRegexp", "assertRaisesWithLiteralMatch", "suppress"}
)
_PURE_BUILTINS = frozenset({"len", "int", "float", "abs", "min", "max", "range", "slice", "round", "bool"})


# `]` then `=` or an augmented operator: every item assignment has it (a line continuation may sit between).
_ITEM_ASSIGNMENT = re.compile(r"\][\s\\]*(?:\*\*|//|>>|<<|[-+*/%@&|^])?=(?!=)")

class InplaceArrayUpdate(Codemod):
    """Item assignment on a JAX array: `x[idx] = v` or `x[idx] += v`, which always raises.

    ## What it does
    Finds item assignments (`x[idx] = v`, `x[idx] += v`, `-=`, `*=`, `/=`, `**=`) whose target `x` is a local
    name known to hold a JAX array, and rewrites them into the functional update that returns a new array:
    `x = x.at[idx].set(v)`, `x = x.at[idx].add(v)`, `.subtract`, `.multiply`, `.divide`, `.power`.

    ## Why is this bad?
    JAX arrays are immutable. `x[idx] = v` raises `TypeError: JAX arrays are immutable and do not support
    in-place item assignment`, both eagerly and under `jax.jit`. Code ported from NumPy often does it.

    ## Example
    ```python
    @jax.jit
    def f(v):
        x = jnp.zeros(3)
        x[0] = v
        x[1:] += 1.0
        return x
    ```

    ## Use instead
    ```python
    @jax.jit
    def f(v):
        x = jnp.zeros(3)
        x = x.at[0].set(v)
        x = x.at[1:].add(1.0)
        return x
    ```

    ## Fix safety
    Safe: the original raises for every JAX array, and the rewrite computes what NumPy's in-place update would
    have left in `x`. The index (`x[i, j]`, slices, `...`) keeps its exact source, and comments stay. The fix
    is made only when a rebinding cannot be told apart from changing the array in place, and it reports
    without a fix, saying why, when:
    - another reference may see the array: `x` belongs to an enclosing scope; a binding of `x` may share
      memory with another array (`x = y`, `y[1:]`, `y.T`, `jnp.asarray(y)`, `a = b = ...`); or, before the
      update, `x` is stored in another name, a container, a closure or passed to an unknown function;
    - `x` is a JAX array only by a `jax.Array` annotation in a function that may run untraced (a NumPy array
      passed there is updated in place today; the rewrite would fail on it), or `x` is a parameter that is not
      read after the update (the caller expected the change in place; a rebinding would drop it);
    - an augmented update has an index that may be an array: with a position listed twice, NumPy's
      `x[idx] += v` adds once, `.at[idx].add(v)` adds twice;
    - `x` is not known to hold floating-point numbers and the update is `/=`, or `+=`/`-=`/`*=`/`**=` with a
      value that may not be an integer: NumPy refuses those on integer arrays, `.at[...]` would cast or turn
      the whole array into floats;
    - both the index and the value may have side effects (`x[i] = v` evaluates `v` first, the rewrite `i`);
    - the target is chained (`x[i] = y[j] = v`), nested (`x[i][j] = v`) or unpacked (`x[0], x[1] = a, b`), or
      the operator has no `.at` method (`//=`, `%=`, `@=`, bit operators).
    NumPy casts a value stored into an integer array silently; `.at[...].set` casts it too, with a warning.
    When an index array lists a position twice, `x[idx] = v` keeps the last value in NumPy; `.at[idx].set(v)`
    does so on CPU, but JAX leaves the choice to the backend.

    ## When it stays quiet
    When `x` is not proven to be a JAX array: NumPy arrays, lists, dicts, unannotated parameters, names bound
    by `for`/`with`/`global`/`nonlocal` or rebound to anything else in any branch, attributes such as
    `self.x[i] = v`. Inside `try:` with `except TypeError` (or broader) and inside `with pytest.raises(...)` or
    `assertRaises`, where the TypeError is the point. Code that already uses `x.at[idx].set(v)`.
    """

    code = "JF401"
    name = "inplace-array-update"
    summary = "Item assignment on an immutable JAX array: use `x = x.at[idx].set(v)`"
    fix_safety = Safety.SAFE
    screen = ("jax",)

    @classmethod
    def may_match(cls, text: str) -> bool:
        return "jax" in text and _ITEM_ASSIGNMENT.search(text) is not None

    @classmethod
    def may_match_tree(cls, screen: Screen) -> bool:
        """A finding needs an item assignment whose base name ArrayAnalysis proves a JAX array there."""
        return any(screen.may_hold_array(scope, name) for scope, name in screen.item_assignments())

    VALID = (
        Valid("import numpy as np\n\ndef f():\n    x = np.zeros(3)\n    x[0] = 1.0\n    return x\n"),
        Valid("import jax.numpy as jnp\n\ndef f():\n    x = [0.0, 0.0]\n    x[0] = jnp.ones(())\n    return x\n"),
        Valid("import jax\n\n@jax.jit\ndef f(params, g):\n    params['w'] = params['w'] - g\n    return params\n"),
        Valid("import jax\n\n@jax.jit\ndef f(x):\n    x[0] = 1.0\n    return x\n"),
        Valid("import jax.numpy as jnp\n\ndef f():\n    x = jnp.zeros(3)\n    x = x.at[0].set(1.0)\n    return x\n"),
        Valid(
            "import jax.numpy as jnp\nimport numpy as np\n\ndef f(c):\n    x = jnp.zeros(3)\n    if c:\n"
            "        x = np.zeros(3)\n    x[0] = 1.0\n    return x\n"
        ),
        Valid("import jax.numpy as jnp\n\nclass M:\n    def f(self):\n        self.x[0] = jnp.ones(())\n"),
        Valid(
            "import jax.numpy as jnp\nimport pytest\n\ndef test_immutable():\n    x = jnp.zeros(3)\n"
            "    with pytest.raises(TypeError):\n        x[0] = 1.0\n    try:\n        x[1] += 1.0\n"
            "    except TypeError:\n        pass\n"
        ),
    )
    INVALID = (
        Invalid(
            "import jax.numpy as jnp\n\ndef f(v):\n    x = jnp.zeros(3)\n    x[0] = v  # first\n    return x\n",
            fixed="import jax.numpy as jnp\n\ndef f(v):\n    x = jnp.zeros(3)\n"
            "    x = x.at[0].set(v)  # first\n    return x\n",
            message="JAX arrays are immutable",
        ),
        Invalid(
            "import jax\n\n@jax.jit\ndef f(x: jax.Array):\n    x[1:, ...] += 2\n    return x\n",
            fixed="import jax\n\n@jax.jit\ndef f(x: jax.Array):\n    x = x.at[1:, ...].add(2)\n    return x\n",
            message="x.at[1:, ...].add",
        ),
        Invalid(
            "import jax.numpy as jnp\n\ndef f():\n    x = jnp.ones((2, 2))\n    for i in range(2):\n"
            "        x[i, i] *= 3.0\n        x[i, 0] **= 2\n    return x\n",
            fixed="import jax.numpy as jnp\n\ndef f():\n    x = jnp.ones((2, 2))\n    for i in range(2):\n"
            "        x = x.at[i, i].multiply(3.0)\n        x = x.at[i, 0].power(2)\n    return x\n",
            message="raises TypeError",
        ),
        Invalid(  # a tuple keeps its parentheses: one argument, not three (or none for `()`)
            "import jax.numpy as jnp\n\ndef f(a, b):\n    x = jnp.zeros((2, 3))\n    x[0] = (a, b, a)\n"
            "    x[1, 1:] = (  # empty\n    )\n    return x\n",
            fixed="import jax.numpy as jnp\n\ndef f(a, b):\n    x = jnp.zeros((2, 3))\n    x = x.at[0].set((a, b, a))\n"
            "    x = x.at[1, 1:].set((  # empty\n    ))\n    return x\n",
        ),
        Invalid(
            "import jax\n\n@jax.jit\ndef f(x: jax.Array):\n    x[0] = 1.0\n",
            message="not read after this update",
        ),
        Invalid(
            "import jax.numpy as jnp\n\ndef f():\n    x = jnp.zeros(3)\n    y = x\n    x[0] = 1.0\n    return y\n",
            message="`x` is also referenced on line 5 (`y = x`)",
        ),
        Invalid(
            "import jax.numpy as jnp\n\ndef f(idx):\n    x = jnp.zeros(3)\n    x[idx] += 1.0\n    return x\n",
            message="adds once",
        ),
        Invalid(
            "import jax.numpy as jnp\n\ndef f():\n    x = jnp.zeros((2, 2))\n    x[0][1] = 1.0\n    return x\n",
            message="nested",
        ),
        Invalid(
            "import jax.numpy as jnp\n\ndef f():\n    x = jnp.arange(4)\n    x[0] //= 2\n    return x\n",
            message="no `.at` method",
        ),
        Invalid(
            "import jax.numpy as jnp\n\ndef f():\n    x = jnp.arange(4)\n    x[1] /= 2\n    return x\n",
            message="not known to hold floating-point numbers",
        ),
    )

    def visit_Assign(self, node: cst.Assign) -> None:
        arrays = [(t.target, name) for t in node.targets for name in self._array_bases(t.target)]
        if not arrays or self._error_expected(node):
            return
        target, name = arrays[0]
        simple = len(node.targets) == 1 and _direct_item(node.targets[0].target)
        if not simple:
            if len(node.targets) > 1:
                why = "a chained assignment, which a single rebinding cannot express"
            elif isinstance(target, (cst.Tuple, cst.List)):
                why = "an unpacking assignment; write one `.at[...]` update per element"
            else:
                why = "a nested item assignment (`x[i][j] = v`); write it as one index, `x = x.at[i, j].set(v)`"
            self._report(node, target, name, "set", f"it is {why}")
            return
        subscript = node.targets[0].target
        why = (
            self.context.arrays.rebind_blocker(name, node)
            or _list_index_blocker(subscript)
            or self._order_blocker(subscript, node.value)
        )
        self._report(node, subscript, name, "set", why)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        names = self._array_bases(node.target)
        if not names or self._error_expected(node):
            return
        name = names[0]
        method = _AT_METHOD.get(type(node.operator))
        if not _direct_item(node.target):
            self._report(node, node.target, name, method, "it is a nested item assignment; write it as one index")
            return
        if method is None:
            operator = self.context.code_for(node.operator).strip()
            self._report(node, node.target, name, None, f"there is no `.at` method for `{operator}`")
            return
        why = (
            self.context.arrays.rebind_blocker(name, node)
            or _list_index_blocker(node.target)
            or self._index_blocker(node.target)
            or self._dtype_blocker(node, name, method)
        )
        self._report(node, node.target, name, method, why)

    # ---- matching ------------------------------------------------------------------------------------------

    def _array_bases(self, target: cst.BaseExpression) -> list[cst.Name]:
        """The names proven to hold JAX arrays whose items `target` assigns (`x` in `x[i]`, `x[i][j]`, `x[i], y`)."""
        if isinstance(target, (cst.Tuple, cst.List)):
            return [n for e in target.elements for n in self._array_bases(e.value)]
        if not isinstance(target, cst.Subscript):
            return []
        base = target.value
        while isinstance(base, cst.Subscript):
            base = base.value
        return [base] if isinstance(base, cst.Name) and self.context.arrays.is_array(base) else []

    def _index_blocker(self, subscript: cst.Subscript) -> str | None:
        """An augmented update is exact only when no position can be selected twice."""
        for element in subscript.slice:
            index = element.slice
            if isinstance(index, cst.Slice):
                continue
            value = index.value
            if isinstance(value, cst.Ellipsis) or (isinstance(value, cst.Name) and value.value == "None"):
                continue
            if not self.context.arrays.is_integer(value):
                shown = self.context.code_for(value).strip()
                return (
                    f"the index `{shown}` may be an array that selects a position twice: NumPy's augmented "
                    "assignment then adds once, `.at[...]` would add for every repetition"
                )
        return None

    def _dtype_blocker(self, node: cst.AugAssign, name: cst.Name, method: str) -> str | None:
        """On an integer array NumPy refuses `x[i] /= 2` and `x[i] += 0.5` (same-kind casting), while
        `.at[i].divide` makes the whole array floating-point and `.at[i].add(0.5)` rounds the value."""
        arrays = self.context.arrays
        if arrays.is_inexact(name):
            return None
        if method in ("add", "subtract", "multiply") and arrays.is_integer(node.value):
            return None
        if method == "power" and isinstance(node.value, cst.Integer):
            return None
        operator = self.context.code_for(node.operator).strip()
        return (
            f"`{name.value}` is not known to hold floating-point numbers; on an integer array NumPy refuses "
            f"`{operator}` {'' if method == 'divide' else 'with a non-integer value '}while `.at[...].{method}` "
            f"would {'make the whole array floating-point' if method == 'divide' else 'cast the value'}"
        )

    def _error_expected(self, statement: cst.CSTNode) -> bool:
        """Inside `try: ... except TypeError` or `with pytest.raises(...)`, the TypeError is the point."""
        parents = self.context.parents
        node, parent = statement, parents.get(statement)
        while parent is not None and not isinstance(parent, (cst.FunctionDef, cst.ClassDef)):
            body = node is getattr(parent, "body", None)
            if body and isinstance(parent, (cst.Try, cst.TryStar)) and any(map(_catches_type_error, parent.handlers)):
                return True
            if body and isinstance(parent, cst.With) and any(_expects_error(i.item) for i in parent.items):
                return True
            node, parent = parent, parents.get(parent)
        return False

    def _order_blocker(self, subscript: cst.Subscript, value: cst.BaseExpression) -> str | None:
        """`x[i] = v` evaluates `v` before `i`; `x.at[i].set(v)` evaluates `i` first. That only matters when both
        may have side effects."""
        if self._may_have_effects(value) and any(self._may_have_effects(e) for e in subscript.slice):
            return "both the index and the value may have side effects, and the rewrite would swap their order"
        return None

    def _may_have_effects(self, node: cst.CSTNode) -> bool:
        finder = _EffectFinder(self)
        node.visit(finder)
        return finder.found

    def _is_pure_call(self, call: cst.Call) -> bool:
        callee = self.context.arrays.callee(call)
        if callee is not None:
            return callee.startswith("jax.numpy.") or callee.startswith("jax.lax.") or callee.startswith("jax.nn.")
        if isinstance(call.func, cst.Name) and call.func.value in _PURE_BUILTINS:
            return self.context.names.is_builtin(call.func, call.func.value)
        return False

    # ---- reporting -----------------------------------------------------------------------------------------

    def _report(
        self, statement, target: cst.BaseExpression, name: cst.Name, method: str | None, why: str | None
    ) -> None:
        """One finding; with a fix unless `why` says what stops it. `method` None: an operator without one."""
        x = name.value
        shown_target = _short(self.context.code_for(target).strip())
        index = _short(_index_code(self.context, target)) if _direct_item(target) else "..."
        if "#" in shown_target:  # a comment inside the brackets: too long to quote
            shown_target, index = f"{x}[...]", "..."
        operator = "=" if isinstance(statement, cst.Assign) else self.context.code_for(statement.operator).strip()
        if method is None:
            suggestion = f"`{x} = {x}.at[{index}].set({x}[{index}] {operator[:-1]} ...)`"
        else:
            suggestion = f"`{x} = {x}.at[{index}].{method}(...)`"
        message = (
            f"JAX arrays are immutable: `{shown_target} {operator} ...` raises TypeError. "
            f"Use {suggestion}, which returns the updated array"
        )
        if why is not None:
            self.report(statement, f"{message} (not fixed automatically: {why})")
            return
        replacement = _rewrite(statement, target, name, method)
        self.report(statement, message, self.fix(f"Rewrite as {suggestion}", [(statement, replacement)]))


class _EffectFinder(cst.CSTVisitor):
    def __init__(self, codemod: InplaceArrayUpdate) -> None:
        super().__init__()
        self.codemod = codemod
        self.found = False

    def visit_Call(self, node: cst.Call) -> None:
        if not self.codemod._is_pure_call(node):
            self.found = True

    def visit_Yield(self, node: cst.Yield) -> None:
        self.found = True

    def visit_Await(self, node: cst.Await) -> None:
        self.found = True

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self.found = True

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False  # its body runs later, if at all


def _last_name(expr: cst.BaseExpression) -> str | None:
    if isinstance(expr, cst.Attribute):
        return expr.attr.value
    return expr.value if isinstance(expr, cst.Name) else None


def _catches_type_error(handler) -> bool:
    if handler.type is None:
        return True
    types = [e.value for e in handler.type.elements] if isinstance(handler.type, cst.Tuple) else [handler.type]
    return any(_last_name(t) in ("TypeError", "Exception", "BaseException") for t in types)


def _expects_error(item: cst.BaseExpression) -> bool:
    """`pytest.raises(...)`, `self.assertRaises(...)`, `contextlib.suppress(...)`."""
    return isinstance(item, cst.Call) and (_last_name(item.func) or "") in _ERROR_EXPECTING


def _list_index_blocker(subscript: cst.Subscript) -> str | None:
    """JAX rejects a list as the whole index (`x.at[[0, 2]]`); it wants `jnp.array([0, 2])`."""
    if len(subscript.slice) == 1 and isinstance(subscript.slice[0].slice, cst.Index):
        if isinstance(subscript.slice[0].slice.value, cst.List):
            return "JAX does not accept a list as an index; write the positions as `jnp.array([...])`"
    return None


def _direct_item(target: cst.BaseExpression) -> bool:
    """`x[...]` with `x` a bare name (not `x[i][j]`, `(x, y)[0]` or `self.x[i]`)."""
    return isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name)


def _index_code(context, subscript: cst.Subscript) -> str:
    return context.code_for(subscript.with_changes(value=cst.Name("_"), lpar=[], rpar=[]))[2:-1].strip()


def _short(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _rewrite(statement, subscript: cst.Subscript, name: cst.Name, method: str) -> cst.Assign:
    """`x = x.at[<the original index, untouched>].<method>(<the original value>)`, keeping comments."""
    at = cst.Subscript(
        value=cst.Attribute(cst.Name(name.value), cst.Name("at")),
        slice=subscript.slice,
        lbracket=subscript.lbracket,
        rbracket=subscript.rbracket,
    )
    value = statement.value
    call_whitespace = {}
    if len(getattr(value, "lpar", ())) == 1 and len(getattr(value, "rpar", ())) == 1 and not isinstance(value, cst.Tuple):
        # `x[i] = (a + b)`: the call's own parentheses take over, with what was inside the old ones. A tuple keeps
        # its own: `.set(a, b)` would be two arguments, `.set()` none (found by benchmarks/fuzz.py).
        call_whitespace = {"whitespace_before_args": value.lpar[0].whitespace_after}
        argument = cst.Arg(value.with_changes(lpar=[], rpar=[]), whitespace_after_arg=value.rpar[0].whitespace_before)
    else:
        argument = cst.Arg(value)
    call = cst.Call(func=cst.Attribute(at, cst.Name(method)), args=[argument], **call_whitespace)
    if isinstance(statement, cst.Assign):
        equal = statement.targets[0]
        target = cst.AssignTarget(
            cst.Name(name.value),
            whitespace_before_equal=equal.whitespace_before_equal,
            whitespace_after_equal=equal.whitespace_after_equal,
        )
    else:
        target = cst.AssignTarget(
            cst.Name(name.value),
            whitespace_before_equal=statement.operator.whitespace_before,
            whitespace_after_equal=statement.operator.whitespace_after,
        )
    return cst.Assign(targets=[target], value=call, semicolon=statement.semicolon)
