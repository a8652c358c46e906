"""Building blocks of generated code that several codemods share: fresh names that collide with nothing in the
module, and a loop body turned into a named local function that takes and returns its carry."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import libcst as cst

from jaxfix.analysis.syntax import body_statements, code_nodes
from jaxfix.facts.module import NameSupply


class FreshNames(NameSupply):
    """`NameSupply` over the names of a LibCST module, gathered once, from `code_nodes` (names never lie in
    whitespace: 0.12 -> 0.03 s of CPU on a 134k-node module)."""

    def __init__(self, module: cst.Module) -> None:
        super().__init__(lambda: {n.value for n in code_nodes(module) if type(n) is cst.Name})


def packed(names: Sequence[str]) -> str:
    """`a` for one name, `a, b` for several: how a carry is written in a target or a return."""
    return ", ".join(names)


def carry_value(names: Sequence[str]) -> str:
    """The initial carry argument: `a`, or `(a, b)`."""
    return names[0] if len(names) == 1 else f"({packed(names)})"


def loop_function(
    loop: cst.For | cst.While,
    *,
    name: str,
    params: Sequence[str],
    carried: Sequence[str],
    carry_param: str | None,
    statements: Sequence[cst.BaseStatement] | None = None,
    returns: str | None = None,
) -> cst.FunctionDef:
    """The loop's body as `def name(*params):`, unpacking the carry first and returning it last.

    `carry_param` is the parameter holding a tuple carry (None when one variable is carried and is itself a
    parameter); `statements` replaces the body's statements (a codemod that drops an `.append`); `returns`
    replaces the returned expression (default: the carried names). When the last statement only assigns the
    one returned name (`x = f(x)`), it becomes `return f(x)`, as a person would write it. The body keeps its
    indentation, comments and blank lines."""
    body = loop.body
    if statements is None:
        one_line = isinstance(body, cst.SimpleStatementSuite)
        statements = [cst.SimpleStatementLine(body=body.body)] if one_line else list(body_statements(body))
    statements = list(statements)
    footer = tuple(body.footer) if isinstance(body, cst.IndentedBlock) else ()
    if carry_param is not None:
        statements.insert(0, cst.parse_statement(f"{packed(carried)} = {carry_param}\n"))
    returned = packed(carried) if returns is None else returns
    last = statements[-1] if statements else None
    if not footer and _assigns_only(last, returned):
        statements[-1] = last.with_changes(body=[cst.Return(value=last.body[0].value)])
    else:
        statements.append(cst.parse_statement(f"return {returned}\n").with_changes(leading_lines=footer))
    if isinstance(body, cst.IndentedBlock):
        block = body.with_changes(body=statements, footer=())
    else:
        block = cst.IndentedBlock(body=statements, header=body.trailing_whitespace)
    return cst.FunctionDef(
        name=cst.Name(name),
        params=cst.Parameters(params=[cst.Param(cst.Name(p)) for p in params]),
        body=block,
        leading_lines=loop.leading_lines,
    )


def _assigns_only(statement, name: str) -> bool:
    """`name = value` alone on its line."""
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Assign)
        and len(statement.body[0].targets) == 1
        and isinstance(statement.body[0].targets[0].target, cst.Name)
        and statement.body[0].targets[0].target.value == name
    )


def predicate_function(
    *,
    name: str,
    carried: Sequence[str],
    carry_param: str | None,
    test: cst.BaseExpression,
    reads: Sequence[str],
    header: cst.TrailingWhitespace | None = None,
    leading_lines: Sequence[cst.EmptyLine] = (),
    comments: Sequence[cst.EmptyLine] = (),
) -> cst.FunctionDef:
    """A `lax.while_loop` condition: `def name(carry):`, unpacking the carried names the test `reads` (the
    others as `_`), then `return test`, with `comments` (lines taken from the original test) above it. One
    carried name is the parameter itself (`def cond(x):`)."""
    statements: list[cst.BaseStatement] = []
    if carry_param is None:
        param = carried[0]
    else:
        param = carry_param
        # `_` for the slots the test does not read, unless `_` is itself a carried name
        targets = [n if n in reads or "_" in carried else "_" for n in carried]
        statements.append(cst.parse_statement(f"{packed(targets)} = {carry_param}\n"))
    statements.append(cst.SimpleStatementLine(body=[cst.Return(value=test)], leading_lines=tuple(comments)))
    block = cst.IndentedBlock(body=statements, header=header or cst.TrailingWhitespace())
    return cst.FunctionDef(
        name=cst.Name(name),
        params=cst.Parameters(params=[cst.Param(cst.Name(param))]),
        body=block,
        leading_lines=tuple(leading_lines),
    )


def branch_function(
    name: str,
    params: Sequence[str],
    statements: Sequence[cst.BaseStatement],
    *,
    returns: Sequence[str] | None,
    suite: cst.BaseSuite | None = None,
    leading_lines: Sequence[cst.EmptyLine] = (),
) -> cst.FunctionDef:
    """One arm of an `if` as `def name(*params):` for `lax.cond`/`lax.switch`: its statements, then `return`
    of the names in `returns` (None: the statements end with their own `return`). When the last statement only
    assigns the one returned name, it becomes `return value`. `suite` (the arm's block, None for a missing
    `else`) gives the header comment (`if t:  # note`), indentation and trailing comments."""
    statements = list(statements)
    footer = tuple(suite.footer) if isinstance(suite, cst.IndentedBlock) else ()
    if returns is not None:
        returned = packed(returns)
        last = statements[-1] if statements else None
        if len(returns) == 1 and not footer and _assigns_only(last, returned):
            statements[-1] = last.with_changes(body=[cst.Return(value=last.body[0].value)])
        else:
            statements.append(cst.parse_statement(f"return {returned}\n").with_changes(leading_lines=footer))
            footer = ()
    if isinstance(suite, cst.IndentedBlock):
        block = suite.with_changes(body=statements, footer=footer)
    elif isinstance(suite, cst.SimpleStatementSuite):
        block = cst.IndentedBlock(body=statements, header=suite.trailing_whitespace)
    else:
        block = cst.IndentedBlock(body=statements)
    return cst.FunctionDef(
        name=cst.Name(name),
        params=cst.Parameters(params=[cst.Param(cst.Name(p)) for p in params]),
        body=block,
        leading_lines=tuple(leading_lines),
    )


def logical_test(expr: cst.BaseExpression, jnp: str) -> cst.BaseExpression | None:
    """A truth test written with `jnp.logical_and`/`logical_or`/`logical_not` instead of Python's `and`, `or`,
    `not` and chained comparisons, which call `bool()` on their operands (TracerBoolConversionError on a
    tracer). For the test of an `if` or a `while` whose parts the caller proved traced
    (`PredicateAnalysis.test(...) is Truth.TRACED`); in a truth test only truthiness matters, so `x and y`
    means `logical_and(x, y)` whatever the dtypes. Unlike Python, both operands are evaluated. `jnp` is how
    the module names jax.numpy. None when a chained comparison's middle operand is a computation (it would be
    evaluated twice)."""
    module = cst.Module(body=[])

    def text(node: cst.BaseExpression) -> str | None:
        converted = convert(node)
        if converted is None:
            return None
        return module.code_for_node(converted.with_changes(lpar=[], rpar=[]))

    def convert(node: cst.BaseExpression) -> cst.BaseExpression | None:
        if isinstance(node, cst.BooleanOperation):
            left, right = text(node.left), text(node.right)
            if left is None or right is None:
                return None
            function = "logical_and" if isinstance(node.operator, cst.And) else "logical_or"
            return cst.parse_expression(f"{jnp}.{function}({left}, {right})")
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            inner = text(node.expression)
            return None if inner is None else cst.parse_expression(f"{jnp}.logical_not({inner})")
        if isinstance(node, cst.Comparison) and len(node.comparisons) > 1:
            operands = [node.left, *(c.comparator for c in node.comparisons)]
            if any(not _simple(o) for o in operands[1:-1]):
                return None
            pairs = [
                module.code_for_node(cst.Comparison(left=a.with_changes(lpar=[], rpar=[]), comparisons=[c]))
                for a, c in zip(operands, node.comparisons)
            ]
            combined = pairs[0]
            for pair in pairs[1:]:
                combined = f"{jnp}.logical_and({combined}, {pair})"
            return cst.parse_expression(combined)
        return node

    return convert(expr)


def _simple(expr: cst.BaseExpression) -> bool:
    """A name, attribute, number or constant subscript: cheap and side-effect free to evaluate twice."""
    if isinstance(expr, (cst.Name, cst.Integer, cst.Float)):
        return True
    if isinstance(expr, cst.Attribute):
        return _simple(expr.value)
    if isinstance(expr, cst.Subscript):
        return _simple(expr.value) and all(
            isinstance(e.slice, cst.Index) and _simple(e.slice.value) for e in expr.slice
        )
    return False


@dataclass(frozen=True)
class CstArm:
    statements: tuple[cst.BaseStatement, ...]  # the arm's statements on LibCST, the tail it takes along included


@dataclass(frozen=True)
class CstBranches:
    """What `arm_functions` and `branch_result` read of an `if`'s branches, on LibCST: each arm's statements, and
    the outputs, operands and whether the arms return, as `facts.branches` decided them on `ast`."""

    arms: tuple[CstArm, ...]
    outputs: tuple[str, ...]
    operands: tuple[str, ...]
    returns: bool
    tail: tuple[cst.BaseStatement, ...]  # statements after the `if` that moved into the arms that fall through


def cst_branches(branches, suites: Sequence[Sequence[cst.BaseStatement]], block: Sequence[cst.BaseStatement]) -> CstBranches:
    """The LibCST statements of `branches` (a `facts.branches.Branches`): each arm's own statements (`suites`),
    then, for an arm that takes the tail along, the statements of `block` (those after the `if` in its block)."""
    tail = tuple(block) if branches.tail else ()
    arms = tuple(
        CstArm((*suite, *(tail if len(arm.statements) > arm.own else ()))) for arm, suite in zip(branches.arms, suites)
    )
    return CstBranches(arms, branches.outputs, branches.operands, branches.returns, tail)


def arm_functions(
    branches,
    names: FreshNames,
    candidates: Sequence[Sequence[str]],
    suites: Sequence[cst.BaseSuite | None],
    leading: Sequence[Sequence[cst.EmptyLine]],
    *,
    reserved: bool = False,
) -> tuple[list[cst.FunctionDef], list[str]]:
    """The branch functions of a `CstBranches` (one per arm, named by the first free
    candidate of that arm), and how a `lax.cond`/`lax.switch` call refers to each. An empty arm that only
    passes its operands through (the missing `else` of `if t: x = f(x)`) is `lambda x: x` instead of a def.
    `suites`/`leading`: each arm's block (for its header and trailing comments) and the comment lines above
    it. `reserved`: each arm's first candidate is a name already taken from `names` (a caller that names outer
    functions before inner ones)."""
    operands = list(branches.operands)
    outputs = list(branches.outputs)
    returns = None if branches.returns else outputs
    functions: list[cst.FunctionDef] = []
    references: list[str] = []
    for arm, names_for_arm, suite, above in zip(branches.arms, candidates, suites, leading):
        if not arm.statements and not branches.returns and operands == outputs:
            result = packed(outputs) if len(outputs) == 1 else f"({packed(outputs)})"
            references.append(f"lambda {packed(operands)}: {result}")
            continue
        name = names_for_arm[0] if reserved else names.take(*names_for_arm)
        functions.append(
            branch_function(
                name, operands, _without_blank_start(arm.statements), returns=returns, suite=suite, leading_lines=above
            )
        )
        references.append(name)
    return functions, references


def branch_result(branches, call: str) -> cst.BaseStatement:
    """`return <call>` when the arms return, else `<outputs> = <call>`."""
    if branches.returns:
        return cst.parse_statement(f"return {call}\n")
    return cst.parse_statement(f"{packed(branches.outputs)} = {call}\n")


def _without_blank_start(statements: Sequence[cst.BaseStatement]) -> list[cst.BaseStatement]:
    """A function body's statements with blank lines before the first one dropped (comments kept)."""
    statements = list(statements)
    if statements:
        first = statements[0]
        kept = [line for line in getattr(first, "leading_lines", ()) if line.comment is not None]
        statements[0] = first.with_changes(leading_lines=kept)
    return statements


def keep_parens(old: cst.BaseExpression, new: cst.BaseExpression) -> cst.BaseExpression:
    """`new` wearing the parentheses that `old` had (a replaced expression keeps its reader's grouping)."""
    if old.lpar:
        return new.with_changes(lpar=[*old.lpar, *new.lpar], rpar=[*new.rpar, *old.rpar])
    return new
