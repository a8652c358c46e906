"""JF703: a training loop that copies a jitted step's result to the host at every step."""

from __future__ import annotations

import ast

from jaxfix.codemod import Codemod, Invalid, Option, Valid
from jaxfix.diagnostics import Diagnostic
from jaxfix.facts.compiled import calls_compiled
from jaxfix.facts.flow import activity, children, root_name, target_names, walk
from jaxfix.facts.literals import concatenated, range_steps
from jaxfix.facts.module import FileFacts

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
    def check(cls, facts: FileFacts) -> list[Diagnostic]:
        binder = facts.binder
        found = []
        for loop in binder.nodes_of(*_LOOPS):
            nodes = _direct(loop)
            device: set[str] = set()
            called = None
            for node in nodes:
                if type(node) is ast.Call and calls_compiled(binder, node):
                    called = called or node
                    parent = binder.parent(node)
                    if type(parent) is ast.Assign and parent.value is node:
                        for target in parent.targets:
                            device.update(target_names(target))
            if called is None or facts.traced.in_traced_code(loop) or cls._few_steps(facts, loop):
                continue
            counters = _counters(loop)
            step = facts.positions.with_parentheses(called.func, called)
            for node in nodes:
                if type(node) is not ast.Call:
                    continue
                what = cls._transfer(facts, node, device)
                if what is None or cls._guarded(facts, node, loop, counters):
                    continue
                # a jitted call's result used on the spot (`accuracy(params).item()`) names that call
                inner = next((n for n in walk(node) if n is not node and type(n) is ast.Call and calls_compiled(binder, n)), None)
                found.append(cls.finding(
                    facts, node,
                    f"`{what}` copies a result of `{facts.positions.with_parentheses(inner.func, inner) if inner is not None else step}` to the "
                    f"host in every iteration, unguarded by a log "
                    f"interval: each step must finish before the next is queued (a small jitted step ran about 4x "
                    f"slower so); log every N steps (`if step % N == 0:`) or keep the values on the device and "
                    f"transfer them once after the loop",
                ))  # fmt: skip
        return found

    @classmethod
    def _few_steps(cls, facts: FileFacts, loop: ast.AST) -> bool:
        """The loop, and every loop around it in its function, is a `for` over `range(...)` of known bounds that
        runs fewer than min-steps times (a tutorial's `for _ in range(3):` printing each loss): its transfers
        cost a few round trips in all."""
        node = loop
        while node is not None and not isinstance(node, _SCOPES):
            if isinstance(node, _LOOPS) and not cls._few_own_steps(facts, node):
                return False
            node = facts.binder.parent(node)
        return True

    @classmethod
    def _few_own_steps(cls, facts: FileFacts, loop: ast.AST) -> bool:
        call = getattr(loop, "iter", None)  # a `for` (or `async for`)
        if type(call) is not ast.Call or not facts.binder.is_builtin(call.func, "range"):
            return False
        steps = range_steps(facts.binder, facts.traced, call)
        return steps is not None and steps < cls.option("min-steps")

    @staticmethod
    def _transfer(facts: FileFacts, call: ast.Call, device: set[str]) -> str | None:
        binder, positions = facts.binder, facts.positions
        func = call.func
        args = [a for a in call.args if type(a) is not ast.Starred]

        def on_device(expr: ast.AST) -> bool:
            """A name the loop's jitted call assigned (`loss`, `metrics["loss"]`), or a jitted call's result used
            on the spot (`accuracy(params).item()`)."""
            while isinstance(expr, (ast.Attribute, ast.Subscript)):
                expr = expr.value
            if type(expr) is ast.Call:
                return calls_compiled(binder, expr)
            return root_name(expr) in device

        if any(binder.is_builtin(func, b) for b in _TO_PYTHON) and len(args) == 1 and on_device(args[0]):
            return positions.with_parentheses(call, binder.parent(call))
        if type(func) is ast.Attribute and func.attr in _METHODS and on_device(func.value):
            return positions.with_parentheses(call, binder.parent(call))
        qualified = binder.qualified(func)
        if (qualified in _NUMPY or qualified == "jax.device_get") and args and on_device(args[0]):
            return positions.with_parentheses(call, binder.parent(call))
        if binder.is_builtin(func, "print"):
            for arg in args:
                parts = [(arg, call)]
                if type(arg) is ast.JoinedStr and not concatenated(positions.segment(arg)):  # LibCST's FormattedString
                    parts = [(v.value, v) for v in arg.values if type(v) is ast.FormattedValue]
                for part, holder in parts:
                    if on_device(part):
                        return f"print({positions.with_parentheses(part, holder)})"
        return None

    @staticmethod
    def _guarded(facts: FileFacts, call: ast.Call, loop: ast.AST, counters: set[str]) -> bool:
        """Whether the transfer does not run every step: under an `if` on a log interval or a loop's counter,
        inside this loop or around it in an enclosing loop (`if step % eval_every == 0:` over an evaluation
        loop runs that loop, and its transfers, once in `eval_every` steps); or it is in a test of this loop's
        body, where the host needs the value."""
        parents = facts.binder.parents
        tests: list[ast.expr] = []  # of the `if`s passed since the last loop
        inside = True  # below `loop`
        child, node = call, parents.get(call)
        while node is not None and not isinstance(node, _SCOPES):
            if inside and type(node) in (ast.If, ast.While) and child is node.test:
                return True
            in_body = any(child is statement for statement in getattr(node, "body", ()))
            if type(node) is ast.If and in_body:
                tests.append(node.test)
            if isinstance(node, _LOOPS) and in_body:
                if node is not loop:
                    counters = counters | _counters(node)
                if any(_throttles(test, counters) for test in tests):
                    return True
                tests = []
            if node is loop:
                inside = False
            child, node = node, parents.get(node)
        return False


_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _direct(loop: ast.AST) -> list[ast.AST]:
    """The nodes of the loop's body that run once per iteration of this loop: not in nested loops, nested
    functions, lambdas or classes; in LibCST's `walk` order (a stack, the last child first), which decides which
    jitted call a message names."""
    found: list[ast.AST] = []
    stack = [statement for statement in loop.body if not isinstance(statement, (*_LOOPS, *_SCOPES))]
    while stack:
        node = stack.pop()
        found.append(node)
        stack.extend(child for child in children(node) if not isinstance(child, (*_LOOPS, *_SCOPES)))
    return found


def _counters(loop: ast.AST) -> set[str]:
    """Names that count the loop's iterations: its `for` target, names it increments (`k += 1`)."""
    counters = set(activity(loop.target).reads) if type(loop) in (ast.For, ast.AsyncFor) else set()
    for node in _direct(loop):
        if type(node) is ast.AugAssign and type(node.target) is ast.Name:
            counters.add(node.target.id)
    return counters


def _throttles(test: ast.expr, counters: set[str]) -> bool:
    """Whether an `if` test runs its body only on some steps: a log interval (`%`) or a test of a counter."""
    if any(type(n) is ast.BinOp and type(n.op) is ast.Mod for n in ast.walk(test)):
        return True
    return bool(set(activity(test).reads) & counters)
