"""JF503: a static jit argument that receives a different float at each call compiles at each call."""

from __future__ import annotations

import ast

from dataclasses import dataclass
from typing import Iterator

import libcst as cst

from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.diagnostics import Diagnostic, Fix, Safety
from jaxfix.facts.flow import activity, block_activity
from jaxfix.facts.jitted import Jitted, calls_of, jitted_functions, only_arithmetic, static_parameters
from jaxfix.facts.module import FileFacts, names_in

_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_FLOAT_RANGES = frozenset({"numpy.linspace", "numpy.geomspace", "numpy.logspace"})


class StaticFloatArg(Codemod):
    """A static argument of a jitted function that a loop passes a new float on each call.

    ## What it does
    Finds a module-level jitted function whose `static_argnums`/`static_argnames` name a parameter that some
    call inside a loop passes a float that changes from one iteration to the next: a learning rate from a
    schedule (`lr = base * 0.99 ** step`), a loop variable over floats, a value the loop rebinds with float
    arithmetic. The loop may be an outer one: a rate decayed once per epoch and passed in the batch loop
    inside it compiles once per epoch.

    ## Why is this bad?
    jit compiles once per distinct value of each static argument: a schedule of 10,000 learning rates is
    10,000 compilations, each far slower than the step itself, and each kept in the cache. A traced
    argument compiles once for all values. The test `tests/test_static_float_arg.py` counts it on this
    machine: 5 calls with 5 different static floats compile 5 times; with the argument traced, once.

    ## Example
    ```python
    @partial(jax.jit, static_argnames="lr")
    def step(params, grads, lr):
        return params - lr * grads

    for i in range(1000):
        params = step(params, grads, lr=0.1 * 0.99 ** i)
    ```

    ## Use instead
    ```python
    @jax.jit
    def step(params, grads, lr):
        return params - lr * grads
    ```

    ## Fix safety
    The fix drops the parameter from `static_argnums`/`static_argnames` (and `partial(jax.jit)` with nothing
    left becomes `jax.jit`), only when the function uses the parameter solely as an operand of `+ - * /`:
    code that branches on it, uses it as a shape or a `range` bound needs a Python value and is reported
    without a fix. It is unsafe: the value then enters as a float32 array (under `jax_enable_x64`, float64)
    where it was a Python constant folded into the compiled code, so the last bits may differ; and a caller
    in another module that relies on the static signature (passing an unhashable value on purpose) changes.
    Of these, the rounding **may compute different numbers** (`x * (lr * lr)` differed in the last bit for 99
    of 199 values of `lr`, `x * lr` for none; the message says so), which is what `jaxfix apply --verify` and
    `jaxfix verify` check;
    a caller elsewhere that passes a value jit cannot trace (a string) **fails loudly** at the call.

    ## When it stays quiet
    - Static arguments that receive the same value at each call, integers, bools and strings (shapes,
      flags, modes), and values that do not depend on what the loop changes (`lr = 0.1` inside the loop
      binds the same float each time).
    - Calls outside loops, and functions it cannot see every jit keyword of.
    """

    code = "JF503"
    name = "static-float-arg"
    summary = "static jit argument receiving a different float at each call in a loop: one compilation per value"
    fix_safety = Safety.UNSAFE
    screen = ("static_argn",)

    VALID = (
        Valid(
            "import jax\nfrom functools import partial\n\n@partial(jax.jit, static_argnums=1)\n"
            "def f(x, n):\n    return x * n\n\ndef run(x):\n    for i in range(5):\n        x = f(x, 3)\n    return x\n"
        ),
        Valid(
            "import jax\nfrom functools import partial\n\n@partial(jax.jit, static_argnums=1)\n"
            "def f(x, n):\n    return x * n\n\ndef run(x):\n    for i in range(5):\n        x = f(x, i)\n    return x\n"
        ),
    )
    INVALID = (
        Invalid(
            "import jax\nfrom functools import partial\n\n@partial(jax.jit, static_argnums=1)\n"
            "def f(x, lr):\n    return x * lr\n\ndef run(x):\n    for i in range(5):\n"
            "        x = f(x, 0.1 * 0.9 ** i)\n    return x\n",
            "import jax\nfrom functools import partial\n\n@jax.jit\n"
            "def f(x, lr):\n    return x * lr\n\ndef run(x):\n    for i in range(5):\n"
            "        x = f(x, 0.1 * 0.9 ** i)\n    return x\n",
            message="rounds in float32 where Python computed it in float64",
        ),
        Invalid(
            "import jax\nfrom functools import partial\n\n@partial(jax.jit, static_argnums=1)\n"
            "def f(x, lr):\n    return x[: int(1 / lr)]\n\ndef run(x):\n    for i in range(5):\n"
            "        x = f(x, 0.1 * 0.9 ** i)\n    return x\n",
            None,
            message="not fixed",
        ),
    )

    looks_at = ()  # it judges each jitted function's calls (its visitor looked at `Module` alone)

    @classmethod
    def check(cls, facts: FileFacts) -> list[Diagnostic]:
        """Each call, inside a loop, of a module-level jitted function that passes one of its static parameters a
        float that changes from one iteration to the next (reported once per parameter, at its first such call)."""
        binder = facts.binder
        found = []
        for item in jitted_functions(binder):
            static = static_parameters(item)
            if not static:
                continue
            calls = calls_of(binder, item)
            if calls is None:
                continue
            params = item.parameters
            reported: set[str] = set()
            for call in calls:
                for param in sorted(static - reported):
                    reason = _varies(facts, call, params, param)
                    if reason is None:
                        continue
                    reported.add(param)
                    message = (
                        f"`{param}` is a static argument of `{item.name}` but {reason}: jit compiles again for "
                        f"each new value; make `{param}` a traced argument (drop it from the static arguments)"
                    )
                    if _only_arithmetic(binder, item.function, param, static):
                        message += (
                            f"; unsafe: `{param}` then enters as a float32 array, so arithmetic on it alone "
                            f"(`{param} * {param}`) rounds in float32 where Python computed it in float64"
                        )
                        found.append(cls.finding(
                            facts, call, message, description=f"drop `{param}` from the static arguments",
                            plan=_Plan(item, params, param),
                        ))  # fmt: skip
                    else:
                        message += f"; not fixed: `{item.name}` uses `{param}` other than in arithmetic"
                        found.append(cls.finding(facts, call, message))
        return found

    # ---- the fix -----------------------------------------------------------------------------------------

    @classmethod
    def fix_finding(cls, finding: Diagnostic, bridge) -> Fix | None:
        """Drop the parameter from `static_argnums`/`static_argnames` of the call that carries jit's keywords; a
        `@partial(jax.jit, ...)` or `@jax.jit(...)` left with nothing but jit becomes `@jax.jit`."""
        plan: _Plan = finding.plan
        item, param = plan.jitted, plan.param
        call = bridge.cst_of(item.call)
        if not isinstance(call, cst.Call):
            return None
        jit = call.func if item.jit is item.call.func else call.args[0].value  # `jax.jit(...)` or `partial(jax.jit, ...)`
        index = plan.params.index(param) if param in plan.params else None  # None: keyword-only
        args = []
        for arg in call.args:
            key = arg.keyword.value if arg.keyword else None
            if key not in ("static_argnums", "static_argnames"):
                args.append(arg)
                continue
            wanted = (lambda e: isinstance(e, cst.Integer) and index is not None and int(e.value) == index) if key == "static_argnums" else (
                lambda e: isinstance(e, cst.SimpleString) and e.evaluated_value == param
            )
            value = arg.value
            if isinstance(value, (cst.Tuple, cst.List)):
                kept = [e for e in value.elements if not wanted(e.value)]
                if kept:
                    one_tuple = isinstance(value, cst.Tuple) and len(kept) == 1
                    kept[-1] = kept[-1].with_changes(comma=cst.Comma() if one_tuple else cst.MaybeSentinel.DEFAULT)
                    args.append(arg.with_changes(value=value.with_changes(elements=kept)))
                continue
            if not wanted(value):
                args.append(arg)
        if args:
            last = args[-1]
            if last.comma is not cst.MaybeSentinel.DEFAULT and call.args[-1].comma is cst.MaybeSentinel.DEFAULT:
                args[-1] = last.with_changes(comma=cst.MaybeSentinel.DEFAULT)
        only_jit = (len(args) == 1 and args[0].value is jit) or (not args and call.func is jit)
        decorator = bridge.parent(call)
        if item.binding is item.function and only_jit and isinstance(decorator, cst.Decorator):
            replacement = (decorator, decorator.with_changes(decorator=jit))
        else:
            replacement = (call, call.with_changes(args=args))
        return Fix(finding.fix.safety, finding.fix.description, (replacement,))


@dataclass(frozen=True)
class _Plan:
    jitted: Jitted
    params: list[str]
    param: str


def _only_arithmetic(binder, function: ast.AST, param: str, static: frozenset[str]) -> bool:
    """Whether every use of `param` in the function is an operand of arithmetic (`params - lr * g`): such code
    computes the same with a traced value; an `if`, a shape or a `range` would need a Python one."""
    arguments = function.args
    traced = {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}
    traced = traced - static - set(block_activity(function.body).writes)
    return only_arithmetic(binder, function.body, param, traced)


def _argument(call: ast.Call, params: list[str], param: str) -> ast.expr | None:
    if any(type(a) is ast.Starred for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    for keyword in call.keywords:
        if keyword.arg == param:
            return keyword.value
    if param not in params:  # keyword-only, or a static_argnames entry the function does not have
        return None
    index = params.index(param)
    return call.args[index] if index < len(call.args) else None


def _varies(facts: FileFacts, call: ast.Call, params: list[str], param: str) -> str | None:
    """Why the value passed for `param` is a float that changes on each iteration of a loop around the call (the
    innermost first: a rate decayed once per epoch changes in the outer loop of an epoch's batch loop), or None."""
    value = _argument(call, params, param)
    if value is None:
        return None
    binder = facts.binder
    reads = names_in(value)
    for depth, loop in enumerate(_loops(binder, call)):
        where = "the loop" if depth == 0 else "an outer loop"
        act = activity(loop)
        changed = set(act.writes) | set(act.mutations)
        if not reads & changed:
            continue
        if _float_expression(binder, value):
            return f"{where} passes it a float expression of what changes each iteration"
        if type(value) is not ast.Name:
            continue
        if type(loop) is not ast.While and value.id in {n.id for n in ast.walk(loop.target) if type(n) is ast.Name}:
            if _float_iterable(binder, loop.iter):
                return f"it is the loop variable over floats `{facts.positions.with_parentheses(loop.iter, loop)}`"
            return None
        for statement in loop.body:
            for node in ast.walk(statement):
                kind = type(node)
                if kind is not ast.Assign and kind is not ast.AugAssign:
                    continue
                targets = node.targets if kind is ast.Assign else [node.target]
                if any(type(t) is ast.Name and t.id == value.id for t in targets):
                    # `lr = 0.1` in the body binds the same float each time: only a value computed from what the
                    # loop changes (or `lr *= 0.5`, from its own last value) is new each time.
                    if kind is ast.Assign and not names_in(node.value) & changed:
                        continue
                    if _float_expression(binder, node.value):
                        return f"{where} rebinds `{value.id}` to a new float each iteration"
    return None


def _loops(binder, node: ast.AST) -> Iterator[ast.AST]:
    """The loops whose body holds `node`, innermost first, up to the enclosing function."""
    child, current = node, binder.parent(node)
    while current is not None and not isinstance(current, _SCOPES):
        if isinstance(current, _LOOPS) and any(s is child for s in current.body):
            yield current
        child, current = current, binder.parent(current)


def _float_expression(binder, expr: ast.AST) -> bool:
    """Arithmetic with a float literal, a true division, or `float(...)`: a Python float when its names are Python
    numbers (an array value would not be hashable as a static argument in the first place)."""
    for node in ast.walk(expr):
        kind = type(node)
        if kind is ast.Constant and type(node.value) is float:
            return True
        if kind is ast.BinOp and type(node.op) is ast.Div:
            return True
        if kind is ast.Call and binder.is_builtin(node.func, "float"):
            return True
    return False


def _float_iterable(binder, expr: ast.AST) -> bool:
    """A literal list or tuple with a float in it, or `np.linspace(...)`-like calls of float ranges."""
    if type(expr) in (ast.List, ast.Tuple):
        return any(type(e) is ast.Constant and type(e.value) is float for e in map(_unstar, expr.elts))
    if type(expr) is ast.Call:
        return binder.qualified(expr.func) in _FLOAT_RANGES
    return False


def _unstar(node: ast.AST) -> ast.AST:
    return node.value if type(node) is ast.Starred else node
