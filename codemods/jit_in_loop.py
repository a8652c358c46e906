"""JF502: `jax.jit` of a new function object inside a loop recompiles on every iteration."""

from __future__ import annotations

import ast
from dataclasses import dataclass

import libcst as cst

from jaxfix.analysis.dataflow import activity
from jaxfix.analysis.jit import only_arithmetic
from jaxfix.analysis.screen import binding_count, ast_target_names
from jaxfix.analysis.syntax import walk
from jaxfix.analysis.traced import FUNCTION_MAKERS
from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.diagnostics import Safety

_JIT = "jax.jit"
_PARTIAL = "functools.partial"
# A loop that reads a clock or clears JAX's caches measures compilation: its re-jit is the point, not a mistake.
_MEASURING = frozenset({
    "jax.clear_caches", "time.perf_counter", "time.perf_counter_ns", "time.time", "time.time_ns", "time.monotonic",
    "time.monotonic_ns", "time.process_time", "timeit.default_timer", "timeit.timeit", "timeit.repeat",
})  # fmt: skip
_LOOPS = (cst.For, cst.While)
# Jitted callables that are one function object on every iteration: jit finds its trace again, so the jit in the
# loop and the hoisted one compute the same (both reuse the first trace); only the wrapper is new each time.
_SAME_OBJECT = frozenset({"function", "nested function", "module function"})
# `jax.jit(f).lower(...)` on the spot: ahead-of-time lowering, which inspects or times the compilation itself.
_AOT = frozenset({"lower", "trace", "eval_shape"})


def _may_jit(screen, decorator: ast.expr) -> bool:
    """A superset of `_is_jit_decorator`: `jax.jit`, `jax.jit(...)`, `partial(jax.jit)` (any call whose callee or
    first positional argument may be jit)."""
    jit = frozenset({_JIT})
    if screen.may_resolve_to(decorator, jit):
        return True
    if not isinstance(decorator, ast.Call):
        return False
    first = decorator.args[0] if decorator.args else next((k for k in decorator.keywords if k.arg is None), None)
    if isinstance(first, (ast.Starred, ast.keyword)):
        first = first.value
    return screen.may_resolve_to(decorator.func, jit) or (first is not None and screen.may_resolve_to(first, jit))


_BOUNDARIES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _may_name(screen, func: ast.AST, last: str) -> bool:
    """Cheaper than resolving, and implied by it: an attribute `.last`, or a name that an import binds."""
    return func.attr == last if isinstance(func, ast.Attribute) else isinstance(func, ast.Name) and func.id in screen.imports


def _calls_what_the_loop_binds(function: ast.AST, loop: ast.AST) -> bool:
    """Whether a jitted def calls something the innermost loop around it rebinds as its target and the def does
    not bind itself (`for layer in layers:` around `@jax.jit def f(x): return layer(x)`): a name it reads from
    outside that the loop changes, so `_decide` finds no loop to hoist it out of and `_calls_any` declines (a
    different program on each iteration, compiled once either way). No finding comes of such a def."""
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or not isinstance(loop, (ast.For, ast.AsyncFor)):
        return False
    changed = {name for name in ast_target_names(loop.target) if not binding_count(function, name)}
    if not changed:
        return False
    for statement in function.body:
        for node in ast.walk(statement):
            if isinstance(node, ast.Call):
                root = node.func
                while isinstance(root, ast.Attribute):
                    root = root.value
                if isinstance(root, ast.Name) and root.id in changed:
                    return True
    return False


def _root_name(target: cst.Attribute) -> str | None:
    """`env` of `env.step`, `self` of `self.env.step`; None when the chain starts with a call or subscript."""
    node: cst.BaseExpression = target
    while isinstance(node, cst.Attribute):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


def _snippet(text: str, limit: int = 50) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _start(node: ast.AST) -> tuple[int, int]:
    return node.lineno, node.col_offset


def _end(node: ast.AST) -> tuple[int, int]:
    return node.end_lineno, node.end_col_offset


_MEASURES = "the loop reads a clock or clears JAX's caches: a benchmark that re-jits on purpose to time compilation"


@dataclass
class _Jit:
    """One jit inside a loop: what it compiles and the code that depends on the loop or may."""

    node: cst.CSTNode  # the `jax.jit(...)` call, or the decorated def
    what: str  # "lambda", "partial", "nested def", "bound method", "attribute", or one of _SAME_OBJECT
    free: tuple[str, ...]  # names the jitted callable (and the jit keywords) read from outside


class JitInLoop(Codemod):
    """`jax.jit` applied to a new function object on each iteration of a loop.

    ## What it does
    Finds `jax.jit(lambda ...)`, `jax.jit(partial(...))`, `jax.jit(obj.method)`, `jax.jit(jax.grad(f))` (or
    another transformation that makes a new function: `jax.value_and_grad`, `jax.vmap`, `jax.jacfwd`,
    `jax.jacrev`, `jax.hessian`, `jax.checkpoint`), and `@jax.jit` (or `@partial(jax.jit, ...)`) function
    definitions inside a `for`/`while` loop body, and moves the jit before the loop when it does not depend on
    what the loop changes.

    ## Why is this bad?
    jit caches compiled code per function object. A lambda, a `partial`, a bound method or a `def` evaluated
    in the loop is a new object each iteration, so every iteration traces and compiles again: the issue
    measured a 50-step loop 37-42x slower. `benchmarks/jit_in_loop.py` (JAX 0.10.2, this 2-core CPU, 50 steps
    on 1000 floats, two runs) counts 50 compilations before the fix and 1 after for a lambda, a `partial`, a
    nested def and a bound method alike; the loop ran 35-94x faster hoisted (1.6-4.3 s against 30-100 ms).
    `jax.grad(f)` returns a new function object on every call, so `jax.jit(jax.grad(f))` in a loop compiles on
    every iteration too: 50 compilations against 1, 39-81x slower (two runs).
    `jax.jit(f)` of one function object (a module-level or imported function, a module's function such as
    `kinematics.forward`, a nested def defined before the loop) finds its compiled code in the cache, but each
    new jit wrapper takes the slow dispatch path: `benchmarks/jit_in_loop.py` measured a warm call at 68-83 µs
    with the jit in the loop against 11 µs hoisted (two runs). `jax.jit(obj.attr)` of another object's
    attribute builds a new wrapper too, and when the attribute is a bound method (`env.step`), a new function
    object that compiles on every iteration.

    ## Example
    ```python
    for batch in batches:
        loss = jax.jit(lambda p, b: jnp.mean((b @ p) ** 2))(params, batch)
    ```

    ## Use instead
    ```python
    jitted = jax.jit(lambda p, b: jnp.mean((b @ p) ** 2))
    for batch in batches:
        loss = jitted(params, batch)
    ```

    ## Fix safety
    jit bakes what the function reads from enclosing scopes into the compiled code at trace time. In the
    loop each iteration traces again and sees the current values; hoisted, the first trace is reused. For one
    function object (above) the fix is safe: its name has one binding, outside the loop, so every iteration
    jits the same object, and jit reuses that object's first trace in the loop as it does hoisted. Otherwise
    the fix is safe when everything the jitted callable reads from outside is a module-level import, function
    or class, or a builtin (`jax.jit(jax.grad(loss))` of a module-level or imported `loss`); it is unsafe when
    it reads local variables that the loop does not rebind or store into (a call inside the loop could still
    mutate such an object, say a config dict). When a lambda jitted and called on the spot
    (`jax.jit(lambda v: v * scale)(x)`) reads names the loop rebinds (the loop variable, an accumulator), those
    become parameters of the hoisted lambda and arguments of the call (`jitted(x, scale)`), an unsafe fix: they
    then enter as traced arrays, so a Python number is computed in float32 (or int32) where it was a Python
    constant. It is offered only when each such name is an operand
    of `+ - * /` with one of the lambda's own arguments (an array, so the name holds a number or an array):
    used as a shape, an exponent, a branch or a `range` bound it would have to be a static argument, and the
    finding is reported without a fix.

    Both unsafe cases **may compute different numbers**, which is what `jaxfix apply --verify` and
    `jaxfix verify` check, and the message says which names it assumed: a local object that a call in the
    loop mutates is read once, at the first trace (a dict entry raised by 1 each iteration gave 2, 4, 6 in the
    loop and 2, 2, 2 hoisted); a name passed as an argument is rounded to float32 (`v * s` and `v / s` gave
    the same float32 and bfloat16 results for 199 values of `s`). Neither fails loudly.

    ## When it stays quiet
    - jits outside loops, and inside a function defined in the loop body (that runs when called).
    - loops that time compilation on purpose: the body reads a clock (`time.perf_counter()`, `time.time()`,
      `timeit`) or calls `jax.clear_caches()`; hoisted, the loop would time a cache hit.
    - jits whose callable calls or transforms something the loop changes (`for layer in layers:` with a jitted
      `lambda x: layer(x)`, `for loss in losses:` with `jax.jit(jax.grad(loss))`): each iteration is a
      different program, compiled once either way.
    - `jax.jit(f).lower(...)` on the spot: ahead-of-time lowering, which inspects or times compilation.
    - `jax.jit(name)` of a name that is not a def or an import (a parameter, a local result): jaxfix cannot see
      what it holds.
    It reports without a fix when `jax.jit(obj.attr)` reads an `obj` the loop rebinds (`obj.attr` may be a
    different function each time: create the object once, or jit once and pass what changes as arguments), when
    the jitted callable reads a name the loop changes and is not a lambda
    called on the spot that can take it as an argument (above), when a `def` jitted in the loop or the name
    bound to the jit has other bindings in the function, and when the function is defined (undecorated) in
    the loop and jitted there.
    """

    code = "JF502"
    name = "jit-in-loop"
    summary = "jax.jit rebuilt in a loop recompiles (lambda, partial, def, method) or re-wraps each iteration: hoist it"
    fix_safety = Safety.SAFE
    other_fix_safeties = (Safety.UNSAFE,)
    screen = ("jit",)

    VALID = (
        Valid("import jax\n\nstep = jax.jit(lambda x: x * 2)\n\ndef run(x):\n    for _ in range(3):\n        x = step(x)\n    return x\n"),
        Valid(  # a benchmark of compile time: the re-jit is what it measures
            "import time\nimport jax\n\ndef compile_times(x):\n    times = []\n    for _ in range(3):\n"
            "        start = time.perf_counter()\n        jax.jit(lambda v: v * 2)(x).block_until_ready()\n"
            "        times.append(time.perf_counter() - start)\n    return times\n"
        ),
        Valid(
            "import jax\n\ndef run(x):\n    for _ in range(3):\n        jax.clear_caches()\n\n"
            "        @jax.jit\n        def f(v):\n            return v + 1\n\n        x = f(x)\n    return x\n"
        ),
        Valid(
            "import jax\n\ndef run(x):\n    for _ in range(3):\n        def inner(y):\n"
            "            return jax.jit(lambda v: v + 1)(y)\n        x = inner(x)\n    return x\n"
        ),
        Valid(  # each layer is its own program: compiled once per layer, hoisted or not
            "import jax\n\ndef run(layers, x):\n    for layer in layers:\n"
            "        x = jax.jit(lambda v: layer(v))(x)\n    return x\n"
        ),
        Valid(  # a different loss on each iteration: a different program, compiled once either way
            "import jax\n\ndef run(losses, p, x):\n    for loss in losses:\n"
            "        p = p - jax.jit(jax.grad(loss))(p, x)\n    return p\n"
        ),
        Valid(  # ahead-of-time lowering on purpose
            "import jax\n\ndef f(v):\n    return v\n\ndef run(x):\n    for _ in range(3):\n"
            "        jax.jit(f).lower(x)\n"
        ),
    )
    INVALID = (
        Invalid(  # one function object, re-wrapped on every iteration: the hoist is safe
            "import jax\nfrom model import loss\n\ndef fit(p, xs):\n    for x in xs:\n"
            "        p = p - jax.jit(loss)(p, x)\n    return p\n",
            "import jax\nfrom model import loss\n\ndef fit(p, xs):\n    jitted = jax.jit(loss)\n    for x in xs:\n"
            "        p = p - jitted(p, x)\n    return p\n",
            message="new jit wrapper",
        ),
        Invalid(  # jax.grad makes a new function object each time: the jit around it compiles again
            "import jax\nfrom model import loss\n\ndef fit(p, xs):\n    for x in xs:\n"
            "        p = p - jax.jit(jax.grad(loss))(p, x)\n    return p\n",
            "import jax\nfrom model import loss\n\ndef fit(p, xs):\n    jitted = jax.jit(jax.grad(loss))\n    for x in xs:\n"
            "        p = p - jitted(p, x)\n    return p\n",
            message="makes a new function object",
        ),
        Invalid(  # the loop builds a new object: `env.step` may be another function each time
            "import jax\nfrom env import Env\n\ndef run(s, rates):\n    for r in rates:\n        env = Env(r)\n"
            "        s = jax.jit(env.step)(s)\n    return s\n",
            None,
            message="create the object once",
        ),
        Invalid(
            "import jax\n\ndef run(x):\n    for _ in range(3):\n        x = jax.jit(lambda v: v * 2)(x)\n    return x\n",
            "import jax\n\ndef run(x):\n    jitted = jax.jit(lambda v: v * 2)\n    for _ in range(3):\n"
            "        x = jitted(x)\n    return x\n",
            message="recompiles",
        ),
        Invalid(
            "import jax\n\ndef run(x):\n    for i in range(3):\n        x = jax.jit(lambda v: v * i)(x)\n    return x\n",
            "import jax\n\ndef run(x):\n    jitted = jax.jit(lambda v, i: v * i)\n    for i in range(3):\n"
            "        x = jitted(x, i)\n    return x\n",
            message="pass `i`",
        ),
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\ndef run(x):\n    for n in range(3):\n"
            "        x = jax.jit(lambda v: jnp.tile(v, n))(x)\n    return x\n",
            None,
            message="static argument",
        ),
    )

    @classmethod
    def may_match_tree(cls, screen) -> bool:
        """A finding needs, in the body of a loop with no def, lambda or class between, a call that may be
        `jax.jit` with one positional argument (a lambda, a call that may be `partial`, an attribute chain that
        starts with a name, the name of some def or of an import), or a def with one decorator that may be jit
        (`_may_jit`) that calls nothing the innermost loop binds as its target (`_calls_what_the_loop_binds`)."""
        jit = frozenset({_JIT})
        candidates: list[ast.AST] = []
        for node in screen.imported_calls:
            if _may_name(screen, node.func, "jit") and screen.may_resolve_to(node.func, jit):
                candidates.append(node)
        for node in screen.nodes_of(ast.FunctionDef, ast.AsyncFunctionDef):
            if len(node.decorator_list) == 1 and _may_jit(screen, node.decorator_list[0]):
                candidates.append(node)
        if not candidates:
            return False
        defs = {n.name for n, _ in screen.statements if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}

        def jits_something_new(call: ast.Call) -> bool:  # `_what` is not None
            if len(call.args) != 1 or isinstance(call.args[0], ast.Starred) or any(k.arg is None for k in call.keywords):
                return False  # LibCST's positional arguments: those without a keyword, `**` included
            target = call.args[0]
            if isinstance(target, ast.Attribute):  # `_root_name` is not None
                while isinstance(target, ast.Attribute):
                    target = target.value
                return isinstance(target, ast.Name)
            return (
                isinstance(target, ast.Lambda)
                or (isinstance(target, ast.Call) and screen.may_resolve_to(target.func, frozenset({_PARTIAL})))
                or (isinstance(target, ast.Call) and screen.may_resolve_to(target.func, FUNCTION_MAKERS))
                or (isinstance(target, ast.Name) and (target.id in defs or target.id in screen.imports))
            )

        candidates = [n for n in candidates if not isinstance(n, ast.Call) or jits_something_new(n)]
        if not candidates:
            return False
        boundaries = screen.nodes_of(*_BOUNDARIES)
        loops = screen.nodes_of(ast.For, ast.AsyncFor, ast.While)

        def innermost(node: ast.AST) -> ast.AST | None:  # `_loops(node)[0]`: by positions, since blocks nest
            where = _start(node)
            inner = max((_start(b) for b in boundaries if b is not node and _start(b) <= where < _end(b)), default=None)
            around = [
                loop for loop in loops
                if _start(loop.body[0]) <= where < _end(loop.body[-1]) and (inner is None or _start(loop) > inner)
            ]
            return max(around, key=_start, default=None)

        for node in candidates:
            loop = innermost(node)
            if loop is not None and not _calls_what_the_loop_binds(node, loop):
                return True
        return False

    # ---- matching ----------------------------------------------------------------------------------------

    def visit_Call(self, node: cst.Call) -> None:
        if self.context.names.qualified(node.func) != _JIT:
            return
        parent = self.context.parents.get(node)
        if isinstance(parent, cst.Decorator):
            return  # `@jax.jit(...)` on a def: visit_FunctionDef's
        if isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value in _AOT:
            return  # `jax.jit(f).lower(x)`: lowering on purpose, to inspect or time what it compiles
        loops = self._loops(node)
        if not loops:
            return
        if self._measures_compilation(loops[0]):
            return self.decline(node, _MEASURES)
        positional = [a for a in node.args if a.keyword is None]
        if len(positional) != 1 or positional[0].star:
            return self.decline(node, "a jax.jit call in a loop, but not of one positional function")
        target = positional[0].value
        what = self._what(target, loops[0])
        if what is None:
            return self.decline(node, "the jitted function is not a lambda, a nested def or a name bound in the loop: jaxfix cannot tell that it is rebuilt each step")
        free = self._free(target) + self._keyword_names(node)
        self._decide(_Jit(node, what, free), loops)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if len(node.decorators) != 1 or not self._is_jit_decorator(node.decorators[0].decorator):
            return
        loops = self._loops(node)
        if not loops:
            return
        if self._measures_compilation(loops[0]):
            return self.decline(node.name, _MEASURES)
        self._decide(_Jit(node, "nested def", self._free(node)), loops)

    def _measures_compilation(self, loop: cst.For | cst.While) -> bool:
        """Whether the loop's body reads a clock or calls `jax.clear_caches()`: a benchmark that re-jits on
        purpose to time compilation, which hoisting would turn into timing a cache hit."""
        names = self.context.names
        return any(isinstance(n, cst.Call) and names.qualified(n.func) in _MEASURING for n in walk(loop.body))

    def _is_jit_decorator(self, decorator: cst.BaseExpression) -> bool:
        names = self.context.names
        if names.qualified(decorator) == _JIT:
            return True
        if isinstance(decorator, cst.Call):
            if names.qualified(decorator.func) == _JIT:
                return all(a.keyword is not None for a in decorator.args)
            positional = [a for a in decorator.args if a.keyword is None]
            return names.qualified(decorator.func) == _PARTIAL and len(positional) == 1 and names.qualified(positional[0].value) == _JIT
        return False

    def _loops(self, node: cst.CSTNode) -> list[cst.For | cst.While]:
        """The loops around `node` within its function, innermost first; empty when a def or lambda comes
        first, or when `node` sits in a loop's iterable, test or `else`."""
        found = []
        parents = self.context.parents
        child, current = node, parents.get(node)
        while current is not None and not isinstance(current, (cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.Module)):
            if isinstance(current, _LOOPS) and child is current.body:
                found.append(current)
            child, current = current, parents.get(current)
        if isinstance(current, cst.Lambda) or (isinstance(current, cst.FunctionDef) and found and current is node):
            return []
        return found

    def _what(self, target: cst.BaseExpression, loop) -> str | None:
        if isinstance(target, cst.Lambda):
            return "lambda"
        if isinstance(target, cst.Call) and self.context.names.qualified(target.func) == _PARTIAL:
            return "partial"
        if isinstance(target, cst.Call) and self.context.names.qualified(target.func) in FUNCTION_MAKERS:
            return "transformed function"  # `jax.jit(jax.grad(loss))`: jax.grad makes a new function each time
        if isinstance(target, cst.Attribute):
            if self._bound_method(target):
                return "bound method"
            root = _root_name(target)
            if root is None:
                return None
            if self.context.names.qualified(target) is not None and self._module_constant(root):
                return "module function"  # `kinematics.forward`: an attribute of an imported module
            return "attribute"
        if isinstance(target, cst.Name):
            if any(isinstance(n, cst.FunctionDef) and n.name.value == target.value for n in walk(loop.body)):
                return "function defined in the loop"
            if self._nested_function(target):
                return "nested function"
            if self._module_function(target.value) or self._imported(target):
                return "function"
        return None

    def _imported(self, target: cst.Name) -> bool:
        """A name a module-level import binds once (`from model import loss`), not shadowed in the function."""
        function = self.context.dataflow.enclosing_function(target)
        if function is not None and target.value in self.context.dataflow.flow(function).locals:
            return False
        return self._module_constant(target.value) and self.context.names.qualified(target) is not None

    def _nested_function(self, target: cst.Name) -> bool:
        """A `def` of the enclosing function, outside the loop, that is the name's only binding there and is
        bound on every path to the jit: every iteration reads the same function object."""
        function = self.context.dataflow.enclosing_function(target)
        if not isinstance(function, cst.FunctionDef) or self._bindings(function, target.value) != 1:
            return False
        defs = (n for n in walk(function) if isinstance(n, cst.FunctionDef) and n is not function)
        if not any(n.name.value == target.value for n in defs):
            return False
        statement = self._enclosing_statement(target)
        return statement is not None and self.context.dataflow.flow(function).defined_before(statement, target.value)

    def _enclosing_statement(self, node: cst.CSTNode) -> cst.CSTNode | None:
        parents = self.context.parents
        while node is not None and not isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            node = parents.get(node)
        return node

    def _bound_method(self, target: cst.Attribute) -> bool:
        """`self.method` in a method of a class that defines `method` (not as a staticmethod): a new bound
        method object at each access. Other attributes may hold one function object (a NamedTuple's field,
        optax's `tx.update`), which jit's cache finds again."""
        if not isinstance(target.value, cst.Name):
            return False
        parents = self.context.parents
        function = self.context.dataflow.enclosing_function(target)
        while isinstance(function, cst.Lambda):
            function = self.context.dataflow.enclosing_function(function)
        if not isinstance(function, cst.FunctionDef) or not function.params.params:
            return False
        if function.params.params[0].name.value != target.value.value:
            return False
        block = parents.get(function)
        owner = parents.get(block)
        if not isinstance(owner, cst.ClassDef):
            return False
        for statement in owner.body.body:
            if isinstance(statement, cst.FunctionDef) and statement.name.value == target.attr.value:
                return not any(
                    isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod" for d in statement.decorators
                ) and not any(
                    isinstance(d.decorator, cst.Name) and d.decorator.value == "classmethod" for d in function.decorators
                )
        return False

    def _free(self, target: cst.CSTNode) -> tuple[str, ...]:
        """What the callable reads from outside: a lambda's or def's free names and the default values,
        annotations and decorators evaluated where it is defined; everything a `partial(...)` reads."""
        act = activity(target if isinstance(target, cst.FunctionDef) else cst.Expr(target))
        return tuple(dict.fromkeys((*act.reads, *act.captured)))

    def _keyword_names(self, call: cst.Call) -> tuple[str, ...]:
        names: list[str] = []
        for arg in call.args:
            if arg.keyword is not None:
                names.extend(activity(cst.Expr(arg.value)).reads)
        return tuple(names)

    def _module_function(self, name: str) -> bool:
        bound = [s for s in self.context.module.body if self._binds(s, name)]
        return len(bound) == 1 and isinstance(bound[0], cst.FunctionDef)

    @staticmethod
    def _binds(statement: cst.CSTNode, name: str) -> bool:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            return statement.name.value == name
        return name in activity(statement, deep=False).writes

    def _module_constant(self, name: str) -> bool:
        """A module-level import, function or class bound once, or a builtin: the same object all along."""
        bound = [s for s in self.context.module.body if self._binds(s, name)]
        if not bound:
            import builtins

            return hasattr(builtins, name)
        if len(bound) != 1:
            return False
        statement = bound[0]
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            return True
        return isinstance(statement, cst.SimpleStatementLine) and all(
            isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement.body
        )

    # ---- deciding ----------------------------------------------------------------------------------------

    def _decide(self, jit: _Jit, loops) -> None:
        same_object = jit.what in _SAME_OBJECT
        if same_object or jit.what == "attribute":
            code = self.context.code_for(jit.node.args[0].value)
            problem = f"`jax.jit({code})` in a loop body builds a new jit wrapper on every iteration"
            if jit.what == "attribute":
                problem += (
                    f", so each call takes jit's slow dispatch path; if `{code}` is a bound method, it is also a new "
                    "function object that compiles again"
                )
            else:
                problem += ": jit's cache still holds the compiled code, but each call takes the slow dispatch path"
        elif jit.what == "transformed function":
            inner = jit.node.args[0].value
            problem = (
                f"`jax.jit({_snippet(self.context.code_for(inner))})` in a loop body recompiles on every iteration: "
                f"`{self.context.code_for(inner.func)}` makes a new function object each time, which jit's cache "
                "does not find"
            )
        else:
            problem = f"`jax.jit` of a {jit.what} in a loop body recompiles on every iteration (a new function object each time)"
        if jit.what == "function defined in the loop":
            self.report(jit.node, f"{problem}; not hoisted: define the function outside the loop")
            return
        function = self.context.dataflow.enclosing_function(jit.node)
        flow = self.context.dataflow.flow(function)
        # The outermost loop that the jitted callable does not depend on.
        chosen = None
        for loop in loops:
            changed = self._changed_in(loop)
            dependent = [n for n in jit.free if n in changed]
            if dependent:
                break
            chosen = loop
        if chosen is None:
            changed = self._changed_in(loops[0])
            dependent = [n for n in jit.free if n in changed]
            names = ", ".join(f"`{n}`" for n in dependent)
            if jit.what == "attribute":
                code = self.context.code_for(jit.node.args[0].value)
                self.report(
                    jit.node,
                    f"{problem}; not hoisted: the loop changes {names}, so `{code}` may be a different function on "
                    "each iteration; create the object once before the loop, or jit the function once there and "
                    "pass what changes as arguments",
                )
                return
            if self._calls_any(jit, dependent):  # `for layer in layers: jax.jit(lambda x: layer(x))`
                return self.decline(
                    jit.node, "it calls or transforms what the loop changes: a different program on each iteration, "
                    "compiled once either way",
                )
            passed = self._pass_as_arguments(jit, loops, dependent)
            if isinstance(passed, str):
                self.report(jit.node, f"{problem}; not hoisted: it reads {names}, which the loop changes ({passed})")
                return
            self._report_passing(jit, passed, dependent, problem, flow)
            return
        local = [] if same_object else [n for n in jit.free if n in flow.locals or not self._module_constant(n)]
        fix = self._fix(jit, chosen, flow)
        if fix is None:
            self.report(
                jit.node,
                f"{problem}; not hoisted: it sits in a `with` or `try` block, is the only statement of its block, "
                "or the name it is bound to has other bindings in the function",
            )
            return
        if local:
            names = ", ".join(f"`{n}`" for n in local)
            fix = self.fix(fix[0], fix[1], safety=Safety.UNSAFE)
            self.report(jit.node, f"{problem}; hoist it out of the loop (unsafe: it reads {names}, which a call in the loop could still mutate)", fix)
        else:
            self.report(jit.node, f"{problem}; hoist it out of the loop", self.fix(*fix))

    def _calls_any(self, jit: _Jit, names: list[str]) -> bool:
        """Whether the jitted callable calls one of `names` or a method of it (`layer(x)`, `layer.attend(x)`): the
        loop then hands it a different function or module on each iteration, which compiles as a program of its
        own whether or not the jit is hoisted."""
        callable_ = jit.node if isinstance(jit.node, cst.FunctionDef) else jit.node.args[0].value
        if jit.what == "transformed function" and self._transforms_any(callable_, names):
            return True  # `jax.jit(jax.grad(layer_loss))` of a function the loop changes
        for node in walk(callable_):
            if isinstance(node, cst.Call):
                func = node.func
                while isinstance(func, cst.Attribute):
                    func = func.value
                if isinstance(func, cst.Name) and func.value in names:
                    return True
        return False

    def _transforms_any(self, call: cst.BaseExpression, names: list[str]) -> bool:
        """Whether `call`, a JAX transformation of a function (`jax.grad(f)`, `jax.vmap(jax.grad(f))`), transforms
        one of `names` or an attribute of it."""
        while isinstance(call, cst.Call) and self.context.names.qualified(call.func) in FUNCTION_MAKERS and call.args:
            call = call.args[0].value
        while isinstance(call, cst.Attribute):
            call = call.value
        return isinstance(call, cst.Name) and call.value in names

    def _pass_as_arguments(self, jit: _Jit, loops, dependent: list[str]):
        """A lambda jitted and called on the spot (`jax.jit(lambda v: v * scale)(x)`) that reads names the loop
        changes can take them as arguments instead: (the new jit call, the loop to hoist it out of). A string
        says what stops that."""
        call = self.context.parents.get(jit.node)
        lam = jit.node.args[0].value if isinstance(jit.node, cst.Call) and jit.node.args else None
        if jit.what != "lambda" or not isinstance(lam, cst.Lambda):
            return "pass it as an argument"
        if len(jit.node.args) != 1 or not (isinstance(call, cst.Call) and call.func is jit.node):
            return "pass it as an argument; jaxfix only does that for a lambda jitted without keywords and called at once"
        if any(a.keyword is not None or a.star for a in call.args):
            return "pass it as an argument; jaxfix does not add arguments to a call with keywords or unpacking"
        params = lam.params
        if params.posonly_params or params.kwonly_params or params.star_kwarg or params.star_arg not in (
            cst.MaybeSentinel.DEFAULT, None
        ) or any(p.default is not None for p in params.params):
            return "pass it as an argument; the lambda has defaults, `*args` or keyword-only parameters"
        traced = {p.name.value for p in params.params}
        for name in dependent:
            if not only_arithmetic(self.context, lam.body, name, traced):
                return (
                    f"`{name}` is used other than as an operand of `+ - * /` with an argument, so it may need to "
                    "stay a Python value: pass it as a static argument"
                )
        new_params = [*params.params, *(cst.Param(cst.Name(n)) for n in dependent)]
        new_params = [p.with_changes(comma=cst.MaybeSentinel.DEFAULT) for p in new_params]
        new_lambda = lam.with_changes(params=params.with_changes(params=new_params))
        new_jit = jit.node.with_changes(args=[jit.node.args[0].with_changes(value=new_lambda)])
        free = tuple(n for n in jit.free if n not in dependent)
        chosen = None
        for loop in loops:
            if any(n in self._changed_in(loop) for n in free):
                break
            chosen = loop
        if chosen is None:
            return "pass them as arguments; it also reads others that the loop changes"
        return new_jit, chosen, call

    def _report_passing(self, jit: _Jit, passed, dependent: list[str], problem: str, flow) -> None:
        new_jit, loop, call = passed
        extra = [cst.Arg(cst.Name(n)) for n in dependent]
        names = ", ".join(f"`{n}`" for n in dependent)
        fix = self._fix(jit, loop, flow, hoisted_node=new_jit, call=call, extra=extra)
        if fix is None:
            self.report(
                jit.node, f"{problem}; not hoisted: it sits in a `with` or `try` block or is the only statement of its block"
            )
            return
        plural = len(dependent) > 1
        self.report(
            jit.node,
            f"{problem}; hoist it out of the loop and pass {names}, which the loop changes, as "
            f"{'arguments' if plural else 'an argument'} (unsafe: {names} then enter{'' if plural else 's'} as "
            f"{'traced arrays' if plural else 'a traced array'}, so a Python number is computed in float32 or int32)",
            self.fix(fix[0] + f", passing {names}", fix[1], safety=Safety.UNSAFE),
        )

    def _changed_in(self, loop) -> set[str]:
        act = activity(loop)
        return set(act.writes) | set(act.deletes) | set(act.mutations) | set(act.declared)

    # ---- the fix -----------------------------------------------------------------------------------------

    def _fix(self, jit: _Jit, loop, flow, *, hoisted_node=None, call=None, extra=()):
        """(description, changes), or None when the jit cannot be moved as it is. With `hoisted_node`, that is
        what moves (a lambda that takes more parameters), and `call`, the call of the jit in the loop, gets the
        `extra` arguments."""
        parents = self.context.parents
        current = parents.get(jit.node)
        while current is not loop:
            if isinstance(current, (cst.With, cst.Try, cst.TryStar)):
                return None  # a context manager or handler around it would no longer apply
            current = parents.get(current)
        statement = self._statement_in(jit.node, loop)
        moved_whole = None
        if isinstance(jit.node, cst.FunctionDef) and statement is jit.node:
            moved_whole, bound = jit.node, jit.node.name.value
        elif isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
            small = statement.body[0]
            if (
                isinstance(small, cst.Assign) and small.value is jit.node and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name)
            ):
                moved_whole, bound = statement, small.targets[0].target.value
        if moved_whole is not None:
            if self._bindings(flow.function, bound) != 1:
                return None
            block = self.context.parents[moved_whole]
            if not isinstance(block, cst.IndentedBlock) or len(block.body) == 1:
                return None  # the block would be empty
            body = list(block.body)
            index = body.index(moved_whole)
            del body[index]
            if index < len(body):  # the blank lines that set the moved def apart go with it
                rest = body[index]
                rest = rest.with_changes(leading_lines=[l for l in rest.leading_lines if l.comment is not None])
                body[index] = rest
            new_loop = loop.deep_replace(block, block.with_changes(body=body))
            hoisted = moved_whole
            description = f"move `{bound}` before the loop"
        elif isinstance(jit.node, cst.Call):
            name = self.context.fresh_names.take("jitted", "jitted_fn", "compiled")
            value = hoisted_node if hoisted_node is not None else jit.node
            hoisted = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))], value)])
            if call is not None:
                args = list(call.args)
                if args and args[-1].comma is cst.MaybeSentinel.DEFAULT:
                    args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                new_call = call.with_changes(func=cst.Name(name), args=[*args, *extra])
                new_loop = loop.deep_replace(call, new_call)
            else:
                new_loop = loop.deep_replace(jit.node, cst.Name(name))
            description = f"bind the jitted function to `{name}` before the loop"
        else:
            return None
        if isinstance(hoisted, cst.FunctionDef):  # a def keeps its comments, then a blank line before the loop
            kept = [line for line in hoisted.leading_lines if line.comment is not None]
            hoisted = hoisted.with_changes(leading_lines=[*loop.leading_lines, *kept])
            new_loop = new_loop.with_changes(leading_lines=[cst.EmptyLine(indent=False)])
        else:
            hoisted = hoisted.with_changes(leading_lines=loop.leading_lines)
            new_loop = new_loop.with_changes(leading_lines=())
        return description, [(loop, cst.FlattenSentinel([hoisted, new_loop]))]

    def _statement_in(self, node: cst.CSTNode, loop) -> cst.CSTNode | None:
        """The statement that contains `node` directly in some block inside `loop`."""
        parents = self.context.parents
        while node is not None and node is not loop:
            if isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                return node
            node = parents.get(node)
        return None

    def _bindings(self, function, name: str) -> int:
        count = 0
        for node in walk(function):
            if isinstance(node, (cst.FunctionDef, cst.ClassDef)) and node.name.value == name and node is not function:
                count += 1
            elif isinstance(node, (cst.SimpleStatementLine, cst.For, cst.With)):
                acts = activity(node, deep=False)
                if name in acts.writes and not isinstance(node, cst.For):
                    count += 1
                elif isinstance(node, cst.For) and name in activity(cst.Expr(node.target)).reads:
                    count += 1
        params = getattr(function, "params", None)
        if params is not None and any(p.name.value == name for p in (*params.params, *params.posonly_params, *params.kwonly_params)):
            count += 1
        return count
