"""JF802 traced-shape: an array shape or size taken from a traced value (`jnp.zeros(n)` with `n` a jit
argument), which jit cannot compile; the fix marks the argument static when every call passes a constant. On `ast`
(`check`): traced functions (`facts.traced`), tracers and array evidence (`facts.predicates`), the jitted function
and its calls (`facts.jitted`), integer constants (`facts.literals`); the keyword is added on LibCST in
`fix_finding` (`jaxfix.edit.jit`)."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.diagnostics import Diagnostic, Fix, ImportSpec, Safety
from jaxfix.edit.jit import add_jit_keyword_to
from jaxfix.facts.jitted import Jitted, assignments, call_sites, jitted_functions, partial_spelling
from jaxfix.facts.literals import int_constant
from jaxfix.facts.module import FileFacts, in_order, value_of
from jaxfix.facts.traced import param_names

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
_KEYWORD = "static_argnames"


@dataclass(frozen=True)
class _Plan:
    """What `fix_finding` needs: the jitted function whose jit gets `static_argnames=("parameter",)`, and how the
    module writes `functools.partial` where a bare `@jax.jit` becomes `@partial(jax.jit, ...)`."""

    jitted: Jitted
    parameter: str
    partial: tuple[str, ImportSpec | None] | None


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

    looks_at = ("Call",)

    @classmethod
    def check(cls, facts: FileFacts) -> list[Diagnostic]:
        """Each call in staged code that takes a shape or size from a tracer (in source order, as the visitor saw
        them: an outer call before the calls inside it), with the static-argument fix at the first such use of
        each parameter where every call of its module-level `@jax.jit` function passes an integer constant."""
        binder = facts.binder
        candidates = [(call, shaped) for call in binder.calls if (shaped := _shape_arguments(binder, call))]
        if not candidates:
            return []
        candidates.sort(key=lambda pair: _preorder(pair[0]))
        traced, predicates, positions = facts.traced, facts.predicates, facts.positions
        jitted: dict[ast.AST, Jitted] | None = None
        fixed: set[tuple[ast.AST, str]] = set()
        found = []
        for call, (arguments, by_value, receiver) in candidates:
            function = traced.enclosing_function(call)
            if function is None or not traced.is_traced(function) or not traced.staged(function):
                continue
            if receiver is not None and not predicates.array_evidence(receiver):
                continue
            offending = [e for a in arguments for e in _elements(a) if predicates.tracer(e)]
            if not offending:
                continue
            error = VALUE_ERROR if by_value else SHAPE_ERROR
            first = offending[0]
            what = (
                f"`{positions.with_parentheses(call, binder.parent(call))}` takes a shape from traced "
                f"`{positions.with_parentheses(first, binder.parent(first))}`, which fails under jit ({error})"
            )
            parameter = _parameter(binder, first, function)
            if parameter is None:
                found.append(cls.finding(
                    facts, call,
                    f"{what}: it is computed from traced values, so its value is unknown until the program runs; "
                    "compute it from shapes (`x.shape[0]`, `len(x)`) or from static arguments, or keep a fixed "
                    "maximum size and mask",
                ))  # fmt: skip
                continue
            if traced.transforms(function) <= {"jax.jit"}:
                advice = (
                    f"{what}: make `{parameter}` static (`static_argnames=(\"{parameter}\",)`, one compilation per "
                    "value) or compute it from a shape (`x.shape[0]`)"
                )
            else:
                advice = (
                    f"{what}: pass `{parameter}` as a Python int outside the transformation (`functools.partial`, "
                    "a static argument of jit, `in_axes=None` under vmap) or compute it from a shape (`x.shape[0]`)"
                )
            if jitted is None:
                jitted = {j.function: j for j in jitted_functions(binder)}
            plan, why = _static_fix(facts, jitted.get(function), function, parameter)
            if plan is not None and (function, parameter) in fixed:
                plan, why = None, f"one fix for `{parameter}` is offered at its first use"
            if plan is None:
                found.append(cls.finding(facts, call, f"{advice}; not fixed: {why}"))
                continue
            fixed.add((function, parameter))
            found.append(cls.finding(
                facts, call,
                f"{advice} (unsafe: assumes callers in other modules pass Python ints too; an array or a traced "
                "value makes jit raise)",
                description=f'add {_KEYWORD}=("{parameter}",) to jax.jit', plan=plan,
            ))  # fmt: skip
        return found

    # ---- the fix -------------------------------------------------------------------------------------------

    @classmethod
    def fix_finding(cls, finding: Diagnostic, bridge) -> Fix | None:
        """`static_argnames=("n",)` appended to the call that carries jit's keywords, or the bare `@jax.jit`
        turned into `@partial(jax.jit, static_argnames=("n",))`."""
        plan: _Plan = finding.plan
        edit = add_jit_keyword_to(bridge, plan.jitted, _KEYWORD, f'("{plan.parameter}",)', plan.partial)
        if edit is None:
            return None
        change, imports = edit
        return Fix(finding.fix.safety, finding.fix.description, (change,), tuple(imports))


# ---- what is a size ----------------------------------------------------------------------------------------


def _shape_arguments(binder, call: ast.Call) -> tuple[list[ast.expr], bool, ast.expr | None] | None:
    """The shape or size arguments of `call`, whether they are read as values (arange, linspace), and the array
    whose `.reshape` it calls (None for the functions of `_SHAPED`), which must then be shown an array; None where
    `call` takes no shape (or passes `*`/`**` arguments)."""
    if any(type(a) is ast.Starred for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    func = call.func
    callee = binder.callee(call)
    if type(func) is ast.Attribute and func.attr == "reshape" and callee is None:
        sizes = [value_of(a) for a in in_order(call) if type(a) is not ast.keyword or a.arg == "shape"]
        return sizes, False, func.value
    if callee not in _SHAPED:
        return None
    positions, keywords, by_value = _SHAPED[callee]
    found = []
    for index, argument in enumerate(in_order(call)):
        if (type(argument) is not ast.keyword and index in positions) or (
            type(argument) is ast.keyword and argument.arg in keywords
        ):
            found.append(value_of(argument))
    return found, by_value, None


def _preorder(node: ast.AST) -> tuple[int, int, int, int]:
    """Where a node starts, a node before the nodes inside it that start where it does (LibCST's visiting order)."""
    return node.lineno, node.col_offset, -node.end_lineno, -node.end_col_offset


def _elements(expr: ast.expr) -> list[ast.expr]:
    if type(expr) in (ast.Tuple, ast.List):
        return [e for e in expr.elts if type(e) is not ast.Starred]
    return [expr]


def _parameter(binder, expr: ast.expr, function: ast.AST) -> str | None:
    """The name of a parameter of `function` that `expr` is, read where no other binding reaches: the scope it is
    read in binds it once (LibCST's `scope.assignments`, of that scope alone: a comprehension's or a class's binds
    none)."""
    if type(expr) is not ast.Name or expr.id not in param_names(function.args):
        return None
    scope = binder.scope_of.get(expr)
    if scope is None or len(assignments(binder, expr.id, scope)) != 1:
        return None
    return expr.id


# ---- the fix -----------------------------------------------------------------------------------------------


def _static_fix(facts: FileFacts, jitted: Jitted | None, function: ast.AST, parameter: str) -> tuple[_Plan | None, str | None]:
    """The plan that makes `parameter` static, or None and why not."""
    if jitted is None:
        return None, "the function is not a module-level `@jax.jit` function jaxfix can edit"
    if not facts.traced.transforms(function) <= {"jax.jit"}:
        return None, "another transformation also traces the function"
    keywords = jitted.keywords
    if any(k in keywords for k in ("static_argnums", "static_argnames")):
        return None, "jit has static arguments already; add it there"
    if set(keywords) - {"donate_argnums", "donate_argnames", "inline"}:
        return None, "jit has keywords jaxfix does not read"
    binder = facts.binder
    sites = call_sites(binder, jitted)
    if not sites:
        return None, f"`{jitted.name}` is never called in this module, or used as a value"
    index = param_names(function.args).index(parameter)
    for site in sites:
        value = _argument(site, parameter, index)
        if value is None or int_constant(binder, value) is None:
            return None, f"a call passes `{parameter}` a value that is not an integer constant"
    return _Plan(jitted, parameter, partial_spelling(binder) if jitted.call is None else None), None


def _argument(call: ast.Call, name: str, index: int) -> ast.expr | None:
    """What `call` passes the parameter `name` at position `index`, read in source order: None after a `*`/`**`."""
    for position, argument in enumerate(in_order(call)):
        kind = type(argument)
        if kind is ast.Starred or (kind is ast.keyword and argument.arg is None):
            return None
        if kind is ast.keyword:
            if argument.arg == name:
                return argument.value
        elif position == index:
            return argument
    return None
