"""What a `lax.fori_loop` body does to the arrays it carries when it writes their rows with `out.at[i].set(v)`
(JF104): which carried arrays it writes at the loop index, whether it reads their contents, whether they were made
for the loop, and, for a loop that collects one row per step, everything a rewrite into `lax.scan` needs, proven:
the carry, the outputs with their rows' shapes and dtypes, the arrays the index walks, the result's targets."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import libcst as cst

from jaxfix.analysis.dataflow import activity, body_statements
from jaxfix.analysis.metadata import children
from jaxfix.analysis.shapes import FreshBuffer, same_shape
from jaxfix.analysis.syntax import is_docstring, is_number, param_names, row_write, target_names, walk
from jaxfix.analysis.traced import Kind

_FORI = "jax.lax.fori_loop"
_FORI_PARAMS = ("lower", "upper", "body_fun", "init_val")
# Attributes of an array whose reading does not read its contents (`.at` writes).
_NOT_CONTENTS = frozenset({"at", "shape", "dtype", "ndim", "size"})
# Calls that make a buffer for the loop to fill, whose initial contents are no data of the program's.
_BUFFER_MAKERS = frozenset(
    f"{module}.{maker}"
    for module in ("jax.numpy", "numpy")
    for maker in ("zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like")
)


class _Refused(Exception):
    """What stops the rewrite, in words for the diagnostic (`RowWriteAnalysis.plan` returns it)."""


class _Quiet(Exception):
    """Not a loop that collects per-step outputs after all: no finding."""


@dataclass
class RowOutput:
    """A carried array the body writes one row of per step, which a scan would stack."""

    position: int
    name: str  # the carry's name in the body
    value: cst.BaseExpression  # v of `out.at[i].set(v)`
    write: int | None  # index of the statement `out = out.at[i].set(v)` in the body; None: inside the return
    fresh: FreshBuffer | None = None
    cast: str | None = None  # the dtype to cast each row to, when the rows' dtype is not proven to be out's


@dataclass
class ScanPlan:
    """Everything rewriting a row-writing loop into `lax.scan` needs, each part proven."""

    call: cst.Call
    line: cst.CSTNode  # the statement of the call (at the end of planning: the line assigning its result)
    body: cst.FunctionDef
    statements: list  # the body's top-level statements
    index: str
    carry_param: str
    tuple_carry: bool
    names: list[str]  # the carry's names in the body (the carry parameter alone for a single carry)
    unpack: int | None  # index of `a, b = carry`
    returned: list[cst.BaseExpression]  # the returned carry, element by element
    init: list[cst.BaseExpression]  # the initial carry, element by element
    init_line: cst.SimpleStatementLine | None  # `init = (a, b)`, when the initial carry is a name
    init_arg: cst.BaseExpression
    upper: cst.BaseExpression
    unroll: cst.BaseExpression | None
    outputs: list[RowOutput] = field(default_factory=list)
    scanned: list[str] = field(default_factory=list)  # arrays read as `xs[i]` that the scan runs over
    uses_index: bool = False  # the index is needed for more than rows of scanned arrays
    assign: cst.Assign | None = None  # `h, out = lax.fori_loop(...)`


@dataclass
class RowWriteLoop:
    """A `lax.fori_loop(lower, upper, body_fun, init_val)` call whose body writes `out.at[index].set(v)` into
    its carry (the carry itself, or a name unpacked from it)."""

    call: cst.Call
    arguments: dict[str, cst.BaseExpression]  # by fori_loop's parameter names, `unroll` too when given
    body: cst.FunctionDef | cst.Lambda
    index: str  # the body's first parameter
    carry: str  # its second
    line: cst.CSTNode | None  # the statement of the call


class RowWriteAnalysis:
    """The `lax.fori_loop` calls of one module whose bodies write rows of their carry, and what those bodies do
    to the arrays they write."""

    def __init__(self, context) -> None:
        self.context = context
        self._current_call: tuple[cst.FunctionDef, cst.CSTNode] | None = None  # (body, call line) being planned
        self._trip: tuple | None = None  # the planned loop's trip count, as a dimension

    def loop(self, call: cst.Call) -> RowWriteLoop | None:
        """`call` as a `lax.fori_loop` whose body (a lambda, or the one def its name is bound to) writes rows of
        its carry at the loop index; None for any other call, or one with `*` or `**` arguments."""
        if self.context.names.callee(call) != _FORI:
            return None
        arguments = self._arguments(call)
        if arguments is None:
            return None
        body = self._body_function(arguments["body_fun"])
        if body is None:
            return None
        params = param_names(body.params)
        if len(params) < 2 or not _writes_rows(body, params[0], params[1]):
            return None
        return RowWriteLoop(call, arguments, body, params[0], params[1], self._statement(call))

    def traced_count(self, loop: RowWriteLoop) -> bool:
        """Whether the trip count is traced where the loop runs, or is the result of a JAX computation
        (`n = jnp.argmax(mask)`) in a function the module does not trace itself: a value a caller's `jax.jit`
        makes a tracer, never a scan length."""
        expr, where = loop.arguments["upper"], loop.line
        for _ in range(4):
            if self._kind(expr) is Kind.TRACED:
                return True
            if not isinstance(expr, cst.Name) or where is None:
                return False
            value = self._single_value(expr.value, where)
            if value is None:
                return False
            expr, where = value, self._statement(value)
        return False

    def updates_existing_rows(self, loop: RowWriteLoop) -> bool:
        """Whether every carried array the body writes at `[index]` existed before the loop (a grid passed in,
        an array computed earlier: not a `jnp.zeros`-like buffer made for the loop) and its contents matter:
        the body reads them, or the loop is not proven to write all its rows (from 0 to its number of rows),
        as `grid.at[i].set(0.0)` for `i < n` does. Such a loop updates an array; it collects no per-step
        output for lax.scan to stack."""
        arguments, body, index, carry, line = loop.arguments, loop.body, loop.index, loop.carry, loop.line
        written = self._row_written_inits(arguments["init_val"], body, index, carry, line)
        if not written:
            return False
        starts_at_zero = self.context.shapes.constant(arguments["lower"]) == 0
        trip = self._dim(arguments["upper"], line) if starts_at_zero else None
        return all(
            not self._made_for_loop(init, where)
            and (_reads_contents(body, name) or not self._all_rows(init, where, trip))
            for name, init, where in written
        )

    def _made_for_loop(self, expr: cst.BaseExpression, where: cst.CSTNode) -> bool:
        """Whether `expr` (read at the statement `where`) is a buffer made by `jnp.zeros`-like calls, whose
        contents are no data of the program's."""
        for _ in range(4):
            if isinstance(expr, cst.Call):
                return self.context.names.callee(expr) in _BUFFER_MAKERS
            if not isinstance(expr, cst.Name) or where is None:
                return False
            value = self._single_value(expr.value, where)
            if value is None:
                return False  # a parameter, or a name bound in several places
            expr, where = value, self._statement(value)
        return False

    def _all_rows(self, expr: cst.BaseExpression, where: cst.CSTNode, trip) -> bool:
        """Whether `trip` (steps from 0) is proven to be the number of rows of `expr` read at `where`."""
        for _ in range(4):
            if trip is None or not isinstance(expr, cst.Name) or where is None:
                return False
            if trip in self._symbolic().leading_dims(expr.value, where):
                return True
            value = self._single_value(expr.value, where)
            if value is None:
                return False
            expr, where = value, self._statement(value)
        return False

    def _row_written_inits(self, init, body, index: str, carry: str, line) -> list[tuple]:
        """(name in the body, initial value, statement where that value is read) of each carried array the
        body writes at `[index]`: the carry itself, or elements of a tuple carry the body unpacks as
        `a, b = carry`. Empty when the carry's elements cannot be matched to the names the body gives them."""
        written = {
            node.func.value.value.value.value  # type: ignore[union-attr]
            for node in walk(body.body)
            if isinstance(node, cst.Call) and row_write(node, index) is not None
        }
        if carry in written:
            return [(carry, init, line)]
        if isinstance(body, cst.Lambda):
            return []
        where = line
        if isinstance(init, cst.Name):
            value = self._single_value(init.value, line)
            if isinstance(value, cst.Tuple):
                init, where = value, self._statement(value)  # `init = (h, grid)`: its elements are read there
        if not isinstance(init, cst.Tuple) or any(isinstance(e, cst.StarredElement) for e in init.elements):
            return []
        for statement in body_statements(body.body):
            assign = single_assign(statement)
            if assign is None or not (isinstance(assign.value, cst.Name) and assign.value.value == carry):
                continue
            target = assign.targets[0].target if len(assign.targets) == 1 else None
            if not isinstance(target, (cst.Tuple, cst.List)) or len(target.elements) != len(init.elements):
                return []
            return [
                (element.value.value, value.value, where)
                for element, value in zip(target.elements, init.elements)
                if isinstance(element.value, cst.Name) and element.value.value in written
            ]
        return []

    def _arguments(self, call: cst.Call) -> dict[str, cst.BaseExpression] | None:
        found: dict[str, cst.BaseExpression] = {}
        for position, arg in enumerate(call.args):
            if arg.star:
                return None
            name = arg.keyword.value if arg.keyword is not None else (_FORI_PARAMS[position] if position < 4 else None)
            if name not in (*_FORI_PARAMS, "unroll") or name in found:
                return None
            found[name] = arg.value
        return found if all(name in found for name in _FORI_PARAMS) else None

    def _body_function(self, expr: cst.BaseExpression) -> cst.FunctionDef | cst.Lambda | None:
        if isinstance(expr, cst.Lambda):
            return expr
        if not isinstance(expr, cst.Name):
            return None
        scope = self._scopes().get(expr)
        if scope is None:
            return None
        assignments = list(scope[expr.value])
        if len(assignments) != 1 or not isinstance(assignments[0].node, cst.FunctionDef):
            return None
        return assignments[0].node

    # ---- the plan: everything the rewrite needs, proven ----------------------------------------------------

    def plan(self, loop: RowWriteLoop) -> ScanPlan | str | None:
        """What rewriting the loop (whose body is a def) into a `lax.scan` that stacks its rows needs, each part
        proven; or what stops that rewrite, in words for a diagnostic; or None where the loop collects no
        per-step output after all (the rows written are of no carried array, or of a buffer filled in part)."""
        try:
            return self._plan(loop.call, loop.arguments, loop.body)
        except _Quiet:
            return None
        except _Refused as refused:
            return str(refused)

    def _plan(self, call: cst.Call, arguments, body: cst.FunctionDef) -> ScanPlan:
        index, carry_param = self._signature(body)
        line = self._statement(call)  # where the loop runs: the body reads its free names there
        self._current_call = (body, line)
        if self._dataflow().enclosing_function(body) is not self._dataflow().enclosing_function(call):
            raise _Refused(f"the body `{body.name.value}` is defined in another function than the loop")
        references = self._references(body)
        if references != 1:
            raise _Refused(f"the body `{body.name.value}` is used elsewhere too")
        impurity = self._dataflow().function_impurity(body)
        if impurity is not None:
            raise _Refused(f"the body {impurity.reason}")
        lower = self.context.shapes.constant(arguments["lower"])
        if lower != 0:
            raise _Refused(f"the loop starts at `{self._code(arguments['lower'])}`, not 0")
        statements = list(body_statements(body.body))
        init, init_line = self._initial_carry(arguments["init_val"], line)
        tuple_carry = init is not None
        if tuple_carry:
            unpack, names = self._unpack(statements, carry_param, len(init))
        else:
            init, unpack, names = [arguments["init_val"]], None, [carry_param]
        returned = self._returned(statements, len(names) if tuple_carry else None)
        plan = ScanPlan(
            call=call, line=line, body=body, statements=statements, index=index,
            carry_param=carry_param, tuple_carry=tuple_carry, names=names, unpack=unpack, returned=returned,
            init=init, init_line=init_line, init_arg=arguments["init_val"], upper=arguments["upper"], unroll=arguments.get("unroll"),
        )  # fmt: skip
        if any(index in assigned(s) for s in statements) or index in _nested_bindings(body):
            raise _Refused(f"the body binds the index `{index}` again")
        plan.outputs = self._outputs(plan)
        trip = self._trip = self._dim(plan.upper, line)
        for output in plan.outputs:
            output.fresh = self._fresh_output(plan, output, trip)
        self._index_uses(plan, trip)
        for output in plan.outputs:
            self._check_row(plan, output)
        plan.line, plan.assign = self._result_statement(call)
        self._check_targets(plan)
        return plan

    def _signature(self, body: cst.FunctionDef) -> tuple[str, str]:
        params = body.params
        plain = (
            len(params.params) == 2
            and not params.posonly_params
            and not params.kwonly_params
            and not isinstance(params.star_arg, cst.Param)
            and params.star_kwarg is None
            and all(p.default is None for p in params.params)
        )
        if body.decorators:
            raise _Refused(f"the body `{body.name.value}` is decorated")
        if not plain or body.asynchronous is not None:
            raise _Refused(f"the body `{body.name.value}` is not a plain `def {body.name.value}(i, carry)`")
        return params.params[0].name.value, params.params[1].name.value

    def _result_statement(self, call: cst.Call) -> tuple[cst.SimpleStatementLine, cst.Assign]:
        parents = self.context.parents
        assign = parents.get(call)
        line = parents.get(assign)
        if not (isinstance(assign, cst.Assign) and assign.value is call and len(assign.targets) == 1):
            raise _Refused("its result is not assigned (`h, out = lax.fori_loop(...)`)")
        if not isinstance(line, cst.SimpleStatementLine):
            raise _Refused("its result is not assigned on a line of its own")
        return line, assign

    def _references(self, body: cst.FunctionDef) -> int:
        scope = self._scopes().get(body.name)
        if scope is None:
            return 0
        return sum(len(a.references) for a in scope[body.name.value])

    def _initial_carry(self, init: cst.BaseExpression, line: cst.SimpleStatementLine):
        """The initial carry's elements when it is a tuple written out (here, or as `init = (a, b)` used only
        by this call), with that `init` line; (None, None) for a carry that is one value."""
        if isinstance(init, cst.Tuple) and not any(isinstance(e, cst.StarredElement) for e in init.elements):
            return [e.value for e in init.elements], None
        if isinstance(init, cst.Name):
            value = self._single_value(init.value, line)
            if isinstance(value, cst.Tuple) and not any(isinstance(e, cst.StarredElement) for e in value.elements):
                init_line = self._statement(value)
                if not self.only_read_by(init.value, value, line, [init]):
                    raise _Refused(f"the initial carry `{init.value}` is used elsewhere too")
                return [e.value for e in value.elements], init_line
        return None, None

    def _unpack(self, statements, carry_param: str, size: int) -> tuple[int, list[str]]:
        first = 1 if statements and is_docstring(statements[0]) else 0
        wrong = _Refused(f"the body does not unpack its carry first (`a, b = {carry_param}`)")
        if len(statements) <= first:
            raise wrong
        assign = single_assign(statements[first])
        if assign is None or not (isinstance(assign.value, cst.Name) and assign.value.value == carry_param):
            raise wrong
        target = assign.targets[0].target if len(assign.targets) == 1 else None
        if not isinstance(target, (cst.Tuple, cst.List)) or len(target.elements) != size:
            raise wrong
        if not all(isinstance(e.value, cst.Name) and not isinstance(e, cst.StarredElement) for e in target.elements):
            raise wrong
        names = [e.value.value for e in target.elements]
        if len(set(names)) != len(names):
            raise wrong
        for number, statement in enumerate(statements):
            if number != first and carry_param in _mentioned(statement):
                raise _Refused(f"the body uses its carry `{carry_param}` besides unpacking it")
        return first, names

    def _returned(self, statements, size: int | None) -> list[cst.BaseExpression]:
        """The returned carry, element by element: the body must end with its only `return`."""
        last = statements[-1] if statements else None
        small = last.body[0] if isinstance(last, cst.SimpleStatementLine) and len(last.body) == 1 else None
        if not isinstance(small, cst.Return) or small.value is None:
            raise _Refused("the body does not end with `return` of its carry")
        for statement in statements[:-1]:
            if any(isinstance(n, cst.Return) for n in _walk_outside_functions(statement)):
                raise _Refused("the body returns from more than one place")
        if size is None:
            return [small.value]
        value = small.value
        if not isinstance(value, cst.Tuple) or len(value.elements) != size:
            raise _Refused(f"the body does not return a tuple of its {size} carried values")
        if any(isinstance(e, cst.StarredElement) for e in value.elements):
            raise _Refused("the body returns a starred carry")
        return [e.value for e in value.elements]

    def _check_targets(self, plan: ScanPlan) -> None:
        target = plan.assign.targets[0].target
        if plan.tuple_carry:
            ok = isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == len(plan.names)
            ok = ok and not any(isinstance(e, cst.StarredElement) for e in target.elements)
            if not ok:
                raise _Refused("its result is not unpacked into one name per carried value")
        elif isinstance(target, (cst.Tuple, cst.List)):
            raise _Refused("its result is unpacked although the carry is one value")

    def _outputs(self, plan: ScanPlan) -> list[RowOutput]:
        outputs = []
        for position, name in enumerate(plan.names):
            writes = [n for s in plan.statements for n in walk(s) if row_write(n, plan.index, name) is not None]
            if not writes:
                continue
            outputs.append(self._output(plan, position, name))
        if not outputs:
            raise _Quiet()  # `.at[i].set` on something that is not a carried array
        return outputs

    def _output(self, plan: ScanPlan, position: int, name: str) -> RowOutput:
        """One output: written exactly once per step as `out = out.at[i].set(v)` at the top of the body (or
        `return ..., out.at[i].set(v)`), and read nowhere else."""
        statements = plan.statements
        returned = plan.returned[position]
        once = _Refused(f"`{name}` is not updated exactly once per step as `{name} = {name}.at[{plan.index}].set(v)`")
        assignments = [
            number for number, s in enumerate(statements) if number != plan.unpack and name in assigned(s)
        ]
        in_return = row_write(returned, plan.index, name)
        if in_return is not None:
            if assignments:
                raise once
            value, write = in_return, None
            base = returned.func.value.value.value  # type: ignore[union-attr]
        else:
            if not (isinstance(returned, cst.Name) and returned.value == name) or len(assignments) != 1:
                raise once
            write = assignments[0]
            assign = single_assign(statements[write])
            target = assign.targets[0].target if assign is not None and len(assign.targets) == 1 else None
            value = row_write(assign.value, plan.index, name) if assign is not None else None
            if not (isinstance(target, cst.Name) and target.value == name) or value is None:
                raise once
            base = assign.value.func.value.value.value  # type: ignore[union-attr]
        readers = [
            node
            for number, statement in enumerate(statements)
            if number != plan.unpack
            for node in walk(statement)
            if isinstance(node, cst.Name) and node.value == name and node is not base and node is not returned
            and not _is_target_name(statement, node)
        ]
        if readers:
            shown = self._code(self._statement(readers[0]) or readers[0]).strip().splitlines()[0]
            raise _Refused(f"the body reads `{name}` besides writing its row (`{_snippet(shown)}`)")
        return RowOutput(position, name, value, write)

    # ---- fresh outputs and their shapes --------------------------------------------------------------------

    def _fresh_output(self, plan: ScanPlan, output: RowOutput, trip) -> FreshBuffer:
        init = plan.init[output.position]
        where = plan.init_line if plan.init_line is not None else plan.line
        fresh = self._fresh(init, where)
        if isinstance(fresh, str):
            raise _Refused(f"`{output.name}` starts as {fresh}, not as a fresh array whose rows the loop all writes")
        if fresh.leading is None or trip is None or fresh.leading != trip:
            known = fresh.leading is not None and fresh.leading[0] == "const"
            if known and trip is not None and trip[0] == "const":
                raise _Quiet()  # a buffer filled in part on purpose
            raise _Refused(
                f"nothing proves that the loop's `{self._code(plan.upper)}` steps write every row of `{output.name}` "
                f"(`{_snippet(self._code(fresh.call))}`)"
            )
        return fresh

    def _fresh(self, expr: cst.BaseExpression, where: cst.CSTNode, depth: int = 0) -> FreshBuffer | str:
        """`expr` as a fresh array (`jnp.zeros((n, d))`, or a name bound to one), or what it is instead."""
        return self._symbolic().fresh(expr, where, depth, integer=self._trip)

    def _cast(self, fresh: FreshBuffer) -> str | None:
        """How to write the output's dtype inside the body (`float`, `jnp.float32`, `xs.dtype`); None: cannot."""
        spelling = fresh.spelling
        if spelling is None:
            return None
        if spelling[0] == "kind":
            return spelling[1]
        if spelling[0] == "dtype-of":
            _, array, key = spelling
            return f"{array.value}.dtype" if self._usable_in_body(array.value, key) else None
        dtype = spelling[1]
        token = self._dtype_token(dtype, fresh.statement)
        if token is None:
            return None
        if token[0] == "dtype-of":
            name = dtype.value.value  # type: ignore[union-attr]
            return f"{name}.dtype" if self._usable_in_body(name, token[1]) else None
        return self._code(dtype)

    def _dtype_token(self, dtype: cst.BaseExpression, where):
        return self._symbolic().dtype_token(dtype, where)

    def _usable_in_body(self, name: str, key) -> bool:
        """Whether the body, reading `name`, sees the value `key` stands for (the body runs at the call)."""
        plan_call = self._current_call
        if key is None or plan_call is None:
            return False
        body, call_line = plan_call
        if name in _bound_in(body):
            return False
        return self._key_of(name, call_line) == key

    def _dim(self, expr: cst.BaseExpression, where) -> tuple | None:
        return self._symbolic().dim(expr, where)

    # ---- the index and the rows ----------------------------------------------------------------------------

    def _index_uses(self, plan: ScanPlan, trip) -> None:
        """Which arrays the scan runs over (`xs[i]` of an array with `n` rows), and whether it needs the index
        itself (any other use)."""
        writes = set()
        for statement in plan.statements:
            for node in walk(statement):
                for output in plan.outputs:
                    if row_write(node, plan.index, output.name) is not None:
                        subscript = node.func.value  # type: ignore[union-attr]
                        writes.update(id(n) for n in walk(subscript.slice[0]))
        call_line = plan.line
        bound = _bound_in(plan.body)
        scanned: list[str] = []
        for statement in plan.statements:
            for node in walk(statement):
                if not (isinstance(node, cst.Name) and node.value == plan.index) or id(node) in writes:
                    continue
                if _is_target_name(statement, node):
                    continue
                array = self._row_of(node)
                if array is not None and array not in bound:
                    key = self._key_of(array, call_line)
                    if key is not None and ("dim", key, 0) == trip:
                        if array not in scanned:
                            scanned.append(array)
                        continue
                plan.uses_index = True
        if plan.uses_index or len(scanned) > 1:
            plan.uses_index, scanned = True, []  # (two arrays of n rows: their keys differ, never both proven)
        plan.scanned = scanned

    def _row_of(self, index: cst.Name) -> str | None:
        """`xs` when `index` is read as `xs[index]` (one plain index into a name)."""
        parents = self.context.parents
        inner = parents.get(index)
        element = parents.get(inner)
        subscript = parents.get(element)
        if not (isinstance(inner, cst.Index) and isinstance(element, cst.SubscriptElement)):
            return None
        if not isinstance(subscript, cst.Subscript) or len(subscript.slice) != 1:
            return None
        if not isinstance(subscript.value, cst.Name) or subscript.value.value == "at":
            return None
        holder = parents.get(subscript)
        if isinstance(holder, (cst.AssignTarget, cst.AugAssign)) and getattr(holder, "target", None) is subscript:
            return None
        return subscript.value.value

    def _check_row(self, plan: ScanPlan, output: RowOutput) -> None:
        """The rows the scan stacks have the output's row shape and dtype (or get a cast to its dtype)."""
        fresh = output.fresh
        at = output.write if output.write is not None else len(plan.statements) - 1
        shapes, dtypes = self._facts(plan, output.value, at, 0)
        # A scalar row takes only scalars (nothing broadcasts to `()`): no proof needed.
        if fresh.row != () and (fresh.row is None or not any(same_shape(fresh.row, shape) for shape in shapes)):
            raise _Refused(
                f"nothing proves that `{_snippet(self._code(output.value))}` has the shape of a row of "
                f"`{output.name}` (`.at[i].set` broadcasts into the row, lax.scan would stack it as it is)"
            )
        if fresh.dtype is not None and fresh.dtype in dtypes:
            return
        cast = self._cast(fresh)
        if cast is None:
            raise _Refused(
                f"nothing proves that `{_snippet(self._code(output.value))}` has the dtype of `{output.name}`, "
                "and that dtype cannot be written in the body"
            )
        output.cast = cast

    def _facts(self, plan: ScanPlan, expr: cst.BaseExpression, at: int, depth: int) -> tuple[list, list]:
        """What the code proves about the value of `expr` read at the body's statement `at`: the shapes it may
        be shown to have (alternative spellings of one shape) and dtypes."""
        if depth > 6:
            return [], []
        statements = plan.statements
        if is_number(expr):
            return [()], []
        if isinstance(expr, cst.Name):
            name = expr.value
            if name == plan.index:
                return [()], []
            first = (plan.unpack + 1) if plan.unpack is not None else 0
            for position, carried in enumerate(plan.names):
                if any(o.position == position for o in plan.outputs):
                    continue
                entry = carried == name and not any(name in assigned(s) for s in statements[first:at])
                final = (
                    isinstance(plan.returned[position], cst.Name)
                    and plan.returned[position].value == name
                    and not any(name in assigned(s) for s in statements[at:-1])
                )
                if entry or final:
                    return self._init_facts(plan, plan.init[position], depth)
            bindings = [number for number, s in enumerate(statements) if name in assigned(s)]
            if len(bindings) == 1 and bindings[0] < at and bindings[0] != plan.unpack:
                assign = single_assign(statements[bindings[0]])
                if assign is not None and len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name):
                    return self._facts(plan, assign.value, bindings[0], depth + 1)
                return [], []
            if not bindings and name not in _bound_in(plan.body):
                key = self._key_of(name, plan.line)
                return ([(("spread", key, 0),)], [("dtype-of", key)]) if key is not None else ([], [])
            return [], []
        if isinstance(expr, cst.Subscript):
            array = expr.value
            element = expr.slice[0].slice if len(expr.slice) == 1 else None
            if (
                isinstance(array, cst.Name)
                and isinstance(element, cst.Index)
                and isinstance(element.value, cst.Name)
                and element.value.value == plan.index
                and array.value not in _bound_in(plan.body)
            ):
                key = self._key_of(array.value, plan.line)
                return ([(("spread", key, 1),)], [("dtype-of", key)]) if key is not None else ([], [])
            return [], []
        def astype_dtype(dtype: cst.BaseExpression):
            names = {n.value for n in walk(dtype) if isinstance(n, cst.Name)}
            return None if names & _bound_in(plan.body) else self._dtype_token(dtype, plan.line)

        found = self._symbolic().elementwise_facts(expr, lambda e: self._facts(plan, e, at, depth + 1), astype_dtype)
        return found if found is not None else ([], [])

    def _init_facts(self, plan: ScanPlan, init: cst.BaseExpression, depth: int) -> tuple[list, list]:
        """Shapes and dtypes of an initial carry (which the carry keeps from step to step)."""
        where = plan.init_line if plan.init_line is not None else plan.line
        return self._outer_facts(init, where, depth)

    def _outer_facts(self, expr: cst.BaseExpression, where, depth: int) -> tuple[list, list]:
        if depth > 6:
            return [], []
        if is_number(expr):
            return [()], []
        shapes: list = []
        dtypes: list = []
        if isinstance(expr, cst.Name):
            key = self._key(expr, where)
            if key is not None:
                shapes.append((("spread", key, 0),))
                dtypes.append(("dtype-of", key))
            value = self._single_value(expr.value, where)
            if value is not None:
                more = self._outer_facts(value, self._statement(value), depth + 1)
                shapes += more[0]
                dtypes += more[1]
            return shapes, dtypes
        if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Name) and len(expr.slice) == 1:
            element = expr.slice[0].slice
            if isinstance(element, cst.Index) and self.context.shapes.constant(element.value) is not None:
                key = self._key(expr.value, where)
                if key is not None:
                    return [(("spread", key, 1),)], [("dtype-of", key)]
            return [], []
        fresh = self._fresh(expr, where, 3)
        if isinstance(fresh, FreshBuffer):
            return ([fresh.parts] if fresh.parts is not None else []), ([fresh.dtype] if fresh.dtype is not None else [])
        return [], []

    # ---- small queries -------------------------------------------------------------------------------------

    def only_read_by(self, name: str, value: cst.CSTNode, reader: cst.CSTNode, allowed: Sequence[cst.CSTNode]) -> bool:
        """Whether the binding `name = value` is read only at the nodes `allowed`, all in the statement
        `reader` (no closure captures it, no other statement it reaches reads it)."""
        dataflow = self._dataflow()
        function = dataflow.enclosing_function(reader)
        flow = dataflow.flow(function)
        if name in flow.always_live or flow.opaque:
            return False
        allowed_ids = {id(n) for n in allowed}
        scope_root = function.body if not isinstance(function, cst.Module) else function
        for node in _walk_outside_functions(scope_root):
            if not isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                continue
            reads = activity(node, deep=False).reads
            if name not in reads:
                continue
            if not any(source is value for source in flow.reaching(node, name)):
                continue
            if node is not reader:
                return False
            loads = [
                n for n in walk(node) if isinstance(n, cst.Name) and n.value == name and not _is_target_name(node, n)
            ]
            if any(id(n) not in allowed_ids for n in loads):
                return False
        return True

    def _single_value(self, name: str, where: cst.CSTNode) -> cst.BaseExpression | None:
        return self._symbolic().single_value(name, where)

    def _key(self, name: cst.Name, where: cst.CSTNode):
        return self._key_of(name.value, where)

    def _key_of(self, name: str, where: cst.CSTNode):
        return self._symbolic().key(name, where)

    def _statement(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self._symbolic().statement(node)

    def _kind(self, expr: cst.BaseExpression) -> Kind:
        try:
            return self.context.traced.kind(expr)
        except KeyError:
            return Kind.UNKNOWN

    def _code(self, node: cst.CSTNode) -> str:
        return self.context.code_for(node)

    def _dataflow(self):
        return self.context.dataflow

    def _symbolic(self):
        return self.context.shapes.symbolic

    def _scopes(self):
        from libcst.metadata import ScopeProvider

        return self.context.wrapper.resolve(ScopeProvider)


# ---- syntax helpers ----------------------------------------------------------------------------------------


def _reads_contents(body: cst.FunctionDef | cst.Lambda, name: str) -> bool:
    """Whether the body reads what the array `name` holds: any use besides writing rows (`name.at[...].set`),
    its shape or dtype (`name.shape`), being assigned (not `name += v`), and being returned as it is
    (`return h, name`)."""
    parents: dict[int, cst.CSTNode] = {}
    for node in walk(body.body):
        for child in children(node):
            parents[id(child)] = node
    returned = set()
    targets = set()
    for node in walk(body.body):
        if isinstance(node, cst.Return) and node.value is not None:
            values = [e.value for e in node.value.elements] if isinstance(node.value, cst.Tuple) else [node.value]
            returned.update(id(v) for v in values)
        elif isinstance(node, (cst.AssignTarget, cst.AnnAssign)):
            targets.update(id(n) for n in walk(node.target) if isinstance(n, cst.Name))
    if isinstance(body, cst.Lambda):
        returned.add(id(body.body))
    for node in walk(body.body):
        if not isinstance(node, cst.Name) or node.value != name or id(node) in returned or id(node) in targets:
            continue
        parent = parents.get(id(node))
        if isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value in _NOT_CONTENTS:
            method = parents.get(id(parents.get(id(parent))))  # `name.at[i]` → `name.at[i].get`
            if not (parent.attr.value == "at" and isinstance(method, cst.Attribute) and method.attr.value == "get"):
                continue
        return True
    return False


def _writes_rows(body: cst.FunctionDef | cst.Lambda, index: str, carry: str) -> bool:
    """Whether the body writes `out.at[index].set(...)` into its carry (`carry` itself, or a name unpacked
    from it): the pattern JF104 is about."""
    carried = {carry}
    for node in walk(body.body):
        if isinstance(node, cst.Assign) and isinstance(node.value, cst.Name) and node.value.value == carry:
            for target in node.targets:
                carried.update(target_names(target.target))
    return any(
        isinstance(node, cst.Call) and row_write(node, index) is not None and node.func.value.value.value.value in carried
        for node in walk(body.body)
    )


def single_assign(statement) -> cst.Assign | None:
    """The `a = b` of a line holding that one assignment, or None."""
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
        small = statement.body[0]
        if isinstance(small, cst.Assign):
            return small
    return None


def assigned(statement) -> set[str]:
    """The names a statement assigns or deletes."""
    act = activity(statement)
    return set(act.writes) | set(act.deletes)


def _mentioned(statement) -> set[str]:
    return {n.value for n in walk(statement) if isinstance(n, cst.Name)}


def _bound_in(function: cst.FunctionDef) -> set[str]:
    """Names the body function binds (parameters, assignments), and those that scopes nested in it bind
    (lambda and function parameters, comprehension targets): where any of them is read, it may not be the
    value the enclosing function has."""
    act = activity(function.body)
    return set(param_names(function.params)) | set(act.writes) | set(act.deletes) | _nested_bindings(function)


def _nested_bindings(function: cst.FunctionDef) -> set[str]:
    """Names that scopes nested in the function bind: lambda and function parameters, comprehension targets."""
    bound: set[str] = set()
    for node in walk(function.body):
        if isinstance(node, (cst.Lambda, cst.FunctionDef)):
            bound.update(param_names(node.params))
        elif isinstance(node, cst.CompFor):
            bound.update(target_names(node.target))
    return bound


def _is_target_name(statement, name: cst.Name) -> bool:
    """Whether `name` is (part of) an assignment target in `statement`, not a read."""
    for node in walk(statement):
        if isinstance(node, cst.AssignTarget) or isinstance(node, (cst.AugAssign, cst.AnnAssign)):
            target = node.target
            if isinstance(target, cst.Name) and target is name:
                return True
            if isinstance(target, (cst.Tuple, cst.List)):
                if any(element.value is name for element in target.elements):
                    return True
    return False


def _walk_outside_functions(node: cst.CSTNode):
    """Every node under `node`, not entering nested functions, lambdas and classes."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        if current is not node and isinstance(current, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            continue
        stack.extend(children(current))


def _snippet(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."
