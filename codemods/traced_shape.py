"""JF802 traced-shape: an array shape or size taken from a traced value (`jnp.zeros(n)` with `n` a jit
argument), which jit cannot compile; the fix marks the argument static when every call passes a constant."""

from __future__ import annotations

import ast

import libcst as cst
from libcst.metadata import ScopeProvider

from jaxfix.analysis.jit import Jitted, add_jit_keyword, call_sites, jit_keywords, jitted_functions
from jaxfix.analysis.screen import Screen, dotted, may_be_tracer_strict, traced_nodes
from jaxfix.analysis.syntax import param_names
from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.diagnostics import Safety

SHAPE_ERROR = "TypeError: Shapes must be 1D sequences of concrete values of integer type"
VALUE_ERROR = "ConcretizationTypeError"
_NP = "jax.numpy."
# callee -> (positions, keywords) of its shape or size arguments, and whether they are sizes read as values
# (arange's bounds, linspace's num: ConcretizationTypeError) rather than shapes (TypeError).
_SHAPED: dict[str, tuple[tuple[int, ...], tuple[str, ...], bool]] = {
    **{_NP + n: ((0,), ("shape",), False) for n in ("zeros", "ones", "empty", "full")},
    _NP + "eye": ((0, 1), ("N", "M"), False),
    _NP + "identity": ((0,), ("n",), False),
    _NP + "broadcast_to": ((1,), ("shape",), False),
    _NP + "reshape": ((1,), ("shape", "newshape"), False),
    _NP + "arange": ((0, 1, 2), ("start", "stop", "step"), True),
    **{_NP + n: ((2,), ("num",), True) for n in ("linspace", "logspace", "geomspace")},
    **{"jax.random." + n: ((1,), ("shape",), False) for n in ("normal", "uniform", "randint")},
    "jax.random.bernoulli": ((2,), ("shape",), False),
    "jax.random.truncated_normal": ((3,), ("shape",), False),
}
class TracedShape(Codemod):
    """
    ## What it does
    Finds shapes and sizes taken from traced values inside code that jit, vmap or a lax body traces:
    `jnp.zeros(n)`, `jnp.ones((n, 3))`, `jnp.full`, `jnp.empty`, `jnp.eye(n)`, `jnp.arange(n)`,
    `jnp.linspace(a, b, n)`, `jnp.broadcast_to(x, (n,))`, `x.reshape(n, -1)`, `jnp.reshape(x, (n, -1))` and
    the `shape` of `jax.random.normal`/`uniform`/`randint`/`bernoulli`/`truncated_normal`, where `n` is surely
    traced: an argument of the jitted function that is not static, or a value computed from traced arrays
    (`n = jnp.sum(mask)`). Values read from shapes (`x.shape[0]`, `len(x)`, `x.size`) are static and fine.
    When `n` is an argument of a module-level `@jax.jit` function without static arguments, and every call of
    the function in the module passes an integer constant for it, the fix adds `static_argnames=("n",)`.

    ## Why is this bad?
    jit compiles one program per input shape, and shapes must be known while tracing: a traced `n` has no
    value yet, so tracing fails (`TypeError: Shapes must be 1D sequences of concrete values of integer type`,
    or `ConcretizationTypeError` for `arange` and `linspace`). The code runs eagerly and breaks when jitted.
    A static argument is a Python value at trace time: the shape is known, and jit compiles once per value.
    A size computed from data (`jnp.sum(mask)`) cannot be static at all: pad to a fixed maximum (`size=` of
    `jnp.nonzero`) or keep the full shape and mask.

    ## Example
    ```python
    @jax.jit
    def bias(x, n):
        return x + jnp.zeros((n,))

    y = bias(x, 4)
    ```

    ## Use instead
    ```python
    @partial(jax.jit, static_argnames=("n",))
    def bias(x, n):
        return x + jnp.zeros((n,))

    y = bias(x, 4)
    ```
    Or take the size from an array: `jnp.zeros(x.shape[0])`.

    ## Fix safety
    Unsafe. The original cannot be compiled, so no result changes; but a static argument compiles once per
    distinct value, and callers in other modules may pass values that are not constants (a traced value,
    or an array, which jit rejects as static because it cannot be hashed). The fix is offered only when
    every call of the function in the module passes an integer constant and the name is used only in calls.
    Such a caller **fails loudly**: jit raises ValueError ("Non-hashable static arguments are not supported")
    for an array or a traced value. No case computes different numbers.

    ## When it stays quiet
    Sizes that are not proven traced: shapes (`x.shape[0]`, `len(x)`, `x.ndim`), literals and module
    constants, static arguments (`static_argnums`/`static_argnames`), parameters with defaults (jit passes an
    omitted default as is), attributes (`config.n`, a pytree's static field), `*args`; functions only
    `jax.grad` reaches (they run eagerly), and untraced code. Reported without a fix: sizes computed from
    traced values, arguments of functions that are not module-level `@jax.jit` functions, functions with
    static arguments already, and functions called with anything but integer constants.
    """

    code = "JF802"
    name = "traced-shape"
    summary = "array shape or size from a traced value (jnp.zeros(n) with traced n): make n static"
    fix_safety = Safety.UNSAFE
    screen = ("zeros", "ones", "empty", "full", "eye", "identity", "broadcast_to", "reshape", "arange", "space",
              "normal", "uniform", "randint", "bernoulli")  # fmt: skip

    @classmethod
    def may_match_tree(cls, screen: Screen) -> bool:
        """A finding needs, in code that may be traced, a call without `*`/`**` arguments that may be one of
        `_SHAPED` (or a `.reshape` method of something that may be an array) with a size argument, or an
        element of one written as a tuple or list, that may be a tracer as PredicateAnalysis.tracer proves one
        (`may_be_tracer_strict`: not a parameter jit makes static, vmap maps with `None` or only calls with static
        values pass, nor a name of a function nothing traces, nor `n += 1` of a static `n`)."""
        candidates = {id(n) for n in screen.nodes_of(ast.Call) if _may_take_shape(screen, n.func)}
        if not candidates:
            return False  # before asking what is traced, which costs a walk of the module
        for node in traced_nodes(screen, ast.Call):
            if id(node) not in candidates:
                continue
            if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
                continue
            func = node.func
            sizes: list[ast.expr] = []
            if isinstance(func, ast.Attribute) and func.attr == "reshape" and screen.may_be_array(func.value):
                sizes += [*node.args, *(k.value for k in node.keywords if k.arg == "shape")]
            parts = dotted(func)
            for callee in screen.qualified_names(parts) if parts else ():
                if callee in _SHAPED:
                    positions, keywords, _ = _SHAPED[callee]
                    sizes += [a for i, a in enumerate(node.args) if i in positions]
                    sizes += [k.value for k in node.keywords if k.arg in keywords]
            for size in sizes:
                elements = [size]
                if isinstance(size, (ast.Tuple, ast.List)):
                    elements = [e for e in size.elts if not isinstance(e, ast.Starred)]
                if any(may_be_tracer_strict(screen, e) for e in elements):
                    return True
        return False

    VALID = (
        Valid("import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    return jnp.zeros(x.shape[0])\n"),
        Valid("import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    return x.reshape(len(x), -1)\n"),
        Valid(
            "import jax\nimport jax.numpy as jnp\nfrom functools import partial\n\n"
            "@partial(jax.jit, static_argnames='n')\ndef f(x, n):\n    return x + jnp.ones((n,))\n"
        ),
        Valid("import jax.numpy as jnp\n\ndef f(n):\n    return jnp.arange(n)\n"),
    )
    INVALID = (
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x, n):\n    return x + jnp.zeros((n,))\n\n"
            "y = f(jnp.ones(3), 3)\n",
            "import jax\nimport jax.numpy as jnp\nfrom functools import partial\n\n"
            "@partial(jax.jit, static_argnames=(\"n\",))\ndef f(x, n):\n    return x + jnp.zeros((n,))\n\n"
            "y = f(jnp.ones(3), 3)\n",
            message="static_argnames",
        ),
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    n = jnp.sum(x > 0)\n"
            "    return jnp.arange(n)\n",
            None,
            message="computed from traced values",
        ),
        Invalid(
            "import jax\n\n@jax.jit\ndef f(x, rows):\n    return x.reshape(rows, -1)\n",
            None,
            message=SHAPE_ERROR,
        ),
    )

    def visit_Module(self, node: cst.Module) -> None:
        self._jitted = {j.function: j for j in jitted_functions(self.context, node)}
        self._fixed: set[tuple[cst.FunctionDef, str]] = set()

    def visit_Call(self, node: cst.Call) -> None:
        traced = self.context.traced
        function = traced.enclosing_function(node)
        if function is None or not traced.is_traced(function) or not traced.staged(function):
            return
        sizes = self._sizes(node)
        if sizes is None:
            return
        arguments, by_value = sizes
        predicates = self.context.predicates
        offending = [e for a in arguments for e in _elements(a) if predicates.tracer(e)]
        if not offending:
            return
        error = VALUE_ERROR if by_value else SHAPE_ERROR
        code = self.context.code_for
        what = f"`{code(node)}` takes a shape from traced `{code(offending[0])}`, which fails under jit ({error})"
        parameter = self._parameter(offending[0], function)
        if parameter is None:
            self.report(
                node,
                f"{what}: it is computed from traced values, so its value is unknown until the program runs; "
                "compute it from shapes (`x.shape[0]`, `len(x)`) or from static arguments, or keep a fixed maximum "
                "size and mask",
            )
            return
        if traced.transforms(function) <= {"jax.jit"}:
            advice = (
                f"{what}: make `{parameter}` static (`static_argnames=(\"{parameter}\",)`, one compilation per "
                "value) or compute it from a shape (`x.shape[0]`)"
            )
        else:
            advice = (
                f"{what}: pass `{parameter}` as a Python int outside the transformation (`functools.partial`, a "
                "static argument of jit, `in_axes=None` under vmap) or compute it from a shape (`x.shape[0]`)"
            )
        fix, why = self._static_fix(function, parameter)
        if fix is not None and (function, parameter) in self._fixed:
            fix = None
            why = f"one fix for `{parameter}` is offered at its first use"
        if fix is not None:
            self._fixed.add((function, parameter))
        if fix is None:
            self.report(node, f"{advice}; not fixed: {why}")
        else:
            self.report(
                node,
                f"{advice} (unsafe: assumes callers in other modules pass Python ints too; an array or a traced "
                "value makes jit raise)",
                fix,
            )

    # ---- what is a size ------------------------------------------------------------------------------------

    def _sizes(self, call: cst.Call) -> tuple[list[cst.BaseExpression], bool] | None:
        """The shape or size arguments of `call`, and whether they are read as values (arange, linspace)."""
        if any(a.star for a in call.args):
            return None
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "reshape" and self.context.names.callee(call) is None:
            if not self.context.predicates.array_evidence(func.value):
                return None
            return [a.value for a in call.args if a.keyword is None or a.keyword.value == "shape"], False
        callee = self.context.names.callee(call)
        if callee not in _SHAPED:
            return None
        positions, keywords, by_value = _SHAPED[callee]
        found = []
        for index, arg in enumerate(call.args):
            if (arg.keyword is None and index in positions) or (arg.keyword is not None and arg.keyword.value in keywords):
                found.append(arg.value)
        return found, by_value

    def _parameter(self, expr: cst.BaseExpression, function) -> str | None:
        """The name of a parameter of `function` that `expr` is, read where no other binding reaches."""
        if not isinstance(expr, cst.Name) or expr.value not in param_names(function.params):
            return None
        scope = self.context.wrapper.resolve(ScopeProvider).get(expr)
        if scope is None or len(scope.assignments[expr.value]) != 1:
            return None
        return expr.value

    # ---- the fix -------------------------------------------------------------------------------------------

    def _static_fix(self, function, parameter: str):
        jitted: Jitted | None = self._jitted.get(function)
        if jitted is None:
            return None, "the function is not a module-level `@jax.jit` function jaxfix can edit"
        if not self.context.traced.transforms(function) <= {"jax.jit"}:
            return None, "another transformation also traces the function"
        keywords = jit_keywords(jitted)
        if any(k in keywords for k in ("static_argnums", "static_argnames")):
            return None, "jit has static arguments already; add it there"
        if set(keywords) - {"donate_argnums", "donate_argnames", "inline"}:
            return None, "jit has keywords jaxfix does not read"
        sites = call_sites(self.context, jitted)
        if not sites:
            return None, f"`{jitted.name}` is never called in this module, or used as a value"
        params = param_names(function.params)
        index = params.index(parameter)
        for site in sites:
            value = _argument(site, parameter, index)
            if value is None or self.context.shapes.constant(value) is None:
                return None, f"a call passes `{parameter}` a value that is not an integer constant"
        change, imports = add_jit_keyword(self.context, jitted, "static_argnames", f'("{parameter}",)')
        return self.fix(f'add static_argnames=("{parameter}",) to jax.jit', [change], add_imports=imports), None


_SHAPED_NAMES = frozenset(name.rsplit(".", 1)[1] for name in _SHAPED)


def _may_take_shape(screen: Screen, func: ast.AST) -> bool:
    """A `.reshape` method, or a callee that may resolve to one of `_SHAPED` (whose last part is its own)."""
    if isinstance(func, ast.Attribute):
        return func.attr == "reshape" or (func.attr in _SHAPED_NAMES and screen.may_resolve_to(func, _SHAPED))
    return isinstance(func, ast.Name) and func.id in screen.imports and screen.may_resolve_to(func, _SHAPED)


def _elements(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(expr, (cst.Tuple, cst.List)):
        return [e.value for e in expr.elements if not isinstance(e, cst.StarredElement)]
    return [expr]


def _argument(call: cst.Call, name: str, index: int) -> cst.BaseExpression | None:
    for position, arg in enumerate(call.args):
        if arg.star:
            return None
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
        if arg.keyword is None and position == index:
            return arg.value
    return None
