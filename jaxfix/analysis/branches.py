"""What the branches of an `if` compute, for the codemods that turn it into `lax.cond`, `lax.switch` or
`jnp.where`.

`lax.cond` traces every branch as a function of its own and returns what it returns, so the rewrite follows
AutoGraph's `if_stmt` (TF: `converters/control_flow.py`, `operators/control_flow.py`):
- the outputs are the names some branch assigns that are live after the `if`; each must get a value in every
  branch or before the `if` ("'x' must also be initialized in the else branch");
- a name a branch reads before assigning it is passed in as an operand (inside a function, assigning a name
  makes it local, so reading the outer one first would raise UnboundLocalError); other reads are closures;
- every branch returns the outputs with the same pytree structure, shape and dtype: JAX promotes weakly typed
  Python numbers within their category only (`1.0` meets float32, `1` does not: "cond branches must have
  equal output types"), and never broadcasts, where TF allowed shapes to differ;
- a `return` ending every branch becomes `return lax.cond(...)`; a branch that returns while the other falls
  through takes the statements after the `if` along (the early-return pattern), when the `if` is a statement
  of the function body itself and those statements end in a `return`;
- a branch must be pure: no I/O, no `raise`, no store into outside objects, no `break`/`continue`/`yield`.
Each arm is a list of statements, so `elif` chains (several arms) use the same analysis.

`where_form` decides when `jnp.where` is the better rewrite: one output, each arm a single cheap assignment
that is safe to evaluate on the other arm's inputs too (jnp.where computes both, and an infinite or NaN
derivative in the arm not taken turns the gradient into NaN: `0 * inf`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import libcst as cst

from jaxfix.analysis.carry import snippet
from jaxfix.analysis.dataflow import BlockFlow, block_flow
from jaxfix.analysis.metadata import children
from jaxfix.analysis.syntax import body_statements, is_none, is_number, is_terminal, sole_return, terminal_parts, walk
from jaxfix.facts.knowledge.jax import FILLED_LIKE as _LIKE, FINITE_DERIVATIVE as _SAFE_CALLS
from jaxfix.facts.model import ModuleModel

_SAFE_METHODS = frozenset({"astype", "clip"})
_CHEAP_SIZE = 12  # nodes of an expression that still count as cheap enough to compute in both arms


@dataclass(frozen=True)
class Arm:
    """One branch of the `if`: its statements (with the tail it takes along), what flows through it, and what
    each output is at its end (None: not one expression; a `return` arm: the returned value)."""

    label: str  # "`if`", "`else`", "`elif` 2": how messages name it
    statements: tuple[cst.BaseStatement, ...]
    flow: BlockFlow
    returns: cst.Return | None
    values: dict[str, cst.BaseExpression | None] = field(default_factory=dict)


@dataclass(frozen=True)
class Branches:
    node: cst.If
    arms: tuple[Arm, ...]
    outputs: tuple[str, ...]  # the names every arm returns (empty when the arms `return`)
    operands: tuple[str, ...]  # names passed into every branch function
    returns: bool  # every arm ends in `return`: `return lax.cond(...)`
    tail: tuple[cst.BaseStatement, ...]  # statements after the `if` that moved into the arms that fall through
    blocker: str | None  # why no rewrite, in words
    raises: bool = False  # the blocker is a `raise` (the message then points to checkify)


class BranchAnalysis:
    def __init__(self, context: ModuleModel) -> None:
        self._context = context

    def branches(self, node: cst.If, arms: Sequence[tuple[str, cst.BaseSuite | None]]) -> Branches:
        """The flow through `node`'s arms, given as (label, suite; None for a missing `else`)."""
        context = self._context
        dataflow = context.dataflow
        function = dataflow.enclosing_function(node)
        statements = [tuple(body_statements(suite)) if suite is not None else () for _, suite in arms]
        labels = [label for label, _ in arms]

        def refuse(reason: str, raises: bool = False) -> Branches:
            empty = tuple(Arm(label, tuple(s), block_flow(s), None) for label, s in zip(labels, statements))
            return Branches(node, empty, (), (), False, (), reason, raises)

        if not isinstance(function, cst.FunctionDef):
            return refuse("it is not inside a function")
        flow = dataflow.flow(function)
        finals = [is_terminal(block) for block in statements]
        tail: tuple[cst.BaseStatement, ...] = ()
        returns = all(finals)
        if not returns and any(finals):
            tail = self._tail(node, function)
            if tail:
                statements = [block if final else (*block, *tail) for block, final in zip(statements, finals)]
                finals = [is_terminal(block) for block in statements]
                returns = True
        for label, block in zip(labels, statements):
            jump = _jump(block)
            if jump is not None:
                return refuse(f"the {label} branch {jump[0]}", raises=jump[1])
        if any(finals) and not returns:
            return refuse(
                "only some branches `return`, and the statements after the `if` do not end the function with a "
                "`return` that could move into the others"
            )
        live_after = frozenset() if returns else flow.live_after(node)
        writes: list[str] = []
        for block in statements:
            writes.extend(n for n in block_flow(block).writes if n not in writes)
        declared = [n for n in writes if n in flow.declared]
        if declared:
            return refuse(f"`{declared[0]}` is declared global or nonlocal")
        outputs = _in_order_of_appearance(function, [n for n in writes if n in live_after])
        built: list[Arm] = []
        operands: list[str] = []
        for label, block, final in zip(labels, statements, finals):
            arm_flow = block_flow(block, outputs)
            impurity = dataflow.block_impurity(block, outside=arm_flow.live_in)
            if impurity is not None:
                return refuse(f"the {label} branch {impurity.reason}")
            for name in outputs:
                if name not in arm_flow.defined and not flow.defined_before(node, name):
                    return refuse(
                        f"`{name}` is used after the `if` but not assigned in the {label} branch nor before the "
                        "`if` (lax.cond needs its value from every branch)"
                    )
            operands.extend(n for n in arm_flow.writes if n in arm_flow.live_in and n not in operands)
            final_return = sole_return(block[-1]) if block else None
            built.append(Arm(label, block, arm_flow, final_return, self._values(node, block, outputs, final)))
        for name in operands:
            if not flow.defined_before(node, name):
                return refuse(f"a branch reads `{name}` before assigning it, and it may be undefined before the `if`")
        if not returns and not outputs:
            return refuse("its branches assign nothing that is used afterwards")
        operands = list(_in_order_of_appearance(function, operands))
        result = Branches(node, tuple(built), outputs, tuple(operands), returns, tail, None)
        mismatch = self.mismatch(result)
        if mismatch is not None:
            return refuse(mismatch)
        return result

    # ---- what each arm produces ----------------------------------------------------------------------------

    def _values(self, node, block, outputs, final: bool) -> dict[str, cst.BaseExpression | None]:
        if final:
            last = sole_return(block[-1])
            return {"return": last.value if last is not None else None}
        values: dict[str, cst.BaseExpression | None] = {}
        flow = self._context.dataflow.flow(self._context.dataflow.enclosing_function(node))
        for name in outputs:
            value = None
            writers = [s for s in block if name in block_flow([s]).writes]
            if writers:
                value = _assigned_value(writers[-1], name)
            else:
                sources = flow.reaching(node, name)
                if len(sources) == 1:
                    source = next(iter(sources))
                    value = source if isinstance(source, cst.BaseExpression) else None
            values[name] = value
        return values

    def mismatch(self, branches: Branches) -> str | None:
        """Why the arms' results cannot be one cond's outputs: None, a string, a function, or a rank or dtype
        category that provably differs between two arms."""
        shapes = self._context.shapes
        keys = ("return",) if branches.returns else branches.outputs
        for key in keys:
            shown = "the returned value" if key == "return" else f"`{key}`"
            seen: list[tuple[str, cst.BaseExpression]] = []
            for arm in branches.arms:
                value = arm.values.get(key)
                if value is None:
                    if key == "return" and arm.returns is not None and arm.returns.value is None:
                        return f"the {arm.label} branch returns None, which lax.cond cannot return"
                    continue
                if is_none(value):
                    return f"{shown} is None at the end of the {arm.label} branch"
                if isinstance(value, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString, cst.Lambda)):
                    return f"{shown} is not an array in the {arm.label} branch (`{snippet(self._code(value))}`)"
                seen.append((arm.label, value))
            for (label_a, a), (label_b, b) in zip(seen, seen[1:]):
                rank_a, rank_b = shapes.rank(a), shapes.rank(b)
                if rank_a is not None and rank_b is not None and rank_a != rank_b:
                    return (
                        f"{shown} has rank {rank_a} in the {label_a} branch but rank {rank_b} in the {label_b} branch, "
                        "and lax.cond needs the same shape from every branch"
                    )
                differ = shapes.different_categories(a, b)
                if differ is not None:
                    category_a, category_b = differ
                    return (
                        f"{shown} is {_category(category_a, a)} in the {label_a} branch but {_category(category_b, b)} "
                        f"in the {label_b} branch, and lax.cond needs the same dtype from every branch "
                        "(\"cond branches must have equal output types\")"
                    )
        return None

    def _code(self, node: cst.CSTNode) -> str:
        return self._context.code_for(node)

    # ---- the early-return pattern --------------------------------------------------------------------------

    def _tail(self, node: cst.If, function: cst.FunctionDef) -> tuple[cst.BaseStatement, ...]:
        """The statements after `node` in the function body, when `node` is one of its statements and they end
        with a `return` (every path through them then returns); empty otherwise."""
        body = function.body
        if not isinstance(body, cst.IndentedBlock) or node not in body.body:
            return ()
        rest = tuple(body.body[body.body.index(node) + 1 :])
        if not rest or sole_return(rest[-1]) is None:
            return ()
        return rest

    # ---- jnp.where -----------------------------------------------------------------------------------------

    def where_form(self, node: cst.If) -> tuple[str, cst.BaseExpression, cst.BaseExpression] | None:
        """(name, value when true, value when false) when `node` only chooses between two cheap values that
        are safe to compute on either branch's inputs and provably have the same rank, for one variable:
        `if t: y = a` / `else: y = b`, or `if t: y = a` alone with `y` bound before (its old value then).
        Such an `if` is `y = jnp.where(t, a, b)`; None for any other `if`."""
        if isinstance(node.orelse, cst.If):
            return None
        true = _single_assignment(node.body)
        if true is None:
            return None
        name, value = true
        before = None
        if isinstance(node.orelse, cst.Else):
            false = _single_assignment(node.orelse.body)
            if false is None or false[0] != name:
                return None
            other = false[1]
        else:
            dataflow = self._context.dataflow
            function = dataflow.enclosing_function(node)
            if not isinstance(function, cst.FunctionDef):
                return None
            flow = dataflow.flow(function)
            if name in flow.declared or not flow.defined_before(node, name):
                return None
            other = _find_name(node.body, name)
            sources = flow.reaching(node, name)
            single = next(iter(sources)) if len(sources) == 1 else None
            before = single if isinstance(single, cst.BaseExpression) else None
        if not self.where_choice(value, other, before=before):
            return None
        return name, value, other

    def where_choice(
        self, a: cst.BaseExpression, b: cst.BaseExpression, *, before: cst.BaseExpression | None = None
    ) -> bool:
        """Whether `jnp.where(t, a, b)` computes what choosing `a` or `b` does: both cheap and safe to compute
        (`where_blocker`), the same rank (known, or the same arrays combined elementwise with numbers: `x` and
        `0.5 * x`), and no dtype category that provably differs (jnp.where would promote where the choice does
        not). `before`: the value `b` (a name) holds, where `b` is a variable's old value."""
        if self.where_blocker(a) is not None or self.where_blocker(b) is not None:
            return False
        shapes = self._context.shapes
        b_value = before if before is not None else b
        rank_a, rank_b = shapes.rank(a), shapes.rank(b_value)
        if rank_a is None or rank_b is None:
            leaves_a, leaves_b = self._rank_leaves(a), self._rank_leaves(b)
            if leaves_a is None or leaves_a != leaves_b or not leaves_a:
                return False
        elif rank_a != rank_b:
            return False
        category_a, category_b = shapes.category(a), shapes.category(b_value)
        return category_a is None or category_b is None or category_a == category_b

    def _rank_leaves(self, expr: cst.BaseExpression) -> frozenset[str] | None:
        """The names an elementwise expression combines (numbers aside): two expressions over the same names
        broadcast to the same rank. None where something else (an opaque call, an index) decides the rank."""
        if is_number(expr):
            return frozenset()
        if isinstance(expr, cst.Name):
            return frozenset({expr.value})
        if isinstance(expr, cst.UnaryOperation) and not isinstance(expr.operator, cst.Not):
            return self._rank_leaves(expr.expression)
        if isinstance(expr, cst.BinaryOperation) and not isinstance(expr.operator, cst.MatrixMultiply):
            left, right = self._rank_leaves(expr.left), self._rank_leaves(expr.right)
            return None if left is None or right is None else left | right
        if isinstance(expr, cst.Call) and expr in self._context.parents:
            callee = self._context.names.callee(expr)
            if callee in _LIKE and expr.args and not any(a.keyword and a.keyword.value == "shape" for a in expr.args):
                return self._rank_leaves(expr.args[0].value)  # zeros_like(x): the shape of x
            elementwise = callee in _SAFE_CALLS and callee not in _LIKE
            if elementwise and not any(a.keyword or a.star for a in expr.args):
                parts = [self._rank_leaves(a.value) for a in expr.args]
                if None in parts:
                    return None
                return frozenset().union(*parts)
        return None

    def where_blocker(self, expr: cst.BaseExpression) -> str | None:
        """Why `expr` should not be computed in both arms of a `jnp.where` (too costly, or unsafe: its gradient
        may be infinite or NaN on the other arm's inputs), or None."""
        size = 0
        for node in walk(expr):
            if isinstance(node, cst.BaseExpression) and not isinstance(node, (cst.Name, cst.Attribute)):
                size += 1
            if isinstance(node, cst.Call):
                callee = self._context.names.callee(node) if node in self._context.parents else None
                func = node.func
                if callee is not None and callee not in _SAFE_CALLS:
                    return f"it calls `{self._code(func)}`"
                if callee is None:
                    if not (isinstance(func, cst.Attribute) and func.attr.value in _SAFE_METHODS):
                        return f"it calls `{self._code(func)}`"
            elif isinstance(node, cst.BinaryOperation):
                operator = node.operator
                if isinstance(operator, (cst.Divide, cst.FloorDivide, cst.Modulo)) and not _nonzero_number(node.right):
                    return f"it divides (`{snippet(self._code(node))}`)"
                if isinstance(operator, cst.Power) and not (
                    isinstance(node.right, cst.Integer) and int(node.right.value) >= 1
                ):
                    return f"it raises to a power (`{snippet(self._code(node))}`)"
                if isinstance(operator, cst.MatrixMultiply):
                    return "it multiplies matrices"
            elif isinstance(node, (cst.Lambda, cst.IfExp, cst.ListComp, cst.GeneratorExp, cst.DictComp, cst.SetComp)):
                return "it is not a plain arithmetic expression"
        if size > _CHEAP_SIZE:
            return "it is too long to compute in both arms"
        return None


def _in_order_of_appearance(function: cst.FunctionDef, names: list[str]) -> tuple[str, ...]:
    """`names` in the order the function first mentions them (its parameters first): `x, v = lax.cond(...)`
    for a function of `(x, v, t)`, as its author would write them."""
    wanted = set(names)
    first: dict[str, int] = {}
    for index, node in enumerate(walk_in_order(function)):
        if isinstance(node, cst.Name) and node.value in wanted and node.value not in first:
            first[node.value] = index
    return tuple(sorted(names, key=lambda n: first.get(n, len(first))))


def walk_in_order(node: cst.CSTNode):
    """Every node under `node` in source order."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(children(current)))


def _find_name(suite: cst.BaseSuite, name: str) -> cst.Name:
    """The assigned `name` in a one-assignment block (an existing node, so analyses can place it)."""
    line = body_statements(suite)[0]
    return line.body[0].targets[0].target


def _single_assignment(suite: cst.BaseSuite) -> tuple[str, cst.BaseExpression] | None:
    """(name, value) of a block that is only `name = value`."""
    statements = body_statements(suite)
    if len(statements) != 1 or not isinstance(statements[0], (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        return None
    line = statements[0]
    if len(line.body) != 1 or not isinstance(line.body[0], cst.Assign) or len(line.body[0].targets) != 1:
        return None
    target = line.body[0].targets[0].target
    return (target.value, line.body[0].value) if isinstance(target, cst.Name) else None


def _category(category, value: cst.BaseExpression) -> str:
    name = category.name.lower()
    return f"a Python {name}" if is_number(value) else name


def _nonzero_number(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        expr = expr.expression
    if isinstance(expr, (cst.Integer, cst.Float)):
        return expr.evaluated_value != 0
    return False


def _assigned_value(statement: cst.CSTNode, name: str) -> cst.BaseExpression | None:
    """`value` of a line that is only `name = value`."""
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
        small = statement.body[0]
        if isinstance(small, cst.Assign) and len(small.targets) == 1:
            target = small.targets[0].target
            if isinstance(target, cst.Name) and target.value == name:
                return small.value
        if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and small.target.value == name:
            return small.value
    return None


class _Jumps(cst.CSTVisitor):
    """The first statement that leaves a branch other than through its final `return`, outside nested
    functions: `return` elsewhere, `break`/`continue` out of it, `raise`, `yield`, `await`, `try`/`with`."""

    def __init__(self) -> None:
        super().__init__()
        self.found: tuple[str, bool] | None = None
        self.loops = 0

    def on_visit(self, node: cst.CSTNode) -> bool:
        return self.found is None and super().on_visit(node)

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_Lambda(self, node) -> bool:
        return False

    def visit_ClassDef(self, node) -> bool:
        return False

    def visit_For(self, node) -> None:
        self.loops += 1

    def leave_For(self, node) -> None:
        self.loops -= 1

    def visit_While(self, node) -> None:
        self.loops += 1

    def leave_While(self, node) -> None:
        self.loops -= 1

    def visit_Return(self, node) -> None:
        self.found = ("returns from inside a nested block", False)

    def visit_Break(self, node) -> None:
        if not self.loops:
            self.found = ("has `break`", False)

    def visit_Continue(self, node) -> None:
        if not self.loops:
            self.found = ("has `continue`", False)

    def visit_Raise(self, node) -> None:
        self.found = (
            "raises an exception, which cannot depend on a traced value under jit: check it with "
            "`jax.experimental.checkify.check` or `equinox.error_if` instead",
            True,
        )

    def visit_Yield(self, node) -> None:
        self.found = ("has `yield`", False)

    def visit_Await(self, node) -> None:
        self.found = ("has `await`", False)

    def visit_Try(self, node) -> None:
        self.found = ("has a `try` block", False)

    def visit_With(self, node) -> None:
        self.found = ("has a `with` block", False)


def _jump(block: Sequence[cst.CSTNode]) -> tuple[str, bool] | None:
    visitor = _Jumps()
    for part in terminal_parts(block):
        part.visit(visitor)
        if visitor.found is not None:
            return visitor.found
    return None

