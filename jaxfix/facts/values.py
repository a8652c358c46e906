"""What a value is, on `ast`: one lattice and one evaluator (DESIGN.md, `facts/values.py`).

The lattice (`Value`): what an expression holds where it stands, as the rules may rely on it:
- STATIC: a Python number known at trace time (an int literal, `len(...)`, `x.shape[0]`, a `range` index);
- ARRAY: one JAX array, with its dtype class where known (INEXACT: floating-point or complex);
- PYTREE: a tuple, list or dict of arrays (no query gives it yet: the rules moved so far need none);
- CONTAINER: a list, tuple, dict or set display or comprehension;
- UNKNOWN: anything else ("do not rewrite").
Rank is None everywhere today (shapes.py still holds the ranks, for the rules that have not moved).

The evaluator proves ARRAY only where EVERY binding of a name in its scope makes one: a call from the allowlists
of `jax.numpy`/`jax.random` functions that always return a single array (knowledge/jax.py), `x.at[i].set(v)`,
arithmetic of known arrays and numbers, indexing, `.T`/`.reshape(...)`/`.astype(...)` of a known array, or a
parameter annotated as an array (`jax.Array`, `jnp.ndarray`, jaxtyping's `Float[Array, "n"]`; in traced code
`np.ndarray` too: knowledge/tables.py's ARRAY_ANNOTATIONS). NumPy arrays, lists, dicts, unannotated parameters,
`for`/`with` targets, `global`/`nonlocal` rebinding leave a name unproven. It is flow-insensitive: each property
is the greatest set of a scope's names closed under their bindings. Two refinements use the same machinery:
"at run time" (`is_runtime_array`) trusts an annotation only where JAX traces every call (elsewhere a caller may
pass a NumPy array), and "inexact" (`is_inexact`) proves float/complex dtypes, so that `x[i] /= 2` cannot meet an
integer array.

Names resolve through the binder (`Scope.resolve`: LibCST's `scope[name]`); traced functions and parameter kinds
come from `facts/traced.py`. It answers as the LibCST ArrayAnalysis (analysis/arrays.py) it replaces for JF705
does: `benchmarks/agreement.py`'s `array-exact` and `integer-exact` families ask both on every name and every
integer-looking expression of a module."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from jaxfix.facts.binder import Binder, Binding, Scope
from jaxfix.facts.knowledge import jaxtyping
from jaxfix.facts.knowledge.jax import (
    ALWAYS_INEXACT_SHORT, ALWAYS_TRACING, ARRAY_FRESH_METHODS, ARRAY_VIEW_ATTRIBUTES, ARRAY_VIEW_METHODS,
    AT_METHODS, DTYPE_KEEPING_METHODS, DTYPE_KEEPING_SHORT, DTYPE_POSITION, FLOAT_BY_DEFAULT_SHORT,
    FRESH_ARRAY_FUNCTIONS, INEXACT_DTYPE_NAMES, RANDOM_FLOAT_DTYPE_POSITION, RANDOM_SAMPLERS, VIEW_ARRAY_FUNCTIONS,
)
from jaxfix.facts.knowledge.tables import ARRAY_ANNOTATIONS, LAX_BODIES, TRACED_ARRAY_ANNOTATIONS
from jaxfix.facts.traced import Kind, Traced

STATIC, ARRAY, PYTREE, CONTAINER, UNKNOWN = "static", "array", "pytree", "container", "unknown"
INEXACT, INTEGER = "inexact", "integer"  # dtype classes


@dataclass(frozen=True)
class Value:
    """One point of the lattice: `kind` (STATIC, ARRAY, PYTREE, CONTAINER or UNKNOWN), its dtype class where known
    (INEXACT, INTEGER) and its rank where known."""

    kind: str
    dtype: str | None = None
    rank: int | None = None


UNKNOWN_VALUE = Value(UNKNOWN)

_JNP = "jax.numpy."
_ARRAY, _RUNTIME, _INEXACT = "array", "runtime", "inexact"  # the properties of names solved per scope
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_INT_BUILTINS = frozenset({"len", "int"})
_INT_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)
_INEXACT_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.MatMult)
_ARRAY_UNARY = (ast.USub, ast.UAdd, ast.Invert)
_CONTAINERS = (ast.List, ast.Tuple, ast.Dict, ast.Set, ast.ListComp, ast.SetComp, ast.DictComp)
_RANDOM_INEXACT = frozenset(RANDOM_FLOAT_DTYPE_POSITION)
_STACKS = frozenset("concatenate stack hstack vstack dstack column_stack".split())


class Values:
    """The value facts of one module, each solved on first question and memoized."""

    def __init__(self, binder: Binder, traced: Traced) -> None:
        self.binder = binder
        self.traced = traced
        self._solved: dict[tuple[int, str], set[str]] = {}
        self._deciding_integer: set[tuple[int, str]] = set()

    # ---- the lattice ----------------------------------------------------------------------------------------

    def value(self, expr: ast.expr) -> Value:
        """What `expr` holds where it stands (see the module's docstring)."""
        if self.is_array_expression(expr):
            return Value(ARRAY, INEXACT if self._is_inexact(expr, None, None) else None)
        if self.is_integer(expr):
            return Value(STATIC, INTEGER)
        if isinstance(expr, _CONTAINERS):
            return Value(CONTAINER)
        return UNKNOWN_VALUE

    # ---- queries --------------------------------------------------------------------------------------------

    def owner(self, name: ast.Name) -> Scope | None:
        """The scope whose bindings `name` refers to (following `global`/`nonlocal`), or None if unbound."""
        scope = self.binder.scope_of.get(name)
        if scope is None:
            return None
        bindings = scope.resolve(name.id)
        return bindings[0].scope if bindings else None

    def is_array(self, name: ast.Name) -> bool:
        """Whether `name`, where it stands, is known to hold a JAX array: every binding of it makes one."""
        owner = self.owner(name)
        return owner is not None and name.id in self._solve(owner, _ARRAY)

    def is_runtime_array(self, name: ast.Name) -> bool:
        """`is_array`, trusting an array annotation only where JAX traces every call of the function."""
        owner = self.owner(name)
        return owner is not None and name.id in self._solve(owner, _RUNTIME)

    def is_inexact(self, name: ast.Name) -> bool:
        """Whether `name` is known to hold a floating-point or complex JAX array."""
        owner = self.owner(name)
        return owner is not None and name.id in self._solve(owner, _INEXACT)

    def is_array_expression(self, expr: ast.expr) -> bool:
        return self._is_array(expr, None, None)

    def is_integer(self, expr: ast.expr) -> bool:
        """Whether `expr` is a Python int (so, as an index, it names one position and never repeats one)."""
        kind = type(expr)
        if kind is ast.Constant:
            return type(expr.value) is int
        if kind is ast.UnaryOp and isinstance(expr.op, (ast.USub, ast.UAdd)):
            return self.is_integer(expr.operand)
        if kind is ast.BinOp and isinstance(expr.op, _INT_ARITHMETIC):
            return self.is_integer(expr.left) and self.is_integer(expr.right)
        if kind is ast.Call:
            return self._builtin(expr.func) in _INT_BUILTINS
        if kind is ast.Attribute:
            return expr.attr in ("ndim", "size") and self.is_array_expression(expr.value)
        if kind is ast.Subscript:  # x.shape[0]
            index = expr.slice
            return (
                type(expr.value) is ast.Attribute
                and expr.value.attr == "shape"
                and self.is_array_expression(expr.value.value)
                and not isinstance(index, (ast.Slice, ast.Tuple))
                and ((type(index) is ast.Constant and type(index.value) is int) or type(index) is ast.UnaryOp)
            )
        if kind is ast.Name:
            owner = self.owner(expr)
            key = (id(owner), expr.id)
            if owner is None or owner.kind in ("class", "builtins") or key in self._deciding_integer:
                return False  # unbound, a class attribute, a builtin, or defined only in terms of itself
            self._deciding_integer.add(key)
            try:
                bindings = owner.bindings.get(expr.id, [])
                return bool(bindings) and all(self._binds_integer(b) for b in bindings)
            finally:
                self._deciding_integer.discard(key)
        return False

    def array_parameter(self, arg: ast.arg) -> bool:
        """A parameter of a def annotated as an array (`jax.Array`, jaxtyping's `Float[Array, "n"]`; in traced
        code NumPy's array types too), without a default (which could be anything), not `*args`/`**kwargs`."""
        function = self.binder.parents.get(self.binder.parents.get(arg))
        if arg.annotation is None or not isinstance(function, _DEFS) or _has_default(function.args, arg):
            return False
        if arg is function.args.vararg or arg is function.args.kwarg:
            return False
        annotation = arg.annotation
        traced = self.traced
        in_traced_code = traced.is_traced(function) and traced.param_kind(function, arg.arg) is Kind.TRACED
        accepted = ARRAY_ANNOTATIONS | TRACED_ARRAY_ANNOTATIONS if in_traced_code else ARRAY_ANNOTATIONS
        qualified = self.binder.qualified
        if qualified(annotation) in accepted:
            return True
        if type(annotation) is ast.Subscript:
            head = qualified(annotation.value) or ""
            if head in accepted and head in TRACED_ARRAY_ANNOTATIONS:  # `npt.NDArray[np.float32]` in traced code
                return True
            index = annotation.slice  # jaxtyping's `Float[Array, "n d"]`: an array of the first element's type
            if head.startswith(jaxtyping.MODULE) and type(index) is ast.Tuple and len(index.elts) == 2:
                return not isinstance(index.elts[0], ast.Slice) and qualified(index.elts[0]) in accepted
        return False

    # ---- which names hold arrays ----------------------------------------------------------------------------

    def _solve(self, owner: Scope, prop: str) -> set[str]:
        """The names of `owner` proven to have `prop`: the greatest set of names all of whose bindings give the
        property, given that the names in the set have it."""
        key = (id(owner), prop)
        found = self._solved.get(key)
        if found is not None:
            return found
        self._solved[key] = set()  # while solving, reads of this scope's names from elsewhere are unproven
        if owner.kind in ("class", "comprehension", "builtins"):
            return self._solved[key]
        candidates = owner.bindings
        env = set(candidates) if prop == _ARRAY else set(self._solve(owner, _ARRAY))  # both refine the arrays
        env = {name for name in env if "." not in name}  # `import a.b` binds `a.b`: no name of a value
        changed = True
        while changed:
            changed = False
            for name in list(env):
                if not all(self._binds(b, owner, env, prop) for b in candidates[name]):
                    env.discard(name)
                    changed = True
        self._solved[key] = env
        return env

    def _binds(self, binding: Binding, owner: Scope, env: set[str], prop: str) -> bool:
        """Whether one binding gives its name `prop`, assuming the names in `env` have it."""
        node = binding.node
        if node is None or self.binder.scope_of.get(node) is not owner:
            return False  # builtins, and `global`/`nonlocal` rebinding (or `:=` in a comprehension) from elsewhere
        if type(node) is ast.arg:
            if prop == _INEXACT or not self.array_parameter(node):
                return False  # an annotation says nothing of the dtype
            # At run time a parameter is sure to be a JAX array only where JAX traces every call.
            return prop == _ARRAY or self._always_traced(self.binder.parents[self.binder.parents[node]], node.arg)
        if type(node) is not ast.Name:
            return False  # defs, classes, imports, handlers, captures
        parent = self.binder.parents.get(node)
        kind = type(parent)
        if kind is ast.Assign and any(t is node for t in parent.targets):
            value = parent.value
        elif kind in (ast.AnnAssign, ast.NamedExpr) and parent.target is node:
            if parent.value is None:
                return True  # a bare annotation binds nothing
            value = parent.value
        elif kind is ast.AugAssign and parent.target is node:
            if prop == _INEXACT:  # the name is an inexact array already; arithmetic keeps it inexact
                return isinstance(parent.op, _INEXACT_ARITHMETIC)
            return self._array_or_number(parent.value, owner, env, prop)
        else:
            return False  # for/with targets, unpacking
        if prop == _INEXACT:
            return self._is_array(value, None, None) and self._is_inexact(value, owner, env)
        return self._is_array(value, owner, env, prop)

    def _name_has(self, name: ast.Name, owner: Scope | None, env: set[str] | None, prop: str) -> bool:
        """Whether `name` has `prop`: by the assumption `env` for names of `owner` (while solving it), else by
        the solution for the scope the name belongs to."""
        scope = self.owner(name)
        if scope is None:
            return False
        if scope is owner and env is not None:
            return name.id in env
        return name.id in self._solve(scope, prop)

    def _is_array(self, expr: ast.expr, owner: Scope | None, env: set[str] | None, prop: str = _ARRAY) -> bool:
        """Whether `expr` makes a JAX array (prop _ARRAY), or makes one even when callers break annotations
        (prop _RUNTIME), given that the names of `owner` in `env` hold one."""
        kind = type(expr)
        if kind is ast.Name:
            return self._name_has(expr, owner, env, prop)
        if kind is ast.Call:
            callee = self.binder.callee(expr)
            if callee is not None:
                return self._array_call(callee, expr)
            func = expr.func
            if type(func) is not ast.Attribute:
                return False
            base, method = func.value, func.attr
            at = _at_base(base)
            if method in AT_METHODS and at is not None:
                return self._is_array(at, owner, env, prop)
            return (
                (method in ARRAY_FRESH_METHODS or method in ARRAY_VIEW_METHODS)
                and not _has_keyword(expr, "out")
                and self._is_array(base, owner, env, prop)
            )
        if kind is ast.Attribute:
            return expr.attr in ARRAY_VIEW_ATTRIBUTES and self._is_array(expr.value, owner, env, prop)
        if kind is ast.Subscript:
            return self._is_array(expr.value, owner, env, prop)
        if kind is ast.BinOp:
            sides = (expr.left, expr.right)
            return any(self._is_array(s, owner, env, prop) for s in sides) and all(
                self._array_or_number(s, owner, env, prop) for s in sides
            )
        if kind is ast.UnaryOp:
            return isinstance(expr.op, _ARRAY_UNARY) and self._is_array(expr.operand, owner, env, prop)
        if kind is ast.IfExp:
            return self._is_array(expr.body, owner, env, prop) and self._is_array(expr.orelse, owner, env, prop)
        if kind is ast.NamedExpr:
            return self._is_array(expr.value, owner, env, prop)
        return False

    def _array_or_number(self, expr: ast.expr, owner, env, prop) -> bool:
        return _is_number(expr) or self._is_array(expr, owner, env, prop)

    def _array_call(self, callee: str, call: ast.Call) -> bool:
        if callee not in FRESH_ARRAY_FUNCTIONS and callee not in VIEW_ARRAY_FUNCTIONS and callee not in RANDOM_SAMPLERS:
            return False
        if _has_keyword(call, "out") or _has_keyword(call, "retstep"):
            return False  # `out=` returns the buffer given; `linspace(retstep=True)` returns a tuple
        if callee == _JNP + "where":
            return len(call.args) == 3 and not call.keywords and not any(type(a) is ast.Starred for a in call.args)
        return True

    # ---- dtypes ---------------------------------------------------------------------------------------------

    def _is_inexact(self, expr: ast.expr, owner: Scope | None, env: set[str] | None) -> bool:
        """Whether an expression (an array, or a number operand) is known to be floating-point or complex."""
        inexact = lambda e: self._is_inexact(e, owner, env)  # noqa: E731
        kind = type(expr)
        if kind is ast.Constant:
            return type(expr.value) in (float, complex)
        if kind is ast.Name:
            return self._name_has(expr, owner, env, _INEXACT)
        if kind is ast.Call:
            callee = self.binder.callee(expr)
            if callee is not None:
                return self._array_call(callee, expr) and self._inexact_call(callee, expr, inexact)
            func = expr.func
            if type(func) is not ast.Attribute:
                return False
            base, method = func.value, func.attr
            at = _at_base(base)
            if method in AT_METHODS and at is not None:
                return method == "divide" or inexact(at)  # `.at[i].divide` makes an integer array float
            if method == "astype":
                first = _first_argument(expr)
                return first is not None and self._inexact_dtype(first)
            if method in ("mean", "std", "var"):
                return True
            return (method in ARRAY_VIEW_METHODS or method in DTYPE_KEEPING_METHODS) and inexact(base)
        if kind is ast.Attribute:
            return expr.attr in ARRAY_VIEW_ATTRIBUTES and inexact(expr.value)
        if kind is ast.Subscript:
            return inexact(expr.value)
        if kind is ast.BinOp:
            if not isinstance(expr.op, _INEXACT_ARITHMETIC):
                return False
            return isinstance(expr.op, ast.Div) or inexact(expr.left) or inexact(expr.right)
        if kind is ast.UnaryOp:
            return isinstance(expr.op, (ast.USub, ast.UAdd)) and inexact(expr.operand)
        if kind is ast.IfExp:
            return inexact(expr.body) and inexact(expr.orelse)
        if kind is ast.NamedExpr:
            return inexact(expr.value)
        return False

    def _inexact_call(self, callee: str, call: ast.Call, inexact) -> bool:
        if any(type(a) is ast.Starred for a in call.args) or any(k.arg is None for k in call.keywords):
            return False
        positional = list(call.args)
        keywords = {k.arg: k.value for k in call.keywords}
        position = DTYPE_POSITION.get(callee)
        dtype = keywords.get("dtype")
        if dtype is None and position is not None and len(positional) > position:
            dtype = positional[position]
        if dtype is not None:
            return self._inexact_dtype(dtype)
        short = callee[len(_JNP):] if callee.startswith(_JNP) else None
        if callee in RANDOM_SAMPLERS:
            return callee in _RANDOM_INEXACT
        if short in FLOAT_BY_DEFAULT_SHORT or short in ALWAYS_INEXACT_SHORT:
            return True
        if short == "full":
            fill = keywords.get("fill_value", positional[1] if len(positional) > 1 else None)
            return fill is not None and inexact(fill)
        if short == "where":
            return inexact(positional[1]) or inexact(positional[2])
        if short in ("arange", "array", "asarray"):
            if any(_has_float_literal(p) for p in positional):
                return True
            return short != "arange" and bool(positional) and inexact(positional[0])
        if short in _STACKS:
            first = positional[0] if positional else None
            return type(first) in (ast.List, ast.Tuple) and any(inexact(_unstarred(e)) for e in first.elts)
        if short in DTYPE_KEEPING_SHORT:
            return bool(positional) and inexact(positional[0])
        return False

    def _inexact_dtype(self, expr: ast.expr) -> bool:
        if type(expr) is ast.Constant:
            return isinstance(expr.value, str) and expr.value in INEXACT_DTYPE_NAMES
        if type(expr) is ast.Name and expr.id in ("float", "complex"):
            return self._builtin(expr) is not None
        name = self.binder.qualified(expr)
        if name is None or name.split(".")[0] not in ("jax", "numpy"):
            return False
        return name.rsplit(".", 1)[-1] in INEXACT_DTYPE_NAMES

    # ---- integers -------------------------------------------------------------------------------------------

    def _binds_integer(self, binding: Binding) -> bool:
        """`for i in range(...)` or `i = <int expression>`."""
        node = binding.node
        if type(node) is not ast.Name or self.binder.scope_of.get(node) is not binding.scope:
            return False
        parent = self.binder.parents.get(node)
        kind = type(parent)
        if kind in (ast.For, ast.AsyncFor) and parent.target is node:
            return type(parent.iter) is ast.Call and self._builtin(parent.iter.func) == "range"
        if kind is ast.Assign and any(t is node for t in parent.targets):
            return self.is_integer(parent.value)
        if kind is ast.AugAssign and parent.target is node:  # `i += 1`
            return isinstance(parent.op, _INT_ARITHMETIC) and self.is_integer(parent.value)
        return False

    # ---- which calls trace ------------------------------------------------------------------------------------

    def _always_traced(self, function: ast.AST, param: str) -> bool:
        """Whether `param` is a traced value on every call of `function`: the function is decorated with a JAX
        transformation, or it is private (nested, or named `_...`) and only ever handed to one
        (`lax.fori_loop(0, n, body, x)`), never called directly, where a NumPy array could come in."""
        traced = self.traced
        if not isinstance(function, _DEFS) or not traced.is_traced(function):
            return False
        if traced.param_kind(function, param) is not Kind.TRACED:
            return False
        if any(self._is_transform(d, ALWAYS_TRACING) for d in function.decorator_list):
            return True
        scope = self.binder.scope_of.get(function)
        if scope is None or not (scope.kind in ("function", "lambda") or function.name.startswith("_")):
            return False
        handed = ALWAYS_TRACING | set(LAX_BODIES)
        references = self.binder.references(scope, function.name)
        for reference in references:
            arg = self.binder.parents.get(reference)
            if type(arg) in (ast.keyword, ast.Starred):
                call = self.binder.parents.get(arg)
            else:
                call, arg = arg, reference
            if not (type(call) is ast.Call and call.func is not arg and self.binder.callee(call) in handed):
                return False
        return bool(references)

    def _is_transform(self, decorator: ast.expr, transforms) -> bool:
        """`@jax.jit`, `@jax.jit(...)`, `@partial(jax.jit, ...)`."""
        qualified = self.binder.qualified
        if qualified(decorator) in transforms:
            return True
        if type(decorator) is ast.Call:
            callee = self.binder.callee(decorator)
            if callee in transforms:
                return True
            if callee == "functools.partial":
                first = _first_argument(decorator)
                return first is not None and qualified(first) in transforms
        return False

    def _builtin(self, node: ast.AST) -> str | None:
        """The builtin a bare name refers to (`range`, `len`), or None when it is anything else."""
        if type(node) is ast.Name and self.binder.is_builtin(node, node.id):
            return node.id
        return None


def _is_number(expr: ast.expr) -> bool:
    """An int, float or complex literal, with signs (`True` is no number here: LibCST reads it as a name)."""
    if type(expr) is ast.Constant:
        return type(expr.value) in (int, float, complex)
    if type(expr) is ast.UnaryOp and isinstance(expr.op, (ast.USub, ast.UAdd)):
        return _is_number(expr.operand)
    return False


def _at_base(expr: ast.expr) -> ast.expr | None:
    """`x` in `x.at[idx]`, else None."""
    if type(expr) is ast.Subscript and type(expr.value) is ast.Attribute and expr.value.attr == "at":
        return expr.value.value
    return None


def _has_keyword(call: ast.Call, name: str) -> bool:
    return any(k.arg == name for k in call.keywords)


def _first_argument(call: ast.Call) -> ast.expr | None:
    """The expression of a call's first argument as written (positional or keyword, `*a`'s `a`)."""
    found = [*call.args, *call.keywords]
    if not found:
        return None
    first = min(found, key=lambda a: (a.lineno, a.col_offset))
    return first.value if type(first) in (ast.keyword, ast.Starred) else first


def _unstarred(expr: ast.expr) -> ast.expr:
    return expr.value if type(expr) is ast.Starred else expr


def _has_float_literal(expr: ast.expr) -> bool:
    """`2.0`, `-1.5`, `[1, 2.0]`: a literal that makes `jnp.array`/`jnp.arange` floating-point."""
    kind = type(expr)
    if kind is ast.Constant:
        return type(expr.value) in (float, complex)
    if kind is ast.UnaryOp:
        return _has_float_literal(expr.operand)
    if kind in (ast.List, ast.Tuple):
        return any(_has_float_literal(_unstarred(e)) for e in expr.elts)
    return False


def _has_default(arguments: ast.arguments, arg: ast.arg) -> bool:
    positional = [*arguments.posonlyargs, *arguments.args]
    if arg in positional:
        return positional.index(arg) >= len(positional) - len(arguments.defaults)
    if arg in arguments.kwonlyargs:
        return arguments.kw_defaults[arguments.kwonlyargs.index(arg)] is not None
    return False
