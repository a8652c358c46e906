"""JF202 branch-to-where: `a if t else b` on a traced `t` in traced code, and an `if` that only picks one of two
cheap values for one variable, become `jnp.where` (or `lax.cond` where one side is unsafe to compute always)."""

from __future__ import annotations

import ast
from dataclasses import dataclass

import libcst as cst

from jaxfix.codegen import logical_test
from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.diagnostics import Diagnostic, Fix, ImportSpec, Safety, spelled_with_import
from jaxfix.facts.branches import logical_form
from jaxfix.facts.carry import snippet
from jaxfix.facts.literals import concatenated
from jaxfix.facts.module import FileFacts
from jaxfix.facts.predicates import Truth

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
    looks_at = ("IfExp", "If")

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

    @classmethod
    def check(cls, facts: FileFacts) -> list[Diagnostic]:
        """A finding at the test of each conditional expression, and of each `if` that only chooses one variable's
        value (`BranchFacts.where_form`), in traced code whose truth test surely fails under tracing."""
        found = []
        nodes = [*facts.binder.nodes_of(ast.IfExp), *facts.binder.nodes_of(ast.If)]
        for node in sorted(nodes, key=lambda n: (n.lineno, n.col_offset)):
            finding = _Check(cls, facts).expression(node) if type(node) is ast.IfExp else _Check(cls, facts).statement(node)
            if finding is not None:
                found.append(finding)
        return found

    # ---- the fix -------------------------------------------------------------------------------------------

    @classmethod
    def fix_finding(cls, finding: Diagnostic, bridge) -> Fix | None:
        plan: _Plan = finding.plan
        node = bridge.cst_of(plan.node)
        if not isinstance(node, (cst.If, cst.IfExp)):
            return None
        jnp, jnp_import = plan.logical_and
        predicate = logical_test(node.test, jnp.rsplit(".", 1)[0])
        if predicate is None:
            return None
        code = bridge.module.code_for_node
        function, needed = plan.function
        imports = [needed, jnp_import if predicate is not node.test else None]
        if isinstance(node, cst.If):
            true_value, false_value = bridge.cst_of(plan.values[0]), bridge.cst_of(plan.values[1])
            if true_value is None or false_value is None:
                return None
            text = f"{plan.name} = {function}({code(predicate)}, {_bare(true_value)}, {_bare(false_value)})\n"
            statement = cst.parse_statement(text).with_changes(leading_lines=[*node.leading_lines, *_comments(node)])
            changes = ((node, statement),)
        else:
            if plan.name == "where":
                text = f"{function}({code(predicate)}, {_bare(node.body)}, {_bare(node.orelse)})"
            else:
                text = f"{function}({code(predicate)}, lambda: {_bare(node.body)}, lambda: {_bare(node.orelse)})"
            replacement = cst.parse_expression(text).with_changes(lpar=node.lpar, rpar=node.rpar)
            changes = ((node, replacement),)
        return Fix(finding.fix.safety, finding.fix.description, changes, tuple(i for i in imports if i is not None))


@dataclass(frozen=True)
class _Plan:
    node: ast.AST  # the IfExp or the If
    name: str  # "where" or "cond" for an IfExp; the variable an If chooses
    values: tuple[ast.AST, ...]  # an If's value when true and when false
    function: tuple[str, ImportSpec | None]  # how the module spells jnp.where or lax.cond, and the import it needs
    logical_and: tuple[str, ImportSpec | None]


class _Check:
    def __init__(self, rule: type[BranchToWhere], facts: FileFacts) -> None:
        self.rule, self.facts = rule, facts

    # ---- conditional expressions ---------------------------------------------------------------------------

    def expression(self, node: ast.IfExp) -> Diagnostic | None:
        facts = self.facts
        found = self._predicate(node, "`a if t else b`")
        if found is not None or not self._proven:
            return found
        problem = f"`a if t else b` on a traced value fails under jit ({ERROR})"
        mismatch = self._mismatch(node.body, node.orelse)
        if mismatch is not None:
            return self.rule.finding(facts, node.test, f"{problem}; not rewritten: {mismatch}")
        branches = facts.branches
        if branches.where_choice(node.body, node.orelse):
            return self.rule.finding(
                facts, node.test, f"{problem}; jnp.where computes both sides and selects one{_WHERE_ASSUMES}",
                description="rewrite with jnp.where", plan=self._plan(node, "where", (), "jax.numpy.where"),
            )  # fmt: skip
        sides = [ast.copy_location(ast.Expr(side), side) for side in (node.body, node.orelse)]
        impurity = facts.purity.block_impurity(sides, outside=())
        if impurity is not None:
            reason = impurity.reason.replace("the branch", "the expression")
            return self.rule.finding(
                facts, node.test, f"{problem}; not rewritten: a side {reason}, and lax.cond would trace both sides"
            )
        why = branches.where_blocker(node.body) or branches.where_blocker(node.orelse)
        if why is not None:
            reason = f"a side is not safe to compute for the other's inputs ({why}), so lax.cond computes only the side taken"
        else:
            reason = "jaxfix cannot prove both sides have the same shape, so lax.cond (which checks it) picks one"
        return self.rule.finding(
            facts, node.test,
            f"{problem}; {reason} (unsafe: assumes each side traces with the other's inputs, else lax.cond raises "
            "at trace time)",
            description="rewrite with lax.cond", plan=self._plan(node, "cond", (), "jax.lax.cond"),
        )  # fmt: skip

    # ---- `if` statements that choose one value -------------------------------------------------------------

    def statement(self, node: ast.If) -> Diagnostic | None:
        facts, code = self.facts, self.rule.code
        lines, parent = facts.lines, facts.binder.parent(node)
        has_elif = len(node.orelse) == 1 and type(node.orelse[0]) is ast.If and lines.is_elif(node.orelse[0])
        is_elif = type(parent) is ast.If and len(parent.orelse) == 1 and parent.orelse[0] is node and lines.is_elif(node)
        if has_elif or is_elif:
            return None  # an `if`/`elif` chain: JF204's
        if not facts.traced.in_traced_code(node):
            return facts.decline_untraced(code, node.test)
        if facts.traced.guarded(node):
            return facts.decline(code, node.test, "inside a `try` that catches the tracer's error: written to run traced and eagerly")
        form = facts.branches.where_form(node)
        if form is None:
            return facts.decline(code, node.test, "the branches do more than choose one cheap value for one variable: JF201's (lax.cond)")
        found = self._predicate(node, "`if`", mixed_reported=True)
        if found is not None or not self._proven:
            return found
        name, true_value, false_value = form
        return self.rule.finding(
            facts, node.test,
            f"Python `if` on a traced value fails under jit ({ERROR}); it only chooses `{name}`: jnp.where computes "
            f"both values and selects one{_WHERE_ASSUMES}",
            description="rewrite the `if` with jnp.where",
            plan=self._plan(node, name, (true_value, false_value), "jax.numpy.where"),
        )  # fmt: skip

    # ---- shared --------------------------------------------------------------------------------------------

    _proven = False  # the last `_predicate` found the test traced and rewritable

    def _predicate(self, node, what: str, mixed_reported: bool = False) -> Diagnostic | None:
        """The finding that says what stops the rewrite of the test, if anything; `_proven` says whether the
        test is one to rewrite (a traced, rewritable test)."""
        facts, test = self.facts, node.test
        self._proven = False
        if not facts.traced.in_traced_code(node):
            return None
        verdict = facts.predicates.truth(test)
        if verdict is Truth.OTHER:
            return None
        problem = f"{what} on a traced value fails under jit ({ERROR})"
        finding = lambda message: self.rule.finding(facts, test, message)  # noqa: E731
        if verdict is Truth.MIXED:
            if mixed_reported:
                return None
            return finding(
                f"{problem}; not rewritten: `and`/`or` mixes a traced test with static ones (test the static ones in "
                "a Python `if` of their own)"
            )
        if any(type(n) is ast.NamedExpr for n in ast.walk(node)):
            return finding(f"{problem}; not rewritten: it assigns with `:=`")
        rank = facts.shapes.least_rank(test)
        if rank is not None and rank > 0:
            return finding(
                f"{problem}; not rewritten: the test is an array of rank {rank}, not one truth value (jnp.where(t, a, "
                "b) chooses element by element, if that was meant)"
            )
        if not logical_form(test):
            return finding(
                f"{problem}; not rewritten: a chained comparison computes its middle operand once, and "
                "jnp.logical_and would compute it twice (name it first)"
            )
        self._proven = True
        return None

    def _mismatch(self, a: ast.expr, b: ast.expr) -> str | None:
        facts = self.facts
        shapes = facts.shapes
        for side in (a, b):
            if _not_an_array(facts, side):
                return f"`{snippet(facts.branches.code(side))}` is not an array, and lax.cond and jnp.where need arrays"
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

    def _plan(self, node, name: str, values: tuple, qualified: str) -> _Plan:
        binder = self.facts.binder
        return _Plan(node, name, values, spelled_with_import(binder, qualified),
                     spelled_with_import(binder, "jax.numpy.logical_and"))


def _not_an_array(facts: FileFacts, side: ast.expr) -> bool:
    """None, a string or f-string written as one literal, or a lambda (LibCST's None, SimpleString, FormattedString
    and Lambda: a ConcatenatedString is let through, as it was)."""
    kind = type(side)
    if kind is ast.Lambda or (kind is ast.Constant and side.value is None):
        return True
    if kind is ast.JoinedStr or (kind is ast.Constant and isinstance(side.value, (str, bytes))):
        return not concatenated(facts.positions.segment(side))
    return False



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
