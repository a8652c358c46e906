"""JF103 while-to-while-loop: a Python `while` whose test is traced, in staged code, becomes `lax.while_loop`."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

import libcst as cst

from jaxfix.analysis.carry import snippet
from jaxfix.analysis.dataflow import LoopFlow, Parameter, body_statements
from jaxfix.analysis.metadata import children
from jaxfix.analysis.screen import Screen, may_carry, may_kind
from jaxfix.analysis.shapes import Category
from jaxfix.analysis.syntax import is_none, mentions, walk
from jaxfix.analysis.traced import REVERSE_MODE, Kind
from jaxfix.codegen import carry_value, loop_function, packed, predicate_function
from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.diagnostics import Safety

_PROBLEM = "`while` on a traced value fails under tracing (TracerBoolConversionError)"
_ORDERING = (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual, cst.Equal, cst.NotEqual)
_CONTAINERS = (
    cst.List, cst.Tuple, cst.Set, cst.Dict, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp,
    cst.SimpleString, cst.FormattedString, cst.ConcatenatedString,
)  # fmt: skip
# lax functions that return Python values, which TracedAnalysis and `is_array_like` count as arrays.
_PYTHON_VALUED = frozenset({"jax.lax.axis_size"})
_LOGICAL = {cst.And: "jax.numpy.logical_and", cst.Or: "jax.numpy.logical_or"}
# Effects that a lax.while_loop body performs at run time, once per iteration, as the Python loop does eagerly.
_RUN_TIME_EFFECTS = frozenset({"jax.debug.print", "jax.debug.callback"})


@dataclass
class _Test:
    """A `while` test taken apart: `expression` is what `cond` returns (`and`/`or`/`not` turned into
    `jnp.logical_*`), `atoms` the parts it combines (comparisons, boolean arrays)."""

    expression: cst.BaseExpression | None = None
    atoms: list[cst.BaseExpression] = field(default_factory=list)
    proven: bool = False  # some part is surely a traced boolean array: the Python loop fails under tracing
    problem: str | None = None  # why `cond` cannot be written
    imports: list = field(default_factory=list)


class WhileToWhileLoop(Codemod):
    """
    ## What it does
    Finds `while` loops inside staged code (a function under `jax.jit`, `jax.vmap`, a `lax.scan` body, ...)
    whose test is a traced value, such as a tolerance test `while err > tol:`, and rewrites them into
    `lax.while_loop` with a named `cond` function (the test) and a named `body` function (one step).

    ## Why is this bad?
    Under `jax.jit` the test of a Python `while` is an abstract tracer with no truth value, so the function
    fails at trace time with `TracerBoolConversionError` (a `ConcretizationTypeError`). The Python loop can
    only run eagerly (`jax.disable_jit()`), dispatching every operation of every iteration on its own: on the
    corpus's Newton case (CPU, JAX 0.10.2) about 20 ms a call, against 8 µs for the rewrite, which compiles
    once in about 0.1 s (`benchmarks/while_eager.py`). `lax.while_loop` evaluates the test inside the
    compiled program, and compiles the body once.

    ## Example
    ```python
    @jax.jit
    def jacobi(a, b):
        x = jnp.zeros_like(b)
        r = b - a @ x
        i = 0
        while jnp.linalg.norm(r) > 1e-5 and i < 100:
            x = x + r / jnp.diag(a)
            r = b - a @ x
            i += 1
        return x
    ```

    ## Use instead
    ```python
    @jax.jit
    def jacobi(a, b):
        x = jnp.zeros_like(b)
        r = b - a @ x
        i = 0
        def cond(carry):
            _, r, i = carry
            return jnp.logical_and(jnp.linalg.norm(r) > 1e-5, i < 100)
        def body(carry):
            x, r, i = carry
            x = x + r / jnp.diag(a)
            r = b - a @ x
            i += 1
            return x, r, i
        x, r, i = jax.lax.while_loop(cond, body, (x, r, i))
        return x
    ```
    The carried variables (assigned in the body and read by the test, by a later step or after the loop)
    keep their names and are unpacked from the carry. `and`, `or` and `not` become `jnp.logical_and`,
    `jnp.logical_or` and `jnp.logical_not`, since Python's operators would ask a tracer for its truth value.
    An existing `lax` import is reused.

    ## Fix safety
    Unsafe. The original cannot run under tracing at all, so there is no traced result to preserve; the rewrite
    computes what the Python loop computes eagerly (under `jax.disable_jit()`), with these differences, each of
    one of two kinds: it **fails loudly** (raises instead of computing, so it cannot go unnoticed) or it **may
    compute different numbers** (which is what `jaxfix apply --verify` and `jaxfix verify` check):
    - **Fails loudly.** Reverse-mode differentiation is lost: `jax.grad` (and `jacrev`, `vjp`,
      `value_and_grad`) of `lax.while_loop` raises ValueError ("Reverse-mode differentiation does not work for
      lax.while_loop"), where `jax.grad` of the Python loop works eagerly. Forward mode (`jax.jvp`, `jacfwd`)
      still works. The rule leaves alone functions that only `jax.grad`-like transformations reach (they run
      eagerly, where the Python loop works) and reports without a fix when this module differentiates a
      function in reverse mode; differentiation from another module is invisible to it.
    - **May compute different numbers.** A counter that starts as a Python int (`i = 0`, `i += 1`) becomes a
      weakly typed traced int32: it wraps at 2**31, `i / n` is computed in float32 instead of float64, and,
      returned, it is an array instead of a Python int. This is allowed only when nothing in the function needs
      it as a Python int (a slice bound, `range(i)`, an index into a list, a shape, an `if`, string
      formatting); otherwise the loop is reported without a fix. A Python float that stays a Python float in
      the loop is refused (lax would compute it in float32 instead of float64).
    - **Same numbers.** `and`/`or` evaluate both sides (`jnp.logical_*` does not short-circuit); each side is a
      comparison or a boolean array, so only the cost differs (a side that reads a JAX array at an out-of-range
      index reads a clamped element, as it would in the original; the other side decides the result).
    - **Fails loudly.** A test that is an array of more than one element (`while x > 0:` on a vector) fails in
      the Python loop too, but one of shape `(1,)` passes there and makes `lax.while_loop` raise at trace time
      ("cond_fun must return a boolean scalar").
    - **May compute different numbers.** A carried Python number (`err = 1.0`) becomes a weakly typed array
      that JAX promotes to the loop's dtype; XLA compiles one loop, so float rounding may differ in the last
      bits and a tolerance test may stop one step earlier or later.
    - **Fails loudly.** A carried array whose shape or dtype changes in a way jaxfix cannot see makes
      `lax.while_loop` raise at trace time (TypeError: "while_loop body function carry input and carry output
      must have equal types").
    - **Same numbers.** `jax.debug.print` and `jax.debug.callback` in the body stay: they run at run time, once
      per iteration, as in the Python loop run eagerly (the corpus case `debug_print_progress` prints the same
      lines). Under `jax.vmap` with a batched test, lax.while_loop runs the body for every element until the
      last one stops, so they also run for elements that have stopped (a callback in a loop of 1 and 3 steps
      over two elements ran 6 times). (JF601 turns a `print` of a traced value into `jax.debug.print`; after
      that fix, this rule rewrites the loop.)

    ## When it stays quiet
    - Loops outside traced code, and in functions that only `jax.grad`, `jax.jvp` or `jax.custom_jvp` trace
      (eager: the Python loop works there).
    - Tests that are static (Python numbers, shapes, `len(...)`, `is None`, static arguments:
      `while n > 1: n //= 2` unrolls at trace time by design) or of unknown kind, and tests that are not
      surely traced arrays (`while queue:` on a Python list works under `jax.jit`).
    - Tests whose traced part comes only from a counter (`i = 0; while i < n:` with a static `n`).

    It reports without a fix, saying what stopped it, when the body has `break`/`continue`/`return`/
    `raise`/`yield`/`global`/`nonlocal`/`del`, a `with` or `try` block, a nested function, I/O (`print`,
    which a `lax.while_loop` body would run once, at trace time), calls to functions not known to be pure,
    stores into outside objects, or a Python `if`/`and`/`not` on a traced value; when the loop has an
    `else:` clause; when a carried variable is not defined before the loop, starts as a static value or
    `None`, changes shape or dtype, or is read by a function defined in the enclosing function; when a Python
    int counter is used as a Python int; when the test uses `in`/`is`, a chained comparison, `:=`, or a
    traced value that is not a boolean; or when this module differentiates the function in reverse mode.
    """

    code = "JF103"
    name = "while-to-while-loop"
    summary = "while-loop on a traced condition in traced code: use lax.while_loop (no reverse-mode gradients)"
    fix_safety = Safety.UNSAFE
    screen = ("while",)

    @classmethod
    def may_match_tree(cls, screen: Screen) -> bool:
        """A finding needs a `while` whose test is not a constant (`while True:`) in a function that
        TracedAnalysis may find traced, and whose kind may be TRACED (`screen.may_kind`: DataflowAnalysis.kind_at
        joins only the bindings that reach the loop, never more than TracedAnalysis's join of them all), with a
        body that may carry a name from one step to the next (`screen.may_carry`: else no state to build)."""
        in_traced_code = getattr(screen, "in_traced_code", None)
        if in_traced_code is not None:
            loops = in_traced_code(ast.While)
        else:  # a Screen without that query: every loop inside a function
            functions = [f for f in ast.walk(screen.tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
            loops = (n for f in functions for n in ast.walk(f) if isinstance(n, ast.While))
        return any(
            not isinstance(loop.test, ast.Constant)
            and (in_traced_code is None or (may_kind(screen, loop.test)[0] and may_carry(screen, loop)))
            for loop in loops
        )

    VALID = (
        # outside traced code: the loop runs eagerly on concrete arrays
        Valid(
            "import jax.numpy as jnp\n\ndef f(x):\n    while jnp.max(jnp.abs(x)) > 1.0:\n"
            "        x = x / 2.0\n    return x\n"
        ),
        # a static test: `n` is a static argument
        Valid(
            "from functools import partial\nimport jax\nimport jax.numpy as jnp\n\n"
            "@partial(jax.jit, static_argnums=1)\ndef f(x, n):\n    while n > 1:\n        x = jnp.sin(x)\n"
            "        n //= 2\n    return x\n"
        ),
        # a Python list: `while queue:` works under jit
        Valid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    queue = [x, x + 1.0]\n"
            "    total = 0.0\n    while queue:\n        total = total + jnp.sum(queue.pop())\n    return total\n"
        ),
        # only jax.grad traces it: eager, and lax.while_loop would break the gradient
        Valid(
            "import jax\nimport jax.numpy as jnp\n\ndef f(x):\n    while jnp.abs(x) > 0.1:\n        x = x / 2.0\n"
            "    return x\n\ndf = jax.grad(f)\n"
        ),
        # the test is traced only through a counter, which stays a Python int: a static loop
        Valid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    i = 0\n    while i < 5:\n"
            "        x = jnp.sin(x)\n        i += 1\n    return x\n"
        ),
    )
    INVALID = (
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    while jnp.max(jnp.abs(x)) > 1.0:\n"
            "        x = x / 2.0\n    return x\n",
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    def cond(x):\n"
            "        return jnp.max(jnp.abs(x)) > 1.0\n    def body(x):\n        return x / 2.0\n"
            "    x = jax.lax.while_loop(cond, body, x)\n    return x\n",
            message="reverse-mode",
        ),
        Invalid(
            "import jax\nimport jax.numpy as jnp\nfrom jax import lax\n\n@jax.jit\ndef f(x, tol):\n    i = 0\n"
            "    err = jnp.abs(x)\n    while err > tol and i < 50:\n        x = jnp.cos(x)\n"
            "        err = jnp.abs(x - jnp.cos(x))\n        i = i + 1\n    return x, i\n",
            "import jax\nimport jax.numpy as jnp\nfrom jax import lax\n\n@jax.jit\ndef f(x, tol):\n    i = 0\n"
            "    err = jnp.abs(x)\n    def cond(carry):\n        _, i, err = carry\n"
            "        return jnp.logical_and(err > tol, i < 50)\n    def body(carry):\n        x, i, err = carry\n"
            "        x = jnp.cos(x)\n        err = jnp.abs(x - jnp.cos(x))\n        i = i + 1\n        return x, i, err\n"
            "    x, i, err = lax.while_loop(cond, body, (x, i, err))\n    return x, i\n",
            message="traced int32",
        ),
        # jax.debug.print runs at every iteration of lax.while_loop, at run time
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    while jnp.max(jnp.abs(x)) > 1.0:\n"
            "        x = x / 2.0\n        jax.debug.print('x = {}', x)\n    return x\n",
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    def cond(x):\n"
            "        return jnp.max(jnp.abs(x)) > 1.0\n    def body(x):\n        x = x / 2.0\n"
            "        jax.debug.print('x = {}', x)\n        return x\n"
            "    x = jax.lax.while_loop(cond, body, x)\n    return x\n",
            message="reverse-mode",
        ),
        # `print` would run once, at trace time
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    while jnp.max(jnp.abs(x)) > 1.0:\n"
            "        x = x / 2.0\n        print('x =', x)\n    return x\n",
            None,
            message="does I/O (`print`)",
        ),
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    while jnp.sum(x) > 1.0:\n"
            "        x = x * 0.5\n        if jnp.any(x < 0.1):\n            break\n    return x\n",
            None,
            message="`break`",
        ),
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    i = 1\n    while jnp.sum(x[:i]) < 10.0:\n"
            "        i += 1\n    return x[:i]\n",
            None,
            message="slice",
        ),
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    def scaled():\n        return 2.0 * x\n"
            "    while jnp.sum(x) > 1.0:\n        x = scaled() / 4.0\n    return x\n",
            None,
            message="read by a function defined outside the loop",
        ),
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    while jnp.abs(x) > 1.0:\n"
            "        x = x / 2.0\n    return x\n\ndf = jax.grad(f)\n",
            None,
            message="jax.grad",
        ),
    )

    def __init__(self, context) -> None:
        super().__init__(context)

    # ---- matching ------------------------------------------------------------------------------------------

    def visit_While(self, node: cst.While) -> None:
        traced = self.context.traced
        if not traced.in_traced_code(node):
            return self.decline_untraced(node.test)
        function = traced.enclosing_function(node)
        if not traced.staged(function):
            # only jax.grad-like transformations reach it: they run it eagerly, where the loop works
            return self.decline(node.test, "only jax.grad-like transformations reach this function: they run it eagerly, where the loop works")
        dataflow = self.context.dataflow
        test_kind = dataflow.kind_at(node, node.test)
        if test_kind is not Kind.TRACED:
            # with the bindings that reach the loop, not every binding in the function
            return self.decline(node.test, f"the test is not traced here ({test_kind.name.lower()}): the Python loop runs at trace time")
        flow = dataflow.loop(node)
        if not flow.carried:
            return self.decline(node.test, "nothing is carried from one step to the next: no lax.while_loop state to build")
        carry = self.context.carry
        counters = carry.static_numbers(node, flow)
        if carry.kind_assuming(node.test, function, {c: Kind.STATIC for c in counters}) is not Kind.TRACED:
            # traced only through a counter that stays a Python int: a static loop
            return self.decline(node.test, "traced only through a counter that stays a Python int: the loop runs at trace time")
        test = self._test(node.test, flow)
        if not test.proven:
            # perhaps a Python list or a Python bool: the loop may well work
            return self.decline(node.test, "no part of the test is proven to be a traced boolean array (it may be a Python value, and the loop may work)")
        reason = test.problem or self._blocker(node, flow, counters, test)
        if reason is not None:
            self.report(node.test, f"{_PROBLEM}; not rewritten to lax.while_loop: {reason}")
            return
        carried = ", ".join(f"`{name}`" for name in flow.carried)
        message = (
            f"{_PROBLEM}; lax.while_loop runs it with a traced test (carrying {carried}), but jax.grad cannot "
            "differentiate it (no reverse-mode gradients)"
        )
        if counters:
            listed = ", ".join(f"`{name}`" for name in counters)
            message += f"; the Python int {listed} becomes a traced int32"
        message += "; unsafe: floats may round differently in the last bits, so a tolerance test may stop a step sooner or later"
        self.report(node.test, message, self._fix(node, flow, test))

    # ---- the test ------------------------------------------------------------------------------------------

    def _test(self, test: cst.BaseExpression, flow: LoopFlow) -> _Test:
        result = _Test()
        if any(isinstance(n, cst.NamedExpr) for n in walk(test)):
            result.problem = "the test assigns with `:=`"
        result.expression = self._convert(test, flow, result)
        return result

    def _convert(self, expr: cst.BaseExpression, flow: LoopFlow, result: _Test):
        """`expr` as `cond` returns it; notes in `result` what is proven and what stops the rewrite."""
        if isinstance(expr, cst.BooleanOperation):
            function, needed = self.context.names.expression_for(_LOGICAL[type(expr.operator)])
            result.imports.append(needed)
            left = self._convert(expr.left, flow, result)
            right = self._convert(expr.right, flow, result)
            return cst.Call(func=function, args=[cst.Arg(left), cst.Arg(right)])
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
            function, needed = self.context.names.expression_for("jax.numpy.logical_not")
            result.imports.append(needed)
            return cst.Call(func=function, args=[cst.Arg(self._convert(expr.expression, flow, result))])
        self._atom(expr, flow, result)
        result.atoms.append(expr)
        bare = expr.with_changes(lpar=(), rpar=()) if expr.lpar else expr
        # `(a > b) and c` → `logical_and(a > b, c)`; a test written over several lines keeps its parentheses
        return bare if "\n" not in self.context.code_for(bare) else expr

    def _atom(self, expr: cst.BaseExpression, flow: LoopFlow, result: _Test) -> None:
        """Whether one operand of the test's `and`/`or`/`not` is a boolean `cond` may return, and whether it
        is surely a traced array (whose truth value the Python loop asks for, and fails)."""
        loop = flow.loop
        kind = self.context.dataflow.kind_at(loop, expr)
        shown = snippet(self.context.code_for(expr))

        def problem(reason: str) -> None:
            result.problem = result.problem or reason

        if isinstance(expr, cst.Comparison):
            operators = [c.operator for c in expr.comparisons]
            operands = [expr.left, *(c.comparator for c in expr.comparisons)]
            if kind is Kind.TRACED and any(self._surely_array(o, loop) for o in operands):
                result.proven = True
            if not all(isinstance(op, _ORDERING) for op in operators):
                carried = any(mentions(expr, name) for name in flow.carried)
                if kind is not Kind.STATIC or carried:
                    problem(f"the test uses `in` or `is` on a traced value (`{shown}`)")
            elif len(operators) > 1 and kind is not Kind.STATIC:
                problem(f"the test is a chained comparison (`{shown}`); write it with `and`")
            elif any(isinstance(o, _CONTAINERS) or is_none(o) for o in operands) and kind is not Kind.STATIC:
                problem(f"the test compares with a container, string or None (`{shown}`)")
            elif kind is Kind.UNKNOWN:
                problem(f"the test reads a value not known to be traced or static (`{shown}`)")
        elif kind is Kind.TRACED and self._surely_array(expr, loop):
            result.proven = True  # bool() of a traced array fails
            if self.context.shapes.category(expr) is not Category.BOOL:
                problem(f"the test `{shown}` is not known to be a boolean; compare it (`{shown} != 0`)")
        elif not (isinstance(expr, cst.Name) and expr.value in ("True", "False")):
            problem(f"the test reads `{shown}`, which is not known to be a boolean array")
        if kind is Kind.TRACED:
            rank = self.context.shapes.rank(expr)
            if rank is not None and rank > 0:
                problem(
                    f"the test `{shown}` is an array of rank {rank}; lax.while_loop needs a scalar "
                    "(`jnp.all(...)` or `jnp.any(...)`)"
                )

    def _surely_array(self, expr: cst.BaseExpression, loop: cst.While, seen: frozenset[str] = frozenset()) -> bool:
        """Traced and surely a JAX array (not a Python value that the traced analysis over-approximates, such
        as `lax.axis_size(...)`): a JAX computation, or a traced argument of the staged function."""
        dataflow = self.context.dataflow
        if dataflow.kind_at(loop, expr) is not Kind.TRACED:
            return False
        if isinstance(expr, cst.Call):
            return self.context.names.callee(expr) not in _PYTHON_VALUED and dataflow.is_array_like(expr)
        if isinstance(expr, cst.BinaryOperation):
            return self._surely_array(expr.left, loop, seen) or self._surely_array(expr.right, loop, seen)
        if isinstance(expr, (cst.UnaryOperation, cst.NamedExpr)):
            inner = expr.expression if isinstance(expr, cst.UnaryOperation) else expr.value
            return self._surely_array(inner, loop, seen)
        if isinstance(expr, (cst.Subscript, cst.Attribute)):
            return self._surely_array(expr.value, loop, seen)  # `x[0]`, `x.T`: of an array, an array
        if isinstance(expr, cst.Comparison):
            operands = [expr.left, *(c.comparator for c in expr.comparisons)]
            return any(self._surely_array(o, loop, seen) for o in operands)
        if isinstance(expr, cst.Name) and expr.value not in seen:
            # a traced argument of the staged function, or a name bound to an array computation
            traced = self.context.traced
            function = traced.enclosing_function(loop)
            flow = dataflow.flow(dataflow.enclosing_function(loop))
            for source in flow.reaching(loop, expr.value):
                if isinstance(source, Parameter):
                    if traced.param_kind(function, expr.value) is Kind.TRACED:
                        return True
                elif isinstance(source, cst.BaseExpression):
                    if self._surely_array(source, loop, seen | {expr.value}):
                        return True
        return False

    # ---- what stops the rewrite ----------------------------------------------------------------------------

    def _blocker(self, loop: cst.While, flow: LoopFlow, counters: list[str], test: _Test) -> str | None:
        traced = self.context.traced
        dataflow = self.context.dataflow
        function = traced.enclosing_function(loop)
        reverse = sorted(traced.transforms(function) & REVERSE_MODE)
        if reverse:
            return (
                f"this module differentiates the function with `{reverse[0]}`, and lax.while_loop has no "
                "reverse-mode derivative"
            )
        if loop.orelse is not None:
            return "the loop has an `else:` clause"
        impurity = dataflow.impurity(loop, flow, run_time_effects=_RUN_TIME_EFFECTS)
        if impurity is not None:
            return f"the body {impurity.reason}"
        for call in (n for n in walk(loop.test) if isinstance(n, cst.Call)):
            blocker = dataflow.call_blocker(call, frozenset())
            if blocker is not None:
                return f"the test {blocker.reason}"
        statements = body_statements(function.body) if isinstance(function, cst.FunctionDef) else ()
        reason = self.context.carry.blocker(loop, flow, construct="lax.while_loop", static_ints=True)
        if reason is not None:
            return reason
        branch = self._traced_branch(loop)
        if branch is not None:
            return branch
        if counters:
            returns = [n.value for s in statements for n in walk(s) if isinstance(n, cst.Return) and n.value]
            concrete = dataflow.concrete_use(loop, counters, also=statements, consumed=[*test.atoms, *returns])
            if concrete is not None:
                listed = ", ".join(f"`{name}`" for name in counters)
                return f"the Python int {listed} would become a traced int32, but the function {concrete.reason}"
        return None

    def _traced_branch(self, loop: cst.While) -> str | None:
        """A Python `if`/`while`/`and`/`or`/`not`/conditional expression/`assert` in the body that asks a
        traced value for its truth: it fails in the loop function as it fails in the original."""
        kind = self.context.traced.kind
        code = self.context.code_for
        for stmt in body_statements(loop.body):
            for node in walk(stmt):
                if isinstance(node, (cst.If, cst.While, cst.IfExp, cst.Assert)) and kind(node.test) is Kind.TRACED:
                    what = {cst.If: "`if`", cst.While: "`while`", cst.IfExp: "`... if ... else ...`"}.get(
                        type(node), "`assert`"
                    )
                    return f"the body tests a traced value with a Python {what} (`{snippet(code(node.test))}`)"
                if isinstance(node, cst.BooleanOperation) and kind(node) is Kind.TRACED:
                    return f"the body uses `and`/`or` on a traced value (`{snippet(code(node))}`)"
                if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
                    if kind(node.expression) is Kind.TRACED:
                        return f"the body uses `not` on a traced value (`{snippet(code(node))}`)"
        return None

    # ---- the fix -------------------------------------------------------------------------------------------

    def _fix(self, loop: cst.While, flow: LoopFlow, test: _Test):
        code = self.context.code_for
        carried = list(flow.carried)
        names = self.context.fresh_names
        cond_name = names.take("cond", "cond_fun", "keep_going")
        body_name = names.take("body", "body_fun", "step")
        carry_param = None if len(carried) == 1 else names.take("carry", "state", "loop_carry")
        header = None
        body_loop = loop
        if isinstance(loop.body, cst.IndentedBlock):
            # A comment after `while test:` is about the test: it moves to `def cond(...):`.
            header = loop.body.header
            body_loop = loop.with_changes(body=loop.body.with_changes(header=cst.TrailingWhitespace()))
        reads = [name for name in carried if mentions(loop.test, name)]
        # Comments inside a test written over several lines that the conversion drops: above the `return`.
        kept = {id(n) for n in walk(test.expression) if isinstance(n, cst.Comment)}
        comments = [cst.EmptyLine(comment=n) for n in _in_order(loop.test) if isinstance(n, cst.Comment) and id(n) not in kept]
        cond = predicate_function(
            comments=comments,
            name=cond_name,
            carried=carried,
            carry_param=carry_param,
            test=test.expression,
            reads=reads,
            header=header,
            leading_lines=loop.leading_lines,
        )
        body = loop_function(
            body_loop,
            name=body_name,
            params=[carried[0] if carry_param is None else carry_param],
            carried=carried,
            carry_param=carry_param,
        ).with_changes(leading_lines=())
        while_loop, needed = self.context.names.expression_for("jax.lax.while_loop")
        call = f"{packed(carried)} = {code(while_loop)}({cond_name}, {body_name}, {carry_value(carried)})\n"
        imports = [spec for spec in [*test.imports, needed] if spec is not None]
        return self.fix(
            "rewrite the loop with lax.while_loop",
            [(loop, cst.FlattenSentinel([cond, body, cst.parse_statement(call)]))],
            add_imports=list(dict.fromkeys(imports)),
        )



def _in_order(node: cst.CSTNode):
    """Every node under `node` in source order (`walk` visits the last child first)."""
    yield node
    for child in children(node):
        yield from _in_order(child)
