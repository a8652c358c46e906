"""JF502: `jax.jit` of a new function object inside a loop recompiles on every iteration. On `ast` (`check`): the
binder's names, the flow facts (`jaxfix.facts.flow`: reads and writes, LibCST's lines and statements, `Reaching`,
the bindings of a name); the hoist is planned on `ast` and built on LibCST by `fix_finding`."""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass

import libcst as cst

from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.diagnostics import Diagnostic, Fix, Safety
from jaxfix.facts.flow import (
    TRIES, Reaching, activity, binding_statements, block_of, statement_of,
    top_level_bindings,
)
from jaxfix.facts.jitted import only_arithmetic
from jaxfix.facts.knowledge.jax import FUNCTION_MAKERS, PARTIAL
from jaxfix.facts.module import FileFacts, in_order, value_of

_JIT = "jax.jit"
# A loop that reads a clock or clears JAX's caches measures compilation: its re-jit is the point, not a mistake.
_MEASURING = frozenset({
    "jax.clear_caches", "time.perf_counter", "time.perf_counter_ns", "time.time", "time.time_ns", "time.monotonic",
    "time.monotonic_ns", "time.process_time", "timeit.default_timer", "timeit.timeit", "timeit.repeat",
})  # fmt: skip
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPES = (*_DEFS, ast.Lambda, ast.ClassDef)
# Jitted callables that are one function object on every iteration: jit finds its trace again, so the jit in the
# loop and the hoisted one compute the same (both reuse the first trace); only the wrapper is new each time.
_SAME_OBJECT = frozenset({"function", "nested function", "module function"})
# `jax.jit(f).lower(...)` on the spot: ahead-of-time lowering, which inspects or times the compilation itself.
_AOT = frozenset({"lower", "trace", "eval_shape"})


def _snippet(text: str, limit: int = 50) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


_MEASURES = "the loop reads a clock or clears JAX's caches: a benchmark that re-jits on purpose to time compilation"


@dataclass
class _Jit:
    """One jit inside a loop: what it compiles and the code that depends on the loop or may."""

    node: ast.AST  # the `jax.jit(...)` call, or the decorated def
    what: str  # "lambda", "partial", "nested def", "bound method", "attribute", or one of _SAME_OBJECT
    free: tuple[str, ...]  # names the jitted callable (and the jit keywords) read from outside
    target: ast.AST | None = None  # the jitted callable of a call


@dataclass(frozen=True)
class _Plan:
    """What `fix_finding` builds: `kind` "def" or "line" (the statement `moved` goes before `loop`), "call" (the jit
    call `moved` is bound to `name` before the loop), "pass" (that, with `extra` names added to the lambda's
    parameters and to the arguments of its call `call`)."""

    kind: str
    loop: ast.AST
    moved: ast.AST
    name: str = ""
    call: ast.AST | None = None
    extra: tuple[str, ...] = ()

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

    looks_at = ("Call", "FunctionDef")

    @classmethod
    def check(cls, facts: FileFacts) -> list[Diagnostic]:
        """Each `jax.jit(...)` call and each def with one jit decorator in a loop's body (no def, lambda or class
        between), in the order LibCST visits them (which decides the fresh names of their fixes)."""
        binder = facts.binder
        candidates: list[ast.AST] = [c for c in binder.calls if binder.qualified(c.func) == _JIT]
        candidates += [d for d in binder.nodes_of(*_DEFS) if len(d.decorator_list) == 1]
        if not candidates:
            return []
        module = _Module(cls, facts)
        found = []
        for node in sorted(candidates, key=_visit_order):
            finding = module.jit_call(node) if type(node) is ast.Call else module.jitted_def(node)
            if finding is not None:
                found.append(finding)
        return found

    @classmethod
    def fix_finding(cls, finding: Diagnostic, bridge) -> Fix | None:
        plan: _Plan = finding.plan
        loop = bridge.cst_of(plan.loop)
        if not isinstance(loop, (cst.For, cst.While)):
            return None
        if plan.kind in ("def", "line"):
            moved_whole = bridge.cst_of(plan.moved) if plan.kind == "def" else bridge.line_of(plan.moved)
            block = bridge.parent(moved_whole) if moved_whole is not None else None
            if not isinstance(block, cst.IndentedBlock):
                return None
            body = list(block.body)
            index = body.index(moved_whole)
            del body[index]
            if index < len(body):  # the blank lines that set the moved def apart go with it
                rest = body[index]
                rest = rest.with_changes(leading_lines=[l for l in rest.leading_lines if l.comment is not None])
                body[index] = rest
            new_loop = loop.deep_replace(block, block.with_changes(body=body))
            hoisted = moved_whole
        else:
            jit = bridge.cst_of(plan.moved)
            if not isinstance(jit, cst.Call):
                return None
            value = jit
            if plan.kind == "pass":
                call = bridge.cst_of(plan.call)
                lam = jit.args[0].value
                if not isinstance(call, cst.Call) or not isinstance(lam, cst.Lambda):
                    return None
                params = lam.params
                new_params = [*params.params, *(cst.Param(cst.Name(n)) for n in plan.extra)]
                new_params = [p.with_changes(comma=cst.MaybeSentinel.DEFAULT) for p in new_params]
                new_lambda = lam.with_changes(params=params.with_changes(params=new_params))
                value = jit.with_changes(args=[jit.args[0].with_changes(value=new_lambda)])
                args = list(call.args)
                if args and args[-1].comma is cst.MaybeSentinel.DEFAULT:
                    args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                extra = [cst.Arg(cst.Name(n)) for n in plan.extra]
                new_loop = loop.deep_replace(call, call.with_changes(func=cst.Name(plan.name), args=[*args, *extra]))
            else:
                new_loop = loop.deep_replace(jit, cst.Name(plan.name))
            hoisted = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(plan.name))], value)])
        if isinstance(hoisted, cst.FunctionDef):  # a def keeps its comments, then a blank line before the loop
            kept = [line for line in hoisted.leading_lines if line.comment is not None]
            hoisted = hoisted.with_changes(leading_lines=[*loop.leading_lines, *kept])
            new_loop = new_loop.with_changes(leading_lines=[cst.EmptyLine(indent=False)])
        else:
            hoisted = hoisted.with_changes(leading_lines=loop.leading_lines)
            new_loop = new_loop.with_changes(leading_lines=())
        return Fix(finding.fix.safety, finding.fix.description, ((loop, cst.FlattenSentinel([hoisted, new_loop])),))


def _visit_order(node: ast.AST) -> tuple:
    """LibCST's visiting order: by where the node starts, a def at its first decorator and before what is in it,
    an enclosing call before the calls it holds (which start where it starts)."""
    if type(node) is ast.Call:
        return (node.lineno, node.col_offset, 1, -node.end_lineno, -node.end_col_offset)
    first = node.decorator_list[0] if node.decorator_list else node
    return (first.lineno, first.col_offset, 0, 0, 0)


class _Module:
    """The facts one module's check reads, each made on first use."""

    def __init__(self, rule: type[JitInLoop], facts: FileFacts) -> None:
        self.rule = rule
        self.facts = facts
        self.binder = facts.binder
        self.parents = facts.binder.parents
        self.lines = facts.lines
        self._tops: dict[str, list[ast.stmt]] | None = None
        self._changed: dict[ast.AST, set[str]] = {}

    # ---- matching ------------------------------------------------------------------------------------------------

    def jit_call(self, node: ast.Call) -> Diagnostic | None:
        parent = self.parents.get(node)
        if isinstance(parent, (*_DEFS, ast.ClassDef)) and any(d is node for d in parent.decorator_list):
            return None  # `@jax.jit(...)` on a def: `jitted_def`'s
        if type(parent) is ast.Attribute and parent.value is node and parent.attr in _AOT:
            return None  # `jax.jit(f).lower(x)`: lowering on purpose, to inspect or time what it compiles
        loops = self._loops(node)
        if not loops:
            return None
        if self._measures_compilation(loops[0]):
            return self._decline(node, _MEASURES)
        positional = [*node.args, *(k for k in node.keywords if k.arg is None)]  # LibCST's: `**k` too
        if len(positional) != 1 or type(positional[0]) in (ast.Starred, ast.keyword):
            return self._decline(node, "a jax.jit call in a loop, but not of one positional function")
        target = positional[0]
        what = self._what(target, loops[0])
        if what is None:
            return self._decline(node, "the jitted function is not a lambda, a nested def or a name bound in the loop: jaxfix cannot tell that it is rebuilt each step")
        free = self._free(target) + self._keyword_names(node)
        return self._decide(_Jit(node, what, free, target), loops)

    def jitted_def(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> Diagnostic | None:
        if not self._is_jit_decorator(node.decorator_list[0]):
            return None
        loops = self._loops(node)
        if not loops:
            return None
        if self._measures_compilation(loops[0]):
            return self._decline(self.facts.positions.name_of(node), _MEASURES)
        return self._decide(_Jit(node, "nested def", self._free(node)), loops)

    def _decline(self, node: ast.AST, reason: str) -> None:
        self.facts.decline(self.rule.code, node, reason)

    def _qualified(self, node: ast.AST) -> str | None:
        return self.binder.qualified(node)

    def _measures_compilation(self, loop: ast.AST) -> bool:
        """Whether the loop's body reads a clock or calls `jax.clear_caches()`: a benchmark that re-jits on
        purpose to time compilation, which hoisting would turn into timing a cache hit."""
        return any(
            type(n) is ast.Call and self._qualified(n.func) in _MEASURING for s in loop.body for n in ast.walk(s)
        )

    def _is_jit_decorator(self, decorator: ast.expr) -> bool:
        if self._qualified(decorator) == _JIT:
            return True
        if type(decorator) is ast.Call:
            if self._qualified(decorator.func) == _JIT:
                return not decorator.args and all(k.arg is not None for k in decorator.keywords)
            positional = [*decorator.args, *(k for k in decorator.keywords if k.arg is None)]
            return (
                self._qualified(decorator.func) == PARTIAL and len(positional) == 1
                and self._qualified(value_of(positional[0])) == _JIT
            )
        return False

    def _loops(self, node: ast.AST) -> list[ast.AST]:
        """The loops around `node` within its function, innermost first; empty when a def or lambda comes
        first, or when `node` sits in a loop's iterable, test or `else`."""
        found = []
        child, current = node, self.parents.get(node)
        while current is not None and not isinstance(current, (*_SCOPES, ast.Module)):
            if isinstance(current, _LOOPS) and any(s is child for s in current.body):
                found.append(current)
            child, current = current, self.parents.get(current)
        return [] if type(current) is ast.Lambda else found

    def _what(self, target: ast.AST, loop: ast.AST) -> str | None:
        kind = type(target)
        if kind is ast.Lambda:
            return "lambda"
        if kind is ast.Call and self._qualified(target.func) == PARTIAL:
            return "partial"
        if kind is ast.Call and self._qualified(target.func) in FUNCTION_MAKERS:
            return "transformed function"  # `jax.jit(jax.grad(loss))`: jax.grad makes a new function each time
        if kind is ast.Attribute:
            if self._bound_method(target):
                return "bound method"
            root = target
            while type(root) is ast.Attribute:
                root = root.value
            if type(root) is not ast.Name:
                return None
            if self._qualified(target) is not None and self._module_constant(root.id):
                return "module function"  # `kinematics.forward`: an attribute of an imported module
            return "attribute"
        if kind is ast.Name:
            if any(type(n) in _DEFS and n.name == target.id for s in loop.body for n in ast.walk(s)):
                return "function defined in the loop"
            if self._nested_function(target):
                return "nested function"
            if self._module_function(target.id) or self._imported(target):
                return "function"
        return None

    def _function_of(self, node: ast.AST) -> ast.AST:
        """The def or lambda around `node`, else the module (class bodies are passed through)."""
        current = self.parents.get(node)
        while current is not None and not isinstance(current, (*_DEFS, ast.Lambda)):
            current = self.parents.get(current)
        return current if current is not None else self.facts.tree

    def _bound(self, function: ast.AST) -> Reaching:
        return self.facts.reaching(function)

    def _imported(self, target: ast.Name) -> bool:
        """A name a module-level import binds once (`from model import loss`), not shadowed in the function."""
        if target.id in self._bound(self._function_of(target)).locals:
            return False
        return self._module_constant(target.id) and self._qualified(target) is not None

    def _nested_function(self, target: ast.Name) -> bool:
        """A `def` of the enclosing function, outside the loop, that is the name's only binding there and is
        bound on every path to the jit: every iteration reads the same function object."""
        function = self._function_of(target)
        if type(function) not in _DEFS or binding_statements(function, target.id, self.lines) != 1:
            return False
        if not any(type(n) in _DEFS and n.name == target.id and n is not function for n in ast.walk(function)):
            return False
        statement = statement_of(target, self.parents, self.lines)
        return statement is not None and self._bound(function).defined_before(statement, target.id)

    def _bound_method(self, target: ast.Attribute) -> bool:
        """`self.method` in a method of a class that defines `method` (not as a staticmethod): a new bound
        method object at each access. Other attributes may hold one function object (a NamedTuple's field,
        optax's `tx.update`), which jit's cache finds again."""
        if type(target.value) is not ast.Name:
            return False
        function = self._function_of(target)
        while type(function) is ast.Lambda:
            function = self._function_of(function)
        if type(function) not in _DEFS or not function.args.args:
            return False
        if function.args.args[0].arg != target.value.id:
            return False
        owner = self.parents.get(function)
        if type(owner) is not ast.ClassDef:
            return False
        for statement in owner.body:
            if type(statement) in _DEFS and statement.name == target.attr:
                return not any(
                    type(d) is ast.Name and d.id == "staticmethod" for d in statement.decorator_list
                ) and not any(type(d) is ast.Name and d.id == "classmethod" for d in function.decorator_list)
        return False

    @staticmethod
    def _free(target: ast.AST) -> tuple[str, ...]:
        """What the callable reads from outside: a lambda's or def's free names and the default values,
        annotations and decorators evaluated where it is defined; everything a `partial(...)` reads."""
        act = activity(target)
        return tuple(dict.fromkeys((*act.reads, *act.captured)))

    @staticmethod
    def _keyword_names(call: ast.Call) -> tuple[str, ...]:
        names: list[str] = []
        for keyword in sorted(call.keywords, key=lambda k: (k.lineno, k.col_offset)):
            if keyword.arg is not None:
                names.extend(activity(keyword.value).reads)
        return tuple(names)

    def _top_bindings(self, name: str) -> list[ast.stmt]:
        if self._tops is None:
            self._tops = top_level_bindings(self.facts.tree, self.lines)
        return self._tops.get(name, [])

    def _module_function(self, name: str) -> bool:
        bound = self._top_bindings(name)
        return len(bound) == 1 and type(bound[0]) in _DEFS

    def _module_constant(self, name: str) -> bool:
        """A module-level import, function or class bound once, or a builtin: the same object all along."""
        bound = self._top_bindings(name)
        if not bound:
            return hasattr(builtins, name)
        if len(bound) != 1:
            return False
        statement = bound[0]
        if isinstance(statement, (*_DEFS, ast.ClassDef)):
            return True
        return all(type(s) in (ast.Import, ast.ImportFrom) for s in self._line(statement))

    def _line(self, statement: ast.stmt) -> list[ast.stmt]:
        """The statements of the line (LibCST's SimpleStatementLine) that `statement` starts."""
        block = block_of(statement, self.parents.get(statement)) or [statement]
        return next((group for _, group in self.lines.group(block) if group[0] is statement), [statement])

    def _changed_in(self, loop: ast.AST) -> set[str]:
        found = self._changed.get(loop)
        if found is None:
            act = activity(loop)
            found = self._changed[loop] = set(act.writes) | set(act.deletes) | set(act.mutations) | set(act.declared)
        return found

    # ---- deciding ------------------------------------------------------------------------------------------------

    def _code(self, node: ast.AST, holder: ast.AST) -> str:
        return self.facts.positions.with_parentheses(node, holder)

    def _decide(self, jit: _Jit, loops: list[ast.AST]) -> Diagnostic | None:
        same_object = jit.what in _SAME_OBJECT
        if same_object or jit.what == "attribute":
            code = self._code(jit.target, jit.node)
            problem = f"`jax.jit({code})` in a loop body builds a new jit wrapper on every iteration"
            if jit.what == "attribute":
                problem += (
                    f", so each call takes jit's slow dispatch path; if `{code}` is a bound method, it is also a new "
                    "function object that compiles again"
                )
            else:
                problem += ": jit's cache still holds the compiled code, but each call takes the slow dispatch path"
        elif jit.what == "transformed function":
            inner = jit.target
            problem = (
                f"`jax.jit({_snippet(self._code(inner, jit.node))})` in a loop body recompiles on every iteration: "
                f"`{self.facts.positions.callee(inner)}` makes a new function object each time, which jit's cache "
                "does not find"
            )
        else:
            problem = f"`jax.jit` of a {jit.what} in a loop body recompiles on every iteration (a new function object each time)"
        report = self.rule.finding
        if jit.what == "function defined in the loop":
            return report(self.facts, jit.node, f"{problem}; not hoisted: define the function outside the loop")
        function = self._function_of(jit.node)
        flow = self._bound(function)
        # The outermost loop that the jitted callable does not depend on.
        chosen = None
        for loop in loops:
            changed = self._changed_in(loop)
            if any(n in changed for n in jit.free):
                break
            chosen = loop
        if chosen is None:
            changed = self._changed_in(loops[0])
            dependent = [n for n in jit.free if n in changed]
            names = ", ".join(f"`{n}`" for n in dependent)
            if jit.what == "attribute":
                code = self._code(jit.target, jit.node)
                return report(
                    self.facts, jit.node,
                    f"{problem}; not hoisted: the loop changes {names}, so `{code}` may be a different function on "
                    "each iteration; create the object once before the loop, or jit the function once there and "
                    "pass what changes as arguments",
                )
            if self._calls_any(jit, dependent):  # `for layer in layers: jax.jit(lambda x: layer(x))`
                return self._decline(
                    jit.node, "it calls or transforms what the loop changes: a different program on each iteration, "
                    "compiled once either way",
                )
            passed = self._pass_as_arguments(jit, loops, dependent)
            if isinstance(passed, str):
                return report(self.facts, jit.node, f"{problem}; not hoisted: it reads {names}, which the loop changes ({passed})")
            return self._report_passing(jit, passed, dependent, problem, function)
        local = [] if same_object else [n for n in jit.free if n in flow.locals or not self._module_constant(n)]
        fix = self._plan(jit, chosen, function)
        if fix is None:
            return report(
                self.facts, jit.node,
                f"{problem}; not hoisted: it sits in a `with` or `try` block, is the only statement of its block, "
                "or the name it is bound to has other bindings in the function",
            )
        description, plan = fix
        if local:
            names = ", ".join(f"`{n}`" for n in local)
            return report(
                self.facts, jit.node,
                f"{problem}; hoist it out of the loop (unsafe: it reads {names}, which a call in the loop could still mutate)",
                safety=Safety.UNSAFE, description=description, plan=plan,
            )
        return report(self.facts, jit.node, f"{problem}; hoist it out of the loop", description=description, plan=plan)

    def _calls_any(self, jit: _Jit, names: list[str]) -> bool:
        """Whether the jitted callable calls one of `names` or a method of it (`layer(x)`, `layer.attend(x)`): the
        loop then hands it a different function or module on each iteration, which compiles as a program of its
        own whether or not the jit is hoisted."""
        callable_ = jit.node if type(jit.node) in _DEFS else jit.target
        if jit.what == "transformed function" and self._transforms_any(callable_, names):
            return True  # `jax.jit(jax.grad(layer_loss))` of a function the loop changes
        for node in ast.walk(callable_):
            if type(node) is ast.Call:
                func = node.func
                while type(func) is ast.Attribute:
                    func = func.value
                if type(func) is ast.Name and func.id in names:
                    return True
        return False

    def _transforms_any(self, call: ast.AST, names: list[str]) -> bool:
        """Whether `call`, a JAX transformation of a function (`jax.grad(f)`, `jax.vmap(jax.grad(f))`), transforms
        one of `names` or an attribute of it."""
        while type(call) is ast.Call and self._qualified(call.func) in FUNCTION_MAKERS and in_order(call):
            call = value_of(in_order(call)[0])
        while type(call) is ast.Attribute:
            call = call.value
        return type(call) is ast.Name and call.id in names

    def _pass_as_arguments(self, jit: _Jit, loops: list[ast.AST], dependent: list[str]):
        """A lambda jitted and called on the spot (`jax.jit(lambda v: v * scale)(x)`) that reads names the loop
        changes can take them as arguments instead: (the loop to hoist it out of, the call of the jit). A string
        says what stops that."""
        call = self.parents.get(jit.node)
        lam = jit.target
        if jit.what != "lambda" or type(lam) is not ast.Lambda:
            return "pass it as an argument"
        if len(in_order(jit.node)) != 1 or not (type(call) is ast.Call and call.func is jit.node):
            return "pass it as an argument; jaxfix only does that for a lambda jitted without keywords and called at once"
        if call.keywords or any(type(a) is ast.Starred for a in call.args):
            return "pass it as an argument; jaxfix does not add arguments to a call with keywords or unpacking"
        params = lam.args
        if params.posonlyargs or params.kwonlyargs or params.kwarg or params.vararg or params.defaults:
            return "pass it as an argument; the lambda has defaults, `*args` or keyword-only parameters"
        traced = {p.arg for p in params.args}
        for name in dependent:
            if not only_arithmetic(self.facts.binder, lam.body, name, traced):
                return (
                    f"`{name}` is used other than as an operand of `+ - * /` with an argument, so it may need to "
                    "stay a Python value: pass it as a static argument"
                )
        free = tuple(n for n in jit.free if n not in dependent)
        chosen = None
        for loop in loops:
            if any(n in self._changed_in(loop) for n in free):
                break
            chosen = loop
        if chosen is None:
            return "pass them as arguments; it also reads others that the loop changes"
        return chosen, call

    def _report_passing(self, jit: _Jit, passed, dependent: list[str], problem: str, function: ast.AST) -> Diagnostic:
        loop, call = passed
        names = ", ".join(f"`{n}`" for n in dependent)
        fix = self._plan(jit, loop, function, call=call, extra=tuple(dependent))
        if fix is None:
            return self.rule.finding(
                self.facts, jit.node,
                f"{problem}; not hoisted: it sits in a `with` or `try` block or is the only statement of its block",
            )
        description, plan = fix
        plural = len(dependent) > 1
        return self.rule.finding(
            self.facts, jit.node,
            f"{problem}; hoist it out of the loop and pass {names}, which the loop changes, as "
            f"{'arguments' if plural else 'an argument'} (unsafe: {names} then enter{'' if plural else 's'} as "
            f"{'traced arrays' if plural else 'a traced array'}, so a Python number is computed in float32 or int32)",
            safety=Safety.UNSAFE, description=description + f", passing {names}", plan=plan,
        )

    # ---- the fix's plan ------------------------------------------------------------------------------------------

    def _plan(self, jit: _Jit, loop: ast.AST, function: ast.AST, *, call=None, extra=()):
        """(description, plan), or None when the jit cannot be moved as it is. With `call`, the call of the jit in
        the loop, the lambda takes the `extra` names as parameters and the call passes them."""
        current = self.parents.get(jit.node)
        while current is not loop:
            if isinstance(current, (ast.With, ast.AsyncWith, *TRIES)):
                return None  # a context manager or handler around it would no longer apply
            current = self.parents.get(current)
        statement = statement_of(jit.node, self.parents, self.lines, stop=loop)
        kind = bound = None
        if type(jit.node) in _DEFS and statement is jit.node:
            kind, bound = "def", jit.node.name
        elif type(statement) is ast.Assign:
            line = self._line(statement)
            if (
                len(line) == 1 and statement.value is jit.node and len(statement.targets) == 1
                and type(statement.targets[0]) is ast.Name
            ):
                kind, bound = "line", statement.targets[0].id
        if kind is not None:
            if binding_statements(function, bound, self.lines) != 1:
                return None
            block = block_of(statement, self.parents.get(statement))
            if block is None or len(self.lines.group(block)) == 1:
                return None  # the block would be empty
            return f"move `{bound}` before the loop", _Plan(kind, loop, statement)
        if type(jit.node) is ast.Call:
            name = self.facts.fresh_names.take("jitted", "jitted_fn", "compiled")
            plan = _Plan("pass" if call is not None else "call", loop, jit.node, name, call, tuple(extra))
            return f"bind the jitted function to `{name}` before the loop", plan
        return None
