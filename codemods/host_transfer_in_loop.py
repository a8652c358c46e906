"""JF703: a training loop that copies a jitted step's result to the host at every step."""

from __future__ import annotations

import ast

import libcst as cst

from jaxfix.analysis.dataflow import activity, root_name
from jaxfix.analysis.jit import calls_compiled
from jaxfix.analysis.loops import range_trip
from jaxfix.analysis.screen import other_bindings, ast_children, may_call_compiled
from jaxfix.analysis.syntax import code_children, code_nodes, target_names, walk
from jaxfix.codemod import Codemod, Invalid, Option, Valid

_LOOPS = (cst.For, cst.While)
_SCOPES = (cst.FunctionDef, cst.Lambda, cst.ClassDef)
_TO_PYTHON = ("float", "int", "bool", "complex")
_METHODS = frozenset({"item", "tolist", "__array__"})
_NUMPY = frozenset({"numpy.asarray", "numpy.array", "numpy.asanyarray"})


class HostTransferInLoop(Codemod):
    """A jitted step's result copied to the host in every iteration of the loop that calls the step.

    ## What it does
    Finds, in a `for`/`while` loop whose body calls a jitted function (`@jax.jit`, `step = jax.jit(...)`),
    a transfer of that call's result to the host in the same loop body, not guarded by a log interval:
    `float(loss)`, `int(...)`, `loss.item()`, `.tolist()`, `np.asarray(...)`, `jax.device_get(...)`, or
    `print` of the value (an f-string included), or the same of a jitted call's result used on the spot
    (`accuracy(params).item()`). It reports; there is no fix.

    ## Why is this bad?
    JAX dispatches a jitted step asynchronously: the loop can queue the next step while the device computes
    this one. A host transfer waits for the step to finish and copies its result back, so every iteration
    runs dispatch, compute and copy one after another. Measured with `python benchmarks/timing_block.py`
    (JAX 0.10.2, this 2-core CPU shared with other jobs, a small jitted SGD step, 3000 steps, best of 5, two
    runs): 62,000 and 28,000 steps per second with no transfer, 16,000 and 6,800 with `float(loss)` at every
    step (3.8 and 4.1 times slower), 49,000 and 30,000 with `float(loss)` every 100 steps. On an accelerator each transfer also crosses PCIe (the reference: 10-25 GB/s against
    2-3 TB/s of device memory).

    ## Example
    ```python
    for step in range(num_steps):
        state, loss = train_step(state, batch)
        print(f"loss {float(loss):.4f}")
    ```

    ## Use instead
    ```python
    for step in range(num_steps):
        state, loss = train_step(state, batch)
        if step % 100 == 0:
            print(f"loss {float(loss):.4f}")
    ```
    or keep the values on the device (`losses.append(loss)`) and bring them over once, after the loop
    (`np.asarray(jnp.stack(losses))`).

    ## Fix safety
    No fix: how often to log, and whether a value is needed on the host at each step, is the author's
    decision. The message names the transfer and says that it is unguarded.

    ## When it stays quiet
    - A transfer under an `if` that tests a log interval (`%`) or the loop's counter (`if step % 100 == 0:`,
      `if i == last:`): it does not run every step. That `if` may also stand in an enclosing loop, around the
      loop of the transfer: an evaluation loop under `if step % eval_every == 0:` in the training loop runs,
      with its transfers, once in `eval_every` steps. An `if` outside every loop throttles nothing.
    - A transfer in an `if`'s or `while`'s test (`if float(loss) < tol: break`): the host needs the value
      to decide, and only a `lax.while_loop` would avoid it.
    - A `for` over `range(k)` with fewer than `min-steps` (10) known steps: a few transfers cost a few round
      trips.
    - Transfers in an outer loop (once per epoch) and of values the jitted step did not return in this loop
      (a batch loaded from NumPy, a Python counter); loops without a jitted call; loops inside traced code.
    """

    code = "JF703"
    name = "host-transfer-in-loop"
    summary = "jitted step's result copied to the host (float, .item(), np.asarray, print) every loop step: log every N steps"
    fix_safety = None
    screen = ("jit", "pmap")  # calls_compiled: jax.jit or jax.pmap
    OPTIONS = (
        Option(
            "min-steps",
            10,
            "a `for` over `range(k)` with fewer known steps is not reported (a few transfers cost a few round trips)",
        ),
    )

    VALID = (
        Valid(  # a reduction on the host's side of NumPy data: nothing jitted is waited for
            "import jax\nimport jax.numpy as jnp\n\ndef total(batches):\n    t = 0.0\n    for x in batches:\n"
            "        t += float(jnp.sum(x))\n    return t\n"
        ),
        Valid(
            "import jax\n\n@jax.jit\ndef step(w):\n    return w * 0.9, (w ** 2).sum()\n\ndef demo(w):\n"
            "    for _ in range(3):\n        w, loss = step(w)\n        print(loss)\n    return w\n",
        ),
        Valid(
            "import jax\n\n@jax.jit\ndef step(w):\n    return w * 0.9, (w ** 2).sum()\n\ndef train(w, n):\n"
            "    for i in range(n):\n        w, loss = step(w)\n        if i % 100 == 0:\n"
            "            print(float(loss))\n    return w\n"
        ),
        Valid(
            "import jax\n\n@jax.jit\ndef step(w):\n    return w * 0.9, (w ** 2).sum()\n\ndef train(w, n):\n"
            "    losses = []\n    for i in range(n):\n        w, loss = step(w)\n        losses.append(loss)\n"
            "    return w, [float(l) for l in losses]\n"
        ),
        # an evaluation loop that the training loop runs once in 100 steps
        Valid(
            "import jax\n\n@jax.jit\ndef step(w):\n    return w * 0.9, (w ** 2).sum()\n\n"
            "@jax.jit\ndef evaluate(w, x):\n    return ((w - x) ** 2).sum()\n\ndef train(w, n, eval_set):\n"
            "    for i in range(n):\n        w, loss = step(w)\n        if i % 100 == 0:\n"
            "            for x in eval_set:\n                error = evaluate(w, x)\n                print(float(error))\n"
            "    return w\n"
        ),
    )
    INVALID = (
        Invalid(  # a jitted call's result copied on the spot
            "import jax\n\n@jax.jit\ndef accuracy(w):\n    return (w > 0).mean()\n\n@jax.jit\ndef step(w):\n    return w * 0.9\n\n"
            "def train(w, n):\n    for i in range(n):\n        print(i, accuracy(w).item())\n        w = step(w)\n    return w\n",
            None,
            message="`accuracy(w).item()` copies a result of `accuracy`",
        ),
        Invalid(
            "import jax\n\n@jax.jit\ndef step(w):\n    return w * 0.9, (w ** 2).sum()\n\ndef train(w, n):\n"
            "    for i in range(n):\n        w, loss = step(w)\n        print(float(loss))\n    return w\n",
            None,
            message="unguarded",
        ),
        Invalid(
            "import jax\nimport numpy as np\n\ntrain_step = jax.jit(lambda w: (w * 0.9, w.sum()))\n\ndef train(w, n):\n"
            "    history = []\n    for i in range(n):\n        w, metrics = train_step(w)\n"
            "        history.append(np.asarray(metrics))\n    return w, history\n",
            None,
            message="np.asarray",
        ),
        # the same evaluation loop with no interval: it runs at every training step
        Invalid(
            "import jax\n\n@jax.jit\ndef step(w):\n    return w * 0.9, (w ** 2).sum()\n\n"
            "@jax.jit\ndef evaluate(w, x):\n    return ((w - x) ** 2).sum()\n\ndef train(w, n, eval_set):\n"
            "    for i in range(n):\n        w, loss = step(w)\n        for x in eval_set:\n"
            "            error = evaluate(w, x)\n            print(float(error))\n    return w\n",
            None,
            message="`float(error)`",
        ),
    )

    @classmethod
    def may_match_tree(cls, screen) -> bool:
        """A finding needs a loop whose own body (not nested loops or functions: `_direct`) assigns the result of a
        call that may be compiled (`calls_compiled`: `jax.jit(f)(x)`, or a name with a binding that may make a
        jitted callable) and holds a transfer of one of the names assigned (`_transfer`: `float(x)`, `x.item()`,
        `np.asarray(x)`, `jax.device_get(x)`, `print(x)`, where `x` may be an attribute or item of the name), not
        surely guarded by a log interval (`_surely_guarded`), in a loop that may run `min-steps` times or more
        (`_surely_few_steps`)."""
        for loop in screen.nodes_of(*_AST_LOOPS):
            direct = _direct_nodes(loop)
            device = set()
            for node in direct:
                call = node.value if type(node) is ast.Assign else None
                if isinstance(call, ast.Call) and may_call_compiled(screen, call):
                    device.update(n.id for t in node.targets for n in ast.walk(t) if type(n) is ast.Name)
            compiled = device or any(type(n) is ast.Call and may_call_compiled(screen, n) for n in direct)
            if compiled and any(
                type(n) is ast.Call and _may_transfer(screen, n, device) and not _surely_guarded(screen, n, loop)
                for n in direct
            ) and not _surely_few_steps(screen, loop, cls.option("min-steps")):
                return True
        return False

    def visit_Module(self, node: cst.Module) -> None:
        for loop in code_nodes(node):  # `walk`'s order, without the whitespace, where no loop lies
            if isinstance(loop, _LOOPS) and not self.context.traced.in_traced_code(loop):
                self._loop(loop)

    def _direct(self, loop) -> list[cst.CSTNode]:
        """The nodes of the loop's body that run once per iteration of this loop: not in nested loops, nested
        functions or lambdas (nor whitespace and punctuation)."""
        found: list[cst.CSTNode] = []
        stack = [loop.body]
        while stack:
            node = stack.pop()
            found.append(node)
            for child in code_children(node):
                if isinstance(child, (*_LOOPS, *_SCOPES)):
                    continue
                stack.append(child)
        return found

    def _few_steps(self, loop) -> bool:
        """The loop, and every loop around it in its function, is a `for` over `range(...)` of known bounds that
        runs fewer than min-steps times (a tutorial's `for _ in range(3):` printing each loss): its transfers
        cost a few round trips in all."""
        node = loop
        while node is not None and not isinstance(node, _SCOPES):
            if isinstance(node, _LOOPS) and not self._few_own_steps(node):
                return False
            node = self.context.parents.get(node)
        return True

    def _few_own_steps(self, loop) -> bool:
        if not isinstance(loop, cst.For) or not isinstance(loop.iter, cst.Call):
            return False
        if not self.context.names.is_builtin(loop.iter.func, "range"):
            return False
        trip = range_trip(self.context, loop.iter)
        return trip is not None and trip.kind == "literal" and trip.count < self.option("min-steps")

    def _loop(self, loop) -> None:
        if self._few_steps(loop):
            return
        nodes = self._direct(loop)
        device: set[str] = set()
        called = None
        for node in nodes:
            if isinstance(node, cst.Call) and calls_compiled(self.context, node):
                called = called or node
                parent = self.context.parents.get(node)
                if isinstance(parent, cst.Assign) and parent.value is node:
                    for target in parent.targets:
                        device.update(target_names(target.target))
        if called is None:
            return
        counters = self._counters(loop)
        step = self.context.code_for(called.func)
        for node in nodes:
            if not isinstance(node, cst.Call):
                continue
            what = self._transfer(node, device)
            if what is None or self._guarded(node, loop, counters):
                continue
            # a jitted call's result used on the spot (`accuracy(params).item()`) names that call
            inner = next((n for n in walk(node) if n is not node and isinstance(n, cst.Call) and calls_compiled(self.context, n)), None)
            self.report(
                node,
                f"`{what}` copies a result of `{self.context.code_for(inner.func) if inner is not None else step}` to the "
                f"host in every iteration, unguarded by a log "
                f"interval: each step must finish before the next is queued (a small jitted step ran about 4x "
                f"slower so); log every N steps (`if step % N == 0:`) or keep the values on the device and "
                f"transfer them once after the loop",
            )

    def _transfer(self, call: cst.Call, device: set[str]) -> str | None:
        names = self.context.names
        func = call.func
        args = [a.value for a in call.args if a.keyword is None and not a.star]

        def on_device(expr: cst.BaseExpression) -> bool:
            """A name the loop's jitted call assigned (`loss`, `metrics["loss"]`), or a jitted call's result used
            on the spot (`accuracy(params).item()`)."""
            while isinstance(expr, (cst.Attribute, cst.Subscript)):
                expr = expr.value
            if isinstance(expr, cst.Call):
                return calls_compiled(self.context, expr)
            return root_name(expr) in device

        if any(names.is_builtin(func, b) for b in _TO_PYTHON) and len(args) == 1 and on_device(args[0]):
            return self.context.code_for(call)
        if isinstance(func, cst.Attribute) and func.attr.value in _METHODS and on_device(func.value):
            return self.context.code_for(call)
        qualified = names.qualified(func)
        if (qualified in _NUMPY or qualified == "jax.device_get") and args and on_device(args[0]):
            return self.context.code_for(call)
        if names.is_builtin(func, "print"):
            for arg in args:
                parts = [arg]
                if isinstance(arg, cst.FormattedString):
                    parts = [p.expression for p in arg.parts if isinstance(p, cst.FormattedStringExpression)]
                for part in parts:
                    if on_device(part):
                        return f"print({self.context.code_for(part)})"
        return None

    def _guarded(self, call: cst.Call, loop, counters: set[str]) -> bool:
        """Whether the transfer does not run every step: under an `if` on a log interval or a loop's counter,
        inside this loop or around it in an enclosing loop (`if step % eval_every == 0:` over an evaluation
        loop runs that loop, and its transfers, once in `eval_every` steps); or it is in a test of this loop's
        body, where the host needs the value."""
        parents = self.context.parents
        tests: list[cst.BaseExpression] = []  # of the `if`s passed since the last loop
        inside = True  # below `loop`
        child, node = call, parents.get(call)
        while node is not None and not isinstance(node, _SCOPES):
            if inside and isinstance(node, (cst.If, cst.While)) and child is node.test:
                return True
            if isinstance(node, cst.If) and child is node.body:
                tests.append(node.test)
            if isinstance(node, _LOOPS) and child is node.body:
                if node is not loop:
                    counters = counters | self._counters(node)
                if any(self._throttles(test, counters) for test in tests):
                    return True
                tests = []
            if node is loop:
                inside = False
            child, node = node, parents.get(node)
        return False

    def _counters(self, loop) -> set[str]:
        """Names that count the loop's iterations: its `for` target, names it increments (`k += 1`)."""
        counters = set(activity(cst.Expr(loop.target)).reads) if isinstance(loop, cst.For) else set()
        for node in self._direct(loop):
            if isinstance(node, cst.AugAssign) and isinstance(node.target, cst.Name):
                counters.add(node.target.value)
        return counters

    @staticmethod
    def _throttles(test: cst.BaseExpression, counters: set[str]) -> bool:
        """Whether an `if` test runs its body only on some steps: a log interval (`%`) or a test of a counter."""
        if any(isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Modulo) for n in walk(test)):
            return True
        return bool(set(activity(cst.Expr(test)).reads) & counters)


# ---- the screen ------------------------------------------------------------------------------------------------

_AST_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_AST_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)

def _direct_nodes(loop: ast.AST) -> list[ast.AST]:
    """The nodes of a loop's body outside nested loops, functions, lambdas and classes (`_direct`)."""
    found = []
    stack = list(loop.body)
    while stack:
        node = stack.pop()
        found.append(node)
        stack.extend(c for c in ast_children(node) if not isinstance(c, (*_AST_LOOPS, *_AST_SCOPES)))
    return found


def _may_transfer(screen, call: ast.Call, device: set[str]) -> bool:
    """Whether `_transfer` may find this call copying a device name, or a compiled call's result, to the host."""
    func = call.func
    args = [a for a in call.args if not isinstance(a, ast.Starred)]
    device = _DeviceValues(screen, device)
    if isinstance(func, ast.Name) and func.id in _TO_PYTHON:
        return len(args) == 1 and _root(args[0]) in device
    if isinstance(func, ast.Attribute) and func.attr in _METHODS and _root(func.value) in device:
        return True
    if args and _root(args[0]) in device and screen.may_resolve_to(func, _NUMPY | {"jax.device_get"}):
        return True
    if isinstance(func, ast.Name) and func.id == "print":
        for arg in args:
            parts = [arg]
            if type(arg) is ast.JoinedStr:
                parts = [v.value for v in arg.values if type(v) is ast.FormattedValue]
            if any(_root(part) in device for part in parts):
                return True
    return False


def _surely_guarded(screen, call: ast.Call, loop: ast.AST) -> bool:
    """Under-approximates `_guarded`: the call stands in a test of an `if` or `while` inside the loop, or in the
    body of an `if` whose test holds a `%` (`if step % 100 == 0:`) with a loop around that `if` in its scope."""
    chain = _path_to(screen.function_of.get(id(loop)) or screen.tree, call)
    tests: list[ast.expr] = []
    inside = True  # below `loop`
    child = call
    for node in reversed(chain):
        if isinstance(node, _AST_SCOPES):
            break
        if inside and isinstance(node, (ast.If, ast.While)) and child is node.test:
            return True
        if isinstance(node, ast.If) and any(child is statement for statement in node.body):
            tests.append(node.test)
        if isinstance(node, _AST_LOOPS) and any(child is statement for statement in node.body):
            if any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod) for test in tests for n in ast.walk(test)):
                return True
            tests = []
        if node is loop:
            inside = False
        child = node
    return False


def _surely_few_steps(screen, loop: ast.AST, limit: int) -> bool:
    """`_few_steps`: this loop and each loop around it in its function is a `for` that surely runs under `limit`
    times."""
    if not _surely_few_own_steps(screen, loop, limit):
        return False
    for node in reversed(_path_to(screen.function_of.get(id(loop)) or screen.tree, loop)):
        if isinstance(node, _AST_SCOPES):
            break
        if isinstance(node, _AST_LOOPS) and not _surely_few_own_steps(screen, node, limit):
            return False
    return True


def _surely_few_own_steps(screen, loop: ast.AST, limit: int) -> bool:
    """`_few_own_steps`: a `for` over the builtin `range` (no binding of that name in the module) of int literals
    (`range_trip` then counts a "literal" trip) with fewer than `limit` steps."""
    call = loop.iter if type(loop) is ast.For else None
    if not (type(call) is ast.Call and type(call.func) is ast.Name and call.func.id == "range"):
        return False
    if call.keywords or not 1 <= len(call.args) <= 3:
        return False
    values = [a.value if type(a) is ast.Constant and type(a.value) is int else None for a in call.args]
    if None in values or (len(values) == 3 and values[2] == 0):
        return False
    if "range" in screen.imports or "range" in other_bindings(screen):
        return False
    return len(range(*values)) < limit


def _path_to(root: ast.AST, target: ast.AST) -> list[ast.AST]:
    """The nodes from `root` down to `target`'s parent (empty if `target` is not under `root`)."""
    stack: list[tuple[ast.AST, list[ast.AST]]] = [(root, [])]
    while stack:
        node, above = stack.pop()
        for child in ast.iter_child_nodes(node):
            if child is target:
                return [*above, node]
            stack.append((child, [*above, node]))
    return []


class _DeviceValues:
    """`_root(expr) in values`: a name a compiled call assigned, or a call that may be compiled (`step(x).item()`)."""

    def __init__(self, screen, names: set[str]) -> None:
        self.screen, self.names = screen, names

    def __contains__(self, root) -> bool:
        if isinstance(root, ast.Call):
            return may_call_compiled(self.screen, root)
        return root in self.names


def _root(expr: ast.expr):
    """`root_name`: `x` of `x`, `x.a.b`, `x[i].a`; the call of `f(x).item`, `f(x)[0]`."""
    while isinstance(expr, (ast.Attribute, ast.Subscript)):
        expr = expr.value
    if isinstance(expr, ast.Call):
        return expr
    return expr.id if isinstance(expr, ast.Name) else None
