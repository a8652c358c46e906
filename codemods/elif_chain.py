"""JF204 elif-chain: an `if`/`elif`/`else` chain on traced values in traced code becomes `lax.switch` (tests that
compare one value to constants) or nested `lax.cond`."""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace

import libcst as cst

from jaxfix.analysis.syntax import body_statements
from jaxfix.codegen import CstArm, arm_functions, branch_result, cst_branches, logical_test
from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.diagnostics import Diagnostic, Fix, ImportSpec, Safety, spelled_with_import
from jaxfix.facts.branches import Branches, logical_form
from jaxfix.facts.module import FileFacts
from jaxfix.facts.predicates import Truth

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
    looks_at = ("If",)

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

    # ---- matching ------------------------------------------------------------------------------------------

    @classmethod
    def check(cls, facts: FileFacts) -> list[Diagnostic]:
        """A finding at the first test of each `if`/`elif` chain in traced code whose truth test surely fails under
        tracing (`Predicates.truth`), fixed with lax.switch or nested lax.cond where the branches allow it."""
        found = []
        for node in sorted(facts.binder.nodes_of(ast.If), key=lambda n: (n.lineno, n.col_offset)):
            if _elif(facts, node) is not None and _elif(facts, facts.binder.parent(node)) is not node:
                finding = _Chain(cls, facts, node).judge()
                if finding is not None:
                    found.append(finding)
        return found

    # ---- the fix -------------------------------------------------------------------------------------------

    @classmethod
    def fix_finding(cls, finding: Diagnostic, bridge) -> Fix | None:
        plan = finding.plan
        head = bridge.cst_of(plan.head)
        start = bridge.cst_of(plan.start)
        if not isinstance(head, cst.If) or not isinstance(start, cst.If):
            return None
        rest = ()
        if plan.branches.tail:
            block = bridge.parent(head)
            if not isinstance(block, cst.IndentedBlock) or head not in block.body:
                return None
            rest = tuple(block.body[block.body.index(head) + 1 :])
        if isinstance(plan, _SwitchPlan):
            built = _switch_statements(plan, head, start, rest, bridge.module.code_for_node)
        else:
            built = _nested_statements(plan, plan.levels, head, start, rest, bridge.module.code_for_node)
        if built is None:
            return None
        statements, branches, imports = built
        if start is head:
            changes = [(head, cst.FlattenSentinel(statements))]
        else:  # the chain's static part stays; its traced rest becomes the `else` of the last static link
            changes = [(start, cst.Else(body=cst.IndentedBlock(body=statements), leading_lines=start.leading_lines))]
        changes.extend((moved, cst.RemovalSentinel.REMOVE) for moved in branches.tail)
        return Fix(finding.fix.safety, finding.fix.description, tuple(changes), tuple(i for i in imports if i is not None))


class _Chain:
    """One chain's finding, decided on `ast`: which link is the first traced one, lax.switch or nested lax.cond."""

    def __init__(self, rule: type[ElifChain], facts: FileFacts, head: ast.If) -> None:
        self.rule, self.facts, self.head = rule, facts, head

    def judge(self) -> Diagnostic | None:
        facts, head = self.facts, self.head
        if not facts.traced.in_traced_code(head) or facts.traced.guarded(head):
            return None
        links = [head]
        while (following := _elif(facts, links[-1])) is not None:
            links.append(following)
        predicates = facts.predicates
        verdicts = [predicates.truth(link.test) for link in links]
        first = next((i for i, verdict in enumerate(verdicts) if verdict is not Truth.OTHER), None)
        if first is None:
            return None
        start = links[first]
        problem = f"Python `{'if' if first == 0 else 'elif'}` on a traced value fails under jit ({ERROR})"
        report = lambda message: self.rule.finding(facts, start.test, message)  # noqa: E731
        if verdicts[first] is Truth.MIXED:
            return report(
                f"{problem}; not rewritten: `and`/`or` mixes a traced test with static ones (test the static ones in "
                "a Python `if` of their own)"
            )
        rest = links[first:]
        for link in rest:
            rank = facts.shapes.least_rank(link.test)
            if any(type(n) is ast.NamedExpr for n in ast.walk(link.test)):
                return report(f"{problem}; not rewritten: a test assigns with `:=`")
            if rank is not None and rank > 0:
                return report(
                    f"{problem}; not rewritten: `{facts.branches.code(link.test)}` is an array of rank {rank}, and "
                    "lax.cond and lax.switch need a scalar (use jnp.any/jnp.all, or jnp.where to choose element by "
                    "element)"
                )
            if link is not start and verdicts[links.index(link)] is not Truth.TRACED:
                break  # a static test later on stays a Python `if` inside a branch
        if self._switch_tests(rest, verdicts[first:]) is not None:
            return self._switch(start, rest, problem)
        return self._cond(start, problem)

    # ---- lax.switch ----------------------------------------------------------------------------------------

    def _switch_tests(self, links: list[ast.If], verdicts: list[Truth]) -> str | None:
        """The value every link compares with `==` to a distinct integer constant, when that is the whole
        chain from here (two tests or more); None otherwise."""
        if len(links) < 2 or any(v is not Truth.TRACED for v in verdicts):
            return None
        subject = None
        constants = set()
        for link in links:
            test = link.test
            if not (type(test) is ast.Compare and len(test.ops) == 1 and type(test.ops[0]) is ast.Eq):
                return None
            left, right = test.left, test.comparators[0]
            constant = _integer(right) if _integer(right) is not None else _integer(left)
            other = left if _integer(right) is not None else right
            if constant is None or constant in constants or type(other) not in (ast.Name, ast.Attribute):
                return None
            code = self.facts.positions.segment(other)
            if subject is not None and code != subject:
                return None
            subject = code
            constants.add(constant)
        return subject

    def _switch(self, start: ast.If, links: list[ast.If], problem: str) -> Diagnostic:
        facts, head = self.facts, self.head
        last = links[-1]
        arms = [
            (f"`{'if' if i == 0 and start is head else 'elif'} {self._code(link.test)}`", link.body)
            for i, link in enumerate(links)
        ]
        arms.append(("`else`", last.orelse or None))
        branches = facts.branches.branches(start, arms)
        if branches.blocker is not None:
            return self.rule.finding(facts, start.test, f"{problem}; not rewritten to lax.switch: {branches.blocker}")
        names = facts.fresh_names
        functions = tuple(
            None if branches.passes_through(arm) else names.take(f"branch_{i}") for i, arm in enumerate(branches.arms)
        )
        index = names.take("index", "branch_index")
        binder = facts.binder
        plan = _SwitchPlan(
            head, start, branches, functions, index, spelled_with_import(binder, "jax.lax.switch"), spelled_with_import(binder, "jax.numpy.select")
        )
        return self.rule.finding(
            facts, start.test,
            f"{problem}; lax.switch traces every branch and picks one by index at run time ({_what(branches)})"
            f"; {_ASSUMES.format('lax.switch')}",
            description="rewrite the chain with lax.switch", plan=plan,
        )  # fmt: skip

    # ---- nested lax.cond -----------------------------------------------------------------------------------

    def _cond(self, start: ast.If, problem: str) -> Diagnostic:
        facts = self.facts
        built = self._nested(start)
        if isinstance(built, str):
            return self.rule.finding(facts, start.test, f"{problem}; not rewritten to lax.cond: {built}")
        levels, branches = built
        binder = facts.binder
        plan = _CondPlan(
            self.head, start, branches, tuple(levels), spelled_with_import(binder, "jax.lax.cond"),
            spelled_with_import(binder, "jax.numpy.logical_and"),
        )  # fmt: skip
        return self.rule.finding(
            facts, start.test,
            f"{problem}; lax.cond traces both branches and picks one at run time, with the rest of the chain nested "
            f"in its second branch ({_what(branches)}); {_ASSUMES.format('lax.cond')}",
            description="rewrite the chain with nested lax.cond", plan=plan,
        )  # fmt: skip

    def _nested(self, link: ast.If):
        """The levels of lax.cond replacing `link` and the rest of its chain, outermost first (a lax.cond whose
        second branch holds the next link's own lax.cond, or, for a static test, the Python `if`), and the
        outermost branches. A string says what stops it."""
        facts = self.facts
        orelse = _elif(facts, link)
        if orelse is not None:
            rest, label = [orelse], "`elif`"
        else:
            rest, label = link.orelse or None, "`else`"
        arms = [(f"`{'if' if link is self.head else 'elif'}`", link.body), (label, rest)]
        branches = facts.branches.branches(link, arms)
        if branches.blocker is not None:
            return branches.blocker
        if not logical_form(link.test):
            return (
                "a chained comparison computes its middle operand once, and jnp.logical_and would compute it twice "
                "(name it first)"
            )
        names = facts.fresh_names
        reserved = (names.take("true_fn"), names.take("false_fn"))
        levels = [_Level(link, branches, reserved, False)]
        if orelse is not None and facts.predicates.truth(orelse.test) is Truth.TRACED:
            inner = self._nested(orelse)
            if isinstance(inner, str):
                return inner
            inner_levels, inner_branches = inner
            mismatch = facts.branches.mismatch(replace(branches, arms=(branches.arms[0], *inner_branches.arms)))
            if mismatch is not None:
                return mismatch
            levels = [_Level(link, branches, reserved, True), *inner_levels]
        return levels, branches

    def _code(self, node: ast.expr) -> str:
        return " ".join(self.facts.branches.code(node).split())


# ---- plans and the LibCST statements they become ------------------------------------------------------------------


@dataclass(frozen=True)
class _SwitchPlan:
    head: ast.If
    start: ast.If  # the first traced link
    branches: Branches
    functions: tuple[str | None, ...]  # each arm's function; None: `lambda` (it passes through)
    index: str
    switch: tuple[str, ImportSpec | None]  # how the module spells jax.lax.switch, and the import it then needs
    select: tuple[str, ImportSpec | None]


@dataclass(frozen=True)
class _Level:
    link: ast.If
    branches: Branches
    functions: tuple[str, str]  # the names taken for the true and the false function
    nested: bool  # the false branch is the next level's lax.cond


@dataclass(frozen=True)
class _CondPlan:
    head: ast.If
    start: ast.If
    branches: Branches  # the outermost level's
    levels: tuple[_Level, ...]
    cond: tuple[str, ImportSpec | None]
    logical_and: tuple[str, ImportSpec | None]


def _switch_statements(plan: _SwitchPlan, head: cst.If, start: cst.If, rest, code):
    links = [start]
    while isinstance(links[-1].orelse, cst.If):
        links.append(links[-1].orelse)
    links = links[: len(plan.branches.arms) - 1]
    last = links[-1].orelse
    suites = [link.body for link in links]
    suites.append(last.body if isinstance(last, cst.Else) else None)
    branches = cst_branches(plan.branches, [body_statements(s) if s is not None else () for s in suites], rest)
    leading = [start.leading_lines if start is head else (), *(link.leading_lines for link in links[1:])]
    leading.append(last.leading_lines if isinstance(last, cst.Else) else ())
    functions, references = arm_functions(branches, None, [(f,) for f in plan.functions], suites, leading, reserved=True)
    (switch, switch_import), (select, select_import) = plan.switch, plan.select
    tests = ", ".join(code(link.test.with_changes(lpar=[], rpar=[])) for link in links)
    positions = ", ".join(str(i) for i in range(len(links)))
    chosen = cst.parse_statement(f"{plan.index} = {select}([{tests}], [{positions}], {len(links)})\n")
    call = f"{switch}({', '.join([plan.index, '[' + ', '.join(references) + ']', *branches.operands])})"
    return [*functions, chosen, branch_result(branches, call)], branches, [switch_import, select_import]


def _nested_statements(plan: _CondPlan, levels, head: cst.If, link: cst.If, rest, code):
    """`_Chain._nested`'s statements on LibCST, level by level (`rest`: the tail the outermost level takes along)."""
    level = levels[0]
    orelse = link.orelse
    if isinstance(orelse, cst.If):
        suite: cst.BaseSuite | None = cst.IndentedBlock(body=[orelse])
    elif isinstance(orelse, cst.Else):
        suite = orelse.body
    else:
        suite = None
    jnp, jnp_import = plan.logical_and
    predicate = logical_test(link.test, jnp.rsplit(".", 1)[0])
    if predicate is None:
        return None
    imports = [jnp_import if predicate is not link.test else None]
    branches = cst_branches(level.branches, [body_statements(link.body), body_statements(suite) if suite else ()], rest)
    if level.nested:
        inner = _nested_statements(plan, levels[1:], head, orelse, (), code)
        if inner is None:
            return None
        inner_statements, _, inner_imports = inner
        first = inner_statements[0]
        inner_statements = [first.with_changes(leading_lines=orelse.leading_lines), *inner_statements[1:]]
        branches = replace(branches, arms=(branches.arms[0], CstArm(tuple(inner_statements))))
        imports.extend(inner_imports)
    functions, references = arm_functions(
        branches,
        None,
        [(name,) for name in level.functions],
        [link.body, suite],
        [link.leading_lines if link is head else (), orelse.leading_lines if isinstance(orelse, cst.Else) else ()],
        reserved=True,
    )
    cond, cond_import = plan.cond
    call = f"{cond}({', '.join([code(predicate), *references, *branches.operands])})"
    imports.append(cond_import)
    return [*functions, branch_result(branches, call)], branches, imports


def _what(branches: Branches) -> str:
    if branches.returns:
        return "returning its value"
    return "with outputs " + ", ".join(f"`{n}`" for n in branches.outputs)


def _elif(facts: FileFacts, node: ast.AST) -> ast.If | None:
    """The `elif` of `node` (an `if`), if it has one (not an `else:` block holding only an `if`)."""
    if type(node) is ast.If and len(node.orelse) == 1 and type(node.orelse[0]) is ast.If and facts.lines.is_elif(node.orelse[0]):
        return node.orelse[0]
    return None


def _integer(expr: ast.expr) -> int | None:
    if type(expr) is ast.Constant and type(expr.value) is int:
        return expr.value
    if type(expr) is ast.UnaryOp and type(expr.op) is ast.USub and type(expr.operand) is ast.Constant and type(expr.operand.value) is int:
        return -expr.operand.value
    return None


