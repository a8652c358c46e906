"""JF204 elif-chain: an `if`/`elif`/`else` chain on traced values in traced code becomes `lax.switch` (tests that
compare one value to constants) or nested `lax.cond`."""

from __future__ import annotations

import ast
from dataclasses import replace

import libcst as cst

from jaxfix.analysis.predicates import Truth
from jaxfix.analysis.screen import Screen, elif_of, in_scoped_traced_function, surely_guarded_ifs, traced_nodes
from jaxfix.analysis.syntax import walk
from jaxfix.codegen import arm_functions, branch_result, logical_test
from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.diagnostics import Safety

ERROR = "TracerBoolConversionError"
# What the fix assumes (the Fix safety section's loud failures), with the lax function that raises otherwise.
_ASSUMES = (
    "unsafe: assumes every branch traces with the others' inputs and all give one shape and dtype (else {} "
    "raises at trace time)"
)


class ElifChain(Codemod):
    """
    ## What it does
    Finds `if`/`elif`/`else` chains inside traced code (a function under `jax.jit`, `jax.vmap`, a lax body,
    ...) with a test on a traced value. When every test from there on compares the same value with `==` to a
    different integer constant (`if mode == 0: ... elif mode == 1: ...`), the chain becomes one `lax.switch`
    with a named function per branch. Otherwise the first traced test becomes a `lax.cond` whose second
    branch holds the rest of the chain as an `if`, which the next pass rewrites in turn: nested `lax.cond`,
    as AutoGraph builds it.

    ## Why is this bad?
    Each test of the chain asks Python for the truth of a value, and a tracer has none: `jax.jit` raises
    `TracerBoolConversionError` at the first traced test. `lax.switch` stages every branch and picks one by
    index when the program runs; `lax.cond` does the same for two.

    ## Example
    ```python
    @jax.jit
    def activate(x, kind):
        if kind == 0:
            y = jnp.tanh(x)
        elif kind == 1:
            y = jax.nn.relu(x)
        else:
            y = x
        return y
    ```

    ## Use instead
    ```python
    @jax.jit
    def activate(x, kind):
        def branch_0():
            return jnp.tanh(x)
        def branch_1():
            return jax.nn.relu(x)
        def branch_2():
            return x
        index = jnp.select([kind == 0, kind == 1], [0, 1], 2)
        y = jax.lax.switch(index, [branch_0, branch_1, branch_2])
        return y
    ```
    The index is computed with `jnp.select` from the chain's own tests, so that any value the chain sends to
    `else` (`kind == 7`, `kind == -1`) still goes there: `lax.switch` clamps an out-of-range index to the
    first or last branch instead. Outputs, operands, returns and one-sided chains follow JF201.

    ## Fix safety
    Unsafe, for JF201's reasons (both or all branches are traced, results become arrays, branch outputs must
    agree in shape and dtype, `and`/`or` no longer short-circuit), and because the tests of a `lax.switch` are
    all computed where Python stopped at the first true one.
    Of these, a branch that cannot be traced for the others' inputs and branch outputs that differ in shape or
    dtype **fail loudly** at trace time (TypeError: "switch branches must have equal output types"); the others
    keep the numbers. None computes different numbers.

    ## When it stays quiet
    Chains whose tests are not proven traced (see JF201: shapes, dtypes, `is None`, `isinstance`, static
    arguments, attributes, module flags, untraced code), in every link: `if x.ndim == 1: ... elif x.ndim == 2:`
    stays Python. A static test before the first traced one stays a Python `if`, and the traced rest of the
    chain becomes its `else`. A plain `if`/`else` is JF201's or JF202's.

    It reports without a fix, saying what stopped it, on the same grounds as JF201: a branch that raises (use
    `jax.experimental.checkify.check` or `equinox.error_if`), prints, mutates outside state or returns from a
    nested block; a variable missing from some branch; outputs that differ in rank or dtype; a test of rank 1
    or more; `and`/`or` that mixes traced and static tests.
    """

    code = "JF204"
    name = "elif-chain"
    summary = f"`if`/`elif` chain on traced values ({ERROR}): use lax.switch or nested lax.cond"
    fix_safety = Safety.UNSAFE
    screen = ("elif",)

    @classmethod
    def may_match_tree(cls, screen: Screen) -> bool:
        """A finding needs an `if` with an `elif` (not an `else:` holding an `if`) in a function that TracedAnalysis
        may find traced, with names resolved through the functions around their use (`in_scoped_traced_function`),
        one of whose tests may fail Python's truth test under tracing as PredicateAnalysis.test proves it
        (`Screen.may_fail_truth`, strict), and whose first `if` is not surely in a `try` that catches the tracer's
        errors (`surely_guarded_ifs`)."""
        for node in traced_nodes(screen, ast.If):
            link, chained = node, False
            while (following := elif_of(link)) is not None:
                if screen.may_fail_truth(link.test, strict=True) or screen.may_fail_truth(following.test, strict=True):
                    chained = True
                    break
                link = following
            if chained and in_scoped_traced_function(screen, node) and id(node) not in surely_guarded_ifs(screen):
                return True
        return False

    VALID = (
        # static tests
        Valid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    if x.ndim == 1:\n        x = x[None]\n"
            "    elif x.ndim == 3:\n        x = x[0]\n    return x\n"
        ),
        # a plain if/else: JF201's
        Valid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    if jnp.sum(x) > 0:\n        x = jnp.cumsum(x)\n"
            "    else:\n        x = jnp.flip(x)\n    return x\n"
        ),
    )
    INVALID = (
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x, k):\n    if k == 0:\n        y = jnp.sin(x)\n"
            "    elif k == 1:\n        y = jnp.cos(x)\n    else:\n        y = x\n    return y\n",
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x, k):\n    def branch_0():\n        return jnp.sin(x)\n"
            "    def branch_1():\n        return jnp.cos(x)\n    def branch_2():\n        return x\n"
            "    index = jnp.select([k == 0, k == 1], [0, 1], 2)\n"
            "    y = jax.lax.switch(index, [branch_0, branch_1, branch_2])\n"
            "    return y\n",
            message=ERROR,
        ),
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    s = jnp.sum(x)\n    if s > 1:\n"
            "        x = jnp.cumsum(x)\n    elif s < -1:\n        x = jnp.flip(x)\n    return x\n",
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    s = jnp.sum(x)\n    def true_fn(x):\n"
            "        return jnp.cumsum(x)\n    def false_fn(x):\n        def true_fn_2(x):\n            return jnp.flip(x)\n"
            "        return jax.lax.cond(s < -1, true_fn_2, lambda x: x, x)\n"
            "    x = jax.lax.cond(s > 1, true_fn, false_fn, x)\n    return x\n",
        ),
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x, k):\n    if k == 0:\n        y = jnp.sin(x)\n"
            "    elif k == 1:\n        raise ValueError('no')\n    else:\n        y = x\n    return y\n",
            None,
            message="checkify",
        ),
    )

    def __init__(self, context) -> None:
        super().__init__(context)


    # ---- matching ------------------------------------------------------------------------------------------

    def visit_If(self, node: cst.If) -> None:
        parent = self.context.parents.get(node)
        if isinstance(parent, cst.If) and parent.orelse is node:
            return  # a link of a chain: handled from its head
        if not isinstance(node.orelse, cst.If) or not self.context.traced.in_traced_code(node):
            return
        if self.context.traced.guarded(node):
            return
        links = [node]
        while isinstance(links[-1].orelse, cst.If):
            links.append(links[-1].orelse)
        predicates = self.context.predicates
        verdicts = [predicates.test(link.test) for link in links]
        first = next((i for i, verdict in enumerate(verdicts) if verdict is not Truth.OTHER), None)
        if first is None:
            return
        start = links[first]
        problem = f"Python `{'if' if first == 0 else 'elif'}` on a traced value fails under jit ({ERROR})"
        if verdicts[first] is Truth.MIXED:
            self.report(
                start.test, f"{problem}; not rewritten: `and`/`or` mixes a traced test with static ones (test the "
                "static ones in a Python `if` of their own)",
            )  # fmt: skip
            return
        rest = links[first:]
        for link in rest:
            rank = self.context.shapes.least_rank(link.test)
            if any(isinstance(n, cst.NamedExpr) for n in walk(link.test)):
                self.report(start.test, f"{problem}; not rewritten: a test assigns with `:=`")
                return
            if rank is not None and rank > 0:
                self.report(
                    start.test,
                    f"{problem}; not rewritten: `{self.context.code_for(link.test)}` is an array of rank {rank}, and "
                    "lax.cond and lax.switch need a scalar (use jnp.any/jnp.all, or jnp.where to choose element by "
                    "element)",
                )
                return
            if link is not start and verdicts[links.index(link)] is not Truth.TRACED:
                break  # a static test later on stays a Python `if` inside a branch
        switch = self._switch_tests(rest, verdicts[first:])
        if switch is not None:
            self._switch(node, start, rest, switch, problem)
        else:
            self._cond(node, start, problem)

    # ---- lax.switch ----------------------------------------------------------------------------------------

    def _switch_tests(self, links: list[cst.If], verdicts: list[Truth]) -> str | None:
        """The value every link compares with `==` to a distinct integer constant, when that is the whole
        chain from here (two tests or more); None otherwise."""
        if len(links) < 2 or any(v is not Truth.TRACED for v in verdicts):
            return None
        subject = None
        constants = set()
        for link in links:
            test = link.test
            if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
                return None
            comparison = test.comparisons[0]
            if not isinstance(comparison.operator, cst.Equal):
                return None
            left, right = test.left, comparison.comparator
            constant = _integer(right) if _integer(right) is not None else _integer(left)
            other = left if _integer(right) is not None else right
            if constant is None or constant in constants or not isinstance(other, (cst.Name, cst.Attribute)):
                return None
            code = self.context.code_for(other.with_changes(lpar=[], rpar=[]))
            if subject is not None and code != subject:
                return None
            subject = code
            constants.add(constant)
        return subject

    def _switch(self, head: cst.If, start: cst.If, links: list[cst.If], subject: str, problem: str) -> None:
        last = links[-1].orelse
        arms = [(f"`{'if' if i == 0 and start is head else 'elif'} {self._code(link.test)}`", link.body) for i, link in enumerate(links)]
        arms.append(("`else`", last.body if isinstance(last, cst.Else) else None))
        branches = self.context.branches.branches(start, arms)
        if branches.blocker is not None:
            self.report(start.test, f"{problem}; not rewritten to lax.switch: {branches.blocker}")
            return
        names = self.context.fresh_names
        candidates = [(f"branch_{i}",) for i in range(len(arms))]
        suites = [suite for _, suite in arms]
        leading = [start.leading_lines if start is head else (), *(link.leading_lines for link in links[1:])]
        leading.append(last.leading_lines if isinstance(last, cst.Else) else ())
        functions, references = arm_functions(branches, names, candidates, suites, leading)
        switch, switch_import = self.context.names.expression_for("jax.lax.switch")
        select, select_import = self.context.names.expression_for("jax.numpy.select")
        code = self.context.code_for
        tests = ", ".join(code(link.test.with_changes(lpar=[], rpar=[])) for link in links)
        positions = ", ".join(str(i) for i in range(len(links)))
        index = names.take("index", "branch_index")
        chosen = cst.parse_statement(f"{index} = {code(select)}([{tests}], [{positions}], {len(links)})\n")
        call = f"{code(switch)}({', '.join([index, '[' + ', '.join(references) + ']', *branches.operands])})"
        replacement = [*functions, chosen, branch_result(branches, call)]
        fix = self._fix(head, start, replacement, branches, "rewrite the chain with lax.switch", [switch_import, select_import])
        self.report(
            start.test,
            f"{problem}; lax.switch traces every branch and picks one by index at run time ({self._what(branches)})"
            f"; {_ASSUMES.format('lax.switch')}",
            fix,
        )

    # ---- nested lax.cond -----------------------------------------------------------------------------------

    def _cond(self, head: cst.If, start: cst.If, problem: str) -> None:
        built = self._nested(head, start)
        if isinstance(built, str):
            self.report(start.test, f"{problem}; not rewritten to lax.cond: {built}")
            return
        statements, branches, imports = built
        fix = self._fix(head, start, statements, branches, "rewrite the chain with nested lax.cond", imports)
        self.report(
            start.test,
            f"{problem}; lax.cond traces both branches and picks one at run time, with the rest of the chain nested "
            f"in its second branch ({self._what(branches)}); {_ASSUMES.format('lax.cond')}",
            fix,
        )

    def _nested(self, head: cst.If, link: cst.If):
        """The statements replacing `link` and the rest of its chain: a lax.cond whose second branch holds the
        next link's own lax.cond (or, for a static test, the Python `if`). A string says what stops it."""
        orelse = link.orelse
        if isinstance(orelse, cst.If):
            rest: cst.BaseSuite | None = cst.IndentedBlock(body=[orelse])
            label = "`elif`"
        elif isinstance(orelse, cst.Else):
            rest, label = orelse.body, "`else`"
        else:
            rest, label = None, "`else`"
        arms = [(f"`{'if' if link is head else 'elif'}`", link.body), (label, rest)]
        branches = self.context.branches.branches(link, arms)
        if branches.blocker is not None:
            return branches.blocker
        jnp_expression, jnp_import = self.context.names.expression_for("jax.numpy.logical_and")
        predicate = logical_test(link.test, self.context.code_for(jnp_expression).rsplit(".", 1)[0])
        if predicate is None:
            return (
                "a chained comparison computes its middle operand once, and jnp.logical_and would compute it twice "
                "(name it first)"
            )
        imports = [jnp_import if predicate is not link.test else None]
        names = self.context.fresh_names
        reserved = [(names.take("true_fn"),), (names.take("false_fn"),)]
        if isinstance(orelse, cst.If) and self.context.predicates.test(orelse.test) is Truth.TRACED:
            inner = self._nested(head, orelse)
            if isinstance(inner, str):
                return inner
            inner_statements, inner_branches, inner_imports = inner
            mismatch = self.context.branches.mismatch(replace(branches, arms=(branches.arms[0], *inner_branches.arms)))
            if mismatch is not None:
                return mismatch
            first = inner_statements[0]
            inner_statements = [first.with_changes(leading_lines=orelse.leading_lines), *inner_statements[1:]]
            false_arm = replace(branches.arms[1], statements=tuple(inner_statements))
            branches = replace(branches, arms=(branches.arms[0], false_arm))
            imports.extend(inner_imports)
        functions, references = arm_functions(
            branches,
            names,
            reserved,
            [link.body, rest],
            [link.leading_lines if link is head else (), orelse.leading_lines if isinstance(orelse, cst.Else) else ()],
            reserved=True,
        )
        cond, cond_import = self.context.names.expression_for("jax.lax.cond")
        code = self.context.code_for
        call = f"{code(cond)}({', '.join([code(predicate), *references, *branches.operands])})"
        imports.append(cond_import)
        return [*functions, branch_result(branches, call)], branches, imports

    # ---- shared --------------------------------------------------------------------------------------------

    def _fix(self, head: cst.If, start: cst.If, statements, branches, description: str, imports):
        if start is head:
            changes = [(head, cst.FlattenSentinel(statements))]
        else:  # the chain's static part stays; its traced rest becomes the `else` of the last static link
            changes = [(start, cst.Else(body=cst.IndentedBlock(body=statements), leading_lines=start.leading_lines))]
        changes.extend((moved, cst.RemovalSentinel.REMOVE) for moved in branches.tail)
        return self.fix(description, changes, add_imports=[spec for spec in imports if spec is not None])

    def _what(self, branches) -> str:
        if branches.returns:
            return "returning its value"
        return "with outputs " + ", ".join(f"`{n}`" for n in branches.outputs)

    def _code(self, node: cst.CSTNode) -> str:
        return " ".join(self.context.code_for(node).split())


def _integer(expr: cst.BaseExpression) -> int | None:
    if isinstance(expr, cst.Integer):
        return int(expr.evaluated_value)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus) and isinstance(expr.expression, cst.Integer):
        return -int(expr.expression.evaluated_value)
    return None
