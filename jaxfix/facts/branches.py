"""What the branches of an `if` compute, for the rules that turn it into `lax.cond`, `lax.switch` or `jnp.where`
(JF201, JF202, JF204), on `ast`.

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

The statements are LibCST's (`flow.Lines`: a line of simple statements joined by `;`, a one-line suite), so the
answers are those of the LibCST `analysis.branches` this replaced: benchmarks/agreement.py's `branches-exact`
compared the two on every `if` and conditional expression of the examples, the corpus and the 10 real trees, with
no difference, before that was deleted (benchmarks/agreement/real-code.md). Liveness and definite assignment come from facts/loops.py (`FunctionFlow`,
`block_flow`), purity from facts/purity.py, ranks and dtype categories from the `shapes` given."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence

from jaxfix.facts.carry import snippet
from jaxfix.facts.flow import children, is_terminal, sole_return, terminal_parts, walk
from jaxfix.facts.knowledge.jax import FILLED_LIKE as _LIKE, FINITE_DERIVATIVE as _SAFE_CALLS
from jaxfix.facts.literals import is_number
from jaxfix.facts.loops import BlockFlow, block_flow

_SAFE_METHODS = frozenset({"astype", "clip"})
_CHEAP_SIZE = 12  # nodes of an expression (LibCST's count) that still count as cheap enough to compute in both arms
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SKIPPED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_NOT_CHEAP = (ast.Lambda, ast.IfExp, ast.ListComp, ast.GeneratorExp, ast.DictComp, ast.SetComp)
_NAMES_IN_CST = (True, False, None)  # constants LibCST spells as names


@dataclass(frozen=True)
class Arm:
    """One branch of the `if`: its statements (with the tail it takes along), what flows through it, and what
    each output is at its end (None: not one expression; a `return` arm: the returned value)."""

    label: str  # "`if`", "`else`", "`elif` 2": how messages name it
    statements: tuple[ast.stmt, ...]  # the arm's own statements, then the tail where it takes it along
    flow: BlockFlow | None  # None where the `if` is refused
    returns: ast.Return | None
    values: dict[str, ast.expr | None] = field(default_factory=dict)
    own: int = 0  # how many of `statements` are the arm's own (the rest: the tail)


@dataclass(frozen=True)
class Branches:
    node: ast.If
    arms: tuple[Arm, ...]
    outputs: tuple[str, ...]  # the names every arm returns (empty when the arms `return`)
    operands: tuple[str, ...]  # names passed into every branch function
    returns: bool  # every arm ends in `return`: `return lax.cond(...)`
    tail: tuple[ast.stmt, ...]  # statements after the `if` that moved into the arms that fall through
    blocker: str | None  # why no rewrite, in words
    raises: bool = False  # the blocker is a `raise` (the message then points to checkify)

    def passes_through(self, arm: Arm) -> bool:
        """An empty arm that only hands its operands back (the missing `else` of `if t: x = f(x)`): `lambda x: x`
        in the rewrite, where any other arm is a named function."""
        return not arm.statements and not self.returns and self.operands == self.outputs


class BranchFacts:
    """The branches of each `if` of one module. `facts`: the file's FileFacts (flow, lines, purity, binder,
    positions); `shapes`: ranks and dtype categories of expressions (`rank`, `category`, `different_categories`)."""

    def __init__(self, facts: Any, shapes: Any) -> None:
        self._facts = facts
        self._shapes = shapes
        self._lines = facts.lines

    def branches(self, node: ast.If, arms: Sequence[tuple[str, Sequence[ast.stmt] | None]]) -> Branches:
        """The flow through `node`'s arms, given as (label, statements; None for a missing `else`)."""
        facts, lines = self._facts, self._lines
        function = facts.enclosing_function(node)
        labels = [label for label, _ in arms]
        own = [tuple(block) if block is not None else () for _, block in arms]

        def refuse(reason: str, raises: bool = False) -> Branches:
            empty = tuple(Arm(label, block, None, None, own=len(block)) for label, block in zip(labels, own))
            return Branches(node, empty, (), (), False, (), reason, raises)

        if type(function) not in _DEFS:
            return refuse("it is not inside a function")
        flow = facts.flow(function)
        units = [lines.units(block) for block in own]
        finals = [is_terminal(lines, u) for u in units]
        tail: tuple[ast.stmt, ...] = ()
        statements = list(own)
        returns = all(finals)
        if not returns and any(finals):
            tail = self._tail(node, function)
            if tail:
                tail_units = lines.units(tail)
                statements = [block if final else (*block, *tail) for block, final in zip(own, finals)]
                units = [u if final else [*u, *tail_units] for u, final in zip(units, finals)]
                finals = [is_terminal(lines, u) for u in units]
                returns = True
        for label, arm_units in zip(labels, units):
            jump = _jump(lines, arm_units)
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
            writes.extend(n for n in block_flow(block, lines).writes if n not in writes)
        declared = [n for n in writes if n in flow.declared]
        if declared:
            return refuse(f"`{declared[0]}` is declared global or nonlocal")
        outputs = self._in_order_of_appearance(function, [n for n in writes if n in live_after])
        built: list[Arm] = []
        operands: list[str] = []
        purity = facts.purity
        for label, block, arm_units, final, mine in zip(labels, statements, units, finals, own):
            arm_flow = block_flow(block, lines, outputs)
            impurity = purity.block_impurity(mine, outside=arm_flow.live_in, tail=block[len(mine):])
            if impurity is not None:
                return refuse(f"the {label} branch {impurity.reason}")
            for name in outputs:
                if name not in arm_flow.defined and not flow.defined_before(node, name):
                    return refuse(
                        f"`{name}` is used after the `if` but not assigned in the {label} branch nor before the "
                        "`if` (lax.cond needs its value from every branch)"
                    )
            operands.extend(n for n in arm_flow.writes if n in arm_flow.live_in and n not in operands)
            final_return = sole_return(arm_units[-1]) if arm_units else None
            values = self._values(node, flow, arm_units, outputs, final)
            built.append(Arm(label, tuple(block), arm_flow, final_return, values, own=len(mine)))
        for name in operands:
            if not flow.defined_before(node, name):
                return refuse(f"a branch reads `{name}` before assigning it, and it may be undefined before the `if`")
        if not returns and not outputs:
            return refuse("its branches assign nothing that is used afterwards")
        ordered = self._in_order_of_appearance(function, operands)
        result = Branches(node, tuple(built), outputs, ordered, returns, tail, None)
        mismatch = self.mismatch(result)
        if mismatch is not None:
            return refuse(mismatch)
        return result

    # ---- what each arm produces ----------------------------------------------------------------------------

    def _values(self, node, flow, units, outputs, final: bool) -> dict[str, ast.expr | None]:
        if final:
            last = sole_return(units[-1])
            return {"return": last.value if last is not None else None}
        values: dict[str, ast.expr | None] = {}
        lines = self._lines
        for name in outputs:
            value = None
            writers = [unit for unit in units if name in block_flow(unit, lines).writes]
            if writers:
                value = _assigned_value(lines, writers[-1], name)
            else:
                sources = flow.reaching(node, name)
                if len(sources) == 1:
                    source = next(iter(sources))
                    value = source if isinstance(source, ast.expr) else None
            values[name] = value
        return values

    def mismatch(self, branches: Branches) -> str | None:
        """Why the arms' results cannot be one cond's outputs: None, a string, a function, or a rank or dtype
        category that provably differs between two arms."""
        shapes = self._shapes
        keys = ("return",) if branches.returns else branches.outputs
        for key in keys:
            shown = "the returned value" if key == "return" else f"`{key}`"
            seen: list[tuple[str, ast.expr]] = []
            for arm in branches.arms:
                value = arm.values.get(key)
                if value is None:
                    if key == "return" and arm.returns is not None and arm.returns.value is None:
                        return f"the {arm.label} branch returns None, which lax.cond cannot return"
                    continue
                if type(value) is ast.Constant and value.value is None:
                    return f"{shown} is None at the end of the {arm.label} branch"
                if not_an_array(value):
                    return f"{shown} is not an array in the {arm.label} branch (`{snippet(self.code(value))}`)"
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

    def code(self, node: ast.AST) -> str:
        """`node`'s source with its own parentheses (LibCST's `code_for`)."""
        return self._facts.positions.with_parentheses(node, self._facts.binder.parent(node))

    # ---- the early-return pattern --------------------------------------------------------------------------

    def _tail(self, node: ast.If, function: ast.AST) -> tuple[ast.stmt, ...]:
        """The statements after `node` in the function body, when `node` is one of its statements and they end
        with a `return` (every path through them then returns); empty otherwise."""
        body = function.body
        index = next((i for i, statement in enumerate(body) if statement is node), None)
        if index is None:
            return ()
        rest = tuple(body[index + 1 :])
        units = self._lines.units(rest)
        if not units or sole_return(units[-1]) is None:
            return ()
        return rest

    # ---- the order a function mentions names in ------------------------------------------------------------

    def _in_order_of_appearance(self, function: ast.AST, names: list[str]) -> tuple[str, ...]:
        """`names` in the order the function first spells them (its decorators and parameters first): `x, v =
        lax.cond(...)` for a function of `(x, v, t)`, as its author would write them."""
        wanted = set(names)
        first: dict[str, tuple] = {}
        for place, name in _spelled_names(function):
            if name in wanted and (name not in first or place < first[name]):
                first[name] = place
        rank = {name: index for index, name in enumerate(sorted(first, key=first.__getitem__))}
        return tuple(sorted(names, key=lambda n: rank.get(n, len(rank))))

    # ---- jnp.where -----------------------------------------------------------------------------------------

    def where_form(self, node: ast.If) -> tuple[str, ast.expr, ast.expr] | None:
        """(name, value when true, value when false) when `node` only chooses between two cheap values that
        are safe to compute on either branch's inputs and provably have the same rank, for one variable:
        `if t: y = a` / `else: y = b`, or `if t: y = a` alone with `y` bound before (its old value then: the
        assigned name stands for it). Such an `if` is `y = jnp.where(t, a, b)`; None for any other `if`."""
        if node.orelse and len(node.orelse) == 1 and type(node.orelse[0]) is ast.If and self._lines.is_elif(node.orelse[0]):
            return None
        true = _single_assignment(node.body)
        if true is None:
            return None
        name, value = true
        before = None
        if node.orelse:
            false = _single_assignment(node.orelse)
            if false is None or false[0] != name:
                return None
            other = false[1]
        else:
            function = self._facts.enclosing_function(node)
            if type(function) not in _DEFS:
                return None
            flow = self._facts.flow(function)
            if name in flow.declared or not flow.defined_before(node, name):
                return None
            other = node.body[0].targets[0]
            sources = flow.reaching(node, name)
            single = next(iter(sources)) if len(sources) == 1 else None
            before = single if isinstance(single, ast.expr) else None
        if not self.where_choice(value, other, before=before):
            return None
        return name, value, other

    def where_choice(self, a: ast.expr, b: ast.expr, *, before: ast.expr | None = None) -> bool:
        """Whether `jnp.where(t, a, b)` computes what choosing `a` or `b` does: both cheap and safe to compute
        (`where_blocker`), the same rank (known, or the same arrays combined elementwise with numbers: `x` and
        `0.5 * x`), and no dtype category that provably differs (jnp.where would promote where the choice does
        not). `before`: the value `b` (a name) holds, where `b` is a variable's old value."""
        if self.where_blocker(a) is not None or self.where_blocker(b) is not None:
            return False
        shapes = self._shapes
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

    def _rank_leaves(self, expr: ast.expr) -> frozenset[str] | None:
        """The names an elementwise expression combines (numbers aside): two expressions over the same names
        broadcast to the same rank. None where something else (an opaque call, an index) decides the rank."""
        kind = type(expr)
        if is_number(expr):
            return frozenset()
        if kind is ast.Name:
            return frozenset({expr.id})
        if kind is ast.UnaryOp and type(expr.op) is not ast.Not:
            return self._rank_leaves(expr.operand)
        if kind is ast.BinOp and type(expr.op) is not ast.MatMult:
            left, right = self._rank_leaves(expr.left), self._rank_leaves(expr.right)
            return None if left is None or right is None else left | right
        if kind is ast.Call:
            callee = self._facts.binder.callee(expr)
            arguments = [*expr.args, *expr.keywords]
            if callee in _LIKE and arguments and not any(k.arg == "shape" for k in expr.keywords):
                first = min(arguments, key=lambda a: (a.lineno, a.col_offset))  # LibCST's first argument
                return self._rank_leaves(first.value if type(first) in (ast.Starred, ast.keyword) else first)
            elementwise = callee in _SAFE_CALLS and callee not in _LIKE
            if elementwise and not expr.keywords and not any(type(a) is ast.Starred for a in expr.args):
                parts = [self._rank_leaves(a) for a in expr.args]
                if None in parts:
                    return None
                return frozenset().union(*parts)
        return None

    def where_blocker(self, expr: ast.expr) -> str | None:
        """Why `expr` should not be computed in both arms of a `jnp.where` (too costly, or unsafe: its gradient
        may be infinite or NaN on the other arm's inputs), or None."""
        size = 0
        binder = self._facts.binder
        uncounted = _uncounted(expr, self._facts.positions)
        for node in walk(expr):
            kind = type(node)
            if isinstance(node, ast.expr) and kind is not ast.Name and kind is not ast.Attribute and node not in uncounted:
                size += len(node.values) - 1 if kind is ast.BoolOp else 1
            if kind is ast.Call:
                callee = binder.callee(node)
                func = node.func
                if callee is not None and callee not in _SAFE_CALLS:
                    return f"it calls `{self.code(func)}`"
                if callee is None:
                    if not (type(func) is ast.Attribute and func.attr in _SAFE_METHODS):
                        return f"it calls `{self.code(func)}`"
            elif kind is ast.BinOp:
                operator = type(node.op)
                if operator in (ast.Div, ast.FloorDiv, ast.Mod) and not _nonzero_number(node.right):
                    return f"it divides (`{snippet(self.code(node))}`)"
                if operator is ast.Pow and not _integer_at_least_one(node.right):
                    return f"it raises to a power (`{snippet(self.code(node))}`)"
                if operator is ast.MatMult:
                    return "it multiplies matrices"
            elif kind in _NOT_CHEAP:
                return "it is not a plain arithmetic expression"
        if size > _CHEAP_SIZE:
            return "it is too long to compute in both arms"
        return None


def not_an_array(value: ast.expr) -> bool:
    """A string, an f-string or a lambda: never an array (LibCST's SimpleString, FormattedString,
    ConcatenatedString, Lambda)."""
    kind = type(value)
    return kind is ast.JoinedStr or kind is ast.Lambda or (kind is ast.Constant and isinstance(value.value, (str, bytes)))


def simple_operand(expr: ast.expr) -> bool:
    """A name, attribute, number or constant subscript: cheap and side-effect free to evaluate twice (what
    `codegen.logical_test` lets stand in the middle of a chained comparison; LibCST's Name counts `True`, `False`
    and `None`)."""
    kind = type(expr)
    if kind is ast.Name:
        return True
    if kind is ast.Constant:
        return expr.value in _NAMES_IN_CST if type(expr.value) in (bool, type(None)) else type(expr.value) in (int, float)
    if kind is ast.Attribute:
        return simple_operand(expr.value)
    if kind is ast.Subscript:
        index = expr.slice
        elements = index.elts if type(index) is ast.Tuple else [index]
        return simple_operand(expr.value) and all(type(e) is not ast.Slice and simple_operand(e) for e in elements)
    return False


def logical_form(expr: ast.expr) -> bool:
    """Whether the test `expr` can be written with `jnp.logical_and`/`logical_or`/`logical_not` (`codegen.logical_test`):
    not where a chained comparison's middle operand is a computation, which it would evaluate twice."""
    kind = type(expr)
    if kind is ast.BoolOp:
        return all(logical_form(value) for value in expr.values)
    if kind is ast.UnaryOp and type(expr.op) is ast.Not:
        return logical_form(expr.operand)
    if kind is ast.Compare and len(expr.ops) > 1:
        return all(simple_operand(operand) for operand in expr.comparators[:-1])
    return True


# ---- helpers --------------------------------------------------------------------------------------------------


def _jump(lines, units) -> tuple[str, bool] | None:
    """The first statement that leaves a branch other than through its final `return`, outside nested functions
    and classes: `return` elsewhere, `break`/`continue` out of it, `raise`, `yield`, `await`, `try`/`with`."""
    for part in terminal_parts(lines, units):
        found = _first_jump(part, 0)
        if found is not None:
            return found
    return None


def _first_jump(node: ast.AST, loops: int) -> tuple[str, bool] | None:  # noqa: C901 - one branch per kind
    kind = type(node)
    if kind in _SKIPPED:
        return None
    if kind is ast.Return:
        return ("returns from inside a nested block", False)
    if kind is ast.Break and not loops:
        return ("has `break`", False)
    if kind is ast.Continue and not loops:
        return ("has `continue`", False)
    if kind is ast.Raise:
        return (
            "raises an exception, which cannot depend on a traced value under jit: check it with "
            "`jax.experimental.checkify.check` or `equinox.error_if` instead",
            True,
        )
    if kind is ast.Yield or kind is ast.YieldFrom:
        return ("has `yield`", False)
    if kind is ast.Await:
        return ("has `await`", False)
    if kind is ast.Try:  # LibCST's TryStar is another node, which the visitor walked into
        return ("has a `try` block", False)
    if kind is ast.With or kind is ast.AsyncWith:
        return ("has a `with` block", False)
    inner = loops + 1 if kind in _LOOPS else loops
    for child in children(node):
        found = _first_jump(child, inner)
        if found is not None:
            return found
    return None


def _spelled_names(function: ast.AST) -> Iterator[tuple[tuple, str]]:
    """Each name the code of `function` spells (LibCST's Name nodes: reads and stores, parameters, attributes,
    keywords, def/class names, imports, global/nonlocal, handler and pattern names), with a key that orders them
    as the source does."""
    for count, node in enumerate(ast.walk(function)):
        kind = type(node)
        line, column = getattr(node, "lineno", 0), getattr(node, "col_offset", 0)
        if kind is ast.Name:
            yield (line, column, 0), node.id
        elif kind is ast.arg:
            yield (line, column, 0), node.arg
        elif kind is ast.keyword:
            if node.arg is not None:
                yield (line, column, 0), node.arg
        elif kind is ast.Attribute:
            yield (node.end_lineno, node.end_col_offset - len(node.attr.encode()), 0), node.attr
        elif kind in _DEFS or kind is ast.ClassDef:
            yield (line, column, 1), node.name  # after the decorators, before the parameters
        elif kind is ast.alias:
            for index, part in enumerate([*node.name.split("."), *([node.asname] if node.asname else [])]):
                yield (line, column, index), part
        elif kind is ast.ImportFrom and node.module:
            for index, part in enumerate(node.module.split(".")):
                yield (line, column, index), part
        elif kind in (ast.Global, ast.Nonlocal):
            for index, name in enumerate(node.names):
                yield (line, column, index), name
        elif kind is ast.ExceptHandler and node.name:
            after = node.type if node.type is not None else node
            yield (after.end_lineno, after.end_col_offset, 1), node.name
        elif hasattr(ast, "MatchAs") and kind in (ast.MatchAs, ast.MatchStar) and node.name:
            yield (node.end_lineno, node.end_col_offset - len(node.name.encode()), 0), node.name
        elif hasattr(ast, "MatchMapping") and kind is ast.MatchMapping and node.rest:
            yield (node.end_lineno, node.end_col_offset, 0), node.rest


def _single_assignment(block: Sequence[ast.stmt]) -> tuple[str, ast.expr] | None:
    """(name, value) of a block that is only `name = value`."""
    if len(block) != 1 or type(block[0]) is not ast.Assign or len(block[0].targets) != 1:
        return None
    target = block[0].targets[0]
    return (target.id, block[0].value) if type(target) is ast.Name else None


def _assigned_value(lines, unit: Sequence[ast.stmt], name: str) -> ast.expr | None:
    """`value` of a line (not a one-line suite) that is only `name = value`."""
    if len(unit) != 1 or lines.group(unit)[0][0] == "suite":
        return None
    small = unit[0]
    if type(small) is ast.Assign and len(small.targets) == 1:
        target = small.targets[0]
        if type(target) is ast.Name and target.id == name:
            return small.value
    if type(small) is ast.AnnAssign and type(small.target) is ast.Name and small.target.id == name:
        return small.value
    return None


def _category(category, value: ast.expr) -> str:
    name = category.name.lower()
    return f"a Python {name}" if is_number(value) else name


def _nonzero_number(expr: ast.expr) -> bool:
    if type(expr) is ast.UnaryOp and type(expr.op) in (ast.USub, ast.UAdd):
        expr = expr.operand
    return type(expr) is ast.Constant and type(expr.value) in (int, float) and expr.value != 0


def _integer_at_least_one(expr: ast.expr) -> bool:
    return type(expr) is ast.Constant and type(expr.value) is int and expr.value >= 1


def _uncounted(expr: ast.expr, positions) -> set[ast.AST]:
    """The `ast` expressions LibCST has no expression node for, which `where_blocker`'s size leaves out: `True`,
    `False` and `None` (names), slices, the tuple of `x[i, j]`, `*a` of a call, an f-string's parts."""
    found: set[ast.AST] = set()
    for node in ast.walk(expr):
        kind = type(node)
        if kind is ast.Constant and type(node.value) in (bool, type(None)):
            found.add(node)
        elif kind is ast.Slice:
            found.add(node)
        elif kind is ast.Subscript and type(node.slice) is ast.Tuple and node.slice.elts:
            if not positions.segment(node.slice).startswith("("):
                found.add(node.slice)
        elif kind is ast.Call:
            found.update(a for a in node.args if type(a) is ast.Starred)
        elif kind is ast.JoinedStr:
            for part in node.values:
                if type(part) is ast.FormattedValue:
                    found.add(part)
                    if part.format_spec is not None:
                        found.add(part.format_spec)  # its own parts are walked as an f-string's
                else:
                    found.add(part)
    return found
