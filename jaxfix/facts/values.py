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
come from `facts/traced.py`. It answers as the LibCST ArrayAnalysis (analysis/arrays.py) it replaces for JF401 and
JF705 does (`rebind_blocker` too, word for word): `benchmarks/agreement.py`'s `values-*-exact` families ask both on
every name, every integer-looking expression and every item assignment to an array of a module."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from jaxfix.facts.binder import Binder, Binding, Scope
from jaxfix.facts.positions import Positions
from jaxfix.facts.knowledge import jaxtyping
from jaxfix.facts.knowledge.jax import (
    ALWAYS_INEXACT_SHORT, ALWAYS_TRACING, ARRAY_FRESH_METHODS, ARRAY_METADATA_ATTRIBUTES, ARRAY_VIEW_ATTRIBUTES,
    ARRAY_VIEW_METHODS, AT_METHODS, DTYPE_KEEPING_METHODS, DTYPE_KEEPING_SHORT, DTYPE_POSITION,
    FLOAT_BY_DEFAULT_SHORT, FRESH_ARRAY_FUNCTIONS, INEXACT_DTYPE_NAMES, JOINING_SHORT, NON_RETAINING_BUILTINS,
    NON_RETAINING_CALLS, NON_RETAINING_METHODS, RANDOM_FLOAT_DTYPE_POSITION, RANDOM_SAMPLERS, VIEW_ARRAY_FUNCTIONS,
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
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_COMPOUND = (
    ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.FunctionDef, ast.AsyncFunctionDef,
    ast.ClassDef, *(getattr(ast, name) for name in ("TryStar", "Match") if hasattr(ast, name)),
)


class Values:
    """The value facts of one module, each solved on first question and memoized."""

    def __init__(self, binder: Binder, traced: Traced, positions: Positions | None = None) -> None:
        self.binder = binder
        self.traced = traced
        self.positions = positions  # for the words of `rebind_blocker`
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
        if arg.annotation is None or not isinstance(function, _DEFS) or has_default(function.args, arg):
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
            found = _method_of(expr)
            if found is None:
                return False
            base, method, at = found
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
            found = _method_of(expr)
            if found is None:
                return False
            base, method, at = found
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
        if short in JOINING_SHORT:
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

    # ---- who else holds the array -----------------------------------------------------------------------------

    def rebind_blocker(self, name: ast.Name, statement: ast.stmt) -> str | None:
        """Why rebinding `name` at `statement` (`x = x.at[i].set(v)` for `x[i] = v`) would not do what NumPy's
        in-place update does, or None when it would. NumPy changes the array itself, so every other reference
        to it sees the update; a rebinding changes only this name. None requires that the name is local to the
        statement's scope, that each of its bindings makes a new array nobody else holds, and that no reference
        that could outlive an expression (another name, a container, a closure, an unknown callee) is taken
        before the update."""
        x = name.id
        owner = self.owner(name)
        if owner is None or self.binder.scope_of.get(statement) is not owner:
            return f"`{x}` belongs to an enclosing scope, so rebinding it here would make it a new local name"
        if x not in self._solve(owner, _RUNTIME):
            return (
                f"`{x}` is known to be a JAX array only through a `jax.Array` annotation in a function that may run "
                "untraced: given a NumPy array instead, the original updates it in place and the rewrite would fail"
            )
        for binding in owner.bindings.get(x, ()):
            reason = self._binding_blocker(binding, statement)
            if reason is not None:
                return reason
        escaping = [r for r in self._reads(owner, x) if self._escapes(r, owner) and self._may_run_before(r, statement, owner)]
        if escaping:  # the first in the file
            read = min(escaping, key=lambda r: (r.lineno, r.col_offset))
            return (
                f"`{x}` is also referenced on line {read.lineno} (`{self._snippet(read)}`) before this update; in NumPy "
                "that reference would see the update, after a rebinding it would not"
            )
        return None

    def _binding_blocker(self, binding: Binding, statement: ast.stmt) -> str | None:
        node, x = binding.node, binding.name
        if type(node) is ast.arg:  # traced on every call, or _RUNTIME would not hold
            owner = binding.scope
            if not any(self._may_run_after(r, statement, owner) for r in self._plain_reads(owner, x)):
                return (
                    f"`{x}` is a parameter and is not read after this update: the caller expected the array changed "
                    "in place, and a rebinding would silently drop the update (return it instead)"
                )
            return None
        parent = self.binder.parents.get(node)
        if type(parent) is ast.AugAssign or (type(parent) is ast.AnnAssign and parent.value is None):
            return None  # `x += v` makes a new array from x's own; a bare annotation binds nothing
        if type(parent) is ast.NamedExpr:
            return f"`{x}` is bound by `:=`, whose value is also used where it stands; in NumPy both see the update"
        if type(parent) is ast.Assign and len(parent.targets) > 1:
            shown = self._snippet(parent)
            return f"`{x}` is bound together with another name (`{shown}`); in NumPy both would see the update"
        value = parent.value
        if not self._is_fresh(value):
            return (
                f"`{x}` is bound to `{self._snippet(value, whole_statement=False)}`, which may share memory with "
                "another array; in NumPy the update would change that array too"
            )
        return None

    def _is_fresh(self, expr: ast.expr) -> bool:
        """Whether `expr` makes an array that no other value shares: in NumPy's terms a copy, or a view of
        something only this expression holds (`jnp.arange(6.0).reshape(2, 3)`), never a view of a name."""
        kind = type(expr)
        if kind in (ast.BinOp, ast.UnaryOp, ast.List, ast.Tuple):
            return True
        if kind is ast.Constant:
            return type(expr.value) in (int, float)
        if kind is ast.IfExp:
            return self._is_fresh(expr.body) and self._is_fresh(expr.orelse)
        if kind is ast.Subscript:
            return self._is_fresh(expr.value)
        if kind is ast.Attribute:
            return expr.attr in ARRAY_VIEW_ATTRIBUTES and self._is_fresh(expr.value)
        if kind is not ast.Call:
            return False  # a name: the array it holds has another reference
        callee = self.binder.callee(expr)
        if callee is not None:
            if callee in RANDOM_SAMPLERS:
                return True
            if callee in VIEW_ARRAY_FUNCTIONS or not _copies(expr):
                arguments = sorted([*expr.args, *expr.keywords], key=lambda a: (a.lineno, a.col_offset))
                if not arguments or type(arguments[0]) is ast.keyword:
                    return False
                return self._is_fresh(_unstarred(arguments[0]))
            return callee in FRESH_ARRAY_FUNCTIONS
        if type(expr.func) is not ast.Attribute:
            return False
        base, method = expr.func.value, expr.func.attr
        if method in AT_METHODS and _at_base(base) is not None:
            return True
        if method in ARRAY_VIEW_METHODS or (method in ARRAY_FRESH_METHODS and not _copies(expr)):
            return self._is_fresh(base)
        return method in ARRAY_FRESH_METHODS

    def _reads(self, owner: Scope, x: str) -> list[ast.Name]:
        """Every read of the name `x` that refers to `owner`'s binding, from any scope (not in annotations)."""
        found = []
        for node, read in self.binder.reads.items():
            if node.id != x or self._in_annotation(node):
                continue
            bindings = read.scope.resolve(x)
            if bindings and bindings[0].scope is owner:
                found.append(node)
        return found

    def _in_annotation(self, node: ast.AST) -> bool:
        parents = self.binder.parents
        child, current = node, parents.get(node)
        while current is not None and not isinstance(current, ast.stmt):
            if type(current) is ast.arg and current.annotation is child:
                return True
            child, current = current, parents.get(current)
        if type(current) is ast.AnnAssign:
            return current.annotation is child
        if isinstance(current, _DEFS):
            return current.returns is child
        return False

    def _plain_reads(self, owner: Scope, x: str) -> list[ast.Name]:
        """Reads that use the value, as opposed to the base of an item assignment `x[i] = v` / `x[i] += v`."""
        parents = self.binder.parents
        found = []
        for read in self._reads(owner, x):
            node = read
            while type(parents.get(node)) is ast.Subscript and parents[node].value is node:
                node = parents[node]
            parent = parents.get(node)
            if node is not read and (
                (type(parent) is ast.Assign and any(t is node for t in parent.targets))
                or (type(parent) is ast.AugAssign and parent.target is node)
            ):
                continue
            found.append(read)
        return found

    def _escapes(self, read: ast.Name, owner: Scope) -> bool:  # noqa: C901 - one branch per kind of parent
        """Whether this read may leave a reference to the array (or a NumPy view of it) behind: in another name,
        a container, a closure, a default value or an unknown callee. Reads consumed on the spot (arithmetic,
        reductions, `.shape`, indexing with it, returning it) leave none."""
        scope = self.binder.scope_of.get(read)
        while scope is not None and scope is not owner:
            if scope.kind in ("function", "lambda"):
                return True  # a closure: it may run at any time
            scope = scope.parent
        parents = self.binder.parents
        node: ast.AST = read
        while True:
            parent = parents.get(node)
            kind = type(parent)
            if kind is ast.Subscript:
                if parent.value is not node:
                    return False  # the index
                node = parent
            elif kind in (ast.Slice, ast.FormattedValue, ast.BinOp, ast.UnaryOp, ast.Compare):
                return False
            elif kind is ast.Attribute:
                attribute = parent.attr
                if attribute in ARRAY_METADATA_ATTRIBUTES or attribute == "at":
                    return False
                call = parents.get(parent)
                if type(call) is ast.Call and call.func is parent:
                    if (attribute in ARRAY_FRESH_METHODS and _copies(call)) or attribute in NON_RETAINING_METHODS:
                        return False
                    if attribute not in ARRAY_VIEW_METHODS and attribute not in ARRAY_FRESH_METHODS:
                        return True
                    node = call
                elif attribute in ARRAY_VIEW_ATTRIBUTES:
                    node = parent
                else:
                    return True
            elif kind is ast.BoolOp:
                node = parent
            elif kind is ast.IfExp:
                if parent.test is node:
                    return False
                node = parent
            elif kind in (ast.List, ast.Tuple, ast.Set):
                node = parent  # the container now holds it
            elif kind is ast.Dict:
                if any(k is None and v is node for k, v in zip(parent.keys, parent.values)):
                    return True  # `{**x}`
                node = parent
            elif kind in (ast.Call, ast.keyword):
                call = parent if kind is ast.Call else parents.get(parent)
                if (kind is ast.Call and parent.func is node) or (kind is ast.keyword and parent.arg is None):
                    return True
                callee = self.binder.callee(call)
                if callee in RANDOM_SAMPLERS or callee in NON_RETAINING_CALLS:
                    return False
                if callee in FRESH_ARRAY_FUNCTIONS and _copies(call):
                    return False
                if self._builtin(call.func) in NON_RETAINING_BUILTINS:
                    return False
                if callee in VIEW_ARRAY_FUNCTIONS or callee in FRESH_ARRAY_FUNCTIONS:
                    node = call
                else:
                    return True
            elif kind in (ast.Return, ast.Expr, ast.If, ast.While, ast.Assert, ast.Delete):
                return False  # returned, discarded, a truth value, an assertion, `del x`
            elif kind is ast.Assign:
                if any(t is node for t in parent.targets):
                    return False  # `x[i] = ...`: a store into the array, not a new reference
                return not all(self._stores_into_array(t) for t in parent.targets)
            elif kind is ast.AugAssign:  # `y += x` computes with x's data; `x += 1` reads x itself
                target = parent.target
                return target is not node and not (
                    self._stores_into_array(target) or (type(target) is ast.Name and self.is_array(target))
                )
            else:
                return True

    def _stores_into_array(self, target: ast.expr) -> bool:
        """`a[i] = value` with `a` a known array copies `value`'s data: no reference to it is kept."""
        if type(target) is not ast.Subscript:
            return False
        while type(target) is ast.Subscript:
            target = target.value
        return type(target) is ast.Name and self.is_array(target)

    # ---- order of execution ----------------------------------------------------------------------------------

    def _may_run_before(self, node: ast.AST, statement: ast.stmt, owner: Scope) -> bool:
        """Whether `node` may run before `statement` completes: it comes earlier, is part of it, or shares a loop."""
        return (node.lineno, node.col_offset) < (statement.end_lineno, statement.end_col_offset) or self._share_loop(
            node, statement, owner
        )

    def _may_run_after(self, node: ast.AST, statement: ast.stmt, owner: Scope) -> bool:
        return (node.lineno, node.col_offset) >= (statement.end_lineno, statement.end_col_offset) or self._share_loop(
            node, statement, owner
        )

    def _share_loop(self, a: ast.AST, b: ast.AST, owner: Scope) -> bool:
        return bool(self._loops(a, owner) & self._loops(b, owner))

    def _loops(self, node: ast.AST, owner: Scope) -> set[int]:
        boundary = owner.node
        parents = self.binder.parents
        loops = set()
        current = parents.get(node)
        while current is not None and current is not boundary:
            if type(current) in _LOOPS:
                loops.add(id(current))
            current = parents.get(current)
        return loops

    def _snippet(self, node: ast.AST, limit: int = 60, *, whole_statement: bool = True) -> str:
        """Short source text for a message: the simple statement around `node`, or a compound one's header."""
        positions = self.positions
        chosen = node
        if whole_statement:
            parents = self.binder.parents
            while not isinstance(chosen, (ast.stmt, ast.Module)):
                parent = parents.get(chosen)
                if parent is None:
                    break
                chosen = parent
            if isinstance(chosen, ast.Module):
                chosen = node
        if isinstance(chosen, _COMPOUND):  # its header: `for row in x`
            first = getattr(chosen, "decorator_list", None)
            line, column = (first[0].lineno, 0) if first else (chosen.lineno, chosen.col_offset)
            text = positions.text_line(line)[column if not first else 0:].strip()
            if not first and type(chosen) is ast.If and text.startswith("elif"):
                text = text[2:]  # LibCST spells an `elif` branch's own code `if ...`
            text = text.rstrip(":")
        elif isinstance(chosen, ast.stmt):
            text = positions.segment(chosen).strip() + _semicolon(positions, chosen)
        else:
            text = positions.with_parentheses(chosen, self.binder.parents.get(chosen)).strip()
        text = " ".join(text.split())
        return text if len(text) <= limit else text[: limit - 3] + "..."


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


def _method_of(call: ast.Call) -> tuple[ast.expr, str, ast.expr | None] | None:
    """(receiver, method, `x` of a receiver `x.at[idx]`) of a method call `receiver.method(...)`; None for any other."""
    func = call.func
    if type(func) is not ast.Attribute:
        return None
    return func.value, func.attr, _at_base(func.value)


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


def has_default(arguments: ast.arguments, arg: ast.arg) -> bool:
    """Whether parameter `arg` has a default value."""
    positional = [*arguments.posonlyargs, *arguments.args]
    if arg in positional:
        return positional.index(arg) >= len(positional) - len(arguments.defaults)
    if arg in arguments.kwonlyargs:
        return arguments.kw_defaults[arguments.kwonlyargs.index(arg)] is not None
    return False


def _copies(call: ast.Call) -> bool:
    """False when `copy=` is passed and is not literally True (`jnp.array(y, copy=False)` may return `y`)."""
    for keyword in call.keywords:
        if keyword.arg == "copy":
            return type(keyword.value) is ast.Constant and keyword.value.value is True
    return True


def _semicolon(positions: Positions, statement: ast.stmt) -> str:
    """The ` ;` that follows the simple statement on its line, if one does (LibCST's code of the statement holds
    it, with the space before it)."""
    rest = positions.text_line(statement.end_lineno).encode("utf-8", "surrogatepass")[statement.end_col_offset:]
    kept = rest.lstrip(b" \t")
    if not kept.startswith(b";"):
        return ""
    return rest[: len(rest) - len(kept) + 1].decode("utf-8", "surrogatepass")
