"""JF201 branch-to-cond: a Python `if`/`else` on a traced value in traced code becomes `lax.cond`."""

from __future__ import annotations

import ast
from dataclasses import dataclass

import libcst as cst

from jaxfix.codegen import arm_functions, branch_result, cst_branches, logical_test
from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.analysis.syntax import body_statements
from jaxfix.diagnostics import Diagnostic, Fix, ImportSpec, Safety, spelled_with_import
from jaxfix.facts.branches import Branches, logical_form
from jaxfix.facts.module import FileFacts
from jaxfix.facts.predicates import Truth

ERROR = "TracerBoolConversionError"


class BranchToCond(Codemod):
    """
    ## What it does
    Finds `if`/`else` statements inside traced code (a function under `jax.jit`, `jax.vmap`, `jax.grad`, a
    `lax.fori_loop` body, ...) whose test is a traced value, and rewrites them into `lax.cond` with one named
    local function per branch.

    ## Why is this bad?
    JAX traces a function by running it on abstract values, so a Python `if` cannot know which way a traced
    test goes: `jax.jit` raises `TracerBoolConversionError` ("Attempted boolean conversion of traced array
    with shape bool[]") the first time it meets one. `lax.cond` stages both branches into the compiled
    program and picks one when it runs.

    ## Example
    ```python
    @jax.jit
    def clip_by_norm(g, max_norm):
        norm = jnp.linalg.norm(g)
        if norm > max_norm:  # TracerBoolConversionError
            g = g * (max_norm / norm)
        return g
    ```

    ## Use instead
    ```python
    @jax.jit
    def clip_by_norm(g, max_norm):
        norm = jnp.linalg.norm(g)
        def true_fn(g):  # TracerBoolConversionError
            return g * (max_norm / norm)
        g = jax.lax.cond(norm > max_norm, true_fn, lambda g: g, g)
        return g
    ```
    The variables a branch assigns that are used after the `if` become the cond's outputs (`x, v =
    lax.cond(...)`); a variable one branch leaves alone keeps its old value there; a variable a branch reads
    before assigning it is passed in as an operand (`g` above); everything else the branches read they take
    from the enclosing function. A `return` ending both branches becomes `return lax.cond(...)`, and an early
    `return` in one branch takes the statements after the `if` into the other branch. `and`, `or`, `not` and
    chained comparisons in the test become `jnp.logical_and`/`logical_or`/`logical_not`. An existing `lax`
    import is reused.

    ## Fix safety
    Unsafe. On every input where the original runs (with jit disabled, the only way it runs), the rewrite
    returns the same values; no difference computes other numbers, and some **fail loudly** (raise instead of
    computing, so they cannot go unnoticed):
    - **Fails loudly.** Both branches are traced (and compiled), so a branch that cannot be traced for the
      other branch's inputs (a tuple index out of range, a shape error) now fails at trace time (an
      out-of-range index into a JAX array does not: it clamps, as in the original); and under `jax.vmap` with a
      batched test, `cond` becomes `select` and runs both branches (where the original could not run; the
      values and gradients are those of the branch taken, measured with `jnp.sqrt(x)` at 0 in the other one).
    - **Same numbers, or fails loudly.** Results are arrays: a branch that assigned a Python number gives a
      weakly typed 0-d array (a float rounded to float32: only Python arithmetic on the result outside jit can
      tell, and `verify` compares a Python float as float32), and a Python `int` meeting a float array in the
      other branch makes `lax.cond` raise ("cond branches must have equal output types"; reported without a fix
      when jaxfix can see it), as does a Python number meeting a narrower array (`1.0` and a bfloat16 array,
      `1` and an int8 array).
    - **Fails loudly.** The outputs of the branches must have the same shape and dtype; where jaxfix cannot
      prove that they differ, a mismatch makes `lax.cond` raise at trace time instead of computing.
    - **Same numbers.** `and`/`or` in the test no longer short-circuit: both sides are computed.
    - **Same numbers.** A branch whose test depends on a value that is sometimes static (a helper called both
      from jitted and from plain code) runs through `lax.cond` in both cases: the numbers are the same, the
      result is an array.

    ## When it stays quiet
    Every `if` whose test is not proven to be a traced array: tests on shapes, `ndim`, dtypes, `len`,
    `is None`, `isinstance`, static arguments (`static_argnums`/`static_argnames`), parameters with a default
    (jit does not trace an omitted default), module-level flags, attributes of objects (`self.training`,
    `config.use_bias`, a pytree's static field), Python numbers computed at trace time, and anything in code
    that is not traced. A bare name (`if done:`) also needs evidence that it holds an array, since the truth
    of a tuple or dict is static. `if`/`elif` chains are left to JF204, and an `if` that only picks between two
    cheap expressions for one variable to JF202 (`jnp.where`).

    It reports without a fix, saying what stopped it, when the test is traced but a branch raises (use
    `jax.experimental.checkify.check` or `equinox.error_if`), prints, mutates an object from outside the
    branch, calls a function not known to be pure, has `break`/`continue`/`yield`/`try`/`with` or a `return`
    inside a nested block; when only one branch returns and the code after the `if` does not end in a
    `return`; when a variable used after the `if` is not assigned in every branch nor before it; when an
    output is None, a string or a function in a branch, or provably differs in rank or dtype category between
    the branches; when the test is an array of rank 1 or more (use `jnp.any`/`jnp.all`, or `jnp.where` for an
    elementwise choice); and when an `and`/`or` mixes traced and static tests.
    """

    code = "JF201"
    name = "branch-to-cond"
    summary = f"`if` on a traced value in traced code ({ERROR}): use lax.cond"
    fix_safety = Safety.UNSAFE
    screen = ("if",)
    looks_at = ("If",)

    VALID = (
        # a static test: the shape is known while tracing
        Valid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    if x.shape[0] > 1:\n"
            "        x = x[1:]\n    return x\n"
        ),
        # `is None` on an optional argument
        Valid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x, mask=None):\n    if mask is not None:\n"
            "        x = jnp.where(mask, x, 0.0)\n    return x\n"
        ),
        # not traced code
        Valid("import jax.numpy as jnp\n\ndef f(x):\n    if x > 0:\n        x = jnp.log(x)\n    return x\n"),
        # a static argument
        Valid(
            "import jax\nfrom functools import partial\n\n@partial(jax.jit, static_argnames='training')\n"
            "def f(x, training):\n    if training:\n        x = x * 0.5\n    return x\n"
        ),
    )
    INVALID = (
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x, y):\n    if y != 0:\n        return x / y\n"
            "    else:\n        return 0.0\n",
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x, y):\n    def true_fn():\n        return x / y\n"
            "    def false_fn():\n        return 0.0\n    return jax.lax.cond(y != 0, true_fn, false_fn)\n",
            message=ERROR,
        ),
        Invalid(
            "import jax\nimport jax.numpy as jnp\nfrom jax import lax\n\n@jax.jit\ndef f(g):\n"
            "    norm = jnp.linalg.norm(g)\n    if norm > 1.0:\n        g = g / norm\n    return g\n",
            "import jax\nimport jax.numpy as jnp\nfrom jax import lax\n\n@jax.jit\ndef f(g):\n"
            "    norm = jnp.linalg.norm(g)\n    def true_fn(g):\n        return g / norm\n"
            "    g = lax.cond(norm > 1.0, true_fn, lambda g: g, g)\n    return g\n",
        ),
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    if jnp.any(x < 0):\n"
            "        raise ValueError('negative')\n    return jnp.sqrt(x)\n",
            None,
            message="checkify",
        ),
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    if jnp.sum(x) > 0:\n        n = 1\n"
            "    else:\n        n = x * 2.0\n    return n\n",
            None,
            message="dtype",
        ),
        # a vector test: jnp.where (or jnp.any/jnp.all) was meant
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(t):\n    grid = jnp.linspace(0.0, 1.0, 5)\n"
            "    if grid > t:\n        y = jnp.cumsum(grid)\n    else:\n        y = jnp.flip(grid)\n    return y\n",
            None,
            message="rank 1",
        ),
        # a traced test, then a static one: Python evaluates the traced one first
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    if jnp.sum(x) > 0 and x.shape[0] > 1:\n"
            "        x = jnp.cumsum(x)\n    return x\n",
            None,
            message="mixes",
        ),
    )

    @classmethod
    def check(cls, facts: FileFacts) -> list[Diagnostic]:
        """A finding at the test of each `if` outside an `if`/`elif` chain in traced code whose truth test surely
        fails under tracing (`Predicates.truth`), fixed where its branches can be lax.cond's (`facts.branches`)."""
        found = []
        lines = facts.lines
        for node in sorted(facts.binder.nodes_of(ast.If), key=lambda n: (n.lineno, n.col_offset)):
            parent = facts.binder.parent(node)
            elif_link = type(parent) is ast.If and len(parent.orelse) == 1 and parent.orelse[0] is node and lines.is_elif(node)
            if elif_link or (len(node.orelse) == 1 and type(node.orelse[0]) is ast.If and lines.is_elif(node.orelse[0])):
                facts.decline(cls.code, node.test, "an `if`/`elif` chain: left to JF204 (elif-chain)")
                continue
            finding = cls._judge(facts, node)
            if finding is not None:
                found.append(finding)
        return found

    @classmethod
    def _judge(cls, facts: FileFacts, node: ast.If) -> Diagnostic | None:
        test = node.test
        if not facts.traced.in_traced_code(node):
            return facts.decline_untraced(cls.code, test)
        if facts.traced.guarded(node):
            # written to catch the tracer's error (`except ConcretizationTypeError`)
            return facts.decline(cls.code, test, "inside a `try` that catches the tracer's error: written to run traced and eagerly")
        verdict = facts.predicates.truth(test)
        if verdict is Truth.OTHER:
            return facts.decline(cls.code, test, "the test is not proven to be a traced value (static or unknown here)")
        problem = f"Python `if` on a traced value fails under jit ({ERROR})"
        if verdict is Truth.MIXED:
            return cls.finding(
                facts, test,
                f"{problem}; not rewritten to lax.cond: `and`/`or` mixes a traced test with static ones (test the "
                "static ones in a Python `if` of their own)",
            )  # fmt: skip
        if any(type(n) is ast.NamedExpr for n in ast.walk(test)):
            return cls.finding(facts, test, f"{problem}; not rewritten to lax.cond: the test assigns with `:=`")
        branch_facts = facts.branches
        if branch_facts.where_form(node) is not None:
            # a choice between two cheap values for one variable: JF202's jnp.where
            return facts.decline(cls.code, test, "a choice between two cheap values: left to JF202 (branch-to-where)")
        rank = facts.shapes.least_rank(test)
        if rank is not None and rank > 0:
            return cls.finding(
                facts, test,
                f"{problem}; not rewritten to lax.cond: the test is an array of rank {rank}, and lax.cond needs a "
                "scalar (use jnp.any/jnp.all to reduce it, or jnp.where to choose element by element)",
            )  # fmt: skip
        branches = branch_facts.branches(node, [("`if`", node.body), ("`else`", node.orelse or None)])
        if branches.blocker is not None:
            return cls.finding(facts, test, f"{problem}; not rewritten to lax.cond: {branches.blocker}")
        if not logical_form(test):
            return cls.finding(
                facts, test,
                f"{problem}; not rewritten to lax.cond: a chained comparison computes its middle operand once, "
                "and jnp.logical_and would compute it twice (name it first)",
            )  # fmt: skip
        names = facts.fresh_names
        functions = tuple(
            None if branches.passes_through(arm) else names.take(candidate)
            for arm, candidate in zip(branches.arms, ("true_fn", "false_fn"))
        )
        binder = facts.binder
        if branches.returns:
            what = "returning its value"
        else:
            what = "with outputs " + ", ".join(f"`{n}`" for n in branches.outputs)
        return cls.finding(
            facts, test,
            f"{problem}; lax.cond traces both branches and picks one at run time ({what}); unsafe: assumes "
            "either branch traces with the other's inputs and both give one shape and dtype (else lax.cond raises "
            "at trace time)",
            description="rewrite the `if` with lax.cond",
            plan=_Plan(branches, functions, spelled_with_import(binder, "jax.lax.cond"),
                       spelled_with_import(binder, "jax.numpy.logical_and")),
        )  # fmt: skip

    # ---- the fix -------------------------------------------------------------------------------------------

    @classmethod
    def fix_finding(cls, finding: Diagnostic, bridge) -> Fix | None:
        """The branch functions, then `outputs = lax.cond(test, true_fn, false_fn, *operands)` (or `return ...`)
        in place of the `if`; the statements after it that moved into a branch are removed."""
        plan: _Plan = finding.plan
        node = bridge.cst_of(plan.branches.node)
        if not isinstance(node, cst.If):
            return None
        orelse = node.orelse if isinstance(node.orelse, cst.Else) else None
        block = bridge.parent(node)
        rest = ()
        if plan.branches.tail:
            if not isinstance(block, cst.IndentedBlock) or node not in block.body:
                return None
            rest = block.body[block.body.index(node) + 1 :]
        suites = [body_statements(node.body), body_statements(orelse.body) if orelse is not None else ()]
        branches = cst_branches(plan.branches, suites, rest)
        jnp, jnp_import = plan.logical_and
        predicate = logical_test(node.test, jnp.rsplit(".", 1)[0])
        if predicate is None:
            return None
        functions, references = arm_functions(
            branches,
            None,
            [(name,) for name in plan.functions],
            [node.body, orelse.body if orelse is not None else None],
            [node.leading_lines, orelse.leading_lines if orelse is not None else ()],
            reserved=True,
        )
        cond, cond_import = plan.cond
        code = bridge.module.code_for_node
        call = f"{cond}({', '.join([code(predicate), *references, *branches.operands])})"
        changes = [(node, cst.FlattenSentinel([*functions, branch_result(branches, call)]))]
        changes.extend((moved, cst.RemovalSentinel.REMOVE) for moved in branches.tail)
        imports = [spec for spec in (cond_import, jnp_import if predicate is not node.test else None) if spec is not None]
        return Fix(finding.fix.safety, finding.fix.description, tuple(changes), tuple(imports))


@dataclass(frozen=True)
class _Plan:
    branches: Branches
    functions: tuple[str | None, ...]  # the name of each arm's function; None: `lambda` (it passes through)
    cond: tuple[str, ImportSpec | None]  # how the module spells jax.lax.cond, and the import it then needs
    logical_and: tuple[str, ImportSpec | None]


