"""JF401 inplace-array-update: `x[idx] = v` on a JAX array becomes `x = x.at[idx].set(v)`."""

from __future__ import annotations

import ast
import re

import libcst as cst

from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.diagnostics import Diagnostic, Fix, Safety
from jaxfix.facts.knowledge.jax import EFFECT_FREE_NAMESPACES
from jaxfix.facts.module import FileFacts

# The `.at[idx]` method that does what each augmented assignment does to the selected elements.
_AT_METHOD = {ast.Add: "add", ast.Sub: "subtract", ast.Mult: "multiply", ast.Div: "divide", ast.Pow: "power"}
_OPERATOR = {
    ast.Add: "+=", ast.Sub: "-=", ast.Mult: "*=", ast.Div: "/=", ast.FloorDiv: "//=", ast.Mod: "%=", ast.Pow: "**=",
    ast.MatMult: "@=", ast.BitAnd: "&=", ast.BitOr: "|=", ast.BitXor: "^=", ast.LShift: "<<=", ast.RShift: ">>=",
}  # fmt: skip
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

    looks_at = ("Assign", "AugAssign")

    @classmethod
    def check(cls, facts: FileFacts) -> list[Diagnostic]:
        """A finding at each item assignment whose base name is proven to hold a JAX array (facts/values.py),
        outside code that expects the TypeError; fixed where rebinding the name does what NumPy's in-place
        update would (`Values.rebind_blocker`) and nothing else stops the rewrite."""
        if not any(type(node.ctx) is ast.Store for node in facts.binder.nodes_of(ast.Subscript)):
            return []  # no item is set anywhere
        checking = _Check(cls, facts)
        return [found for found in map(checking.statement, _statements(facts)) if found is not None]

    @classmethod
    def fix_finding(cls, finding: Diagnostic, bridge) -> Fix | None:
        """`x = x.at[<the original index>].<method>(<the original value>)` in place of the statement, on LibCST."""
        statement, method = finding.plan
        small = bridge.cst_of(statement)
        if isinstance(small, cst.Assign):
            subscript = small.targets[0].target
        elif isinstance(small, cst.AugAssign):
            subscript = small.target
        else:
            return None
        if not (isinstance(subscript, cst.Subscript) and isinstance(subscript.value, cst.Name)):
            return None
        replacement = _rewrite(small, subscript, subscript.value, method)
        return Fix(cls.fix_safety, finding.fix.description, ((small, replacement),))


def _statements(facts: FileFacts) -> list[ast.stmt]:
    """Every assignment and augmented assignment, in the order of the text."""
    found = [*facts.binder.nodes_of(ast.Assign), *facts.binder.nodes_of(ast.AugAssign)]
    return sorted(found, key=lambda node: (node.lineno, node.col_offset))


class _Check:
    """One statement's finding: which name it updates, why the rewrite is stopped, the message and the plan."""

    def __init__(self, rule: type[InplaceArrayUpdate], facts: FileFacts) -> None:
        self.rule, self.facts = rule, facts
        self.values = facts.values
        self.positions = facts.positions

    def statement(self, node: ast.stmt) -> Diagnostic | None:
        if type(node) is ast.Assign:
            return self._assign(node)
        return self._aug_assign(node)

    def _assign(self, node: ast.Assign) -> Diagnostic | None:
        arrays = [(t, name) for t in node.targets for name in self._array_bases(t)]
        if not arrays or self._error_expected(node):
            return None
        target, name = arrays[0]
        simple = len(node.targets) == 1 and _direct_item(node.targets[0])
        if not simple:
            if len(node.targets) > 1:
                why = "a chained assignment, which a single rebinding cannot express"
            elif type(target) in (ast.Tuple, ast.List):
                why = "an unpacking assignment; write one `.at[...]` update per element"
            else:
                why = "a nested item assignment (`x[i][j] = v`); write it as one index, `x = x.at[i, j].set(v)`"
            return self._report(node, target, name, "set", f"it is {why}")
        subscript = node.targets[0]
        why = (
            self.values.rebind_blocker(name, node)
            or _list_index_blocker(subscript)
            or self._order_blocker(subscript, node.value)
        )
        return self._report(node, subscript, name, "set", why)

    def _aug_assign(self, node: ast.AugAssign) -> Diagnostic | None:
        names = self._array_bases(node.target)
        if not names or self._error_expected(node):
            return None
        name = names[0]
        method = _AT_METHOD.get(type(node.op))
        if not _direct_item(node.target):
            return self._report(node, node.target, name, method, "it is a nested item assignment; write it as one index")
        if method is None:
            return self._report(node, node.target, name, None, f"there is no `.at` method for `{_OPERATOR[type(node.op)]}`")
        why = (
            self.values.rebind_blocker(name, node)
            or _list_index_blocker(node.target)
            or self._index_blocker(node.target)
            or self._dtype_blocker(node, name, method)
        )
        return self._report(node, node.target, name, method, why)

    # ---- matching ------------------------------------------------------------------------------------------

    def _array_bases(self, target: ast.expr) -> list[ast.Name]:
        """The names proven to hold JAX arrays whose items `target` assigns (`x` in `x[i]`, `x[i][j]`, `x[i], y`)."""
        if type(target) in (ast.Tuple, ast.List):
            return [n for e in target.elts for n in self._array_bases(e.value if type(e) is ast.Starred else e)]
        if type(target) is not ast.Subscript:
            return []
        base = target.value
        while type(base) is ast.Subscript:
            base = base.value
        return [base] if type(base) is ast.Name and self.values.is_array(base) else []

    def _index_blocker(self, subscript: ast.Subscript) -> str | None:
        """An augmented update is exact only when no position can be selected twice."""
        for index in _elements(self.positions, subscript):
            if type(index) is ast.Slice:
                continue
            if type(index) is ast.Constant and (index.value is Ellipsis or index.value is None):
                continue
            if not self.values.is_integer(index):
                shown = self.positions.with_parentheses(index, subscript).strip()
                return (
                    f"the index `{shown}` may be an array that selects a position twice: NumPy's augmented "
                    "assignment then adds once, `.at[...]` would add for every repetition"
                )
        return None

    def _dtype_blocker(self, node: ast.AugAssign, name: ast.Name, method: str) -> str | None:
        """On an integer array NumPy refuses `x[i] /= 2` and `x[i] += 0.5` (same-kind casting), while
        `.at[i].divide` makes the whole array floating-point and `.at[i].add(0.5)` rounds the value."""
        values = self.values
        if values.is_inexact(name):
            return None
        if method in ("add", "subtract", "multiply") and values.is_integer(node.value):
            return None
        if method == "power" and type(node.value) is ast.Constant and type(node.value.value) is int:
            return None
        operator = _OPERATOR[type(node.op)]
        return (
            f"`{name.id}` is not known to hold floating-point numbers; on an integer array NumPy refuses "
            f"`{operator}` {'' if method == 'divide' else 'with a non-integer value '}while `.at[...].{method}` "
            f"would {'make the whole array floating-point' if method == 'divide' else 'cast the value'}"
        )

    def _error_expected(self, statement: ast.stmt) -> bool:
        """Inside `try: ... except TypeError` or `with pytest.raises(...)`, the TypeError is the point."""
        parents = self.facts.binder.parents
        node, parent = statement, parents.get(statement)
        while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = any(s is node for s in getattr(parent, "body", ()) or ())
            if body and type(parent) in _TRY and any(map(_catches_type_error, parent.handlers)):
                return True
            if body and type(parent) in (ast.With, ast.AsyncWith) and any(_expects_error(i.context_expr) for i in parent.items):
                return True
            node, parent = parent, parents.get(parent)
        return False

    def _order_blocker(self, subscript: ast.Subscript, value: ast.expr) -> str | None:
        """`x[i] = v` evaluates `v` before `i`; `x.at[i].set(v)` evaluates `i` first. That only matters when both
        may have side effects."""
        if self._may_have_effects(value) and any(self._may_have_effects(e) for e in _elements(self.positions, subscript)):
            return "both the index and the value may have side effects, and the rewrite would swap their order"
        return None

    def _may_have_effects(self, node: ast.AST) -> bool:
        stack = [node]
        while stack:
            current = stack.pop()
            kind = type(current)
            if kind is ast.Lambda:
                continue  # its body runs later, if at all
            if kind is ast.Call and not self._is_pure_call(current):
                return True
            if kind in (ast.Yield, ast.YieldFrom, ast.Await, ast.NamedExpr):
                return True
            stack.extend(ast.iter_child_nodes(current))
        return False

    def _is_pure_call(self, call: ast.Call) -> bool:
        binder = self.facts.binder
        callee = binder.callee(call)
        if callee is not None:
            return callee.startswith(EFFECT_FREE_NAMESPACES)
        if type(call.func) is ast.Name and call.func.id in _PURE_BUILTINS:
            return binder.is_builtin(call.func, call.func.id)
        return False

    # ---- reporting -----------------------------------------------------------------------------------------

    def _report(self, statement: ast.stmt, target: ast.expr, name: ast.Name, method: str | None, why: str | None):
        """One finding; with a fix unless `why` says what stops it. `method` None: an operator without one."""
        x = name.id
        positions = self.positions
        shown_target = _short(positions.with_parentheses(target, statement).strip())
        index = _short(_index_code(positions, target)) if _direct_item(target) else "..."
        if "#" in shown_target:  # a comment inside the brackets: too long to quote
            shown_target, index = f"{x}[...]", "..."
        operator = "=" if type(statement) is ast.Assign else _OPERATOR[type(statement.op)]
        if method is None:
            suggestion = f"`{x} = {x}.at[{index}].set({x}[{index}] {operator[:-1]} ...)`"
        else:
            suggestion = f"`{x} = {x}.at[{index}].{method}(...)`"
        message = (
            f"JAX arrays are immutable: `{shown_target} {operator} ...` raises TypeError. "
            f"Use {suggestion}, which returns the updated array"
        )
        if why is not None:
            return self.rule.finding(self.facts, statement, f"{message} (not fixed automatically: {why})")
        return self.rule.finding(
            self.facts, statement, message, description=f"Rewrite as {suggestion}", plan=(statement, method)
        )


_TRY = (ast.Try, *((ast.TryStar,) if hasattr(ast, "TryStar") else ()))


def _elements(positions, subscript: ast.Subscript) -> list[ast.expr]:
    """The index's elements as LibCST's subscript holds them: `i, j` of `x[i, j]` (a tuple in `ast`), but the
    one tuple of `x[(i, j)]`."""
    index = subscript.slice
    if type(index) is ast.Tuple and index.elts and not positions.segment(index).startswith("("):
        return list(index.elts)
    return [index]


def _last_name(expr: ast.expr | None) -> str | None:
    if type(expr) is ast.Attribute:
        return expr.attr
    return expr.id if type(expr) is ast.Name else None


def _catches_type_error(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    types = handler.type.elts if type(handler.type) is ast.Tuple else [handler.type]
    return any(_last_name(t) in ("TypeError", "Exception", "BaseException") for t in types)


def _expects_error(item: ast.expr) -> bool:
    """`pytest.raises(...)`, `self.assertRaises(...)`, `contextlib.suppress(...)`."""
    return type(item) is ast.Call and (_last_name(item.func) or "") in _ERROR_EXPECTING


def _list_index_blocker(subscript: ast.Subscript) -> str | None:
    """JAX rejects a list as the whole index (`x.at[[0, 2]]`); it wants `jnp.array([0, 2])`."""
    if type(subscript.slice) is ast.List:
        return "JAX does not accept a list as an index; write the positions as `jnp.array([...])`"
    return None


def _direct_item(target: ast.expr) -> bool:
    """`x[...]` with `x` a bare name (not `x[i][j]`, `(x, y)[0]` or `self.x[i]`)."""
    return type(target) is ast.Subscript and type(target.value) is ast.Name


def _index_code(positions, subscript: ast.Subscript) -> str:
    """The source between the brackets of `x[...]`, comments and all."""
    whole = positions.segment(subscript)
    after = whole[len(positions.segment(subscript.value)):]
    return after[after.index("[") + 1 : -1].strip()


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
