"""JF103 while-to-while-loop: a Python `while` whose test is traced, in staged code, becomes `lax.while_loop`."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

import libcst as cst

from jaxfix.codegen import carry_value, loop_function, packed, predicate_function
from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.diagnostics import Diagnostic, Fix, ImportSpec, Safety, spelled_with_import
from jaxfix.facts.carry import snippet
from jaxfix.facts.flow import Parameter, walk
from jaxfix.facts.knowledge.tables import REVERSE_MODE
from jaxfix.facts.loops import LoopFlow
from jaxfix.facts.module import FileFacts, NameSupply, spelled_names
from jaxfix.facts.shapes import Category
from jaxfix.facts.traced import Kind

_PROBLEM = "`while` on a traced value fails under tracing (TracerBoolConversionError)"
_ORDERING = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)
_CONTAINERS = (
    ast.List, ast.Tuple, ast.Set, ast.Dict, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.JoinedStr,
)  # fmt: skip  (and string literals: `_container`)
# lax functions that return Python values, which the traced fact and `is_array_like` count as arrays.
_PYTHON_VALUED = frozenset({"jax.lax.axis_size"})
_LOGICAL = {ast.And: "jax.numpy.logical_and", ast.Or: "jax.numpy.logical_or"}
_CST_LOGICAL = {cst.And: "jax.numpy.logical_and", cst.Or: "jax.numpy.logical_or"}
# Effects that a lax.while_loop body performs at run time, once per iteration, as the Python loop does eagerly.
_RUN_TIME_EFFECTS = frozenset({"jax.debug.print", "jax.debug.callback"})


@dataclass
class _Test:
    """A `while` test taken apart: `atoms` the parts its `and`/`or`/`not` combine (comparisons, boolean arrays),
    which `cond` returns combined with `jnp.logical_*`."""

    atoms: list[ast.expr] = field(default_factory=list)
    proven: bool = False  # some part is surely a traced boolean array: the Python loop fails under tracing
    problem: str | None = None  # why `cond` cannot be written



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

    looks_at = ("While",)  # it judges each `while` loop

    @classmethod
    def check(cls, facts: FileFacts) -> list[Diagnostic]:
        """Each `while` in staged code whose test is a traced boolean array: rewritten to lax.while_loop where the
        loop's carry and body allow it, else reported saying what stopped it."""
        found = []
        for loop in sorted(facts.binder.nodes_of(ast.While), key=lambda n: (n.lineno, n.col_offset)):
            finding = _Judgement(cls, facts, loop).finding()
            if finding is not None:
                found.append(finding)
        return found

    @classmethod
    def fix_finding(cls, finding: Diagnostic, bridge) -> Fix | None:
        """`cond` (the test, with `and`/`or`/`not` as `jnp.logical_*`) and `body` (one step) as named local
        functions, and the loop as one `lax.while_loop` call."""
        plan: _Plan = finding.plan
        loop = bridge.cst_of(plan.loop)
        if not isinstance(loop, cst.While):
            return None
        code = bridge.module.code_for_node
        carried = list(plan.carried)
        names = plan.names
        cond_name = names.take("cond", "cond_fun", "keep_going")
        body_name = names.take("body", "body_fun", "step")
        carry_param = None if len(carried) == 1 else names.take("carry", "state", "loop_carry")
        imports: list[ImportSpec | None] = []
        expression = _converted(loop.test, plan.logical, imports, code)
        header = None
        body_loop = loop
        if isinstance(loop.body, cst.IndentedBlock):
            # A comment after `while test:` is about the test: it moves to `def cond(...):`.
            header = loop.body.header
            body_loop = loop.with_changes(body=loop.body.with_changes(header=cst.TrailingWhitespace()))
        # Comments inside a test written over several lines that the conversion drops: above the `return`.
        kept = {id(n) for n in _in_order(expression) if isinstance(n, cst.Comment)}
        comments = [cst.EmptyLine(comment=n) for n in _in_order(loop.test) if isinstance(n, cst.Comment) and id(n) not in kept]
        cond = predicate_function(
            comments=comments,
            name=cond_name,
            carried=carried,
            carry_param=carry_param,
            test=expression,
            reads=list(plan.reads),
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
        while_loop, needed = plan.while_loop
        call = f"{packed(carried)} = {while_loop}({cond_name}, {body_name}, {carry_value(carried)})\n"
        added = tuple(dict.fromkeys(spec for spec in [*imports, needed] if spec is not None))
        changes = ((loop, cst.FlattenSentinel([cond, body, cst.parse_statement(call)])),)
        return Fix(finding.fix.safety, finding.fix.description, changes, added)


@dataclass(frozen=True)
class _Plan:
    loop: ast.While
    carried: tuple[str, ...]
    reads: tuple[str, ...]  # the carried names the test reads
    while_loop: tuple[str, ImportSpec | None]  # how `jax.lax.while_loop` is spelled here, and the import it needs
    logical: dict  # the same for jnp.logical_and, logical_or and logical_not, by qualified name
    names: NameSupply


class _Judgement:
    """JF103's decision on one `while` loop: a finding, or a decline that `jaxfix explain` shows."""

    def __init__(self, rule: type[WhileToWhileLoop], facts: FileFacts, loop: ast.While) -> None:
        self.rule, self.facts, self.loop = rule, facts, loop
        self.function = facts.traced.enclosing_function(loop)

    def decline(self, reason: str) -> None:
        self.facts.decline(self.rule.code, self.loop.test, reason)

    def kind_at(self, expr: ast.AST) -> Kind:
        return self.facts.carry.kind_at(self.loop, expr)

    def finding(self) -> Diagnostic | None:
        rule, facts, node = self.rule, self.facts, self.loop
        traced = facts.traced
        if not traced.in_traced_code(node):
            return facts.decline_untraced(rule.code, node.test)
        function = self.function
        if not traced.staged(function):
            # only jax.grad-like transformations reach it: they run it eagerly, where the loop works
            return self.decline("only jax.grad-like transformations reach this function: they run it eagerly, where the loop works")
        test_kind = self.kind_at(node.test)
        if test_kind is not Kind.TRACED:
            # with the bindings that reach the loop, not every binding in the function
            return self.decline(f"the test is not traced here ({test_kind.name.lower()}): the Python loop runs at trace time")
        flow = facts.loop(node)
        if not flow.carried:
            return self.decline("nothing is carried from one step to the next: no lax.while_loop state to build")
        carry = facts.carry
        counters = carry.static_numbers(node, flow)
        if carry.kind_assuming(node.test, function, {c: Kind.STATIC for c in counters}) is not Kind.TRACED:
            # traced only through a counter that stays a Python int: a static loop
            return self.decline("traced only through a counter that stays a Python int: the loop runs at trace time")
        test = self._test(node.test, flow)
        if not test.proven:
            # perhaps a Python list or a Python bool: the loop may well work
            return self.decline("no part of the test is proven to be a traced boolean array (it may be a Python value, and the loop may work)")
        reason = test.problem or self._blocker(flow, counters, test)
        if reason is not None:
            return rule.finding(facts, node.test, f"{_PROBLEM}; not rewritten to lax.while_loop: {reason}")
        carried = ", ".join(f"`{name}`" for name in flow.carried)
        message = (
            f"{_PROBLEM}; lax.while_loop runs it with a traced test (carrying {carried}), but jax.grad cannot "
            "differentiate it (no reverse-mode gradients)"
        )
        if counters:
            listed = ", ".join(f"`{name}`" for name in counters)
            message += f"; the Python int {listed} becomes a traced int32"
        message += "; unsafe: floats may round differently in the last bits, so a tolerance test may stop a step sooner or later"
        binder = facts.binder
        spelled = set(spelled_names(node.test))
        plan = _Plan(
            node, tuple(flow.carried), tuple(name for name in flow.carried if name in spelled),
            spelled_with_import(binder, "jax.lax.while_loop"),
            {name: spelled_with_import(binder, name) for name in (*_LOGICAL.values(), "jax.numpy.logical_not")},
            facts.fresh_names,
        )  # fmt: skip
        return rule.finding(facts, node.test, message, description="rewrite the loop with lax.while_loop", plan=plan)

    # ---- the test ------------------------------------------------------------------------------------------

    def _test(self, test: ast.expr, flow: LoopFlow) -> _Test:
        result = _Test()
        if any(type(n) is ast.NamedExpr for n in ast.walk(test)):
            result.problem = "the test assigns with `:=`"
        self._parts(test, flow, result)
        return result

    def _parts(self, expr: ast.expr, flow: LoopFlow, result: _Test) -> None:
        """Notes in `result` what is proven and what stops the rewrite, for each operand of `and`/`or`/`not`."""
        if type(expr) is ast.BoolOp:
            for value in expr.values:
                self._parts(value, flow, result)
            return
        if type(expr) is ast.UnaryOp and type(expr.op) is ast.Not:
            return self._parts(expr.operand, flow, result)
        self._atom(expr, flow, result)
        result.atoms.append(expr)

    def _atom(self, expr: ast.expr, flow: LoopFlow, result: _Test) -> None:
        """Whether one operand of the test's `and`/`or`/`not` is a boolean `cond` may return, and whether it
        is surely a traced array (whose truth value the Python loop asks for, and fails)."""
        facts = self.facts
        kind = self.kind_at(expr)
        shown = snippet(facts.carry.code(expr))

        def problem(reason: str) -> None:
            result.problem = result.problem or reason

        if type(expr) is ast.Compare:
            operands = [expr.left, *expr.comparators]
            if kind is Kind.TRACED and any(self._surely_array(o) for o in operands):
                result.proven = True
            if not all(isinstance(op, _ORDERING) for op in expr.ops):
                spelled = set(spelled_names(expr))
                carried = any(name in spelled for name in flow.carried)
                if kind is not Kind.STATIC or carried:
                    problem(f"the test uses `in` or `is` on a traced value (`{shown}`)")
            elif len(expr.ops) > 1 and kind is not Kind.STATIC:
                problem(f"the test is a chained comparison (`{shown}`); write it with `and`")
            elif any(_container(o) for o in operands) and kind is not Kind.STATIC:
                problem(f"the test compares with a container, string or None (`{shown}`)")
            elif kind is Kind.UNKNOWN:
                problem(f"the test reads a value not known to be traced or static (`{shown}`)")
        elif kind is Kind.TRACED and self._surely_array(expr):
            result.proven = True  # bool() of a traced array fails
            if facts.shapes.category(expr) is not Category.BOOL:
                problem(f"the test `{shown}` is not known to be a boolean; compare it (`{shown} != 0`)")
        elif not (type(expr) is ast.Constant and type(expr.value) is bool):
            problem(f"the test reads `{shown}`, which is not known to be a boolean array")
        if kind is Kind.TRACED:
            rank = facts.shapes.rank(expr)
            if rank is not None and rank > 0:
                problem(
                    f"the test `{shown}` is an array of rank {rank}; lax.while_loop needs a scalar "
                    "(`jnp.all(...)` or `jnp.any(...)`)"
                )

    def _surely_array(self, expr: ast.AST, seen: frozenset[str] = frozenset()) -> bool:
        """Traced and surely a JAX array (not a Python value that the traced fact over-approximates, such as
        `lax.axis_size(...)`): a JAX computation, or a traced argument of the staged function."""
        if self.kind_at(expr) is not Kind.TRACED:
            return False
        kind = type(expr)
        if kind is ast.Call:
            facts = self.facts
            return facts.binder.callee(expr) not in _PYTHON_VALUED and facts.purity.is_array_like(expr)
        if kind is ast.BinOp:
            return self._surely_array(expr.left, seen) or self._surely_array(expr.right, seen)
        if kind is ast.UnaryOp:
            return self._surely_array(expr.operand, seen)
        if kind is ast.NamedExpr:
            return self._surely_array(expr.value, seen)
        if kind is ast.Subscript or kind is ast.Attribute:
            return self._surely_array(expr.value, seen)  # `x[0]`, `x.T`: of an array, an array
        if kind is ast.Compare:
            return any(self._surely_array(o, seen) for o in (expr.left, *expr.comparators))
        if kind is ast.Name and expr.id not in seen:
            # a traced argument of the staged function, or a name bound to an array computation
            facts, loop = self.facts, self.loop
            flow = facts.flow(facts.enclosing_function(loop))
            for source in flow.reaching(loop, expr.id):
                if isinstance(source, Parameter):
                    if facts.traced.param_kind(self.function, expr.id) is Kind.TRACED:
                        return True
                elif isinstance(source, ast.expr):
                    if self._surely_array(source, seen | {expr.id}):
                        return True
        return False

    # ---- what stops the rewrite ----------------------------------------------------------------------------

    def _blocker(self, flow: LoopFlow, counters: list[str], test: _Test) -> str | None:
        facts, loop, function = self.facts, self.loop, self.function
        reverse = sorted(facts.traced.transforms(function) & REVERSE_MODE)
        if reverse:
            return (
                f"this module differentiates the function with `{reverse[0]}`, and lax.while_loop has no "
                "reverse-mode derivative"
            )
        if loop.orelse:
            return "the loop has an `else:` clause"
        purity = facts.purity
        impurity = purity.impurity(loop, flow.live_in, run_time_effects=_RUN_TIME_EFFECTS)
        if impurity is not None:
            return f"the body {impurity.reason}"
        for call in (n for n in walk(loop.test) if type(n) is ast.Call):
            blocker = purity.call_blocker(call, frozenset())
            if blocker is not None:
                return f"the test {blocker.reason}"
        statements = function.body if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) else ()
        reason = facts.carry.blocker(loop, flow, construct="lax.while_loop", static_ints=True)
        if reason is not None:
            return reason
        branch = self._traced_branch()
        if branch is not None:
            return branch
        if counters:
            returns = [n.value for s in statements for n in ast.walk(s) if type(n) is ast.Return and n.value]
            concrete = purity.concrete_use(loop, counters, also=statements, consumed=[*test.atoms, *returns])
            if concrete is not None:
                listed = ", ".join(f"`{name}`" for name in counters)
                return f"the Python int {listed} would become a traced int32, but the function {concrete.reason}"
        return None

    def _traced_branch(self) -> str | None:
        """A Python `if`/`while`/`and`/`or`/`not`/conditional expression/`assert` in the body that asks a
        traced value for its truth: it fails in the loop function as it fails in the original."""
        kind = self.facts.traced.kind
        code = self.facts.carry.code
        for stmt in self.loop.body:
            for node in walk(stmt):
                which = type(node)
                if which in _TESTED and kind(node.test) is Kind.TRACED:
                    return f"the body tests a traced value with a Python {_TESTED[which]} (`{snippet(code(node.test))}`)"
                if which is ast.BoolOp and kind(node) is Kind.TRACED:
                    return f"the body uses `and`/`or` on a traced value (`{snippet(code(node))}`)"
                if which is ast.UnaryOp and type(node.op) is ast.Not and kind(node.operand) is Kind.TRACED:
                    return f"the body uses `not` on a traced value (`{snippet(code(node))}`)"
        return None


_TESTED = {ast.If: "`if`", ast.While: "`while`", ast.IfExp: "`... if ... else ...`", ast.Assert: "`assert`"}


def _container(expr: ast.expr) -> bool:
    """A display, a comprehension, a string or None: what a traced test is never compared with."""
    if isinstance(expr, _CONTAINERS):
        return True
    return type(expr) is ast.Constant and (expr.value is None or type(expr.value) in (str, bytes))


# ---- the fix, on LibCST --------------------------------------------------------------------------------------


def _converted(expr: cst.BaseExpression, logical: dict, imports: list, code) -> cst.BaseExpression:
    """`expr` as `cond` returns it: `and`/`or`/`not` as `jnp.logical_*` calls (the imports they need added to
    `imports`), each operand without its own parentheses unless it is written over several lines."""
    if isinstance(expr, cst.BooleanOperation):
        function, needed = logical[_CST_LOGICAL[type(expr.operator)]]
        imports.append(needed)
        left = _converted(expr.left, logical, imports, code)
        right = _converted(expr.right, logical, imports, code)
        return cst.Call(func=cst.parse_expression(function), args=[cst.Arg(left), cst.Arg(right)])
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
        function, needed = logical["jax.numpy.logical_not"]
        imports.append(needed)
        inner = _converted(expr.expression, logical, imports, code)
        return cst.Call(func=cst.parse_expression(function), args=[cst.Arg(inner)])
    bare = expr.with_changes(lpar=(), rpar=()) if expr.lpar else expr
    # `(a > b) and c` → `logical_and(a > b, c)`; a test written over several lines keeps its parentheses
    return bare if "\n" not in code(bare) else expr


def _in_order(node: cst.CSTNode):
    """Every node under `node` in source order."""
    yield node
    for child in node.children:
        yield from _in_order(child)
