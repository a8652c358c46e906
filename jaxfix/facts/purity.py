"""What stops a block or a function from becoming a body JAX traces once (a lax loop's body, a `lax.cond` arm, a
function `jax.vmap` maps), on `ast`: jumps out of the block, side effects (I/O, `global`, imports, classes),
stores into and mutation of objects from outside it, calls to anything not known to be pure (same-module
functions are followed); and uses of a name (a loop index) that need a Python int where a tracer would arrive.
Every answer is a `Blocker`: the offending node and a reason a diagnostic can show. None: nothing stops it.

The answers are those of `analysis.dataflow.Dataflow` on LibCST (`impurity`, `block_impurity`,
`function_impurity`, `call_blocker`, `concrete_use`), which the loop rules still read: the same reasons and the
same nodes (LibCST's `Else` of a loop is the first statement of its `else:` block here, a `Decorator` its
expression); `benchmarks/agreement.py` (`impurity-exact`) compares the two. What needs liveness (the names live at
a loop's head, those an arm reads from outside it) the caller gives: the liveness fact on `ast` is being written
elsewhere. Which names hold arrays `facts.predicates` tells."""

from __future__ import annotations

import ast
import bisect
import re
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, Sequence

from jaxfix.facts.binder import Binder
from jaxfix.facts.flow import Lines, children, root_name, target_names, terminal_parts, walk
from jaxfix.facts.knowledge.jax import (
    ALL, ARRAY_METHODS, AT_METHODS, CORE_ARRAY_NAMESPACES, IMPURE_PREFIXES, INDEX_ACCEPTING, PURE_CALLS,
    PURE_PREFIXES, PYTREE_RETURNING, SEQUENCE_RETURNING, TREE_MAPS, ARRAY_VIEW_ATTRIBUTES,
)
from jaxfix.facts.knowledge.python import (
    COLLECTING_METHODS, FRESH_CONTAINER_CALLS, HIGHER_ORDER_BUILTINS, IO_BUILTINS, MUTATING_METHODS, PURE_BUILTINS,
    READING_METHODS,
)
from jaxfix.facts.knowledge.tables import CALL_SUMMARIES, LAX_BODIES, TRANSFORMS
from jaxfix.facts.positions import Positions
from jaxfix.facts.predicates import Predicates
from jaxfix.facts.summaries import Summaries, by_method_name
from jaxfix.facts.traced import Kind, Traced

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_FUNCTIONS = (*_DEFS, ast.Lambda)
_CONTAINERS = (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)
_PARTIAL = "functools.partial"

# Calls that call a function they are given: (positions, keywords) of the function arguments.
HIGHER_ORDER: dict[str, tuple[tuple[int, ...], tuple[str, ...]]] = {
    **HIGHER_ORDER_BUILTINS,
    **{name: ((0,), ("f", "fun")) for name in TRANSFORMS},
    **{name: ((0,), ("f",)) for name in TREE_MAPS},
    **LAX_BODIES,
}


@dataclass(frozen=True)
class Blocker:
    """Why a body cannot become a traced function: the offending node and a reason a diagnostic can show.
    `collects` marks a body that appends per-step results to an outside list (a job for `lax.scan`)."""

    node: ast.AST
    reason: str
    collects: bool = False


def returns_one_array(qualified: str) -> bool:
    """Whether a JAX library function (by qualified name) returns one array, not a tuple, list or pytree."""
    return (
        qualified.startswith(CORE_ARRAY_NAMESPACES)
        and qualified not in SEQUENCE_RETURNING
        and qualified not in PYTREE_RETURNING
    )


def is_at(expr: ast.AST) -> bool:
    """`x.at[...]`."""
    return type(expr) is ast.Subscript and type(expr.value) is ast.Attribute and expr.value.attr == "at"


class Purity:
    """The purity of one module's blocks and functions, each function's answer memoized."""

    def __init__(self, binder: Binder, traced: Traced, positions: Positions, lines: Lines, predicates: Predicates) -> None:
        self.binder = binder
        self.predicates = predicates
        self.traced = traced
        self.positions = positions
        self.lines = lines
        self.summaries = Summaries(binder)
        self._function_purity: dict[ast.AST, Blocker | None] = {}
        self._checking: set[ast.AST] = set()

    # ---- code as LibCST spells it --------------------------------------------------------------------------

    def code(self, node: ast.AST) -> str:
        """The source of `node` with the parentheses of its own, as LibCST's `code_for` gives it: LibCST holds the
        indentation of the block a node stands in apart, so a line of the node's code after its first loses that
        indentation where it starts with it (but inside a string, which keeps every character)."""
        return self._dedented(node, self.positions.with_parentheses(node, self.binder.parents.get(node)))

    def _lines_in_strings(self, literal: ast.AST) -> set[int]:
        """The lines that start inside one of the string tokens of a (maybe implicitly concatenated) literal."""
        data, starts = self.positions._encoded()
        at = starts[literal.lineno - 1] + literal.col_offset
        end = starts[literal.end_lineno - 1] + literal.end_col_offset
        found: set[int] = set()
        while at < end:
            char = data[at : at + 1]
            if char == b"#":
                at = data.find(b"\n", at, end)
                at = end if at < 0 else at
                continue
            if char not in (b"'", b'"'):
                at += 1
                continue
            quote = data[at : at + 3] if data[at : at + 3] in _TRIPLE_QUOTES else char
            close = at + len(quote)
            while close < end and not data.startswith(quote, close):
                close += 2 if data[close : close + 1] == b"\\" else 1
            found.update(range(bisect.bisect_right(starts, at) + 1, bisect.bisect_right(starts, close) + 1))
            at = close + len(quote)
        return found

    def callee_code(self, call: ast.Call) -> str:
        """`code` of a call's callee (`(f)` of `(f)(x)`: `ast` starts the call at the first of its parentheses)."""
        return self._dedented(call.func, self.positions.callee(call))

    def _dedented(self, node: ast.AST, text: str) -> str:
        if "\n" not in text and "\r" not in text:
            return text
        statement = node
        parents = self.binder.parents
        while statement is not None and not isinstance(statement, ast.stmt):
            statement = parents.get(statement)
        if statement is None:
            return text
        prefix = self.positions.source_bytes((statement.lineno, 0), (statement.lineno, statement.col_offset))
        indent = prefix[: len(prefix) - len(prefix.lstrip(b" \t\f"))].decode("utf-8", "surrogatepass")
        if not indent:
            return text
        kept = set()  # lines that continue a string: its own characters
        for inner in ast.walk(node):
            if type(inner) in (ast.Constant, ast.JoinedStr) and getattr(inner, "end_lineno", inner.lineno) > inner.lineno:
                kept.update(self._lines_in_strings(inner))
        lines = text.splitlines(keepends=True)
        first = getattr(node, "lineno", statement.lineno)
        found = [lines[0]]
        for number, line in enumerate(lines[1:], start=first + 1):
            found.append(line[len(indent):] if line.startswith(indent) and number not in kept else line)
        return "".join(found)

    # ---- blocks --------------------------------------------------------------------------------------------

    def impurity(
        self,
        loop: ast.For | ast.AsyncFor | ast.While,
        live_in: Iterable[str],
        *,
        appendable: Iterable[str] = (),
        run_time_effects: Iterable[str] = (),
    ) -> Blocker | None:
        """What stops the body of `loop` from running as a traced function once per trip: None if nothing.
        `live_in`: the names live at the loop's head (its LoopFlow's), whose containers are not fresh.
        `appendable` names outside lists whose `.append(v)` calls a rewrite turns into outputs (lax.scan's
        stacked results): those calls are not counted. `run_time_effects`: qualified names of calls whose effect
        the rewrite performs at run time (`jax.debug.print` in a `lax.while_loop` body); their arguments are
        still checked."""
        statements = loop.body
        fresh = self._fresh_names(statements, exclude=live_in)
        walker = _PurityWalker(
            self, fresh=fresh, loop_body=True, appendable=frozenset(appendable), effects=frozenset(run_time_effects)
        )
        for statement in statements:
            walker.visit(statement)
            if walker.blocker is not None:
                return walker.blocker
        if type(loop) is not ast.While and loop.orelse:
            return Blocker(loop.orelse[0], "is followed by an `else:` clause")
        return None

    def block_impurity(
        self, statements: Sequence[ast.stmt], *, outside: Iterable[str], tail: Sequence[ast.stmt] = ()
    ) -> Blocker | None:
        """What stops a block that is not a loop body (a branch of an `if`) from becoming a function JAX traces,
        by the rules of `impurity`. The `return`s that end it (a last `return` alone on its line, or one at the
        end of every branch of a last `if`) are left to the caller: their values and the tests leading to them
        are walked. `outside`: names whose values come from outside the block (a container they hold is not
        fresh). `tail`: statements after the block's `if` that move into it (the early-return pattern)."""
        fresh = self._fresh_names([*statements, *tail], exclude=outside)
        walker = _PurityWalker(self, fresh=fresh, loop_body=True, place="the branch")
        for part in terminal_parts(self.lines, self.lines.units(statements, tail)):
            walker.visit(part)
            if walker.blocker is not None:
                return walker.blocker
        return None

    # ---- functions -----------------------------------------------------------------------------------------

    def function_impurity(self, function: ast.AST, *, arrays: frozenset[str] = frozenset()) -> Blocker | None:
        """Why calling a same-module function may have an effect (None: its body is pure). Recursion is assumed
        pure while its cycle is being checked. `arrays` names locals the caller knows to hold JAX arrays (the rows
        a function is mapped over), whose array methods (`x.sum()`) are pure even where the traced fact cannot
        tell; such a check is not cached."""
        if arrays:
            return self._check_function(function, arrays)
        if function in self._function_purity:
            return self._function_purity[function]
        if function in self._checking:
            return None
        self._checking.add(function)
        try:
            blocker = self._check_function(function)
        finally:
            self._checking.discard(function)
        self._function_purity[function] = blocker
        return blocker

    def _check_function(self, function: ast.AST, arrays: frozenset[str] = frozenset()) -> Blocker | None:
        if type(function) is ast.Lambda:
            walker = _PurityWalker(self, fresh=frozenset(), loop_body=False, arrays=arrays)
            walker.visit(function.body)
            return walker.blocker
        for expr in function.decorator_list:
            callee = self.binder.callee(expr) if type(expr) is ast.Call else self.binder.qualified(expr)
            if callee not in TRANSFORMS and callee != _PARTIAL:
                return Blocker(expr, f"is decorated with `{self.code(expr)}`")
        fresh = self._fresh_names(function.body, exclude=frozenset(_parameter_names(function.args)))
        walker = _PurityWalker(self, fresh=fresh, loop_body=False, arrays=arrays)
        for statement in function.body:
            walker.visit(statement)
            if walker.blocker is not None:
                return walker.blocker
        return None

    def _fresh_names(self, statements: Sequence[ast.AST], exclude: Iterable[str]) -> frozenset[str]:
        """Names every binding of which (within `statements`, nested functions included) makes a new container
        nobody else holds."""
        excluded = set(exclude)
        verdict: dict[str, bool] = {}
        for statement in statements:
            for node in walk(statement):
                kind = type(node)
                if kind is ast.Assign:
                    fresh = self._is_fresh_container(node.value)
                    for target in node.targets:
                        plain = type(target) is ast.Name
                        for name in target_names(target):
                            verdict[name] = verdict.get(name, True) and fresh and plain
                elif kind in (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.NamedExpr, ast.withitem):
                    target = node.optional_vars if kind is ast.withitem else node.target
                    if target is not None:
                        for name in target_names(target):
                            verdict[name] = False
        return frozenset(name for name, fresh in verdict.items() if fresh and name not in excluded)

    def _is_fresh_container(self, expr: ast.AST) -> bool:
        if isinstance(expr, _CONTAINERS):
            return True
        if type(expr) is ast.Call and type(expr.func) is ast.Name and expr.func.id in FRESH_CONTAINER_CALLS:
            return self.binder.is_builtin(expr.func, expr.func.id)
        return False

    # ---- calls ---------------------------------------------------------------------------------------------

    def call_blocker(self, call: ast.Call, fresh: frozenset[str], arrays: frozenset[str] = frozenset()) -> Blocker | None:
        """What in `call` may have an effect. `arrays`: names known to hold JAX arrays (see function_impurity)."""
        func = call.func
        binder = self.binder
        if type(func) is ast.Name and binder.is_builtin(func, func.id):
            name = func.id
            if name in IO_BUILTINS:
                return Blocker(call, f"does I/O (`{name}`)")
            if name not in PURE_BUILTINS:
                return Blocker(call, f"calls `{name}`, which is not known to be pure")
            return self._function_arguments_blocker(call, name)
        qualified = binder.qualified(func)
        if qualified is not None:
            if qualified.startswith(IMPURE_PREFIXES) or qualified in ("jax.pure_callback",):
                if qualified.startswith("jax.debug.") or "save" in qualified or "load" in qualified:
                    return Blocker(call, f"does I/O (`{qualified}`)")
                return Blocker(call, f"calls `{qualified}`, which is not known to be pure")
            if qualified.startswith(PURE_PREFIXES) or qualified in PURE_CALLS or qualified in TRANSFORMS:
                return self._function_arguments_blocker(call, qualified)
            if qualified in CALL_SUMMARIES:  # a library call whose summary says what it returns: pure
                return self._function_arguments_blocker(call, None)
            return Blocker(call, f"calls `{qualified}`, which is not known to be pure")
        if type(func) is ast.Name:
            for definition in self._local_definitions(func):
                blocker = self.function_impurity(definition)
                if blocker is not None:
                    return Blocker(call, f"calls `{func.id}`, which {blocker.reason}")
                return self._function_arguments_blocker(call, None)
            return Blocker(call, f"calls `{func.id}`, which is not known to be pure")
        if type(func) is ast.Attribute:
            method = func.attr
            receiver = func.value
            root = root_name(receiver)
            if is_at(receiver) and method in AT_METHODS:
                return None  # x.at[i].add(v) returns a new array
            if self.summaries.summary_of(call) is not None or (
                by_method_name(call) is not None and self.kind(receiver) is Kind.TRACED
            ):
                return self._function_arguments_blocker(call, None)  # `tx.update(g, s)`, `state.apply_gradients(...)`
            if method in MUTATING_METHODS and not (type(receiver) is ast.Name and receiver.id in fresh):
                return Blocker(
                    call, f"changes `{self.code(receiver)}` with `.{method}()`",
                    collects=method in COLLECTING_METHODS and root is not None,
                )
            if method in ARRAY_METHODS and method not in MUTATING_METHODS:
                if self.kind(receiver) is Kind.TRACED or (root is not None and root in arrays):
                    return None
            if method in READING_METHODS or (type(receiver) is ast.Name and receiver.id in fresh):
                return None
            return Blocker(call, f"calls `{self.code(receiver)}.{method}()`, which is not known to be pure")
        if type(func) is ast.Call:  # jax.vmap(f)(x), partial(f, a)(x)
            inner = binder.callee(func)
            if inner in TRANSFORMS or inner == _PARTIAL:
                return self.call_blocker(func, fresh)
        return Blocker(call, f"calls `{self.callee_code(call)}`, which is not known to be pure")

    def _function_arguments_blocker(self, call: ast.Call, callee: str | None) -> Blocker | None:
        """The functions a higher-order call receives must be pure too."""
        positions, keywords = HIGHER_ORDER.get(callee or "", ((), ()))
        for index, argument in enumerate(_in_order(call)):
            keyword = argument.arg if type(argument) is ast.keyword else None
            value = argument.value if type(argument) in (ast.keyword, ast.Starred) else argument
            is_function = (keyword is None and index in positions) or (keyword is not None and keyword in keywords)
            if is_function:
                blocker = self._function_value_blocker(value)
                if blocker is not None:
                    return blocker
            elif type(value) is ast.Name:
                # A same-module function handed to anything may be called by it.
                for definition in self._local_definitions(value):
                    blocker = self.function_impurity(definition)
                    if blocker is not None:
                        return Blocker(call, f"passes `{value.id}`, which {blocker.reason}")
        return None

    def _function_value_blocker(self, expr: ast.AST) -> Blocker | None:
        if type(expr) is ast.Lambda:
            return None  # its body is walked with the rest
        if type(expr) in (ast.List, ast.Tuple):
            for element in expr.elts:
                blocker = self._function_value_blocker(element.value if type(element) is ast.Starred else element)
                if blocker is not None:
                    return blocker
            return None
        if type(expr) is ast.Call:
            return self.call_blocker(expr, frozenset())
        qualified = self.binder.qualified(expr)
        if qualified is not None:
            if qualified.startswith(PURE_PREFIXES) and not qualified.startswith(IMPURE_PREFIXES):
                return None
            return Blocker(expr, f"passes `{qualified}`, which is not known to be pure")
        if type(expr) is ast.Name:
            if self.binder.is_builtin(expr, expr.id) and expr.id in PURE_BUILTINS:
                return None
            for definition in self._local_definitions(expr):
                blocker = self.function_impurity(definition)
                return None if blocker is None else Blocker(expr, f"passes `{expr.id}`, which {blocker.reason}")
        return Blocker(expr, f"passes `{self.code(expr)}`, which is not known to be pure")

    def local_function(self, name: ast.AST) -> ast.AST | None:
        """The same-module def or lambda that a name refers to, when it is bound exactly once."""
        if type(name) is not ast.Name:
            return None
        found = self._local_definitions(name)
        return found[0] if found else None

    def _local_definitions(self, name: ast.Name) -> list[ast.AST]:
        """The same-module function a name refers to, if it is bound exactly once, to a def or a lambda."""
        scope = self.binder.scope_of.get(name)
        if scope is None:
            return []
        bindings = scope.resolve(name.id)
        if len(bindings) != 1:
            return []
        node = bindings[0].node
        if isinstance(node, _DEFS):
            return [node]
        if type(node) is ast.Name:
            assign = self.binder.parents.get(node)
            if type(assign) is ast.Assign and len(assign.targets) == 1 and assign.targets[0] is node:
                if type(assign.value) is ast.Lambda:
                    return [assign.value]
        return []

    def kind(self, expr: ast.AST) -> Kind:
        try:
            return self.traced.kind(expr)
        except KeyError:  # not inside a function the traced fact knows
            return Kind.UNKNOWN

    # ---- concrete uses -------------------------------------------------------------------------------------

    def concrete_use(
        self,
        loop: ast.For | ast.AsyncFor | ast.While,
        names: Iterable[str],
        is_array: Callable[[ast.AST], bool] | None = None,
        *,
        also: Sequence[ast.AST] = (),
        consumed: Iterable[ast.AST] = (),
    ) -> Blocker | None:
        """The first use in the body of `loop` that needs one of `names` (say the loop index) to be a Python int,
        which it stops being when the body becomes a traced function: a Python `if`/`and`/`not`, a slice bound,
        an index into something `is_array` (by default `is_array_like`) does not know to be a JAX array, `range(i)`,
        `int(i)`, an f-string, a call to anything not known to accept a traced integer there, or `n ** i`. Names
        assigned from such values in the body are followed. `also`: more nodes to search (a `while` test); a use
        whose value reaches one of the `consumed` expressions counts as one that works with a traced integer."""
        is_array = is_array or self.is_array_like
        tainted = set(names)
        statements = [*loop.body, *also]
        stops = {id(node) for node in consumed}
        for _ in range(20):
            grown = False
            for occurrence in self._name_loads(statements, tainted):
                outcome = self._climb(occurrence, tainted, is_array, stops)
                if isinstance(outcome, Blocker):
                    return outcome
                if outcome - tainted:
                    tainted |= outcome
                    grown = True
            if not grown:
                return None
        return None

    def _name_loads(self, statements: Sequence[ast.AST], names: set[str]) -> Iterator[ast.Name]:
        parents = self.binder.parents
        for statement in statements:
            for node in _preorder(statement):
                if type(node) is ast.Name and node.id in names and type(node.ctx) is not ast.Store and not (
                    type(parents.get(node)) is ast.arguments  # a default: LibCST's Param, no load there
                ):
                    yield node

    def _climb(self, name: ast.Name, tainted: set[str], is_array, stops) -> set[str] | Blocker:
        """Follow a use of a tainted name outwards until its value is consumed (or reaches one of `stops`).
        Returns names that now hold an index-derived value (assignment targets), or a Blocker."""
        parents = self.binder.parents
        child: ast.AST = name
        shown = name.id

        def blocked(node: ast.AST, what: str, text: str | None = None) -> Blocker:
            snippet = " ".join((self.code(node) if text is None else text).split())
            if len(snippet) > 60:
                snippet = snippet[:57] + "..."
            return Blocker(node, f"uses `{shown}` as a Python int ({what}: `{snippet}`)")

        while True:
            if id(child) in stops:
                return set()
            parent = parents.get(child)
            if parent is None:
                return set()
            kind = type(parent)
            if kind in _UNPLACED:  # LibCST's Param, CompFor, WithItem: a node placed where that one is
                node, text = self._unplaced(parent, child)
                return blocked(node, "a use that may need a Python value", text)
            if kind is ast.BinOp:
                other = parent.right if parent.left is child else parent.left
                if type(other) is ast.JoinedStr or (type(other) is ast.Constant and isinstance(other.value, (str, bytes))):
                    return blocked(parent, "string formatting")
                if type(parent.op) is ast.Pow and parent.right is child:
                    left = parent.left
                    if not ((type(left) is ast.Constant and type(left.value) is float) or self.kind(left) is Kind.TRACED):
                        return blocked(parent, "an integer power overflows int32")
                if self.kind(other) is Kind.TRACED and not _mentions(other, tainted):
                    return set()  # combined with a traced array: the result is an array, not a Python int
                child = parent
                continue
            if kind is ast.UnaryOp:
                if type(parent.op) is ast.Not:
                    return blocked(parent, "a truth value")
                child = parent
                continue
            if kind is ast.Compare:
                operators = parent.ops
                if parent.left is not child:  # LibCST's ComparisonTarget: its own operator, then past the comparison
                    at = next(i for i, c in enumerate(parent.comparators) if c is child)
                    if type(operators[at]) in _MEMBERSHIP:
                        return blocked(parent, "a membership or identity test")
                    child = parent
                    continue
                if any(type(op) in _MEMBERSHIP for op in operators):
                    return blocked(parent, "a membership or identity test")
                operands = [parent.left, *parent.comparators]
                if any(self.kind(o) is Kind.TRACED and not _mentions(o, tainted) for o in operands):
                    return set()  # compared with a traced array: a traced boolean array either way
                child = parent
                continue
            if kind in (ast.Tuple, ast.List) and type(child) is not ast.Starred:
                child = parent
                continue
            if kind is ast.Subscript:
                if parent.value is child:
                    child = parent  # an element of an index-derived tuple
                    continue
                base = parent.value
                if type(base) is ast.Attribute and base.attr == "at":
                    base = base.value
                if is_array(base):
                    return set()
                return blocked(parent, "an index into something not known to be a JAX array")
            if kind is ast.Slice:
                subscript = parents.get(parent)
                if type(subscript) is ast.Tuple:
                    subscript = parents.get(subscript)
                return blocked(subscript or parent, "a slice bound; use lax.dynamic_slice")
            if kind is ast.Starred and type(parents.get(parent)) is not ast.Call:
                return blocked(parent, "a use that may need a Python value")
            if kind in (ast.Call, ast.keyword, ast.Starred):
                argument = child if kind is ast.Call else parent
                call = parent if kind is ast.Call else parents.get(parent)
                if kind is ast.Call and parent.func is child:
                    return blocked(parent, "a use that may need a Python value")
                if type(call) is not ast.Call:  # a class's base or keyword (LibCST's Arg of no call)
                    return blocked(call, "an argument of `a call`")
                if kind is not ast.Starred and self._accepts_traced(call, argument):
                    return set()
                return blocked(call, f"an argument of `{self.callee_code(call)}`")
            if kind is ast.Assign and parent.value is not child:  # LibCST's AssignTarget: the target and its `=`
                data, starts = self.positions._encoded()
                first = starts[child.lineno - 1] + child.col_offset
                equal = data.index(b"=", starts[child.end_lineno - 1] + child.end_col_offset) + 1
                return blocked(child, "a use that may need a Python value", data[first:equal].decode("utf-8", "surrogatepass"))
            if kind is ast.Assign and parent.value is child:
                found: set[str] = set()
                for target in parent.targets:
                    if type(target) not in (ast.Name, ast.Tuple, ast.List):
                        return blocked(parent, "stored in an attribute or item")
                    found.update(target_names(target))
                return found
            if kind in (ast.AugAssign, ast.AnnAssign) and parent.value is child:
                if type(parent.target) is not ast.Name:
                    return blocked(parent, "stored in an attribute or item")
                return {parent.target.id}
            if kind is ast.Expr:
                return set()
            if kind is ast.IfExp:
                if parent.test is child:
                    return blocked(parent, "a truth value")
                child = parent
                continue
            if kind is ast.Lambda and parent.body is child:
                return set()  # a lambda's result goes wherever the lambda is called: JAX functions, in practice
            if kind is ast.Dict and any(v is child for v in parent.values):
                child = parent
                continue
            if kind in (ast.If, ast.While) and parent.test is child:
                return blocked(child, "a truth value")
            if kind is ast.Assert:
                return blocked(parent, "a truth value")
            if kind is ast.BoolOp:  # LibCST nests `a and b and c` from the left: the operation up to `child`
                at = next(i for i, v in enumerate(parent.values) if v is child)
                if max(at, 1) == len(parent.values) - 1:
                    return blocked(parent, "a truth value")  # the whole operation, with its own parentheses
                last = parent.values[max(at, 1)]
                text = self.positions.source_bytes(
                    (parent.lineno, parent.col_offset), (last.end_lineno, last.end_col_offset)
                ).decode("utf-8", "surrogatepass")
                return blocked(parent, "a truth value", text)
            if kind is ast.FormattedValue:
                field = self._field(parent)
                return blocked(field, "string formatting", self.positions.segment(field))
            return blocked(parent, "a use that may need a Python value")

    def _unplaced(self, parent: ast.AST, child: ast.AST) -> tuple[ast.AST, str]:
        """For a node `ast` gives no place (a def's parameters, a comprehension's `for`, a `with` item), the node
        that stands where LibCST's is (its Param, CompFor, WithItem), and that one's code."""
        positions = self.positions
        data, starts = positions._encoded()

        def offset(line: int, column: int) -> int:
            return starts[line - 1] + column

        def text(first: int, last: int) -> str:
            return data[first:last].decode("utf-8", "surrogatepass")

        def comma_after(last: int) -> int:
            after = _SPACE.match(data, last).end()
            return after + 1 if data[after : after + 1] == b"," else last

        if type(parent) is ast.arguments:
            defaults = parent.defaults
            positional = [*parent.posonlyargs, *parent.args]
            if any(d is child for d in defaults):
                arg = positional[len(positional) - len(defaults) + next(i for i, d in enumerate(defaults) if d is child)]
            else:
                arg = parent.kwonlyargs[next(i for i, d in enumerate(parent.kw_defaults) if d is child)]
            last = comma_after(offset(child.end_lineno, child.end_col_offset))
            return arg, text(offset(arg.lineno, arg.col_offset), last)
        if type(parent) is ast.withitem:
            end = parent.optional_vars or parent.context_expr
            first = offset(parent.context_expr.lineno, parent.context_expr.col_offset)
            last = comma_after(offset(end.end_lineno, end.end_col_offset))
            node = ast.Constant(None, lineno=parent.context_expr.lineno, col_offset=parent.context_expr.col_offset,
                                end_lineno=end.end_lineno, end_col_offset=end.end_col_offset)  # fmt: skip
            return node, text(first, last)
        if any(condition is child for condition in parent.ifs):  # LibCST's CompIf: `if` and its test
            first = _space_before(data, data.rindex(b"if", 0, offset(child.lineno, child.col_offset)))
            line = bisect.bisect_right(starts, first)
            node = ast.Constant(None, lineno=line, col_offset=first - starts[line - 1], end_lineno=child.end_lineno,
                                end_col_offset=child.end_col_offset)  # fmt: skip
            return node, text(first, offset(child.end_lineno, child.end_col_offset))
        # a comprehension's `for`: from its `for` (or `async`) to the end of the last clause of the comprehension
        owner = self.binder.parents.get(parent)
        generators = owner.generators
        last_clause = generators[-1]
        ending = last_clause.ifs[-1] if last_clause.ifs else last_clause.iter
        target = parent.target
        first = data.rindex(b"for", 0, offset(target.lineno, target.col_offset))
        if parent.is_async:
            first = data.rindex(b"async", 0, first)
        first = _space_before(data, first)
        line = bisect.bisect_right(starts, first)
        node = ast.Constant(None, lineno=line, col_offset=first - starts[line - 1], end_lineno=ending.end_lineno,
                            end_col_offset=ending.end_col_offset)  # fmt: skip
        return node, text(first, offset(ending.end_lineno, ending.end_col_offset))

    def _field(self, value: ast.FormattedValue) -> ast.AST:
        """The `{...}` of an f-string field as a node of its own (LibCST's FormattedStringExpression): before Python
        3.12 `ast` places each field where the whole f-string is. A copy placed there, not a node of the tree,
        where the tree's is misplaced."""
        positions = self.positions
        data, starts = positions._encoded()
        if data[starts[value.lineno - 1] + value.col_offset : starts[value.lineno - 1] + value.col_offset + 1] == b"{":
            return value
        inner = value.value
        first = starts[inner.lineno - 1] + inner.col_offset
        while first > 0 and data[first - 1 : first] in (b" ", b"(", b"\t", b"\n", b"\r"):
            first -= 1
        first -= 1  # the `{`
        last, depth = starts[inner.end_lineno - 1] + inner.end_col_offset, 1
        while last < len(data) and depth:
            char = data[last : last + 1]
            depth += 1 if char == b"{" else -1 if char == b"}" else 0
            last += 1
        start, end = _line_column(starts, first), _line_column(starts, last)
        return ast.FormattedValue(
            value.value, value.conversion, value.format_spec,
            lineno=start[0], col_offset=start[1], end_lineno=end[0], end_col_offset=end[1],
        )  # fmt: skip

    def _accepts_traced(self, call: ast.Call, argument: ast.AST) -> bool:
        func = call.func
        if type(func) is ast.Name and self.binder.is_builtin(func, func.id):
            callee = func.id
        else:
            callee = self.binder.callee(call)
        if callee is None:
            return False
        positions, keywords = INDEX_ACCEPTING.get(callee, ((), ()))
        if type(argument) is ast.keyword:
            return argument.arg in keywords
        if type(argument) is ast.Starred:
            return False
        index = [a for a in _in_order(call) if type(a) is not ast.keyword].index(argument)
        return ALL in positions or index in positions

    # ---- arrays --------------------------------------------------------------------------------------------

    def is_array_like(self, expr: ast.AST) -> bool:
        """Whether `expr` surely holds a JAX array (not a list, tuple or dict), as far as cheap evidence goes: an
        index into one, a call that returns one, an array method of one, arithmetic on one, a name that
        `Predicates.name_is_array_like` proves. TODO(values): the one array lattice (facts/values.py) should
        answer this once it lands; this keeps `Dataflow.is_array_like`'s answers meanwhile."""
        kind = type(expr)
        if kind is ast.Subscript:
            return self.is_array_like(expr.value)
        if kind is ast.Call:
            callee = self.binder.callee(expr)
            if callee is not None:
                return returns_one_array(callee)
            func = expr.func
            if type(func) is ast.Attribute:
                receiver = func.value
                if is_at(receiver) and func.attr in AT_METHODS:
                    return True
                return func.attr in ARRAY_METHODS and self.is_array_like(receiver)
            return False
        if kind is ast.BinOp:
            return self.is_array_like(expr.left) or self.is_array_like(expr.right)
        if kind is ast.Attribute and expr.attr in ARRAY_VIEW_ATTRIBUTES:
            return self.is_array_like(expr.value)
        if kind is ast.Name:
            return self.predicates.name_is_array_like(expr)
        return False


_MEMBERSHIP = (ast.In, ast.NotIn, ast.Is, ast.IsNot)
_TRIPLE_QUOTES = (b"'" * 3, b'"' * 3)
_UNPLACED = (ast.arguments, ast.comprehension, ast.withitem)
_SPACE = re.compile(rb"(?:[ \t\f]|\\\r?\n|\r\n|\r|\n|#[^\r\n]*)*")


def _space_before(data: bytes, offset: int) -> int:
    """Where the whitespace before `offset` starts (LibCST's `whitespace_before`, which a clause's place holds)."""
    while offset > 0 and data[offset - 1 : offset] in (b" ", b"\t", b"\f", b"\n", b"\r", b"\\"):
        offset -= 1
    return offset


def _line_column(starts: list[int], offset: int) -> tuple[int, int]:
    """`ast`'s (line, byte column) of a byte offset into the module."""
    line = bisect.bisect_right(starts, offset)
    return line, offset - starts[line - 1]


def _preorder(node: ast.AST) -> Iterator[ast.AST]:
    """Every node under `node`, `node` first, each before its children, in source order (`analysis.dataflow`'s
    `_walk`: the order in which its searches meet the uses of a name)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(children(current)))


def _mentions(expr: ast.AST, names: set[str]) -> bool:
    return any(type(node) is ast.Name and node.id in names for node in walk(expr))


def _parameter_names(arguments: ast.arguments) -> list[str]:
    every = [*arguments.posonlyargs, *arguments.args, arguments.vararg, *arguments.kwonlyargs, arguments.kwarg]
    return [a.arg for a in every if a is not None]


def _in_order(call: ast.Call) -> list[ast.AST]:
    """A call's arguments as written (LibCST's `args`)."""
    if not call.keywords:
        return list(call.args)
    return sorted([*call.args, *call.keywords], key=lambda a: (a.lineno, a.col_offset))


class _PurityWalker:
    """Finds the first thing in a loop body (or a function body) that is not a pure computation, walking the code
    in LibCST's visiting order (each node, then its children in source order)."""

    def __init__(
        self,
        purity: Purity,
        *,
        fresh: frozenset[str],
        loop_body: bool,
        appendable: frozenset[str] = frozenset(),
        place: str | None = None,
        arrays: frozenset[str] = frozenset(),
        effects: frozenset[str] = frozenset(),
    ) -> None:
        self.purity = purity
        self.fresh = fresh
        self.effects = effects
        self.appendable = appendable
        self.arrays = arrays
        self.loop_body = loop_body
        self.place = place
        self.blocker: Blocker | None = None
        self.loop_depth = 0
        self.function_depth = 0

    def _fail(self, node: ast.AST, reason: str, collects: bool = False) -> bool:
        if self.blocker is None:
            self.blocker = Blocker(node, reason, collects)
        return False

    def visit(self, node: ast.AST) -> None:
        if self.blocker is not None:
            return
        kind = type(node)
        method = _VISITS.get(kind)
        if method is not None and not method(self, node):
            return
        for child in children(node):
            if self.blocker is not None:
                return
            self.visit(child)
        leave = _LEAVES.get(kind)
        if leave is not None:
            leave(self, node)

    # jumps and scope statements
    def _break(self, node) -> bool:
        if self.loop_body and self.loop_depth == 0:
            return self._fail(node, "has `break`")
        return True

    def _continue(self, node) -> bool:
        if self.loop_body and self.loop_depth == 0:
            return self._fail(node, "has `continue`")
        return True

    def _return(self, node) -> bool:
        if self.loop_body and self.function_depth == 0:
            return self._fail(node, "has `return`")
        return True

    def _yield(self, node) -> bool:
        return self._fail(node, "has `yield`")

    def _await(self, node) -> bool:
        return self._fail(node, "has `await`")

    def _global(self, node) -> bool:
        return self._fail(node, "has `global`")

    def _nonlocal(self, node) -> bool:
        return self._fail(node, "has `nonlocal`")

    def _delete(self, node: ast.Delete) -> bool:
        if self.loop_body:
            return self._fail(node, "has `del`")
        targets = node.targets
        if len(targets) == 1:
            return self._check_store(targets[0], node)
        for target in targets:  # LibCST's one Tuple target
            self._check_store(target, node)
        return True

    def _raise(self, node) -> bool:
        if self.loop_body:
            return self._fail(node, "has `raise`")
        return True

    def _import(self, node) -> bool:
        return self._fail(node, "imports inside the body")

    def _with(self, node) -> bool:
        return self._fail(node, "has a `with` block")

    def _try(self, node) -> bool:
        if self.loop_body:
            return self._fail(node, "has a `try` block")
        return True

    def _class(self, node) -> bool:
        return self._fail(node, "defines a class")

    def _function(self, node) -> bool:
        if self.loop_body:
            return self._fail(node, "defines a function")
        self.function_depth += 1
        return True

    def _leave_function(self, node) -> None:
        if not self.loop_body:
            self.function_depth -= 1

    def _lambda(self, node) -> bool:
        self.function_depth += 1
        return True

    def _leave_lambda(self, node) -> None:
        self.function_depth -= 1

    def _for(self, node) -> bool:
        if type(node) is ast.AsyncFor:
            return self._fail(node, "has `async for`")
        self.loop_depth += 1
        return True

    def _while(self, node) -> bool:
        self.loop_depth += 1
        return True

    def _leave_loop(self, node) -> None:
        self.loop_depth -= 1

    def _match(self, node) -> bool:
        return self._fail(node, "has a `match` statement")

    # stores
    def _assign(self, node: ast.Assign) -> bool:
        for target in node.targets:
            self._check_store(target, node)
        return True

    def _store(self, node) -> bool:  # AugAssign, AnnAssign
        self._check_store(node.target, node)
        return True

    def _check_store(self, target: ast.AST, statement: ast.AST) -> bool:
        if type(target) in (ast.Tuple, ast.List):
            for element in target.elts:
                self._check_store(element, statement)
            return True
        if type(target) is ast.Starred:
            return self._check_store(target.value, statement)
        if type(target) in (ast.Attribute, ast.Subscript):
            root = root_name(target)
            if root is None or root not in self.fresh:
                shown = self.purity.code(target)
                place = self.place or ("the loop" if self.loop_body else "the function")
                return self._fail(statement, f"assigns to `{shown}`, an object from outside {place}")
        return True

    # calls
    def _call(self, node: ast.Call) -> bool:
        func = node.func
        if type(func) is ast.Attribute and func.attr == "append" and type(func.value) is ast.Name and func.value.id in self.appendable:
            return True  # an output the caller collects; its argument is still walked
        if self.effects and self.purity.binder.qualified(func) in self.effects:
            return True  # an effect the construct keeps at run time; its arguments are still walked
        blocker = self.purity.call_blocker(node, self.fresh, self.arrays)
        if blocker is not None:
            return self._fail(blocker.node, blocker.reason, blocker.collects)
        return True


_W = _PurityWalker
_VISITS: dict[type, Callable] = {
    ast.Break: _W._break, ast.Continue: _W._continue, ast.Return: _W._return, ast.Yield: _W._yield,
    ast.YieldFrom: _W._yield, ast.Await: _W._await, ast.Global: _W._global, ast.Nonlocal: _W._nonlocal,
    ast.Delete: _W._delete, ast.Raise: _W._raise, ast.Import: _W._import, ast.ImportFrom: _W._import,
    ast.With: _W._with, ast.AsyncWith: _W._with, ast.Try: _W._try, ast.ClassDef: _W._class,
    ast.FunctionDef: _W._function, ast.AsyncFunctionDef: _W._function, ast.Lambda: _W._lambda, ast.For: _W._for,
    ast.AsyncFor: _W._for, ast.While: _W._while, ast.Assign: _W._assign, ast.AugAssign: _W._store,
    ast.AnnAssign: _W._store, ast.Call: _W._call,
    **({ast.Match: _W._match} if hasattr(ast, "Match") else {}),
}  # fmt: skip
_LEAVES: dict[type, Callable] = {
    ast.FunctionDef: _W._leave_function, ast.AsyncFunctionDef: _W._leave_function, ast.Lambda: _W._leave_lambda,
    ast.For: _W._leave_loop, ast.While: _W._leave_loop,
}  # fmt: skip
