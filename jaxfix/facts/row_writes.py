"""What a `lax.fori_loop` body does to the arrays it carries when it writes their rows with `out.at[i].set(v)`
(JF104), on `ast`: which carried arrays it writes at the loop index, whether it reads their contents, whether they
were made for the loop, and, for a loop that collects one row per step, everything a rewrite into `lax.scan`
needs, proven: the carry, the outputs with their rows' shapes and dtypes, the arrays the index walks, the result's
targets, and which lines around the loop the rewrite may drop.

A body's statements are LibCST's (`flow.Lines.group`: a line of simple statements joined by `;` is one, a one-line
suite is one), so that the positions a plan gives (`write`, `unpack`) index the LibCST body the fix edits. The
answers are those LibCST's `analysis.row_writes.RowWriteAnalysis` gave (benchmarks/agreement.py, `rows-exact`,
compared the two on every `lax.fori_loop` call before that was deleted)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Iterator, Sequence

from jaxfix.facts.flow import activity, block_activity, target_names, walk
from jaxfix.facts.symbolic import FreshBuffer, SymbolicShapes, is_number, same_shape, snippet
from jaxfix.facts.traced import Kind, param_names

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
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)

Unit = tuple  # (kind, statements): one of LibCST's statements ("line" | "suite" | "compound", flow.Lines.group)


class _Refused(Exception):
    """What stops the rewrite, in words for the diagnostic (`RowWrites.plan` returns it)."""


class _Quiet(Exception):
    """Not a loop that collects per-step outputs after all: no finding."""


@dataclass
class RowOutput:
    """A carried array the body writes one row of per step, which a scan would stack."""

    position: int
    name: str  # the carry's name in the body
    value: ast.expr  # v of `out.at[i].set(v)`
    write: int | None  # index of the statement `out = out.at[i].set(v)` in the body; None: inside the return
    fresh: FreshBuffer | None = None
    cast: str | None = None  # the dtype to cast each row to, when the rows' dtype is not proven to be out's
    later: frozenset = frozenset()  # names the body's statements after `write` assign
    removable: bool = False  # the `out = jnp.zeros(...)` line (fresh.binding) only fed the initial carry


@dataclass
class ScanPlan:
    """Everything rewriting a row-writing loop into `lax.scan` needs, each part proven."""

    call: ast.Call
    line: ast.stmt  # the statement of the call (at the end of planning: the line assigning its result)
    body: ast.FunctionDef
    statements: list  # the body's statements, as LibCST holds them (Units)
    index: str
    carry_param: str
    tuple_carry: bool
    names: list[str]  # the carry's names in the body (the carry parameter alone for a single carry)
    unpack: int | None  # index of `a, b = carry`
    returned: list[ast.expr]  # the returned carry, element by element
    init: list[ast.expr]  # the initial carry, element by element
    init_line: ast.stmt | None  # `init = (a, b)`, when the initial carry is a name
    init_arg: ast.expr
    upper: ast.expr
    unroll: ast.expr | None
    outputs: list[RowOutput] = field(default_factory=list)
    scanned: list[str] = field(default_factory=list)  # arrays read as `xs[i]` that the scan runs over
    uses_index: bool = False  # the index is needed for more than rows of scanned arrays
    assign: ast.Assign | None = None  # `h, out = lax.fori_loop(...)`


@dataclass
class RowWriteLoop:
    """A `lax.fori_loop(lower, upper, body_fun, init_val)` call whose body writes `out.at[index].set(v)` into
    its carry (the carry itself, or a name unpacked from it)."""

    call: ast.Call
    arguments: dict[str, ast.expr]  # by fori_loop's parameter names, `unroll` too when given
    body: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
    index: str  # the body's first parameter
    carry: str  # its second
    line: ast.stmt | None  # the statement of the call


class RowWrites:
    """The `lax.fori_loop` calls of one module whose bodies write rows of their carry, and what those bodies do
    to the arrays they write (`FileFacts.row_writes`)."""

    def __init__(self, facts) -> None:
        self.facts = facts
        self.binder = facts.binder
        self.symbolic = SymbolicShapes(facts)

    def loops(self) -> Iterator[RowWriteLoop]:
        """Every row-writing `lax.fori_loop` call of the module, in source order."""
        calls = sorted(self.binder.nodes_of(ast.Call), key=lambda n: (n.lineno, n.col_offset))
        for call in calls:
            found = self.loop(call)
            if found is not None:
                yield found

    def loop(self, call: ast.Call) -> RowWriteLoop | None:
        """`call` as a `lax.fori_loop` whose body (a lambda, or the one def its name is bound to) writes rows of
        its carry at the loop index; None for any other call, or one with `*` or `**` arguments."""
        if self.binder.callee(call) != _FORI:
            return None
        arguments = _arguments(call)
        if arguments is None:
            return None
        body = self._body_function(arguments["body_fun"])
        if body is None:
            return None
        params = param_names(body.args)
        if len(params) < 2 or not _writes_rows(body, params[0], params[1]):
            return None
        return RowWriteLoop(call, arguments, body, params[0], params[1], self.symbolic.statement(call))

    def traced_count(self, loop: RowWriteLoop) -> bool:
        """Whether the trip count is traced where the loop runs, or is the result of a JAX computation
        (`n = jnp.argmax(mask)`) in a function the module does not trace itself: a value a caller's `jax.jit`
        makes a tracer, never a scan length."""
        expr, where = loop.arguments["upper"], loop.line
        for _ in range(4):
            if self.facts.traced.kind(expr) is Kind.TRACED:
                return True
            if type(expr) is not ast.Name or where is None:
                return False
            value = self.symbolic.single_value(expr.id, where)
            if value is None:
                return False
            expr, where = value, self.symbolic.statement(value)
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
        starts_at_zero = self.facts.shapes.constant(arguments["lower"]) == 0
        trip = self.symbolic.dim(arguments["upper"], line) if starts_at_zero else None
        return all(
            not self._made_for_loop(init, where)
            and (_reads_contents(body, name) or not self._all_rows(init, where, trip))
            for name, init, where in written
        )

    def plan(self, loop: RowWriteLoop) -> ScanPlan | str | None:
        """What rewriting the loop (whose body is a def) into a `lax.scan` that stacks its rows needs, each part
        proven; or what stops that rewrite, in words for a diagnostic; or None where the loop collects no
        per-step output after all (the rows written are of no carried array, or of a buffer filled in part)."""
        try:
            return _Planner(self, loop).plan()
        except _Quiet:
            return None
        except _Refused as refused:
            return str(refused)

    # ---- what the loop's arrays were before it -------------------------------------------------------------

    def _made_for_loop(self, expr: ast.expr, where: ast.stmt | None) -> bool:
        """Whether `expr` (read at the statement `where`) is a buffer made by `jnp.zeros`-like calls, whose
        contents are no data of the program's."""
        for _ in range(4):
            if type(expr) is ast.Call:
                return self.binder.callee(expr) in _BUFFER_MAKERS
            if type(expr) is not ast.Name or where is None:
                return False
            value = self.symbolic.single_value(expr.id, where)
            if value is None:
                return False  # a parameter, or a name bound in several places
            expr, where = value, self.symbolic.statement(value)
        return False

    def _all_rows(self, expr: ast.expr, where: ast.stmt | None, trip) -> bool:
        """Whether `trip` (steps from 0) is proven to be the number of rows of `expr` read at `where`."""
        for _ in range(4):
            if trip is None or type(expr) is not ast.Name or where is None:
                return False
            if trip in self.symbolic.leading_dims(expr.id, where):
                return True
            value = self.symbolic.single_value(expr.id, where)
            if value is None:
                return False
            expr, where = value, self.symbolic.statement(value)
        return False

    def _row_written_inits(self, init, body, index: str, carry: str, line) -> list[tuple]:
        """(name in the body, initial value, statement where that value is read) of each carried array the
        body writes at `[index]`: the carry itself, or elements of a tuple carry the body unpacks as
        `a, b = carry`. Empty when the carry's elements cannot be matched to the names the body gives them."""
        written = {
            node.func.value.value.value.id
            for node in _walk_body(body)
            if type(node) is ast.Call and row_write(node, index) is not None
        }
        if carry in written:
            return [(carry, init, line)]
        if type(body) is ast.Lambda:
            return []
        where = line
        if type(init) is ast.Name and line is not None:
            value = self.symbolic.single_value(init.id, line)
            if type(value) is ast.Tuple:
                init, where = value, self.symbolic.statement(value)  # `init = (h, grid)`: its elements are read there
        if type(init) is not ast.Tuple or any(type(e) is ast.Starred for e in init.elts):
            return []
        for unit in self.units(body.body):
            assign = _single_assign(unit)
            if assign is None or not (type(assign.value) is ast.Name and assign.value.id == carry):
                continue
            target = assign.targets[0] if len(assign.targets) == 1 else None
            if type(target) not in (ast.Tuple, ast.List) or len(target.elts) != len(init.elts):
                return []
            return [
                (element.id, value, where)
                for element, value in zip(target.elts, init.elts)
                if type(element) is ast.Name and element.id in written
            ]
        return []

    def _body_function(self, expr: ast.expr) -> ast.AST | None:
        if type(expr) is ast.Lambda:
            return expr
        if type(expr) is not ast.Name:
            return None
        scope = self.binder.scope_of.get(expr)
        if scope is None:
            return None
        bindings = scope.resolve(expr.id)
        if len(bindings) != 1 or not isinstance(bindings[0].node, _FUNCTIONS):
            return None
        return bindings[0].node

    # ---- statements as LibCST holds them -------------------------------------------------------------------

    def units(self, statements: Sequence[ast.stmt]) -> list[Unit]:
        return [(kind, group) for kind, group in self.facts.lines.group(statements)]

    def only_read_by(self, name: str, value: ast.expr, reader: ast.stmt, allowed: Sequence[ast.AST]) -> bool:
        """Whether the binding `name = value` is read only at the nodes `allowed`, all in the statement
        `reader` (no closure captures it, no other statement it reaches reads it)."""
        facts = self.facts
        function = facts.enclosing_function(reader)
        flow = facts.flow(function)
        if name in flow.always_live or flow.opaque:
            return False
        allowed_ids = {id(n) for n in allowed}
        for first, unit in self._statements_outside_functions(function):
            kind, group = unit
            if kind == "line":
                reads = {n for s in group for n in activity(s, deep=False).reads}
            else:
                reads = set(activity(first, deep=False).reads)
            if name not in reads:
                continue
            if not any(source is value for source in flow.reaching(first, name)):
                continue
            if first is not reader:
                return False
            for statement in group:
                for node, spelled in _cst_names(statement):
                    if spelled == name and id(node) not in allowed_ids and not _is_target_name(statement, node):
                        return False
        return True

    def _statements_outside_functions(self, function: ast.AST) -> Iterator[tuple[ast.stmt, Unit]]:
        """Each of LibCST's simple statement lines and compound statements in `function`'s body, not entering
        nested functions and classes (whose own statements are left out, as their def is not)."""
        stack = [function.body]
        while stack:
            block = stack.pop()
            for kind, group in self.facts.lines.group(block):
                if kind == "suite":
                    continue
                yield group[0], (kind, group)
                if kind == "compound" and not isinstance(group[0], (*_FUNCTIONS, ast.ClassDef)):
                    stack.extend(_blocks_of(group[0]))


class _Planner:
    """The plan of one loop (`RowWrites.plan`): each step proves a part or raises what stops it."""

    def __init__(self, rows: RowWrites, loop: RowWriteLoop) -> None:
        self.rows, self.loop = rows, loop
        self.facts, self.symbolic = rows.facts, rows.symbolic
        self.trip = None  # the planned loop's trip count, as a dimension
        self.call_line: ast.stmt | None = None

    def code(self, node: ast.AST) -> str:
        return self.facts.purity.code(node)

    def plan(self) -> ScanPlan:
        call, arguments, body = self.loop.call, self.loop.arguments, self.loop.body
        index, carry_param = self._signature(body)
        line = self.call_line = self.symbolic.statement(call)  # where the loop runs: the body reads its free names there
        facts = self.facts
        if facts.enclosing_function(body) is not facts.enclosing_function(call):
            raise _Refused(f"the body `{body.name}` is defined in another function than the loop")
        if self._references(body) != 1:
            raise _Refused(f"the body `{body.name}` is used elsewhere too")
        impurity = facts.purity.function_impurity(body)
        if impurity is not None:
            raise _Refused(f"the body {impurity.reason}")
        lower = facts.shapes.constant(arguments["lower"])
        if lower != 0:
            raise _Refused(f"the loop starts at `{self.code(arguments['lower'])}`, not 0")
        statements = self.rows.units(body.body)
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
            init=init, init_line=init_line, init_arg=arguments["init_val"], upper=arguments["upper"],
            unroll=arguments.get("unroll"),
        )  # fmt: skip
        if any(index in assigned(s) for s in statements) or index in _nested_bindings(body):
            raise _Refused(f"the body binds the index `{index}` again")
        plan.outputs = self._outputs(plan)
        trip = self.trip = self.symbolic.dim(plan.upper, line)
        for output in plan.outputs:
            output.fresh = self._fresh_output(plan, output, trip)
        self._index_uses(plan, trip)
        for output in plan.outputs:
            self._check_row(plan, output)
        plan.line, plan.assign = self._result_statement(call)
        self._check_targets(plan)
        for output in plan.outputs:
            if output.write is not None:
                output.later = frozenset(set().union(*(assigned(s) for s in statements[output.write + 1 :])))
            output.removable = self._removable(plan, output)
        return plan

    def _signature(self, body: ast.AST) -> tuple[str, str]:
        args = body.args
        plain = (
            len(args.args) == 2 and not args.posonlyargs and not args.kwonlyargs and args.vararg is None
            and args.kwarg is None and not args.defaults
        )  # fmt: skip
        if body.decorator_list:
            raise _Refused(f"the body `{body.name}` is decorated")
        if not plain or type(body) is ast.AsyncFunctionDef:
            raise _Refused(f"the body `{body.name}` is not a plain `def {body.name}(i, carry)`")
        return args.args[0].arg, args.args[1].arg

    def _result_statement(self, call: ast.Call) -> tuple[ast.stmt, ast.Assign]:
        assign = self.facts.binder.parents.get(call)
        if not (type(assign) is ast.Assign and assign.value is call and len(assign.targets) == 1):
            raise _Refused("its result is not assigned (`h, out = lax.fori_loop(...)`)")
        kind, group = self.symbolic.unit(self.symbolic.statement(assign))
        if kind != "line":
            raise _Refused("its result is not assigned on a line of its own")
        return group[0], assign

    def _references(self, body: ast.AST) -> int:
        binder = self.facts.binder
        scope = binder.scope_of.get(body)
        if scope is None:
            return 0
        own = scope.resolve(body.name)
        count = 0
        for target in {id(b.scope): b.scope for b in own}.values():
            for read in binder.references(target, body.name):
                count += sum(1 for b in binder.referents(read) if b in own)
        return count

    def _initial_carry(self, init: ast.expr, line: ast.stmt):
        """The initial carry's elements when it is a tuple written out (here, or as `init = (a, b)` used only
        by this call), with that `init` line; (None, None) for a carry that is one value."""
        if type(init) is ast.Tuple and not any(type(e) is ast.Starred for e in init.elts):
            return list(init.elts), None
        if type(init) is ast.Name:
            value = self.symbolic.single_value(init.id, line)
            if type(value) is ast.Tuple and not any(type(e) is ast.Starred for e in value.elts):
                init_line = self.symbolic.statement(value)
                if not self.rows.only_read_by(init.id, value, line, [init]):
                    raise _Refused(f"the initial carry `{init.id}` is used elsewhere too")
                return list(value.elts), init_line
        return None, None

    def _unpack(self, statements: list[Unit], carry_param: str, size: int) -> tuple[int, list[str]]:
        first = 1 if statements and _is_docstring(statements[0]) else 0
        wrong = _Refused(f"the body does not unpack its carry first (`a, b = {carry_param}`)")
        if len(statements) <= first:
            raise wrong
        assign = _single_assign(statements[first])
        if assign is None or not (type(assign.value) is ast.Name and assign.value.id == carry_param):
            raise wrong
        target = assign.targets[0] if len(assign.targets) == 1 else None
        if type(target) not in (ast.Tuple, ast.List) or len(target.elts) != size:
            raise wrong
        if not all(type(e) is ast.Name for e in target.elts):
            raise wrong
        names = [e.id for e in target.elts]
        if len(set(names)) != len(names):
            raise wrong
        for number, unit in enumerate(statements):
            if number != first and any(spelled == carry_param for s in unit[1] for _, spelled in _cst_names(s)):
                raise _Refused(f"the body uses its carry `{carry_param}` besides unpacking it")
        return first, names

    def _returned(self, statements: list[Unit], size: int | None) -> list[ast.expr]:
        """The returned carry, element by element: the body must end with its only `return`."""
        last = statements[-1] if statements else None
        small = last[1][0] if last is not None and last[0] == "line" and len(last[1]) == 1 else None
        if type(small) is not ast.Return or small.value is None:
            raise _Refused("the body does not end with `return` of its carry")
        for _, group in statements[:-1]:
            if any(type(n) is ast.Return for s in group for n in _walk_outside_functions(s)):
                raise _Refused("the body returns from more than one place")
        if size is None:
            return [small.value]
        value = small.value
        if type(value) is not ast.Tuple or len(value.elts) != size:
            raise _Refused(f"the body does not return a tuple of its {size} carried values")
        if any(type(e) is ast.Starred for e in value.elts):
            raise _Refused("the body returns a starred carry")
        return list(value.elts)

    def _check_targets(self, plan: ScanPlan) -> None:
        target = plan.assign.targets[0]
        if plan.tuple_carry:
            ok = type(target) in (ast.Tuple, ast.List) and len(target.elts) == len(plan.names)
            ok = ok and not any(type(e) is ast.Starred for e in target.elts)
            if not ok:
                raise _Refused("its result is not unpacked into one name per carried value")
        elif type(target) in (ast.Tuple, ast.List):
            raise _Refused("its result is unpacked although the carry is one value")

    def _outputs(self, plan: ScanPlan) -> list[RowOutput]:
        outputs = []
        for position, name in enumerate(plan.names):
            writes = [n for _, group in plan.statements for s in group for n in walk(s) if row_write(n, plan.index, name) is not None]
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
        assignments = [number for number, s in enumerate(statements) if number != plan.unpack and name in assigned(s)]
        in_return = row_write(returned, plan.index, name)
        if in_return is not None:
            if assignments:
                raise once
            value, write = in_return, None
            base = returned.func.value.value.value
        else:
            if not (type(returned) is ast.Name and returned.id == name) or len(assignments) != 1:
                raise once
            write = assignments[0]
            assign = _single_assign(statements[write])
            target = assign.targets[0] if assign is not None and len(assign.targets) == 1 else None
            value = row_write(assign.value, plan.index, name) if assign is not None else None
            if not (type(target) is ast.Name and target.id == name) or value is None:
                raise once
            base = assign.value.func.value.value.value
        readers = [
            node
            for number, (_, group) in enumerate(statements)
            if number != plan.unpack
            for statement in group
            for node in _cst_walk_names(statement, name)
            if node is not base and node is not returned and not _is_target_name(statement, node)
        ]
        if readers:
            shown = self._first_line(readers[0])
            raise _Refused(f"the body reads `{name}` besides writing its row (`{snippet(shown)}`)")
        return RowOutput(position, name, value, write)

    def _first_line(self, node: ast.AST) -> str:
        """The first line of the code of the statement holding `node` as LibCST gives it (`code_for` of its line:
        the comment lines above it first), stripped."""
        statement = self.symbolic.statement(node)
        if statement is None:
            return self.code(node).strip().splitlines()[0]
        lines = self.facts.lines._lines
        first = min([statement.lineno, *(d.lineno for d in getattr(statement, "decorator_list", ()))])
        shown = lines[first - 1][statement.col_offset:] if first == statement.lineno else lines[first - 1]
        indent = len(lines[statement.lineno - 1]) - len(lines[statement.lineno - 1].lstrip(" \t"))
        number = first - 1
        while number >= 1:
            raw = lines[number - 1]
            text = raw.strip()
            if text and not text.startswith("#"):
                break
            if text and len(raw) - len(raw.lstrip(" \t")) > indent:
                break  # indented further: the footer of the block above (LibCST's IndentedBlock.footer)
            if text:
                shown = text
            number -= 1
        return shown.strip()

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
                f"nothing proves that the loop's `{self.code(plan.upper)}` steps write every row of `{output.name}` "
                f"(`{snippet(self.code(fresh.call))}`)"
            )
        return fresh

    def _fresh(self, expr: ast.expr, where: ast.stmt, depth: int = 0) -> FreshBuffer | str:
        return self.symbolic.fresh(expr, where, depth, integer=self.trip)

    def cast(self, fresh: FreshBuffer) -> str | None:
        """How to write the output's dtype inside the body (`float`, `jnp.float32`, `xs.dtype`); None: cannot."""
        spelling = fresh.spelling
        if spelling is None:
            return None
        if spelling[0] == "kind":
            return spelling[1]
        if spelling[0] == "dtype-of":
            _, array, key = spelling
            return f"{array.id}.dtype" if self._usable_in_body(array.id, key) else None
        dtype = spelling[1]
        token = self.symbolic.dtype_token(dtype, fresh.statement)
        if token is None:
            return None
        if token[0] == "dtype-of":
            name = dtype.value.id
            return f"{name}.dtype" if self._usable_in_body(name, token[1]) else None
        return self.code(dtype)

    def _usable_in_body(self, name: str, key) -> bool:
        """Whether the body, reading `name`, sees the value `key` stands for (the body runs at the call)."""
        if key is None or self.call_line is None:
            return False
        if name in _bound_in(self.loop.body):
            return False
        return self.symbolic.key(name, self.call_line) == key

    # ---- the index and the rows ----------------------------------------------------------------------------

    def _index_uses(self, plan: ScanPlan, trip) -> None:
        """Which arrays the scan runs over (`xs[i]` of an array with `n` rows), and whether it needs the index
        itself (any other use)."""
        writes = set()
        for _, group in plan.statements:
            for statement in group:
                for node in walk(statement):
                    for output in plan.outputs:
                        if row_write(node, plan.index, output.name) is not None:
                            first = _elements(node.func.value)[0]
                            writes.update(id(n) for n in ast.walk(first))
        call_line = plan.line
        bound = _bound_in(plan.body)
        scanned: list[str] = []
        for _, group in plan.statements:
            for statement in group:
                for node in _cst_walk_names(statement, plan.index):
                    if id(node) in writes or _is_target_name(statement, node):
                        continue
                    array = self._row_of(node)
                    if array is not None and array not in bound:
                        key = self.symbolic.key(array, call_line)
                        if key is not None and ("dim", key, 0) == trip:
                            if array not in scanned:
                                scanned.append(array)
                            continue
                    plan.uses_index = True
        if plan.uses_index or len(scanned) > 1:
            plan.uses_index, scanned = True, []  # (two arrays of n rows: their keys differ, never both proven)
        plan.scanned = scanned

    def _row_of(self, index: ast.AST) -> str | None:
        """`xs` when `index` is read as `xs[index]` (one plain index into a name)."""
        if type(index) is not ast.Name:
            return None
        parents = self.facts.binder.parents
        subscript = parents.get(index)
        if type(subscript) is not ast.Subscript or subscript.slice is not index:
            return None
        if type(subscript.value) is not ast.Name or subscript.value.id == "at":
            return None
        holder = parents.get(subscript)
        if type(holder) is ast.Assign and any(t is subscript for t in holder.targets):
            return None
        if type(holder) is ast.AugAssign and holder.target is subscript:
            return None
        return subscript.value.id

    def _check_row(self, plan: ScanPlan, output: RowOutput) -> None:
        """The rows the scan stacks have the output's row shape and dtype (or get a cast to its dtype)."""
        fresh = output.fresh
        at = output.write if output.write is not None else len(plan.statements) - 1
        shapes, dtypes = self._facts(plan, output.value, at, 0)
        # A scalar row takes only scalars (nothing broadcasts to `()`): no proof needed.
        if fresh.row != () and (fresh.row is None or not any(same_shape(fresh.row, shape) for shape in shapes)):
            raise _Refused(
                f"nothing proves that `{snippet(self.code(output.value))}` has the shape of a row of "
                f"`{output.name}` (`.at[i].set` broadcasts into the row, lax.scan would stack it as it is)"
            )
        if fresh.dtype is not None and fresh.dtype in dtypes:
            return
        cast = self.cast(fresh)
        if cast is None:
            raise _Refused(
                f"nothing proves that `{snippet(self.code(output.value))}` has the dtype of `{output.name}`, "
                "and that dtype cannot be written in the body"
            )
        output.cast = cast

    def _facts(self, plan: ScanPlan, expr: ast.expr, at: int, depth: int) -> tuple[list, list]:
        """What the code proves about the value of `expr` read at the body's statement `at`: the shapes it may
        be shown to have (alternative spellings of one shape) and dtypes."""
        if depth > 6:
            return [], []
        statements = plan.statements
        if is_number(expr):
            return [()], []
        if type(expr) is ast.Name:
            name = expr.id
            if name == plan.index:
                return [()], []
            first = (plan.unpack + 1) if plan.unpack is not None else 0
            for position, carried in enumerate(plan.names):
                if any(o.position == position for o in plan.outputs):
                    continue
                entry = carried == name and not any(name in assigned(s) for s in statements[first:at])
                final = (
                    type(plan.returned[position]) is ast.Name
                    and plan.returned[position].id == name
                    and not any(name in assigned(s) for s in statements[at:-1])
                )
                if entry or final:
                    where = plan.init_line if plan.init_line is not None else plan.line
                    return self._outer_facts(plan.init[position], where, depth)
            bindings = [number for number, s in enumerate(statements) if name in assigned(s)]
            if len(bindings) == 1 and bindings[0] < at and bindings[0] != plan.unpack:
                assign = _single_assign(statements[bindings[0]])
                if assign is not None and len(assign.targets) == 1 and type(assign.targets[0]) is ast.Name:
                    return self._facts(plan, assign.value, bindings[0], depth + 1)
                return [], []
            if not bindings and name not in _bound_in(plan.body):
                key = self.symbolic.key(name, plan.line)
                return ([(("spread", key, 0),)], [("dtype-of", key)]) if key is not None else ([], [])
            return [], []
        if type(expr) is ast.Subscript:
            array, element = expr.value, expr.slice
            if (
                type(array) is ast.Name
                and type(element) is ast.Name
                and element.id == plan.index
                and array.id not in _bound_in(plan.body)
            ):
                key = self.symbolic.key(array.id, plan.line)
                return ([(("spread", key, 1),)], [("dtype-of", key)]) if key is not None else ([], [])
            return [], []

        def astype_dtype(dtype: ast.expr):
            names = {n.id for n in ast.walk(dtype) if type(n) is ast.Name}
            return None if names & _bound_in(plan.body) else self.symbolic.dtype_token(dtype, plan.line)

        found = self.symbolic.elementwise_facts(expr, lambda e: self._facts(plan, e, at, depth + 1), astype_dtype)
        return found if found is not None else ([], [])

    def _outer_facts(self, expr: ast.expr, where, depth: int) -> tuple[list, list]:
        """Shapes and dtypes of an initial carry (which the carry keeps from step to step)."""
        if depth > 6:
            return [], []
        if is_number(expr):
            return [()], []
        shapes: list = []
        dtypes: list = []
        if type(expr) is ast.Name:
            key = self.symbolic.key(expr.id, where)
            if key is not None:
                shapes.append((("spread", key, 0),))
                dtypes.append(("dtype-of", key))
            value = self.symbolic.single_value(expr.id, where)
            if value is not None:
                more = self._outer_facts(value, self.symbolic.statement(value), depth + 1)
                shapes += more[0]
                dtypes += more[1]
            return shapes, dtypes
        if type(expr) is ast.Subscript and type(expr.value) is ast.Name and type(expr.slice) is not ast.Tuple:
            element = expr.slice
            if type(element) is not ast.Slice and self.facts.shapes.constant(element) is not None:
                key = self.symbolic.key(expr.value.id, where)
                if key is not None:
                    return [(("spread", key, 1),)], [("dtype-of", key)]
            return [], []
        fresh = self._fresh(expr, where, 3)
        if isinstance(fresh, FreshBuffer):
            return ([fresh.parts] if fresh.parts is not None else []), ([fresh.dtype] if fresh.dtype is not None else [])
        return [], []

    def _removable(self, plan: ScanPlan, output: RowOutput) -> bool:
        """Whether the `out = jnp.zeros(...)` line that only fed the dropped initial carry can go."""
        binding = output.fresh.binding
        if binding is None:
            return False
        assign = self.symbolic.single_assign(binding)
        if assign is None:
            return False
        init = plan.init[output.position]
        if type(init) is not ast.Name:
            return False
        reader = plan.init_line if plan.init_line is not None else plan.line
        return self.rows.only_read_by(assign.targets[0].id, assign.value, reader, [init])


# ---- syntax helpers ----------------------------------------------------------------------------------------


def _arguments(call: ast.Call) -> dict[str, ast.expr] | None:
    found: dict[str, ast.expr] = {}
    if any(type(a) is ast.Starred for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    for position, arg in enumerate(call.args):
        name = _FORI_PARAMS[position] if position < 4 else None
        if name is None or name in found:
            return None
        found[name] = arg
    for keyword in call.keywords:
        if keyword.arg not in (*_FORI_PARAMS, "unroll") or keyword.arg in found:
            return None
        found[keyword.arg] = keyword.value
    return found if all(name in found for name in _FORI_PARAMS) else None


def _elements(subscript: ast.Subscript) -> list[ast.expr]:
    """A subscript's elements as LibCST holds them (`x[i, :]`: `i` and `:`)."""
    piece = subscript.slice
    return list(piece.elts) if type(piece) is ast.Tuple else [piece]


def _full_slice(element: ast.expr) -> bool:
    return type(element) is ast.Slice and element.lower is None and element.upper is None and element.step is None


def row_write(node: ast.AST, index: str, name: str | None = None) -> ast.expr | None:
    """v of `name.at[index].set(v)` (or `name.at[index, :].set(v)`), else None: one row written."""
    if not (type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.attr == "set"):
        return None
    at = node.func.value
    if not (type(at) is ast.Subscript and type(at.value) is ast.Attribute and at.value.attr == "at"):
        return None
    base = at.value.value
    if type(base) is not ast.Name or (name is not None and base.id != name):
        return None
    elements = _elements(at)
    first = elements[0]
    if not (type(first) is ast.Name and first.id == index):
        return None
    if not all(_full_slice(element) for element in elements[1:]):
        return None
    if len(node.args) != 1 or node.keywords or type(node.args[0]) is ast.Starred:
        return None
    return node.args[0]


def _walk_body(body: ast.AST) -> Iterator[ast.AST]:
    """Every node of a def's statements or of a lambda's expression."""
    if type(body) is ast.Lambda:
        yield from ast.walk(body.body)
        return
    for statement in body.body:
        yield from ast.walk(statement)


def _writes_rows(body: ast.AST, index: str, carry: str) -> bool:
    """Whether the body writes `out.at[index].set(...)` into its carry (`carry` itself, or a name unpacked
    from it): the pattern JF104 is about."""
    carried = {carry}
    nodes = list(_walk_body(body))
    for node in nodes:
        if type(node) is ast.Assign and type(node.value) is ast.Name and node.value.id == carry:
            for target in node.targets:
                carried.update(target_names(target))
    return any(
        type(node) is ast.Call and row_write(node, index) is not None and node.func.value.value.value.id in carried
        for node in nodes
    )


def _cst_names(node: ast.AST) -> Iterator[tuple[ast.AST, str]]:
    """Where LibCST holds a `Name` in `node`, with its spelling (`_own_names` of each node under it)."""
    for found in ast.walk(node):
        yield from _own_names(found)


def _cst_walk_names(node: ast.AST, name: str) -> list[ast.AST]:
    """The places LibCST holds a `Name` spelled `name` in `node`, in LibCST's `syntax.walk` order."""
    return [n for n in walk(node) if any(spelled == name for _, spelled in _own_names(n))]


def _own_names(node: ast.AST) -> list[tuple[ast.AST, str]]:
    """The `Name`s LibCST holds for `node` itself: a name's, an attribute's, a keyword's, a parameter's, a def's or
    class's name, `global`/`nonlocal` names, an import alias's dotted parts and its alias, an `except ... as` name."""
    kind = type(node)
    if kind is ast.Name:
        return [(node, node.id)]
    if kind is ast.Attribute:
        return [(node, node.attr)]
    if kind is ast.keyword:
        return [(node, node.arg)] if node.arg is not None else []
    if kind is ast.arg:
        return [(node, node.arg)]
    if kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
        return [(node, node.name)]
    if kind in (ast.Global, ast.Nonlocal):
        return [(node, n) for n in node.names]
    if kind is ast.alias:
        return [(node, p) for p in [*node.name.split("."), *([node.asname] if node.asname else [])]]
    if kind is ast.ExceptHandler and node.name:
        return [(node, node.name)]
    return []


def _reads_contents(body: ast.AST, name: str) -> bool:
    """Whether the body reads what the array `name` holds: any use besides writing rows (`name.at[...].set`),
    its shape or dtype (`name.shape`), being assigned (not `name += v`), and being returned as it is
    (`return h, name`). Every place LibCST holds a `Name` spelled `name` counts (`x.name`, `f(name=...)` too)."""
    nodes = list(_walk_body(body))
    parents: dict[int, ast.AST] = {}
    for node in nodes:
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    returned = set()
    targets = set()
    for node in nodes:
        if type(node) is ast.Return and node.value is not None:
            values = node.value.elts if type(node.value) is ast.Tuple else [node.value]
            returned.update(id(v) for v in values)
        elif type(node) is ast.Assign:
            targets.update(id(n) for t in node.targets for n in ast.walk(t))
        elif type(node) is ast.AnnAssign:
            targets.update(id(n) for n in ast.walk(node.target))
    if type(body) is ast.Lambda:
        returned.add(id(body.body))
    for node in nodes:
        if not any(spelled == name for _, spelled in _own_names(node)):
            continue
        if id(node) in targets or (type(node) is ast.Name and id(node) in returned):
            continue
        if type(node) is not ast.Name:
            return True
        parent = parents.get(id(node))
        if type(parent) is ast.Attribute and parent.value is node and parent.attr in _NOT_CONTENTS:
            method = parents.get(id(parents.get(id(parent))))  # `name.at[i]` → `name.at[i].get`
            if not (parent.attr == "at" and type(method) is ast.Attribute and method.attr == "get"):
                continue
        return True
    return False


def assigned(unit: Unit) -> set[str]:
    """The names one of LibCST's statements assigns or deletes."""
    act = block_activity(unit[1])
    return set(act.writes) | set(act.deletes)


def _single_assign(unit: Unit) -> ast.Assign | None:
    """The `a = b` of a line holding that one assignment, or None."""
    kind, group = unit
    if kind == "line" and len(group) == 1 and type(group[0]) is ast.Assign:
        return group[0]
    return None


def _is_docstring(unit: Unit) -> bool:
    kind, group = unit
    return (
        kind == "line" and len(group) == 1 and type(group[0]) is ast.Expr
        and type(group[0].value) is ast.Constant and type(group[0].value.value) is str
    )  # fmt: skip


def _bound_in(function: ast.AST) -> set[str]:
    """Names the body function binds (parameters, assignments), and those that scopes nested in it bind
    (lambda and function parameters, comprehension targets): where any of them is read, it may not be the
    value the enclosing function has."""
    act = block_activity(function.body) if type(function) is not ast.Lambda else activity(function.body)
    return set(param_names(function.args)) | set(act.writes) | set(act.deletes) | _nested_bindings(function)


def _nested_bindings(function: ast.AST) -> set[str]:
    """Names that scopes nested in the function bind: lambda and function parameters, comprehension targets."""
    bound: set[str] = set()
    for node in _walk_body(function):
        if type(node) in (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef):
            bound.update(param_names(node.args))
        elif type(node) is ast.comprehension:
            bound.update(target_names(node.target))
    return bound


def _is_target_name(statement: ast.AST, name: ast.AST) -> bool:
    """Whether `name` is (part of) an assignment target in `statement`, not a read."""
    if type(name) is not ast.Name:
        return False
    for node in ast.walk(statement):
        kind = type(node)
        if kind is ast.Assign:
            targets = node.targets
        elif kind in (ast.AugAssign, ast.AnnAssign):
            targets = [node.target]
        else:
            continue
        for target in targets:
            if target is name:
                return True
            if type(target) in (ast.Tuple, ast.List):
                if any(e is name or (type(e) is ast.Starred and e.value is name) for e in target.elts):
                    return True
    return False


def _walk_outside_functions(node: ast.AST) -> Iterator[ast.AST]:
    """Every node under `node`, not entering nested functions, lambdas and classes."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        if current is not node and isinstance(current, _SCOPES):
            continue
        stack.extend(ast.iter_child_nodes(current))


def _blocks_of(statement: ast.stmt) -> list[list[ast.stmt]]:
    """The blocks of a compound statement (bodies, else branches, handlers, cases)."""
    found = []
    for name in ("body", "orelse", "finalbody"):
        block = getattr(statement, name, None)
        if type(block) is list and block and isinstance(block[0], ast.stmt):
            found.append(block)
    for handler in getattr(statement, "handlers", ()):
        found.append(handler.body)
    for case in getattr(statement, "cases", ()):
        found.append(case.body)
    return found


