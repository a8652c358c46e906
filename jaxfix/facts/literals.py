"""Python values that are surely numbers, or lists of them, on `ast` over the binder: what jit would take as a
pytree of scalars (JF704); the value of an integer expression and the steps of a `range(...)` of known bounds
(JF703); values that may be NumPy arrays or Python sequences rather than JAX arrays (JF901)."""

from __future__ import annotations

import ast

from jaxfix.facts.binder import Binder
from jaxfix.facts.traced import Kind, Traced

_NOT_ARITHMETIC = (ast.Call, ast.Attribute, ast.Subscript, ast.Lambda, ast.JoinedStr)


def is_number(expr: ast.AST) -> bool:
    """A Python number literal (`3`, `-0.5`, `True`); not a complex one, nor a sign on a bool."""
    if type(expr) is ast.UnaryOp and isinstance(expr.op, (ast.USub, ast.UAdd)):
        inner = expr.operand
        return type(inner) is ast.Constant and type(inner.value) in (int, float)
    return type(expr) is ast.Constant and type(expr.value) in (int, float, bool)


def number_list(binder: Binder, expr: ast.AST, *, follow: bool = True) -> int | bool | None:
    """When `expr` is surely a Python list of numbers: its length where it is written out, True otherwise; else
    None. A list literal of numbers, `list(range(...))`, a one-`for` comprehension of arithmetic on the items of
    a `range`, or (`follow`) a name every binding of which is a single-target `=` of one of those."""
    kind = type(expr)
    if kind is ast.List:
        elements = expr.elts
        if elements and all(type(e) is not ast.Starred and is_number(e) for e in elements):
            return len(elements)
        return None
    if kind is ast.Call and binder.is_builtin(expr.func, "list"):
        values = [a.value if type(a) is ast.Starred else a for a in expr.args] + [k.value for k in expr.keywords]
        return True if len(values) == 1 and _is_range(binder, values[0]) else None
    if kind is ast.ListComp:
        if len(expr.generators) == 1 and _is_range(binder, expr.generators[0].iter):
            bound = {n.id for n in ast.walk(expr.generators[0].target) if type(n) is ast.Name}
            return True if _arithmetic_of(expr.elt, bound) else None
        return None
    if follow and kind is ast.Name:
        scope = binder.scope_of.get(expr)
        if scope is None:
            return None
        sizes = []
        for binding in scope.resolve(expr.id):
            node = binding.node
            statement = binder.parent(node) if type(node) is ast.Name else None
            if not (type(statement) is ast.Assign and len(statement.targets) == 1 and statement.targets[0] is node):
                return None
            size = number_list(binder, statement.value, follow=False)
            if size is None:
                return None
            sizes.append(size)
        if not sizes:
            return None
        return sizes[0] if len(set(sizes)) == 1 else True
    return None


def _is_range(binder: Binder, expr: ast.AST) -> bool:
    return type(expr) is ast.Call and binder.is_builtin(expr.func, "range")


def _arithmetic_of(expr: ast.AST, names: set[str]) -> bool:
    """Arithmetic of number literals and `names` (the integers of a range) only: a Python number. Strings make
    `["a" * i for i in range(3)]` a list of strings (jit rejects them, it does not retrace); `True` and `None`
    count as names, as LibCST spells them."""
    for node in ast.walk(expr):
        kind = type(node)
        if kind is ast.Name and node.id not in names:
            return False
        if kind is ast.Constant and (node.value is None or type(node.value) in (bool, str, bytes)):
            return False
        if isinstance(node, _NOT_ARITHMETIC):
            return False
        if kind is ast.BinOp and type(node.op) is ast.MatMult:
            return False
    return True


def int_constant(binder: Binder | None, expr: ast.AST, seen: frozenset[str] = frozenset()) -> int | None:
    """The value of an integer expression made of int literals, `+ - * // **` and module constants (a name whose one
    binding is a plain `name = value` at module level), or None: `analysis.shapes.Shapes.constant`, on `ast`
    (benchmarks/agreement.py, `int-constant-exact`). With no binder, of literals alone (no name is followed)."""
    kind = type(expr)
    if kind is ast.Constant:
        return expr.value if type(expr.value) is int else None  # not a bool: LibCST's `Integer` only
    if kind is ast.UnaryOp and type(expr.op) in (ast.USub, ast.UAdd):
        inner = int_constant(binder, expr.operand, seen)
        return None if inner is None else (-inner if type(expr.op) is ast.USub else inner)
    if kind is ast.BinOp:
        left, right = int_constant(binder, expr.left, seen), int_constant(binder, expr.right, seen)
        if left is None or right is None:
            return None
        op = type(expr.op)
        if op is ast.Add:
            return left + right
        if op is ast.Sub:
            return left - right
        if op is ast.Mult:
            return left * right
        if op is ast.FloorDiv and right:
            return left // right
        if op is ast.Pow and 0 <= right < 64:
            return left**right
        return None
    if kind is ast.Name and binder is not None and expr.id not in seen:
        scope = binder.scope_of.get(expr)
        bindings = scope.resolve(expr.id) if scope is not None else []
        if len(bindings) != 1 or bindings[0].scope.kind != "module":
            return None
        target = bindings[0].node
        assign = binder.parent(target) if type(target) is ast.Name else None
        if type(assign) is ast.Assign and len(assign.targets) == 1 and assign.targets[0] is target:
            return int_constant(binder, assign.value, seen | {expr.id})
    return None


def range_steps(binder: Binder, traced: Traced, call: ast.Call) -> int | None:
    """How many steps `range(...)` takes where its bounds are static (`traced`: the module's kinds) and known
    numbers (`int_constant`), or None: `analysis.loops.range_trip`'s "literal" trip, on `ast` (benchmarks/
    agreement.py, `range-steps-exact`). `call` is taken to call the builtin `range`."""
    args = call.args
    if call.keywords or any(type(a) is ast.Starred for a in args) or not 1 <= len(args) <= 3:
        return None
    step = int_constant(binder, args[2]) if len(args) == 3 else 1
    bounds = args[:2]
    if any(traced.kind(bound) is not Kind.STATIC for bound in bounds):
        return None
    start = 0 if len(bounds) == 1 else int_constant(binder, bounds[0])
    stop = int_constant(binder, bounds[-1])
    if start is None or stop is None or not step:
        return None
    return len(range(start, stop, step))


def concatenated(text: str) -> bool:
    """Whether the source of a string expression is several literals side by side (`"a" f"{x}"`, which `ast` folds
    into one JoinedStr and LibCST keeps as a ConcatenatedString)."""
    import io
    import tokenize

    pieces, depth = 0, 0
    start, end = getattr(tokenize, "FSTRING_START", None), getattr(tokenize, "FSTRING_END", None)
    try:
        for token in tokenize.generate_tokens(io.StringIO(f"({text})").readline):
            if token.type == tokenize.STRING and depth == 0:
                pieces += 1
            elif start is not None and token.type == start:
                pieces += depth == 0
                depth += 1
            elif end is not None and token.type == end:
                depth -= 1
    except (tokenize.TokenError, SyntaxError):
        return False
    return pieces > 1


def maybe_numpy(binder: Binder, expr: ast.AST) -> bool:
    """Whether `expr` may be a NumPy array or a Python sequence rather than a JAX array: a literal, a `numpy`
    call, or a name that some plain assignment in the scope answering it binds to one."""
    if _numpy_value(binder, expr):
        return True
    scope = binder.scope_of.get(expr) if type(expr) is ast.Name else None
    if scope is None:
        return False
    for binding in scope.resolve(expr.id):
        statement = binder.parent(binding.node) if type(binding.node) is ast.Name else None
        if type(statement) is ast.Assign and _numpy_value(binder, statement.value):
            return True
    return False


def _numpy_value(binder: Binder, expr: ast.AST) -> bool:
    kind = type(expr)
    if kind in (ast.List, ast.Tuple, ast.ListComp):
        return True
    if kind is ast.Constant:
        return type(expr.value) in (int, float)
    if kind is ast.Call:
        base = expr.func
        while type(base) is ast.Attribute:
            base = base.value
        callee = binder.qualified(expr.func) if type(base) is ast.Name else None
        return callee is not None and callee.split(".")[0] == "numpy"
    return False
