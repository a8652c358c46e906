"""The `ast` screen of batches (JF301): whether a module may hold a stack of per-row results, an appending loop
or a row-writing loop as `jaxfix.analysis.batches` would find it (a superset of its answer)."""

from __future__ import annotations

import ast
from typing import Sequence


from jaxfix.analysis.dataflow import ARRAY_METHODS
from jaxfix.analysis.screen import Screen, array_bindings, dotted, surely_carries
from jaxfix.analysis.syntax import AT_METHODS
from jaxfix.analysis.batches import _SHORT
from jaxfix.facts.knowledge.jax import CORE_ARRAY_NAMESPACES, STACKING


def may_batch(screen: Screen) -> bool:
    """A finding needs one of the three forms, each with the conditions the matcher checks first:
    - `for i in range(n):` whose last statement is `out = out.at[i].set(v)`, after an `out = <call>` in the
      same block (`BatchLoopToVmap._row_loop`, `BatchAnalysis.buffer_creation`);
    - a `jnp.stack`/`jnp.array`/`jnp.asarray` call (through any import; no argument but `axis=k`) of a list
      comprehension with one `for` and no `if`, or of `list(map(f, xs, ...))` (`BatchAnalysis.batch`);
    - such a call of a list `ys` made empty by the statement just before a `for` loop that ends with
      `ys.append(e)` (`BatchAnalysis.creation`) and does not surely carry a value between steps (`screen.surely_carries`);
    where what the comprehension, map or loop walks may be an array (`BatchAnalysis.is_array`): see `_may_walk_arrays`."""
    imports = screen.imports
    stacks, rows, appends = [], False, False
    for node in screen.nodes_of(ast.Call):  # first the forms alone, cheaply
        func = node.func
        attribute = type(func) is ast.Attribute and func.attr in _STACKING_NAMES
        if node.args and (attribute or type(func) is ast.Name and func.id in imports):
            stacks.append(node)
    for node in screen.nodes_of(ast.For):
        if not node.orelse:
            rows = rows or _row_loop_form(node, node.body[-1])
            appends = appends or _appends_to(node.body[-1]) is not None
    stacks = [n for n in stacks if screen.may_resolve_to(n.func, STACKING) and _stack_axis_form(n)]
    if not stacks and not rows:
        return False
    walks = _Walks(screen)
    appended = set()
    if rows or appends and any(isinstance(n.args[0], ast.Name) for n in stacks):
        for block in _statement_blocks(screen):
            for before, statement in zip([None, *block], block):
                if type(statement) is not ast.For or statement.orelse:
                    continue
                last = statement.body[-1]
                if _row_loop_form(statement, last) and any(
                    _assigns_call(earlier, last.targets[0].id) for earlier in block[: block.index(statement)]
                ):
                    return True
                collector = _appends_to(last)
                if collector is not None and _empties(before, collector):
                    element = [*statement.body[:-1], last.value.args[0]]  # `BatchAnalysis.loop_batch`'s statements, element
                    if not surely_carries(screen, statement) and walks.batch(statement.target, statement.iter, element):
                        appended.add(collector)
    for node in stacks:
        first = node.args[0]
        if isinstance(first, ast.Name):
            if first.id in appended:
                return True
        elif isinstance(first, ast.ListComp):
            (generator, *more) = first.generators
            if not more and not generator.ifs and not generator.is_async:
                if walks.batch(generator.target, generator.iter, [first.elt]):
                    return True
        elif _is_list_of_map(first) and all(walks.array(array) for array in _mapped(first).args[1:]):
            return True
    return False


# ---- the forms ------------------------------------------------------------------------------------------------


class _Walks:
    """Over-approximates `BatchAnalysis.iteration` and `BatchAnalysis.is_array` (DataflowAnalysis.is_array_like) on `ast`."""

    def __init__(self, screen: Screen) -> None:
        self._screen = screen

    def batch(self, target: ast.expr, iterable: ast.expr, parts: Sequence[ast.AST]) -> bool:
        """Whether `for target in iterable` may walk arrays (or a count) as `BatchAnalysis.iteration` reads it, with `parts`
        the element and the statements before it."""
        if isinstance(target, ast.Name):
            if _is_call_of(iterable, "range") and len(iterable.args) == 1 and not iterable.keywords:
                bound = iterable.args[0]
                if _is_call_of(bound, "len") and len(bound.args) == 1 and isinstance(bound.args[0], ast.Name):
                    return self.array(bound.args[0])  # `BatchAnalysis.index_range`: `range(len(xs))` walks the rows of `xs`
                if _shape_zero(bound) is not None:
                    return self.array(_shape_zero(bound))
                if isinstance(bound, ast.Starred) or _short_count(bound):
                    return self.array(iterable)  # no count (`BatchAnalysis.range_count`): the range itself, no array
                if _may_index_range(bound) or self.array(iterable):
                    return True
                # `range(n)`: a count, no array to prove; unless the index picks items of a list (`BatchAnalysis.indexes_containers`)
                if self._indexes_containers(target.id, parts):
                    return False
                # or the element is the index itself, no array (`BatchAnalysis.element_is_array`): over an index alone, no report
                element = parts[-1]
                return not (type(element) is ast.Name and element.id == target.id and not self.array(element))
            return self.array(iterable)
        if not isinstance(target, (ast.Tuple, ast.List)) or not isinstance(iterable, ast.Call):
            return False
        if not all(isinstance(e, ast.Name) for e in target.elts) or iterable.keywords:
            return False
        if any(isinstance(a, ast.Starred) for a in iterable.args):
            return False
        if _is_call_of(iterable, "zip") and len(iterable.args) == len(target.elts):
            return all(self.array(a) for a in iterable.args)
        if _is_call_of(iterable, "enumerate") and len(iterable.args) == 1 and len(target.elts) == 2:
            return isinstance(iterable.args[0], ast.Name) and self.array(iterable.args[0])
        return False

    def _indexes_containers(self, index: str, parts: Sequence[ast.AST]) -> bool:
        """Surely `BatchAnalysis.indexes_containers`: `index` in the subscript of a name that no binding may make an array
        (LibCST's walk sees more names, `obj.i` among them, so it finds at least these)."""
        for part in parts:
            for node in ast.walk(part):
                if type(node) is ast.Subscript and type(node.value) is ast.Name:
                    if any(type(n) is ast.Name and n.id == index for n in ast.walk(node.slice)):
                        if not self.array(node.value):
                            return True
        return False

    def array(self, expr: ast.expr) -> bool:
        """A superset of `is_array_like`: indexing, a call into jax.numpy/nn/random/lax, an array method of
        one, `.at[...]` updates, arithmetic, `.T`, or a name with a binding that may make an array, as either
        of `_name_is_array`'s paths reads it (`array_bindings`)."""
        screen = self._screen
        if isinstance(expr, ast.Subscript):
            return self.array(expr.value)
        if isinstance(expr, ast.Call):
            func = expr.func
            parts = dotted(func)
            if parts is not None and any(q.startswith(CORE_ARRAY_NAMESPACES) for q in screen.qualified_names(parts)):
                return True
            if isinstance(func, ast.Attribute):
                if func.attr in AT_METHODS and isinstance(func.value, ast.Subscript):
                    at = func.value.value
                    if isinstance(at, ast.Attribute) and at.attr == "at":
                        return True
                return func.attr in ARRAY_METHODS and self.array(func.value)
            return False
        if isinstance(expr, ast.BinOp):
            return self.array(expr.left) or self.array(expr.right)
        if isinstance(expr, ast.Attribute):
            return expr.attr in ("T", "mT", "real", "imag") and self.array(expr.value)
        if isinstance(expr, ast.Name):
            # any binding but loops, imports, unpacking, containers; and not bound to a container where it is read
            return expr.id in array_bindings(screen) and not screen.binds_container(expr)
        return False


_BLOCKS = {
    ast.Module: ("body",), ast.FunctionDef: ("body",), ast.AsyncFunctionDef: ("body",), ast.ClassDef: ("body",),
    ast.For: ("body", "orelse"), ast.AsyncFor: ("body", "orelse"), ast.While: ("body", "orelse"),
    ast.If: ("body", "orelse"), ast.With: ("body",), ast.AsyncWith: ("body",), ast.ExceptHandler: ("body",),
    ast.Try: ("body", "orelse", "finalbody"), ast.match_case: ("body",),
    **({ast.TryStar: ("body", "orelse", "finalbody")} if hasattr(ast, "TryStar") else {}),
}  # fmt: skip


_STACKING_NAMES = frozenset(name.rsplit(".", 1)[-1] for name in STACKING)


def _stack_axis_form(call: ast.Call) -> bool:
    """`stack_axis` is not None: no argument but the list, and `axis=`."""
    return len(call.args) == 1 and all(k.arg == "axis" for k in call.keywords)


def _statement_blocks(screen: Screen):
    """Every list of statements: the module's, each body, `else`, `finally`, handler and case."""
    for node in screen.nodes_of(*_BLOCKS):
        for field_name in _BLOCKS[type(node)]:
            block = getattr(node, field_name)
            if block:
                yield block


def _row_loop_form(loop: ast.For, last: ast.stmt) -> bool:
    """`for i in range(n): ...; out = out.at[i].set(v)` (`BatchLoopToVmap._row_loop`, `row_write`)."""
    iterable = loop.iter
    if not (isinstance(loop.target, ast.Name) and _is_call_of(iterable, "range") and len(iterable.args) == 1):
        return False
    if iterable.keywords or isinstance(iterable.args[0], ast.Starred):
        return False
    if not (type(last) is ast.Assign and len(last.targets) == 1 and type(last.targets[0]) is ast.Name):
        return False
    call = last.value
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "set"):
        return False
    if len(call.args) != 1 or call.keywords or isinstance(call.args[0], ast.Starred):
        return False
    at = call.func.value
    if not (isinstance(at, ast.Subscript) and isinstance(at.value, ast.Attribute) and at.value.attr == "at"):
        return False
    base = at.value.value
    first = at.slice.elts[0] if isinstance(at.slice, ast.Tuple) and at.slice.elts else at.slice
    return (
        isinstance(base, ast.Name) and base.id == last.targets[0].id
        and isinstance(first, ast.Name) and first.id == loop.target.id
    )


def _assigns_call(statement: ast.stmt, name: str) -> bool:
    return (
        type(statement) is ast.Assign and len(statement.targets) == 1 and type(statement.targets[0]) is ast.Name
        and statement.targets[0].id == name and isinstance(statement.value, ast.Call)
    )


def _appends_to(statement: ast.stmt) -> str | None:
    """`ys` of a statement `ys.append(e)` (`append_of`)."""
    call = statement.value if type(statement) is ast.Expr else None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "append"):
        return None
    if not isinstance(call.func.value, ast.Name) or len(call.args) != 1 or call.keywords:
        return None
    return None if isinstance(call.args[0], ast.Starred) else call.func.value.id


def _empties(statement: ast.stmt | None, name: str) -> bool:
    """`name = []` (`BatchAnalysis.creation`)."""
    return (
        type(statement) is ast.Assign and len(statement.targets) == 1 and type(statement.targets[0]) is ast.Name
        and statement.targets[0].id == name and type(statement.value) is ast.List and not statement.value.elts
    )


def _is_list_of_map(expr: ast.expr) -> bool:
    """`list(map(f, xs, ...))`, map with no keyword or starred argument (`BatchAnalysis.batch`)."""
    if not (_is_call_of(expr, "list") and len(expr.args) + len(expr.keywords) == 1):
        return False
    inner = _mapped(expr)
    return (
        _is_call_of(inner, "map") and len(inner.args) >= 2 and not inner.keywords
        and not any(isinstance(a, ast.Starred) for a in inner.args)
    )


def _mapped(expr: ast.Call) -> ast.Call:
    return expr.args[0] if expr.args else expr.keywords[0].value


def _is_call_of(expr: ast.expr, name: str) -> bool:
    """A call of the builtin `name` as `BatchAnalysis.builtin` sees it: a bare name (a local of that name aside)."""
    return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == name


def _short_count(bound: ast.expr) -> bool:
    """A literal count under `_SHORT`, which `BatchAnalysis.range_count` leaves a Python loop."""
    return type(bound) is ast.Constant and type(bound.value) is int and bound.value < _SHORT


def _may_index_range(bound: ast.expr) -> bool:
    """A bound `BatchAnalysis.index_range` may read as the rows of an array: a `len` call, a `.shape[...]`."""
    if _is_call_of(bound, "len"):
        return True
    return type(bound) is ast.Subscript and type(bound.value) is ast.Attribute and bound.value.attr == "shape"


def _shape_zero(expr: ast.expr) -> ast.Name | None:
    """`xs` of `xs.shape[0]` (`BatchAnalysis.index_range`)."""
    if (
        isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Attribute) and expr.value.attr == "shape"
        and isinstance(expr.value.value, ast.Name) and isinstance(expr.slice, ast.Constant) and expr.slice.value == 0
        and not isinstance(expr.slice.value, bool)
    ):
        return expr.value.value
    return None
