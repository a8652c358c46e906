"""JF202 branch-to-where: `a if t else b` on a traced `t` in traced code, and an `if` that only picks one of two
cheap values for one variable, become `jnp.where` (or `lax.cond` where one side is unsafe to compute always)."""

from __future__ import annotations

import ast

import libcst as cst

from jaxfix.analysis.carry import snippet
from jaxfix.analysis.predicates import Truth
from jaxfix.analysis.screen import Screen, branch_tests
from jaxfix.analysis.syntax import is_none, walk
from jaxfix.codegen import logical_test
from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.diagnostics import Safety

ERROR = "TracerBoolConversionError"


class BranchToWhere(Codemod):
    """
    ## What it does
    Finds conditional expressions `a if t else b` inside traced code (a function under `jax.jit`, `jax.vmap`,
    `jax.grad`, a lax body, ...) whose test `t` is a traced value, and `if`/`else` statements that only choose
    between two cheap values for one variable, and rewrites them into `jnp.where(t, a, b)`. Where one side is
    not safe to compute for the other side's inputs (`jnp.log`, `jnp.sqrt`, a division, ...), a conditional
    expression becomes `lax.cond(t, lambda: a, lambda: b)` instead.

    ## Why is this bad?
    `a if t else b` calls `bool(t)`, which a tracer cannot answer: `jax.jit` raises `TracerBoolConversionError`.
    `jnp.where` computes both sides and selects: one expression, no branch functions, and the same program
    under `jax.vmap` (where a batched `lax.cond` becomes a select anyway). For a cheap choice the cost is
    a wash on CPU (JAX 0.10, `benchmarks/branches.py`: 5.6 µs against 6.0 µs for `lax.cond` on one float,
    within 5% on 1,000 floats and inside elementwise work on 100,000); on 100,000 floats alone `lax.cond`
    was 2x faster, since it computes one side only, and on GPU a conditional costs more than a select
    (jax-ml/jax#7934). A side computed on inputs it was not meant for can be infinite or NaN there, and its
    gradient then turns the selected gradient into NaN (`0 * inf`; JAX FAQ, "Gradients contain NaN where
    using where"): `lax.cond` differentiates only the side taken, so jaxfix uses it for such sides.

    ## Example
    ```python
    @jax.jit
    def leaky(x):
        return x if x > 0 else 0.01 * x

    @jax.jit
    def safe_log(x):
        return jnp.log(x) if x > 0 else 0.0
    ```

    ## Use instead
    ```python
    @jax.jit
    def leaky(x):
        return jnp.where(x > 0, x, 0.01 * x)

    @jax.jit
    def safe_log(x):
        return jax.lax.cond(x > 0, lambda: jnp.log(x), lambda: 0.0)
    ```
    An `if` statement such as `if t: y = a` / `else: y = b` (or `if t: y = a` alone, keeping the old `y`)
    becomes `y = jnp.where(t, a, b)` under the same conditions; its comments move above the new line. `and`,
    `or`, `not` and chained comparisons in the test become `jnp.logical_and`/`logical_or`/`logical_not`.

    ## Fix safety
    Unsafe. On every input where the original runs (with jit disabled, the only way it runs), the rewrite
    returns the same values, with these differences, each of one of two kinds: it **fails loudly** (raises
    instead of computing, so it cannot go unnoticed) or it **may compute different numbers** (which is what
    `jaxfix apply --verify` and `jaxfix verify` check):
    - **May compute different numbers.** The result is an array: a side that was a Python number gives a weakly
      typed 0-d array, in the other side's dtype when that is a narrower float: `0.1 if t else x16` with a
      float16 `x16` gives float16 0.09998 where the original gave the Python float 0.1.
    - **May compute different numbers.** `jnp.where` is chosen only where jaxfix proves that both sides have
      the same rank and finds no dtype category that differs; where it cannot see the dtypes, `jnp.where`
      promotes them (an int32 side and a float32 side give float32 on both paths). The test's rank is not
      proven: a test of shape `(1,)`, which Python's `if` accepts, broadcasts the result to shape `(1,)`
      (`jaxfix verify` found this on `t: jax.Array`). The message says what the fix assumes.
    - **Same numbers.** Both sides of a `jnp.where` are computed; jaxfix only allows sides built from
      arithmetic without division and from elementwise functions with a finite derivative (`abs`, `maximum`,
      `tanh`, `relu`, ...), so neither the values nor the gradient can pick up an infinity or a NaN from the
      side not taken.
    - **Fails loudly.** `lax.cond` traces both sides, so a side that cannot be traced with the other's inputs
      fails at trace time (so does a test of shape `(1,)`: "Pred must be a scalar"), and under `jax.vmap` with
      a batched test it becomes `select`, computing both.
    - **Same numbers.** `and`/`or` in the test no longer short-circuit.

    ## When it stays quiet
    Every test not proven to be a traced array (see JF201: shapes, dtypes, `is None`, `isinstance`, static
    arguments, parameters with defaults, attributes, module flags, untraced code), and `if` statements that
    do more than choose one variable's value (JF201 turns those into `lax.cond`).

    It reports without a fix when the two sides are None, strings or functions, or provably differ in rank or
    dtype category (`1 if t else x * 0.5`: write `1.0`); when a side calls a function not known to be pure
    (lax.cond would run it for both outcomes at trace time); when the test is an array of rank 1 or more
    (`jnp.where(t, a, b)` chooses element by element, which may be what was meant); and when an `and`/`or`
    mixes a traced test with static ones.
    """

    code = "JF202"
    name = "branch-to-where"
    summary = f"`a if t else b` or a one-variable `if` on a traced value ({ERROR}): use jnp.where or lax.cond"
    fix_safety = Safety.UNSAFE
    screen = ("if",)

    @classmethod
    def may_match_tree(cls, screen: Screen) -> bool:
        """A finding needs a conditional expression, or an `if` outside an `if`/`elif` chain that only assigns
        one name (`branches.where_form`: `if t: y = a`, with or without `else: y = b`), in a function that
        TracedAnalysis may find traced, whose test PredicateAnalysis may find to fail Python's truth test under
        tracing (`screen.branch_tests`)."""
        return any(isinstance(node, ast.IfExp) or _one_assignment(node) for node in branch_tests(screen, ast.If, ast.IfExp))

    VALID = (
        # a static test
        Valid("import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    return x if x.ndim == 1 else x.ravel()\n"),
        # `is None` on an optional argument
        Valid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x, mask=None):\n"
            "    return x if mask is None else x * mask\n"
        ),
        # not traced code
        Valid("import jax.numpy as jnp\n\ndef f(x):\n    return jnp.log(x) if x > 0 else 0.0\n"),
        # an `if` that does more than choose a value: JF201's lax.cond
        Valid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    if jnp.sum(x) > 0:\n"
            "        x = jnp.cumsum(x)\n    return x\n"
        ),
    )
    INVALID = (
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    return x if x > 0 else 0.01 * x\n",
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    return jnp.where(x > 0, x, 0.01 * x)\n",
            message=ERROR,
        ),
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    return jnp.log(x) if x > 0 else 0.0\n",
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n"
            "    return jax.lax.cond(x > 0, lambda: jnp.log(x), lambda: 0.0)\n",
            message="jnp.log",
        ),
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    s = jnp.sum(x)\n    if s > 1.0:\n"
            "        s = -s  # flip\n    return s\n",
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    s = jnp.sum(x)\n    # flip\n"
            "    s = jnp.where(s > 1.0, -s, s)\n    return s\n",
            message="assumes a 0-d test",
        ),
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    return 1 if jnp.sum(x) > 0 else x * 0.5\n",
            None,
            message="dtype",
        ),
    )

    # ---- conditional expressions ---------------------------------------------------------------------------

    def visit_IfExp(self, node: cst.IfExp) -> None:
        predicate = self._predicate(node, node.test, "`a if t else b`")
        if predicate is None:
            return
        problem = f"`a if t else b` on a traced value fails under jit ({ERROR})"
        mismatch = self._mismatch(node.body, node.orelse)
        if mismatch is not None:
            self.report(node.test, f"{problem}; not rewritten: {mismatch}")
            return
        code = self.context.code_for
        branches = self.context.branches
        if branches.where_choice(node.body, node.orelse):
            where, needed = self.context.names.expression_for("jax.numpy.where")
            text = f"{code(where)}({code(predicate)}, {_bare(node.body)}, {_bare(node.orelse)})"
            fix = self._replace(node, text, "rewrite with jnp.where", [needed, self._logical_import(predicate, node)])
            self.report(node.test, f"{problem}; jnp.where computes both sides and selects one{_WHERE_ASSUMES}", fix)
            return
        impurity = self.context.dataflow.block_impurity(
            [cst.SimpleStatementLine([cst.Expr(node.body)]), cst.SimpleStatementLine([cst.Expr(node.orelse)])],
            outside=(),
        )
        if impurity is not None:
            reason = impurity.reason.replace("the branch", "the expression")
            self.report(node.test, f"{problem}; not rewritten: a side {reason}, and lax.cond would trace both sides")
            return
        why = branches.where_blocker(node.body) or branches.where_blocker(node.orelse)
        cond, needed = self.context.names.expression_for("jax.lax.cond")
        text = f"{code(cond)}({code(predicate)}, lambda: {_bare(node.body)}, lambda: {_bare(node.orelse)})"
        fix = self._replace(node, text, "rewrite with lax.cond", [needed, self._logical_import(predicate, node)])
        if why is not None:
            reason = f"a side is not safe to compute for the other's inputs ({why}), so lax.cond computes only the side taken"
        else:
            reason = "jaxfix cannot prove both sides have the same shape, so lax.cond (which checks it) picks one"
        self.report(
            node.test,
            f"{problem}; {reason} (unsafe: assumes each side traces with the other's inputs, else lax.cond raises "
            "at trace time)",
            fix,
        )

    # ---- `if` statements that choose one value -------------------------------------------------------------

    def visit_If(self, node: cst.If) -> None:
        if isinstance(node.orelse, cst.If) or isinstance(self.context.parents.get(node), cst.If):
            return  # an `if`/`elif` chain: JF204's
        if not self.context.traced.in_traced_code(node):
            return self.decline_untraced(node.test)
        if self.context.traced.guarded(node):
            return self.decline(node.test, "inside a `try` that catches the tracer's error: written to run traced and eagerly")
        form = self.context.branches.where_form(node)
        if form is None:
            return self.decline(node.test, "the branches do more than choose one cheap value for one variable: JF201's (lax.cond)")
        predicate = self._predicate(node, node.test, "`if`", mixed_reported=True)
        if predicate is None:
            return
        name, true_value, false_value = form
        where, needed = self.context.names.expression_for("jax.numpy.where")
        code = self.context.code_for
        text = f"{name} = {code(where)}({code(predicate)}, {_bare(true_value)}, {_bare(false_value)})\n"
        statement = cst.parse_statement(text).with_changes(leading_lines=[*node.leading_lines, *_comments(node)])
        fix = self.fix(
            "rewrite the `if` with jnp.where",
            [(node, statement)],
            add_imports=[spec for spec in (needed, self._logical_import(predicate, node)) if spec is not None],
        )
        self.report(
            node.test,
            f"Python `if` on a traced value fails under jit ({ERROR}); it only chooses `{name}`: jnp.where computes "
            f"both values and selects one{_WHERE_ASSUMES}",
            fix,
        )

    # ---- shared --------------------------------------------------------------------------------------------

    def _predicate(self, node, test: cst.BaseExpression, what: str, mixed_reported: bool = False):
        """The test as an array expression, or None (after reporting what stops the rewrite, if anything)."""
        if not self.context.traced.in_traced_code(node):
            return None
        verdict = self.context.predicates.test(test)
        if verdict is Truth.OTHER:
            return None
        problem = f"{what} on a traced value fails under jit ({ERROR})"
        if verdict is Truth.MIXED:
            if not mixed_reported:
                self.report(
                    test, f"{problem}; not rewritten: `and`/`or` mixes a traced test with static ones (test the static "
                    "ones in a Python `if` of their own)",
                )  # fmt: skip
            return None
        if any(isinstance(n, cst.NamedExpr) for n in walk(node)):
            self.report(test, f"{problem}; not rewritten: it assigns with `:=`")
            return None
        rank = self.context.shapes.least_rank(test)
        if rank is not None and rank > 0:
            self.report(
                test,
                f"{problem}; not rewritten: the test is an array of rank {rank}, not one truth value (jnp.where(t, a, "
                "b) chooses element by element, if that was meant)",
            )
            return None
        jnp = self._jnp(node)
        predicate = logical_test(test, jnp)
        if predicate is None:
            self.report(
                test,
                f"{problem}; not rewritten: a chained comparison computes its middle operand once, and "
                "jnp.logical_and would compute it twice (name it first)",
            )
        return predicate

    def _jnp(self, node) -> str:
        expression, _ = self.context.names.expression_for("jax.numpy.logical_and")
        return self.context.code_for(expression).rsplit(".", 1)[0]

    def _logical_import(self, predicate, node):
        if predicate is node.test:
            return None
        return self.context.names.expression_for("jax.numpy.logical_and")[1]

    def _mismatch(self, a: cst.BaseExpression, b: cst.BaseExpression) -> str | None:
        shapes = self.context.shapes
        for side in (a, b):
            if is_none(side) or isinstance(side, (cst.SimpleString, cst.FormattedString, cst.Lambda)):
                return f"`{snippet(self.context.code_for(side))}` is not an array, and lax.cond and jnp.where need arrays"
        rank_a, rank_b = shapes.rank(a), shapes.rank(b)
        if rank_a is not None and rank_b is not None and rank_a != rank_b:
            return f"the two sides have ranks {rank_a} and {rank_b}"
        differ = shapes.different_categories(a, b)
        if differ is not None:
            category_a, category_b = differ
            return (
                f"the sides differ in dtype ({category_a.name.lower()} and {category_b.name.lower()}), and lax.cond needs "
                "the same dtype on both (write the number in the other's dtype, e.g. `1.0`)"
            )
        return None

    def _replace(self, node: cst.IfExp, text: str, description: str, imports):
        replacement = cst.parse_expression(text).with_changes(lpar=node.lpar, rpar=node.rpar)
        return self.fix(description, [(node, replacement)], add_imports=[i for i in imports if i is not None])


# What a jnp.where rewrite takes for granted, in its message: Python's `if` accepts a test of shape (1,), which
# jnp.where broadcasts into the result, and jnp.where rounds a Python number to the other side's float dtype.
_WHERE_ASSUMES = (
    " (unsafe: assumes a 0-d test, since one of shape (1,) would give the result that shape; a Python number "
    "takes the other side's dtype)"
)


def _bare(expr: cst.BaseExpression) -> str:
    """An operand as a call argument: its own outer parentheses dropped."""
    return cst.Module(body=[]).code_for_node(expr.with_changes(lpar=[], rpar=[]))




def _comments(node: cst.If) -> list[cst.EmptyLine]:
    """The comments of an `if` that becomes one line, as lines above it: on the `if` and `else` lines, above
    `else`, and on or above the assignments."""
    lines: list[cst.EmptyLine] = []

    def add(comment: cst.Comment | None) -> None:
        if comment is not None:
            lines.append(cst.EmptyLine(comment=comment))

    suites = [node.body]
    if isinstance(node.orelse, cst.Else):
        suites.append(node.orelse.body)
    for index, suite in enumerate(suites):
        if index == 1:
            lines.extend(line for line in node.orelse.leading_lines if line.comment is not None)
        if isinstance(suite, cst.IndentedBlock):
            add(suite.header.comment)
            for statement in suite.body:
                lines.extend(line for line in statement.leading_lines if line.comment is not None)
                add(statement.trailing_whitespace.comment)
            lines.extend(line for line in suite.footer if line.comment is not None)
        else:
            add(suite.trailing_whitespace.comment)
    return lines


def _one_assignment(node: ast.If) -> bool:
    """The shape `branches.where_form` needs: a body that is only `name = value`, and an `else` that is only
    `name = value` for the same name, or none."""

    def assigned(block: list[ast.stmt]) -> str | None:
        if len(block) != 1 or not isinstance(block[0], ast.Assign) or len(block[0].targets) != 1:
            return None
        target = block[0].targets[0]
        return target.id if isinstance(target, ast.Name) else None

    name = assigned(node.body)
    return name is not None and (not node.orelse or assigned(node.orelse) == name)
