"""Building blocks of generated code that several codemods share: fresh names that collide with nothing in the
module, and a loop body turned into a named local function that takes and returns its carry."""

from __future__ import annotations

from typing import Sequence

import libcst as cst

from jaxfix.analysis.dataflow import body_statements
from jaxfix.analysis.syntax import walk


class FreshNames:
    """Names for generated functions and variables: the first candidate that no name in the module uses (nor
    an earlier fix of the same pass), else the first with a number appended."""

    def __init__(self, module: cst.Module) -> None:
        self._module = module
        self._used: set[str] | None = None

    def take(self, *candidates: str) -> str:
        if self._used is None:
            self._used = {n.value for n in walk(self._module) if isinstance(n, cst.Name)}
        for candidate in candidates:
            if candidate not in self._used:
                self._used.add(candidate)
                return candidate
        number = 2
        while f"{candidates[0]}_{number}" in self._used:
            number += 1
        self._used.add(f"{candidates[0]}_{number}")
        return f"{candidates[0]}_{number}"


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
