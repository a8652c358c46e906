"""JF702: a clock read after a JAX call that nothing waited for measures dispatch, not the computation."""

from __future__ import annotations

import ast
import re

import libcst as cst

from jaxfix.analysis.dataflow import body_statements
from jaxfix.analysis.jit import calls_compiled
from jaxfix.analysis.screen import dotted, may_call_compiled
from jaxfix.analysis.syntax import code_nodes, target_names, walk
from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.diagnostics import Safety
from jaxfix.facts.knowledge.jax import GRAD_LIKE, NUMERIC_NAMESPACES, VMAP_LIKE

CLOCKS = frozenset(
    {
        "time.time", "time.perf_counter", "time.monotonic", "time.process_time", "time.time_ns",
        "time.perf_counter_ns", "time.monotonic_ns", "timeit.default_timer",
    }
)
# function transformations whose result, called at once (`jax.grad(f)(x)`), computes asynchronously
_TRANSFORMS = GRAD_LIKE | VMAP_LIKE
# where a value reaches the host (or is waited for): everything dispatched before it has finished
_SYNC_FUNCTIONS = frozenset({"jax.block_until_ready", "jax.device_get"})
_SYNC_BUILTINS = ("float", "int", "bool", "complex", "print", "str", "repr", "format", "list", "tuple", "len")
_SYNC_METHODS = frozenset({"block_until_ready", "item", "tolist", "copy_to_host_async", "__array__"})


class TimingWithoutBlock(Codemod):
    """A clock read right after a JAX computation that nothing waited for.

    ## What it does
    Finds two clock reads (`time.time()`, `time.perf_counter()`, `time.monotonic()`, `timeit.default_timer()`,
    ...) in one block with a JAX computation between them whose result nothing waits for before the second
    read: a call of a jitted function (`@jax.jit`, `step = jax.jit(...)`, `jax.jit(f)(x)`), a `jax.numpy`,
    `jax.random`, `jax.lax` call, or the last such call of a loop between the two reads.

    ## Why is this bad?
    JAX dispatches asynchronously: a call returns as soon as the work is queued, with the result still being
    computed. The clock then measures dispatch, not the computation. Measured with
    `python benchmarks/timing_block.py` (JAX 0.10.2, this 2-core CPU shared with other jobs, median of 7 warm
    calls, two runs): a jitted chain of four 500x500 matrix products times at 0.12 ms without waiting and at
    21-32 ms with `.block_until_ready()`: the measurement reports the work as 180-290 times faster than it is. On a GPU the gap is the same in
    kind: the call returns once the kernels are queued.

    ## Example
    ```python
    start = time.perf_counter()
    out = step(params, batch)
    elapsed = time.perf_counter() - start
    ```

    ## Use instead
    ```python
    start = time.perf_counter()
    out = step(params, batch)
    jax.block_until_ready(out)
    elapsed = time.perf_counter() - start
    ```

    ## Fix safety
    Safe: the fix only waits for values that exist (`jax.block_until_ready(out)`: it waits for the array leaves
    of a pytree and leaves anything else alone, tracers included, so the timed function can still be jitted or
    differentiated, where `out.block_until_ready()` would raise on a tracer; a discarded result `f(x)` becomes
    `jax.block_until_ready(f(x))`). Nothing
    computed changes, only when the clock is read. After a loop, the last result is waited for only where it is
    bound on every path to the clock read (a loop that may not run leaves it unbound): otherwise it is reported
    without a fix.

    ## When it stays quiet
    - The result is already waited for or brought to the host before the clock read: `.block_until_ready()`,
      `jax.block_until_ready`, `float(out)`, `out.item()`, `np.asarray(out)`, `jax.device_get`, `print(out)`.
    - Anything else happens between the computation and the clock read that might wait (any other call), or
      the timed code is not known to be JAX (a method such as `model.apply`, a NumPy function).
    - Clock reads in different blocks (the start before a loop, the end inside it), and `timeit` (the code it
      times is a string or a function jaxfix does not look into).
    - The jitted function's body is empty (`pass`, `...`, a docstring): a benchmark of dispatch overhead, with no
      result and no computation to wait for.
    """

    code = "JF702"
    name = "timing-without-block"
    summary = "clock read after a JAX call nothing waited for (measures dispatch, not compute): block_until_ready first"
    fix_safety = Safety.SAFE
    screen = ("time",)

    VALID = (
        Valid(
            "import time\nimport jax\n\n@jax.jit\ndef f(x):\n    return x * 2\n\ndef bench(x):\n"
            "    t0 = time.perf_counter()\n    out = f(x).block_until_ready()\n    return time.perf_counter() - t0\n"
        ),
        Valid(
            "import time\nimport jax\n\n@jax.jit\ndef f(x):\n    return x * 2\n\ndef bench(x):\n"
            "    t0 = time.time()\n    loss = float(f(x))\n    return time.time() - t0, loss\n"
        ),
        Valid(
            "import time\nimport numpy as np\n\ndef bench(x):\n    t0 = time.time()\n    out = np.dot(x, x)\n"
            "    return time.time() - t0\n"
        ),
        Valid(  # an empty jitted step times dispatch overhead on purpose: nothing is computed
            "import time\nimport jax\n\ndef bench(x, steps):\n    @jax.jit\n    def step(x):\n        pass\n\n"
            "    t0 = time.time()\n    for _ in range(steps):\n        step(x)\n    return time.time() - t0\n"
        ),
    )
    INVALID = (
        Invalid(
            "import time\nimport jax\n\n@jax.jit\ndef f(x):\n    return x * 2\n\ndef bench(x):\n"
            "    t0 = time.perf_counter()\n    out = f(x)\n    return time.perf_counter() - t0, out\n",
            "import time\nimport jax\n\n@jax.jit\ndef f(x):\n    return x * 2\n\ndef bench(x):\n"
            "    t0 = time.perf_counter()\n    out = f(x)\n    jax.block_until_ready(out)\n"
            "    return time.perf_counter() - t0, out\n",
            message="dispatch",
        ),
        Invalid(
            "import time\nimport jax.numpy as jnp\n\ndef bench(x):\n    start = time.time()\n    y = jnp.dot(x, x)\n"
            "    print(time.time() - start)\n    return y\n",
            "import time\nimport jax.numpy as jnp\nimport jax\n\ndef bench(x):\n    start = time.time()\n    y = jnp.dot(x, x)\n"
            "    jax.block_until_ready(y)\n    print(time.time() - start)\n    return y\n",
        ),
    )

    @classmethod
    def may_match_tree(cls, screen) -> bool:
        """A finding needs, in one block, two statements that may read a clock and between them, as the last
        statement with a call (or the last such in the body of a loop there, through loops only), `x = call(...)`
        or `call(...)` whose call may be asynchronous (`_may_be_async`). Statements are taken one by one, and
        LibCST's lines (`a; b`) only where the clock's line starts with others: it may pass more, never less."""
        if sum(screen.may_resolve_to(n.func, CLOCKS) for n in screen.imported_calls) < 2:
            return False

        def clock(stmt: ast.stmt) -> bool:
            return not isinstance(stmt, _COMPOUND) and any(
                isinstance(n, ast.Call) and screen.may_resolve_to(n.func, CLOCKS) for n in ast.walk(stmt)
            )

        def unwaited(statements: list[ast.stmt]) -> bool:  # `_last_unwaited`, without its checks of names
            for stmt in reversed(statements):
                if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
                    return not stmt.orelse and unwaited(stmt.body)
                if isinstance(stmt, _COMPOUND):
                    return False
                if not any(isinstance(n, ast.Call) for n in ast.walk(stmt)):
                    continue
                value = stmt.value if isinstance(stmt, ast.Expr) else None
                if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                    value = stmt.value
                return isinstance(value, ast.Call) and _may_be_async(screen, value)
            return False

        lines = None
        for node in screen.nodes_of(*_WITH_BLOCKS):
            for field in _BLOCK_FIELDS:
                block = getattr(node, field, None)
                if not isinstance(block, list) or len(block) < 3:
                    continue
                previous = None
                for index, stmt in enumerate(block):
                    if not clock(stmt):
                        continue
                    if previous is not None:
                        start = index  # the clock's own LibCST line may start with other statements: not between
                        while start - 1 > previous and not isinstance(block[start - 1], _COMPOUND):
                            lines = lines or _physical_lines(screen.text)
                            if not _one_line(lines, block[start - 1], block[start]):
                                break
                            start -= 1
                        if unwaited(block[previous + 1 : start]):
                            return True
                    previous = index
        return False

    # ---- finding ---------------------------------------------------------------------------------------------

    def visit_Module(self, node: cst.Module) -> None:
        self._block(node, list(node.body))
        for block in code_nodes(node):
            if isinstance(block, cst.IndentedBlock):
                self._block(block, list(block.body))

    def _clock_read(self, stmt: cst.CSTNode) -> bool:
        if not isinstance(stmt, cst.SimpleStatementLine):
            return False
        return any(isinstance(n, cst.Call) and self.context.names.qualified(n.func) in CLOCKS for n in walk(stmt))

    def _block(self, owner, statements: list) -> None:
        previous_clock = None
        for index, stmt in enumerate(statements):
            if not self._clock_read(stmt):
                continue
            if previous_clock is not None and index - previous_clock > 1:
                self._check(statements[previous_clock + 1 : index], stmt)
            previous_clock = index

    def _check(self, between: list, clock: cst.SimpleStatementLine) -> None:
        found = self._last_unwaited(between)
        if found is None:
            return
        stmt, call, targets, in_loop = found
        what = self.context.code_for(call.func)
        message = (
            f"the clock is read while `{what}(...)` may still be running: JAX dispatches asynchronously, so this "
            f"times the dispatch, not the computation; wait for the result (`jax.block_until_ready`) first"
        )
        blocker = self._blocker(clock, targets) if in_loop else None
        if blocker is not None:
            self.report(call, f"{message}; not fixed: {blocker}")
            return
        self.report(call, message, self._fix(stmt, call, targets, clock, in_loop))

    def _last_unwaited(self, statements: list):
        """(statement, call, target names, in a loop) of the JAX computation that ends `statements`, when
        nothing after it may wait; None when the last statement with a call is not one."""
        for stmt in reversed(statements):
            if isinstance(stmt, (cst.For, cst.While)):
                if stmt.orelse is not None:
                    return None
                found = self._last_unwaited(list(body_statements(stmt.body)))
                return None if found is None else (*found[:3], True)
            if not isinstance(stmt, cst.SimpleStatementLine):
                return None  # if, with, try: not followed
            calls = [n for n in walk(stmt) if isinstance(n, cst.Call)]
            if not calls:
                continue  # `n += 1`: cannot wait for anything
            if len(stmt.body) != 1:
                return None
            small = stmt.body[0]
            value, targets = None, []
            if isinstance(small, cst.Assign) and len(small.targets) == 1:
                value = small.value
                targets = target_names(small.targets[0].target)
                if not all(isinstance(t, cst.Name) for t in _flat(small.targets[0].target)):
                    return None
            elif isinstance(small, cst.Expr):
                value = small.value
            if not isinstance(value, cst.Call) or not self._is_async(value):
                return None
            if any(self._syncs(c) for c in calls):
                return None
            return stmt, value, targets, False
        return None

    def _is_async(self, call: cst.Call) -> bool:
        """A JAX computation: a compiled function, a `jax.numpy`/`random`/`lax` call, `jax.grad(f)(x)`."""
        if calls_compiled(self.context, call):
            return not self._empty_function(call)
        names = self.context.names
        qualified = names.qualified(call.func) or ""
        if qualified.startswith(NUMERIC_NAMESPACES):  # a jax function that computes arrays, asynchronously
            return True
        return isinstance(call.func, cst.Call) and names.qualified(call.func.func) in _TRANSFORMS

    def _empty_function(self, call: cst.Call) -> bool:
        """Whether `call` calls a def whose body is only `pass`, `...` or a docstring (a benchmark of dispatch
        overhead): it returns None and computes nothing, so there is nothing to wait for."""
        from libcst.metadata import ScopeProvider

        if not isinstance(call.func, cst.Name):
            return False
        scope = self.context.wrapper.resolve(ScopeProvider).get(call.func)
        if scope is None:
            return False
        definitions = [getattr(a, "node", None) for a in scope[call.func.value]]
        return bool(definitions) and all(
            isinstance(d, cst.FunctionDef) and all(_does_nothing(s) for s in body_statements(d.body)) for d in definitions
        )

    def _syncs(self, call: cst.Call) -> bool:
        names = self.context.names
        qualified = names.qualified(call.func) or ""
        if qualified in _SYNC_FUNCTIONS or qualified.startswith("numpy."):
            return True
        if isinstance(call.func, cst.Attribute) and call.func.attr.value in _SYNC_METHODS:
            return True
        return any(names.is_builtin(call.func, b) for b in _SYNC_BUILTINS)

    # ---- the fix ---------------------------------------------------------------------------------------------

    def _blocker(self, clock: cst.SimpleStatementLine, targets: list[str]) -> str | None:
        if not targets:
            return "the loop's result is not kept in a name to wait for after the loop"
        flow = self.context.dataflow.flow(self.context.dataflow.enclosing_function(clock))
        unbound = [t for t in targets if not flow.defined_before(clock, t)]
        if unbound:
            return f"`{unbound[0]}` may be unbound after the loop (it may run zero times)"
        return None

    def _fix(self, stmt, call: cst.Call, targets: list[str], clock, in_loop: bool):
        wait, import_spec = self.context.names.expression_for("jax.block_until_ready")
        imports = [import_spec] if import_spec else []
        if not targets:
            small = stmt.body[0]
            wrapped = cst.Call(func=wait, args=[cst.Arg(small.value)])
            new = stmt.with_changes(body=[small.with_changes(value=wrapped)])
            return self.fix("wait for the result: `jax.block_until_ready(...)`", [(stmt, new)], add_imports=imports)
        packed = targets[0] if len(targets) == 1 else "(" + ", ".join(targets) + ")"
        line = cst.parse_statement(f"{self.context.code_for(wait)}({packed})")
        line = line.with_changes(leading_lines=clock.leading_lines)
        new_clock = clock.with_changes(leading_lines=())
        description = f"wait for `{', '.join(targets)}` before reading the clock"
        return self.fix(description, [(clock, cst.FlattenSentinel([line, new_clock]))], add_imports=imports)


_COMPOUND = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.AsyncFor, ast.While, ast.With,
             ast.AsyncWith, ast.Try, ast.Match, *((ast.TryStar,) if hasattr(ast, "TryStar") else ()))
_BLOCK_FIELDS = ("body", "orelse", "finalbody")
_WITH_BLOCKS = tuple(  # the node types with one of those fields (statements, handlers, cases, lambdas, ...)
    kind for kind in vars(ast).values()
    if isinstance(kind, type) and issubclass(kind, ast.AST) and set(_BLOCK_FIELDS) & set(kind._fields)
)


def _physical_lines(text: str) -> list[str]:
    """The source's lines as Python's tokenizer counts them (`ast` line numbers): \\n, \\r\\n or \\r ends one."""
    return re.split(r"\r\n|\r|\n", text)


def _one_line(lines: list[str], first: ast.stmt, second: ast.stmt) -> bool:
    """Whether two simple statements that follow each other in a block share one LibCST line (`a; b`): only a `;`
    (and spaces or backslash continuations) between them."""
    if second.lineno == first.end_lineno:
        return True  # two statements on one physical line: `;` is all that can part them
    tail = lines[first.end_lineno - 1].encode()[first.end_col_offset :].decode(errors="replace")
    middle = lines[first.end_lineno : second.lineno - 1]
    head = lines[second.lineno - 1].encode()[: second.col_offset].decode(errors="replace")
    return re.fullmatch(r"(?:[ \t\f]|\\\n)*;(?:[ \t\f]|\\\n)*", "\n".join([tail, *middle, head])) is not None


def _may_be_async(screen, call: ast.Call) -> bool:
    """A superset of `_is_async` on the `ast`: a call that may call a compiled function (`may_call_compiled`), of
    a name that may resolve into `NUMERIC_NAMESPACES`, or of what a call of a transformation returns."""
    if may_call_compiled(screen, call):
        return True
    parts = dotted(call.func)
    if parts is not None and any(q.startswith(NUMERIC_NAMESPACES) for q in screen.qualified_names(parts)):
        return True
    return isinstance(call.func, ast.Call) and screen.may_resolve_to(call.func.func, _TRANSFORMS)


def _does_nothing(statement: cst.CSTNode) -> bool:
    """`pass`, `...` or a string on its own (a docstring)."""
    if not isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        return False
    return all(
        isinstance(s, cst.Pass)
        or (isinstance(s, cst.Expr) and isinstance(s.value, (cst.Ellipsis, cst.SimpleString, cst.ConcatenatedString)))
        for s in statement.body
    )


def _flat(target: cst.BaseExpression):
    if isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _flat(element.value)
    else:
        yield target
