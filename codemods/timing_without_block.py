"""JF702: a clock read after a JAX call that nothing waited for measures dispatch, not the computation."""

from __future__ import annotations

import ast

import libcst as cst

from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.diagnostics import Diagnostic, Fix, Safety, spelled_with_import
from jaxfix.facts.compiled import calls_compiled
from jaxfix.facts.flow import Lines, target_names
from jaxfix.facts.literals import concatenated
from jaxfix.facts.module import FileFacts
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
    def check(cls, facts: FileFacts) -> list[Diagnostic]:
        binder = facts.binder
        if sum(binder.qualified(call.func) in CLOCKS for call in binder.calls) < 2:
            return []  # two lines that read a clock are needed
        lines = facts.lines
        found: list[Diagnostic] = []
        for node in [facts.tree, *binder.nodes_of(*_WITH_BLOCKS)]:
            for field in _BLOCK_FIELDS:
                block = getattr(node, field, None)
                if not isinstance(block, list) or len(block) < 3 or not isinstance(block[0], ast.stmt):
                    continue
                groups = lines.group(block)
                if groups[0][0] == "suite":
                    continue  # `if x: a; b`: no block of lines (LibCST's IndentedBlock)
                previous = None
                for index, (kind, group) in enumerate(groups):
                    if kind != "line" or not _reads_clock(binder, group):
                        continue
                    if previous is not None and index - previous > 1:
                        finding = cls._check(facts, lines, groups[previous + 1 : index], group[0])
                        if finding is not None:
                            found.append(finding)
                    previous = index
        return found

    @classmethod
    def _check(cls, facts: FileFacts, lines: Lines, between: list, clock: ast.stmt) -> Diagnostic | None:
        found = _last_unwaited(facts, lines, between)
        if found is None:
            return None
        stmt, call, targets, in_loop = found
        what = facts.positions.with_parentheses(call.func, call)
        message = (
            f"the clock is read while `{what}(...)` may still be running: JAX dispatches asynchronously, so this "
            f"times the dispatch, not the computation; wait for the result (`jax.block_until_ready`) first"
        )
        blocker = _blocker(facts, clock, targets) if in_loop else None
        if blocker is not None:
            return cls.finding(facts, call, f"{message}; not fixed: {blocker}")
        wait, needed = spelled_with_import(facts.binder, "jax.block_until_ready")
        if not targets:
            description = "wait for the result: `jax.block_until_ready(...)`"
            plan = (stmt, None, wait, needed)
        else:
            description = f"wait for `{', '.join(targets)}` before reading the clock"
            plan = (clock, targets, wait, needed)
        return cls.finding(facts, call, message, description=description, plan=plan)

    @classmethod
    def fix_finding(cls, finding: Diagnostic, bridge) -> Fix | None:
        statement, targets, wait, needed = finding.plan
        imports = (needed,) if needed is not None else ()
        if targets is None:  # a discarded result `f(x)` becomes `jax.block_until_ready(f(x))`
            small = bridge.cst_of(statement)
            if not isinstance(small, cst.Expr):
                return None
            wrapped = cst.Call(func=cst.parse_expression(wait), args=[cst.Arg(small.value)])
            return Fix(cls.fix_safety, finding.fix.description, ((small, small.with_changes(value=wrapped)),), imports)
        clock = bridge.line_of(statement)
        if clock is None:
            return None
        packed = targets[0] if len(targets) == 1 else "(" + ", ".join(targets) + ")"
        line = cst.parse_statement(f"{wait}({packed})")
        line = line.with_changes(leading_lines=clock.leading_lines)
        new_clock = clock.with_changes(leading_lines=())
        return Fix(cls.fix_safety, finding.fix.description, ((clock, cst.FlattenSentinel([line, new_clock])),), imports)


_BLOCK_FIELDS = ("body", "orelse", "finalbody")
_WITH_BLOCKS = tuple(  # the node types with one of those fields (statements, handlers, cases)
    kind for kind in vars(ast).values()
    if isinstance(kind, type) and issubclass(kind, ast.AST) and set(_BLOCK_FIELDS) & set(kind._fields)
    and kind is not ast.Module
)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _reads_clock(binder, group: list[ast.stmt]) -> bool:
    return any(
        type(n) is ast.Call and binder.qualified(n.func) in CLOCKS for statement in group for n in ast.walk(statement)
    )


def _last_unwaited(facts: FileFacts, lines: Lines, groups: list):
    """(statement, call, target names, in a loop) of the JAX computation that ends these lines, when nothing
    after it may wait; None when the last line with a call is not one."""
    binder = facts.binder
    for kind, group in reversed(groups):
        statement = group[0]
        if kind == "compound" and type(statement) in _LOOPS:
            if statement.orelse:
                return None
            found = _last_unwaited(facts, lines, lines.group(statement.body))
            return None if found is None else (*found[:3], True)
        if kind != "line":
            return None  # if, with, try: not followed (nor a one-line suite's statements)
        calls = [n for s in group for n in ast.walk(s) if type(n) is ast.Call]
        if not calls:
            continue  # `n += 1`: cannot wait for anything
        if len(group) != 1:
            return None
        value, targets = None, []
        if type(statement) is ast.Assign and len(statement.targets) == 1:
            value = statement.value
            targets = target_names(statement.targets[0])
            if not all(type(t) is ast.Name for t in _flat(statement.targets[0])):
                return None
        elif type(statement) is ast.Expr:
            value = statement.value
        if type(value) is not ast.Call or not _is_async(facts, value):
            return None
        if any(_syncs(binder, c) for c in calls):
            return None
        return statement, value, targets, False
    return None


def _is_async(facts: FileFacts, call: ast.Call) -> bool:
    """A JAX computation: a compiled function, a `jax.numpy`/`random`/`lax` call, `jax.grad(f)(x)`."""
    binder = facts.binder
    if calls_compiled(binder, call):
        return not _empty_function(facts, call)
    qualified = binder.qualified(call.func) or ""
    if qualified.startswith(NUMERIC_NAMESPACES):  # a jax function that computes arrays, asynchronously
        return True
    return type(call.func) is ast.Call and binder.qualified(call.func.func) in _TRANSFORMS


def _empty_function(facts: FileFacts, call: ast.Call) -> bool:
    """Whether `call` calls a def whose body is only `pass`, `...` or a docstring (a benchmark of dispatch
    overhead): it returns None and computes nothing, so there is nothing to wait for."""
    if type(call.func) is not ast.Name:
        return False
    scope = facts.binder.scope_of.get(call.func)
    if scope is None:
        return False
    definitions = [b.node for b in scope.resolve(call.func.id)]
    return bool(definitions) and all(
        type(d) in _DEFS and all(_does_nothing(facts, s) for s in d.body) for d in definitions
    )


def _does_nothing(facts: FileFacts, statement: ast.stmt) -> bool:
    """`pass`, `...` or a string on its own (a docstring; LibCST's SimpleString or ConcatenatedString)."""
    if type(statement) is ast.Pass:
        return True
    if type(statement) is not ast.Expr:
        return False
    value = statement.value
    if type(value) is ast.Constant:
        return value.value is Ellipsis or type(value.value) in (str, bytes)
    return type(value) is ast.JoinedStr and concatenated(facts.positions.segment(value))


def _syncs(binder, call: ast.Call) -> bool:
    qualified = binder.qualified(call.func) or ""
    if qualified in _SYNC_FUNCTIONS or qualified.startswith("numpy."):
        return True
    if type(call.func) is ast.Attribute and call.func.attr in _SYNC_METHODS:
        return True
    return any(binder.is_builtin(call.func, b) for b in _SYNC_BUILTINS)


def _blocker(facts: FileFacts, clock: ast.stmt, targets: list[str]) -> str | None:
    if not targets:
        return "the loop's result is not kept in a name to wait for after the loop"
    parents = facts.binder.parents
    function = parents.get(clock)
    while function is not None and type(function) not in _DEFS:
        function = parents.get(function)
    function = function or facts.tree
    flow = facts.reaching(function)
    unbound = [t for t in targets if not flow.defined_before(clock, t)]
    if unbound:
        return f"`{unbound[0]}` may be unbound after the loop (it may run zero times)"
    return None


def _flat(target: ast.AST):
    if type(target) in (ast.Tuple, ast.List):
        for element in target.elts:
            yield from _flat(element.value if type(element) is ast.Starred else element)
    else:
        yield target
