"""JF203 builtin-on-traced: Python's `max`/`min`/`any`/`all` and `and`/`or`/`not` on traced values in traced code
become `jnp.maximum`/`jnp.minimum`/`jnp.any`/`jnp.all` and `jnp.logical_and`/`logical_or`/`logical_not`."""

from __future__ import annotations

import ast

import libcst as cst

from jaxfix.analysis.predicates import _BOOLEAN_CALLS, _BOOLEAN_METHODS
from jaxfix.analysis.screen import Screen, may_be_tracer_strict, may_kind, traced_nodes
from jaxfix.analysis.syntax import is_none, is_number
from jaxfix.analysis.traced import Kind
from jaxfix.codegen import logical_test
from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.diagnostics import Safety

ERROR = "TracerBoolConversionError"
_ELEMENTWISE = {"max": "jax.numpy.maximum", "min": "jax.numpy.minimum"}
_REDUCTIONS = {"any": "jax.numpy.any", "all": "jax.numpy.all"}
_STRINGS = (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)
_CONTAINERS = (cst.List, cst.Tuple, cst.Dict, cst.Set, cst.ListComp, cst.DictComp, cst.SetComp, cst.GeneratorExp)


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

    @classmethod
    def may_match_tree(cls, screen: Screen) -> bool:
        """A finding needs, in code TracedAnalysis may find traced, a call of one of the builtins that
        `_may_report_call` lets through, or `and`/`or`/`not` outside the test of an `if`, `while`, conditional
        expression, `assert` or comprehension (`_in_test`) whose every operand may be a traced boolean
        (`PredicateAnalysis.boolean`, see `_may_be_boolean`)."""
        in_tests = None
        for node in traced_nodes(screen, ast.Call, ast.BoolOp, ast.UnaryOp):
            if isinstance(node, ast.Call):
                if isinstance(node.func, ast.Name) and node.func.id in (*_ELEMENTWISE, *_REDUCTIONS, "bool"):
                    if _may_report_call(screen, node):
                        return True
            elif (isinstance(node, ast.BoolOp) or isinstance(node.op, ast.Not)) and _boolean_shape(node):
                in_tests = _in_tests(screen) if in_tests is None else in_tests
                if id(node) not in in_tests and _may_be_boolean(screen, node):
                    return True
        return False

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

    # ---- builtins ------------------------------------------------------------------------------------------

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Name) or func.value not in (*_ELEMENTWISE, *_REDUCTIONS, "bool"):
            return
        if not self.context.names.is_builtin(func, func.value) or not self.context.traced.in_traced_code(node):
            return
        if any(arg.star or arg.keyword is not None for arg in node.args):
            return
        values = [arg.value for arg in node.args]
        predicates = self.context.predicates
        name = func.value
        if name in _ELEMENTWISE:
            if len(values) < 2 or not any(predicates.tracer(v) for v in values):
                return
            if not all(self._operand(v) for v in values):
                return
            target, needed = self.context.names.expression_for(_ELEMENTWISE[name])
            code = self.context.code_for
            text = _bare(values[0])
            for value in values[1:]:
                text = f"{code(target)}({text}, {_bare(value)})"
            fix = self.fix(f"use {code(target)}", [(node, _parsed(text, node))], add_imports=[needed] if needed else [])
            self.report(
                node,
                f"{name}() compares traced values with Python's `{'>' if name == 'max' else '<'}`, which fails under jit "
                f"({ERROR}); "
                f"{code(target)} compares element by element (unsafe: at a tie it splits the gradient that {name}() "
                "gives to one argument, and it returns NaN wherever an argument is NaN)",
                fix,
            )
            return
        if len(values) != 1:
            return
        value = values[0]
        if not (predicates.tracer(value) and predicates.array_evidence(value)):
            return
        if name == "bool":
            self.report(
                node,
                f"bool() of a traced value fails under jit ({ERROR}); keep the boolean array and choose with "
                "lax.cond or jnp.where",
            )
            return
        target, needed = self.context.names.expression_for(_REDUCTIONS[name])
        code = self.context.code_for
        fix = self.fix(
            f"use {code(target)}", [(node, _parsed(f"{code(target)}({_bare(value)})", node))],
            add_imports=[needed] if needed else [],
        )  # fmt: skip
        self.report(
            node,
            f"{name}() of a traced array asks Python for the truth of each element, which fails under jit ({ERROR}); "
            f"{code(target)} reduces inside the program (unsafe: an array of two or more dimensions, whose rows Python "
            "rejects, is reduced over every element)",
            fix,
        )

    def _operand(self, value: cst.BaseExpression) -> bool:
        """An argument `jnp.maximum` takes the way `max` did: a tracer, a number, or a static scalar."""
        if is_none(value) or isinstance(value, _STRINGS + _CONTAINERS):
            return False
        if is_number(value) or self.context.predicates.tracer(value):
            return True
        return self.context.traced.kind(value) is Kind.STATIC and self.context.shapes.rank(value) == 0

    # ---- and / or / not ------------------------------------------------------------------------------------

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        self._logical(node)

    def visit_UnaryOperation(self, node: cst.UnaryOperation) -> None:
        if isinstance(node.operator, cst.Not):
            self._logical(node)

    def _logical(self, node: cst.BaseExpression) -> None:
        parent = self.context.parents.get(node)
        if isinstance(parent, cst.BooleanOperation) or (
            isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not)
        ):
            return  # part of a larger expression, handled from its top
        if self._in_test(node) or not self.context.traced.in_traced_code(node):
            return
        if not self.context.predicates.boolean(node):
            return
        expression, needed = self.context.names.expression_for("jax.numpy.logical_and")
        jnp = self.context.code_for(expression).rsplit(".", 1)[0]
        converted = logical_test(node, jnp)
        if converted is None or converted is node:
            return
        fix = self.fix("use jnp.logical_*", [(node, converted.with_changes(lpar=node.lpar, rpar=node.rpar))],
                       add_imports=[needed] if needed else [])  # fmt: skip
        if isinstance(node, cst.UnaryOperation):
            operator, functions = "not", "jnp.logical_not computes it"
        else:
            operator = "and" if isinstance(node.operator, cst.And) else "or"
            functions = "jnp.logical_and/logical_or compute it"
        self.report(
            node,
            f"`{operator}` asks Python for the truth of a traced boolean, which fails under jit ({ERROR}); "
            f"{functions} in the program (unsafe: an array of more than one element, which Python rejects, is "
            "combined element by element)",
            fix,
        )

    def _in_test(self, node: cst.CSTNode) -> bool:
        """Whether `node` is (part of) the test of an `if`, `elif`, `while`, conditional expression or `assert`,
        which the branch and loop rewrites own."""
        parents = self.context.parents
        child, parent = node, parents.get(node)
        while isinstance(parent, (cst.BooleanOperation, cst.UnaryOperation)):
            child, parent = parent, parents.get(parent)
        if isinstance(parent, (cst.If, cst.While, cst.IfExp, cst.Assert)):
            return getattr(parent, "test", None) is child
        return isinstance(parent, cst.CompIf)


def _may_report_call(screen: Screen, call: ast.Call) -> bool:
    """Over-approximates `visit_Call` past its name and traced-code tests: only positional arguments; `max`/`min`
    with two or more, one of which PredicateAnalysis may prove a tracer (`may_be_tracer_strict`: flax's gemma
    sampler's `min(mask.shape[-1], seq_len)` on a static `int` parameter) and none None, a string or a
    container display (`_operand`); `any`/`all`/`bool` with one, whose truth test may fail (a tracer with
    evidence of an array: `Screen.may_fail_truth`, strict)."""
    args = call.args
    if call.keywords or any(isinstance(a, ast.Starred) for a in args):
        return False
    if call.func.id in _ELEMENTWISE:
        return (
            len(args) >= 2
            and not any(_never_operand(a) for a in args)
            and any(may_be_tracer_strict(screen, a) for a in args)
        )
    return len(args) == 1 and screen.may_fail_truth(args[0], strict=True)


_DISPLAYS = (ast.List, ast.Tuple, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp, ast.GeneratorExp)


def _never_operand(expr: ast.expr) -> bool:
    """What `_operand` rejects by its form: None, a string (f-strings too) or a container display."""
    if isinstance(expr, ast.Constant):
        return expr.value is None or isinstance(expr.value, (str, bytes))
    return isinstance(expr, (ast.JoinedStr, *_DISPLAYS))


def _may_be_boolean(screen: Screen, expr: ast.expr) -> bool:
    """Over-approximates `PredicateAnalysis.boolean`: `and`/`or` of operands that all may be, `not` of one, a
    comparison that may be traced, a call of a boolean jax.numpy function or of `.all()`/`.any()` that may be a
    tracer, a name that may be one. Numbers, strings, attributes, indexing and other calls never are."""
    if isinstance(expr, ast.BoolOp):
        return all(_may_be_boolean(screen, value) for value in expr.values)
    if isinstance(expr, ast.UnaryOp):
        return isinstance(expr.op, ast.Not) and _may_be_boolean(screen, expr.operand)
    if isinstance(expr, ast.Call):
        func = expr.func
        boolean = screen.may_resolve_to(func, _BOOLEAN_CALLS) or (
            isinstance(func, ast.Attribute) and func.attr in _BOOLEAN_METHODS
        )
        if not boolean:
            return False
    elif not isinstance(expr, (ast.Compare, ast.Name)):
        return False
    # PredicateAnalysis._tracer: a tracer has the kind TRACED (a traced comparison has a traced side)
    return may_be_tracer_strict(screen, expr) and may_kind(screen, expr)[0]


def _boolean_shape(expr: ast.expr) -> bool:
    """`_may_be_boolean`'s syntax alone (no name resolved): the cheap part, asked first."""
    if isinstance(expr, ast.BoolOp):
        return all(_boolean_shape(value) for value in expr.values)
    if isinstance(expr, ast.UnaryOp):
        return isinstance(expr.op, ast.Not) and _boolean_shape(expr.operand)
    return isinstance(expr, (ast.Call, ast.Compare, ast.Name))


def _in_tests(screen: Screen) -> set[int]:
    """`BuiltinOnTraced._in_test`: the `and`/`or`/`not` nodes that are (part of) a test of an `if`, `while`,
    conditional expression or `assert`, through `and`/`or` and unary operators, or of a comprehension's `if`."""
    tests = []
    for node in screen.nodes_of(ast.If, ast.While, ast.IfExp, ast.Assert, ast.comprehension):
        if isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)):
            tests.append(node.test)
        elif isinstance(node, ast.comprehension):
            tests.extend(node.ifs)
    found: set[int] = set()
    while tests:
        test = tests.pop()
        if isinstance(test, ast.BoolOp):
            found.add(id(test))
            tests.extend(test.values)
        elif isinstance(test, ast.UnaryOp):
            found.add(id(test))
            tests.append(test.operand)
    return found


def _bare(expr: cst.BaseExpression) -> str:
    return cst.Module(body=[]).code_for_node(expr.with_changes(lpar=[], rpar=[]))


def _parsed(text: str, node: cst.BaseExpression) -> cst.BaseExpression:
    return cst.parse_expression(text).with_changes(lpar=node.lpar, rpar=node.rpar)
