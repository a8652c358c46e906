"""JF503: a static jit argument that receives a different float at each call compiles at each call."""

from __future__ import annotations

import ast

import libcst as cst
from libcst.metadata import ScopeProvider

from jaxfix.analysis.dataflow import activity
from jaxfix.analysis.jit import jit_keywords, jitted_functions, only_arithmetic, static_parameters
from jaxfix.analysis.syntax import walk
from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.diagnostics import Safety

_LOOPS = (cst.For, cst.While)
_FLOAT_RANGES = frozenset({"numpy.linspace", "numpy.geomspace", "numpy.logspace"})


def _may_make_floats(screen, node: ast.AST) -> bool:
    """Whether `node` is what `_float_expression` or `_float_iterable` takes for a float: a float literal, a true
    division, a call of `float` or of what may be `np.linspace` (`_varies` finds every one of them inside the
    loop it blames: in the argument, the loop's iterable or an assignment in its body)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, float)
    if isinstance(node, ast.BinOp):
        return isinstance(node.op, ast.Div)
    if isinstance(node, ast.Call):
        func = node.func
        return isinstance(func, ast.Name) and func.id == "float" or screen.may_resolve_to(func, _FLOAT_RANGES)
    return False


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

    @classmethod
    def may_match_tree(cls, screen) -> bool:
        """A finding needs a module-level def or assignment whose decorator or value passes `static_argnums`
        or `static_argnames`, called by name inside a loop that holds what `_varies` calls a float: a float
        literal, a true division, `float(...)`, or a call that may be `np.linspace` and its kin
        (`_may_make_floats`)."""
        candidates = set()
        for stmt in screen.tree.body:
            if isinstance(stmt, ast.FunctionDef):
                keywords = [k.arg for d in stmt.decorator_list if isinstance(d, ast.Call) for k in d.keywords]
                if any(k and k.startswith("static_argn") for k in keywords):
                    candidates.add(stmt.name)
            elif isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call):
                if any(k.arg and k.arg.startswith("static_argn") for k in stmt.value.keywords):
                    candidates.update(t.id for t in stmt.targets if isinstance(t, ast.Name))
        if not candidates:
            return False
        for loop in screen.nodes_of(ast.For, ast.AsyncFor, ast.While):
            nodes = list(ast.walk(loop))
            called = {n.func.id for n in nodes if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
            if not candidates.isdisjoint(called) and any(_may_make_floats(screen, n) for n in nodes):
                return True
        return False

    def visit_Module(self, node: cst.Module) -> None:
        jitted = list(jitted_functions(self.context, node))
        if not jitted:
            return
        scopes = self.context.wrapper.resolve(ScopeProvider)
        global_scope = scopes[node]
        for item in jitted:
            keywords = jit_keywords(item)
            fparams = item.function.params
            params = [p.name.value for p in (*fparams.posonly_params, *fparams.params)]
            static = static_parameters(keywords, params)
            if not static:
                continue
            assignments = list(global_scope.assignments[item.name])
            if len(assignments) != 1:
                continue
            reported: set[str] = set()
            for access in assignments[0].references:
                call = self.context.parents.get(access.node)
                if not (isinstance(call, cst.Call) and call.func is access.node):
                    continue
                for param in sorted(static - reported):
                    reason = self._varies(call, params, param)
                    if reason is not None:
                        reported.add(param)
                        message = (
                            f"`{param}` is a static argument of `{item.name}` but {reason}: jit compiles again for "
                            f"each new value; make `{param}` a traced argument (drop it from the static arguments)"
                        )
                        fix = None
                        if self._only_arithmetic(item.function, param, static):
                            fix = self._fix(item, params, param)
                            message += (
                                f"; unsafe: `{param}` then enters as a float32 array, so arithmetic on it alone "
                                f"(`{param} * {param}`) rounds in float32 where Python computed it in float64"
                            )
                        else:
                            message += f"; not fixed: `{item.name}` uses `{param}` other than in arithmetic"
                        self.report(call, message, fix)

    # ---- the fix -----------------------------------------------------------------------------------------

    def _only_arithmetic(self, function: cst.FunctionDef, param: str, static: frozenset[str]) -> bool:
        """Whether every use of `param` in the function is an operand of arithmetic (`params - lr * g`): such
        code computes the same with a traced value; an `if`, a shape or a `range` would need a Python one."""
        fparams = function.params
        traced = {p.name.value for p in (*fparams.posonly_params, *fparams.params, *fparams.kwonly_params)}
        traced = traced - static - set(activity(function.body).writes)
        return only_arithmetic(self.context, function.body, param, traced)

    def _fix(self, item, params: list[str], param: str):
        call = item.call
        index = params.index(param) if param in params else None  # None: keyword-only
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
        only_jit = (len(args) == 1 and args[0].value is item.jit) or (not args and call.func is item.jit)
        if item.binding is item.function and only_jit:
            replacement = (item.function.decorators[0], item.function.decorators[0].with_changes(decorator=item.jit))
        else:
            replacement = (call, call.with_changes(args=args))
        return self.fix(
            f"drop `{param}` from the static arguments", [replacement], safety=Safety.UNSAFE
        )

    def _argument(self, call: cst.Call, params: list[str], param: str) -> cst.BaseExpression | None:
        if any(a.star for a in call.args):
            return None
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == param:
                return arg.value
        if param not in params:  # keyword-only, or a static_argnames entry the function does not have
            return None
        positional = [a for a in call.args if a.keyword is None]
        index = params.index(param)
        return positional[index].value if index < len(positional) else None

    def _varies(self, call: cst.Call, params: list[str], param: str) -> str | None:
        """Why the value passed for `param` is a float that changes on each iteration of a loop around the call
        (the innermost first: a rate decayed once per epoch changes in the outer loop of an epoch's batch
        loop), or None."""
        value = self._argument(call, params, param)
        if value is None:
            return None
        for depth, loop in enumerate(self._loops(call)):
            where = "the loop" if depth == 0 else "an outer loop"
            act = activity(loop)
            changed = set(act.writes) | set(act.mutations)
            reads = {n.value for n in walk(value) if isinstance(n, cst.Name)}
            if not reads & changed:
                continue
            if self._float_expression(value):
                return f"{where} passes it a float expression of what changes each iteration"
            if not isinstance(value, cst.Name):
                continue
            if isinstance(loop, cst.For) and value.value in activity(cst.Expr(loop.target)).reads:
                if self._float_iterable(loop.iter):
                    return f"it is the loop variable over floats `{self.context.code_for(loop.iter)}`"
                return None
            for node in walk(loop.body):
                if isinstance(node, (cst.Assign, cst.AugAssign)):
                    targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
                    if any(isinstance(t, cst.Name) and t.value == value.value for t in targets):
                        # `lr = 0.1` in the body binds the same float each time: only a value computed from
                        # what the loop changes (or `lr *= 0.5`, from its own last value) is new each time.
                        rebinds = {n.value for n in walk(node.value) if isinstance(n, cst.Name)}
                        if isinstance(node, cst.Assign) and not rebinds & changed:
                            continue
                        if self._float_expression(node.value):
                            return f"{where} rebinds `{value.value}` to a new float each iteration"
        return None

    def _loops(self, node: cst.CSTNode):
        """The loops whose body holds `node`, innermost first, up to the enclosing function."""
        parents = self.context.parents
        child, current = node, parents.get(node)
        while current is not None and not isinstance(current, (cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.Module)):
            if isinstance(current, _LOOPS) and child is current.body:
                yield current
            child, current = current, parents.get(current)

    def _float_expression(self, expr: cst.BaseExpression) -> bool:
        """Arithmetic with a float literal, a true division, or `float(...)`: a Python float when its names are
        Python numbers (an array value would not be hashable as a static argument in the first place)."""
        for node in walk(expr):
            if isinstance(node, cst.Float):
                return True
            if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Divide):
                return True
            if isinstance(node, cst.Call) and self.context.names.is_builtin(node.func, "float"):
                return True
        return False

    def _float_iterable(self, expr: cst.BaseExpression) -> bool:
        """A literal list or tuple with a float in it, or `np.linspace(...)`-like calls of float ranges."""
        if isinstance(expr, (cst.List, cst.Tuple)):
            return any(isinstance(e.value, cst.Float) for e in expr.elements)
        if isinstance(expr, cst.Call):
            callee = self.context.names.qualified(expr.func) or ""
            return callee in {"numpy.linspace", "numpy.geomspace", "numpy.logspace"}
        return False
