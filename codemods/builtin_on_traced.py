"""JF203 builtin-on-traced: Python's `max`/`min`/`any`/`all` and `and`/`or`/`not` on traced values in traced code
become `jnp.maximum`/`jnp.minimum`/`jnp.any`/`jnp.all` and `jnp.logical_and`/`logical_or`/`logical_not`."""

from __future__ import annotations

import ast
from dataclasses import dataclass

import libcst as cst

from jaxfix.codegen import logical_test
from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.diagnostics import Diagnostic, Fix, ImportSpec, Safety
from jaxfix.facts.literals import is_number
from jaxfix.facts.module import FileFacts
from jaxfix.facts.traced import Kind

ERROR = "TracerBoolConversionError"
_ELEMENTWISE = {"max": "jax.numpy.maximum", "min": "jax.numpy.minimum"}
_REDUCTIONS = {"any": "jax.numpy.any", "all": "jax.numpy.all"}
_BUILTINS = frozenset({*_ELEMENTWISE, *_REDUCTIONS, "bool"})
_CONTAINERS = (ast.List, ast.Tuple, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp, ast.GeneratorExp)
_TESTED = (ast.If, ast.While, ast.IfExp, ast.Assert)


class BuiltinOnTraced(Codemod):
    """
    ## What it does
    Finds Python builtins and operators that need a Python truth value, applied to traced values inside traced
    code, and rewrites them into the `jax.numpy` functions that compute on arrays:
    `max(a, b)` → `jnp.maximum(a, b)`, `min(a, b)` → `jnp.minimum(a, b)` (more arguments nest),
    `any(x)` → `jnp.any(x)`, `all(x)` → `jnp.all(x)`, and, on traced booleans outside the test of an `if` or
    `while`, `a and b` → `jnp.logical_and(a, b)`, `a or b` → `jnp.logical_or(a, b)`, `not a` →
    `jnp.logical_not(a)`. `bool(x)` of a traced value is reported.

    ## Why is this bad?
    `max(x, 0)` compares `0 > x` and asks Python whether that is true; `any(x)` asks it of every element; `a and
    b` asks it of `a`. A tracer has no truth value, so `jax.jit` raises `TracerBoolConversionError` ("Attempted
    boolean conversion of traced array"). The `jnp` functions compute the same thing inside the program, and
    element by element where Python would have compared whole arrays.

    ## Example
    ```python
    @jax.jit
    def hinge(score, margin):
        ok = (score > 0) and (margin > 0)
        return max(1.0 - score * margin, 0.0), ok
    ```

    ## Use instead
    ```python
    @jax.jit
    def hinge(score, margin):
        ok = jnp.logical_and(score > 0, margin > 0)
        return jnp.maximum(1.0 - score * margin, 0.0), ok
    ```
    `abs(x)` is left alone: it calls `x.__abs__()`, which JAX arrays implement with `jnp.abs`, so it works on
    tracers. `and`/`or`/`not` in the test of an `if` or a conditional expression are part of JF201's and
    JF202's rewrites (`jaxfix.codegen.logical_test`), and in a `while` test part of the while-loop rewrite.

    ## Fix safety
    Unsafe. On every input where the original runs (with jit disabled, on scalars), the rewrite returns the
    same values, with these differences, each of one of two kinds: it **fails loudly** (raises instead of
    computing, so it cannot go unnoticed) or it **may compute different numbers** (which is what
    `jaxfix apply --verify` and `jaxfix verify` check). None of this rule's differences fails loudly:
    - **May compute different numbers.** `max`/`min` with a NaN: Python returns whichever argument its
      comparisons leave (`max(nan, 0)` is nan, `max(0, nan)` is 0); `jnp.maximum`/`jnp.minimum` return NaN for
      both. `verify` draws NaN only with `--nan`.
    - **May compute different numbers.** Gradients at a tie (`max(x, 0.0)` at `x == 0`): Python's `max` returns
      one argument, which gets the whole gradient; `jnp.maximum` gives each half of it (`jax.grad` gives 1.0
      and 0.5). Everywhere else the gradients agree. The fix's message names both differences.
    - **May compute different numbers.** Types: Python returns one of its arguments unchanged (a Python float,
      or an int32 array); `jnp.maximum` returns an array of the promoted dtype (`max(int_array, 0.5)` becomes
      float32 on both paths: the int32 1 the original returned is a float32 1.0, which integer arithmetic after
      it then computes in float).
    - **Same numbers.** `and`/`or` no longer short-circuit, and return a boolean array rather than one of their
      operands (only operands proven to be boolean arrays are rewritten, for which the two agree).
    - **Runs where the original raised.** Arrays of more than one element, which Python rejects ("The truth
      value of an array with more than one element is ambiguous"), are compared element by element (`verify`
      compares nothing where the original raised).

    ## When it stays quiet
    Every call whose arguments are not proven traced (see JF201: shapes, `len`, static arguments, parameters
    with defaults, attributes, module constants, untraced code): `max(x.shape[0], 1)` and `min(n, 8)` with a
    static `n` stay Python. Also `max`/`min` with one argument, `key=` or `default=`; `any`/`all` over a
    generator or a list; shadowed builtins; and `and`/`or`/`not` whose operands are not proven to be boolean
    arrays (on numbers, Python returns an operand, not a boolean).
    """

    code = "JF203"
    name = "builtin-on-traced"
    summary = f"max/min/any/all and and/or/not on traced values ({ERROR}): use jnp.maximum/minimum/any/all/logical_*"
    fix_safety = Safety.UNSAFE
    screen = ("max", "min", "any", "all", "and", "or", "not", "bool")

    VALID = (
        # static values
        Valid("import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    n = max(x.shape[0], 2)\n    return x[:n]\n"),
        # abs works on tracers
        Valid("import jax\n\n@jax.jit\ndef f(x):\n    return abs(x)\n"),
        # not traced
        Valid("import jax.numpy as jnp\n\ndef f(x):\n    return max(jnp.sum(x), 0.0)\n"),
        # in an `if` test: JF201's
        Valid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    if (x > 0) and (x < 1):\n"
            "        x = jnp.cumsum(x)\n    return x\n"
        ),
    )
    INVALID = (
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    return max(jnp.sum(x), 0.0)\n",
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    return jnp.maximum(jnp.sum(x), 0.0)\n",
            message="at a tie it splits the gradient that max() gives to one argument",
        ),
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x, lo, hi):\n    return min(max(x, lo), hi)\n",
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x, lo, hi):\n"
            "    return jnp.minimum(jnp.maximum(x, lo), hi)\n",
        ),
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x, y):\n    return (x > 0) and not (y > 0)\n",
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x, y):\n"
            "    return jnp.logical_and(x > 0, jnp.logical_not(y > 0))\n",
        ),
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    return bool(jnp.sum(x) > 0)\n",
            None,
            message="bool()",
        ),
    )

    looks_at = ("Call", "BooleanOperation", "UnaryOperation")

    @classmethod
    def check(cls, facts: FileFacts) -> list[Diagnostic]:
        """Each call of the builtin `max`/`min` (two or more operands, one a tracer) or `any`/`all`/`bool` (of a
        traced array) in traced code, and each outermost `and`/`or`/`not` there, outside a test that the branch and
        loop rewrites own, whose operands are all traced booleans (`Predicates.boolean`)."""
        binder = facts.binder
        found = []
        for node in binder.nodes_of(ast.Call, ast.BoolOp, ast.UnaryOp):
            kind = type(node)
            if kind is ast.Call:
                finding = _call(cls, facts, node)
            elif kind is ast.BoolOp or type(node.op) is ast.Not:
                finding = _logical(cls, facts, node)
            else:
                continue
            if finding is not None:
                found.append(finding)
        return found

    # ---- the fix -----------------------------------------------------------------------------------------

    @classmethod
    def fix_finding(cls, finding: Diagnostic, bridge) -> Fix | None:
        """The call or the `and`/`or`/`not` rewritten on LibCST, with the parentheses it had."""
        plan: _Plan = finding.plan
        node = bridge.cst_of(plan.node)
        imports = (ImportSpec(plan.module),) if plan.module is not None else ()
        if plan.function is None:  # and / or / not
            if not isinstance(node, (cst.BooleanOperation, cst.UnaryOperation)):
                return None
            converted = logical_test(node, plan.spelled.rsplit(".", 1)[0])
            if converted is None or converted is node:
                return None
            replacement = converted.with_changes(lpar=node.lpar, rpar=node.rpar)
        else:
            if not isinstance(node, cst.Call):
                return None
            values = [arg.value for arg in node.args]
            text = f"{plan.spelled}({_bare(values[0])})"
            if plan.function in _ELEMENTWISE:
                text = _bare(values[0])
                for value in values[1:]:
                    text = f"{plan.spelled}({text}, {_bare(value)})"
            replacement = cst.parse_expression(text).with_changes(lpar=node.lpar, rpar=node.rpar)
        return Fix(finding.fix.safety, finding.fix.description, ((node, replacement),), imports)


@dataclass(frozen=True)
class _Plan:
    node: ast.expr  # the call, or the outermost `and`/`or`/`not`
    function: str | None  # the builtin called; None for `and`/`or`/`not`
    spelled: str  # how the module spells the jax.numpy function (`jnp.maximum`, `jnp.logical_and`)
    module: str | None  # the module the fix must import for it, or None


# ---- builtins ------------------------------------------------------------------------------------------------


def _call(rule: type[BuiltinOnTraced], facts: FileFacts, node: ast.Call) -> Diagnostic | None:
    func = node.func
    if type(func) is not ast.Name or func.id not in _BUILTINS:
        return None
    binder, predicates = facts.binder, facts.predicates
    if not binder.is_builtin(func, func.id) or not facts.traced.in_traced_code(node):
        return None
    if node.keywords or any(type(arg) is ast.Starred for arg in node.args):
        return None
    values, name = node.args, func.id
    if name in _ELEMENTWISE:
        if len(values) < 2 or not any(predicates.tracer(v) for v in values):
            return None
        if not all(_operand(facts, v) for v in values):
            return None
        spelled, module = binder.spelling(_ELEMENTWISE[name])
        return rule.finding(
            facts, node,
            f"{name}() compares traced values with Python's `{'>' if name == 'max' else '<'}`, which fails under jit "
            f"({ERROR}); {spelled} compares element by element (unsafe: at a tie it splits the gradient that {name}() "
            "gives to one argument, and it returns NaN wherever an argument is NaN)",
            description=f"use {spelled}", plan=_Plan(node, name, spelled, module),
        )  # fmt: skip
    if len(values) != 1:
        return None
    value = values[0]
    if not (predicates.tracer(value) and predicates.array_evidence(value)):
        return None
    if name == "bool":
        return rule.finding(
            facts, node,
            f"bool() of a traced value fails under jit ({ERROR}); keep the boolean array and choose with lax.cond or "
            "jnp.where",
        )  # fmt: skip
    spelled, module = binder.spelling(_REDUCTIONS[name])
    return rule.finding(
        facts, node,
        f"{name}() of a traced array asks Python for the truth of each element, which fails under jit ({ERROR}); "
        f"{spelled} reduces inside the program (unsafe: an array of two or more dimensions, whose rows Python "
        "rejects, is reduced over every element)",
        description=f"use {spelled}", plan=_Plan(node, name, spelled, module),
    )  # fmt: skip


def _operand(facts: FileFacts, value: ast.expr) -> bool:
    """An argument `jnp.maximum` takes the way `max` did: a tracer, a number, or a static scalar (not None, a
    string or a container display)."""
    if type(value) is ast.Constant and (value.value is None or isinstance(value.value, (str, bytes))):
        return False
    if type(value) is ast.JoinedStr or isinstance(value, _CONTAINERS):
        return False
    if is_number(value) or facts.predicates.tracer(value):
        return True
    return facts.traced.kind(value) is Kind.STATIC and facts.shapes.rank(value) == 0


# ---- and / or / not ------------------------------------------------------------------------------------------


def _logical(rule: type[BuiltinOnTraced], facts: FileFacts, node: ast.BoolOp | ast.UnaryOp) -> Diagnostic | None:
    binder = facts.binder
    parent = binder.parent(node)
    if type(parent) is ast.BoolOp or (type(parent) is ast.UnaryOp and type(parent.op) is ast.Not):
        return None  # part of a larger expression, handled from its top
    if _in_test(binder, node) or not facts.traced.in_traced_code(node):
        return None
    if not facts.predicates.boolean(node) or not _convertible(node):
        return None
    spelled, module = binder.spelling("jax.numpy.logical_and")
    if type(node) is ast.UnaryOp:
        operator, functions = "not", "jnp.logical_not computes it"
    else:
        operator = "and" if type(node.op) is ast.And else "or"
        functions = "jnp.logical_and/logical_or compute it"
    return rule.finding(
        facts, node,
        f"`{operator}` asks Python for the truth of a traced boolean, which fails under jit ({ERROR}); {functions} in "
        "the program (unsafe: an array of more than one element, which Python rejects, is combined element by "
        "element)",
        description="use jnp.logical_*", plan=_Plan(node, None, spelled, module),
    )  # fmt: skip


def _in_test(binder, node: ast.expr) -> bool:
    """Whether `node` is (part of) the test of an `if`, `elif`, `while`, conditional expression, `assert` or a
    comprehension's `if`, through `and`/`or` and unary operators: the branch and loop rewrites own those."""
    child, parent = node, binder.parent(node)
    while type(parent) in (ast.BoolOp, ast.UnaryOp):
        child, parent = parent, binder.parent(parent)
    if type(parent) in _TESTED:
        return parent.test is child
    return type(parent) is ast.comprehension and any(test is child for test in parent.ifs)


def _convertible(expr: ast.expr) -> bool:
    """Whether `codegen.logical_test` rewrites `expr`: not where a chained comparison among its `and`/`or`/`not`
    operands has a computation in the middle (it would be evaluated twice)."""
    kind = type(expr)
    if kind is ast.BoolOp:
        return all(_convertible(value) for value in expr.values)
    if kind is ast.UnaryOp and type(expr.op) is ast.Not:
        return _convertible(expr.operand)
    if kind is ast.Compare and len(expr.ops) > 1:
        return all(_simple(operand) for operand in expr.comparators[:-1])
    return True


def _simple(expr: ast.expr) -> bool:
    """`codegen._simple`: a name, attribute, number or constant subscript (`True`/`None` are LibCST names)."""
    kind = type(expr)
    if kind is ast.Name:
        return True
    if kind is ast.Constant:
        return expr.value is None or type(expr.value) in (int, float, bool)
    if kind is ast.Attribute:
        return _simple(expr.value)
    if kind is ast.Subscript:
        index = expr.slice
        elements = index.elts if type(index) is ast.Tuple else [index]
        return _simple(expr.value) and all(_simple(element) for element in elements)  # a slice or `*a` is not
    return False


def _bare(expr: cst.BaseExpression) -> str:
    return cst.Module(body=[]).code_for_node(expr.with_changes(lpar=[], rpar=[]))
