"""Which local names are known to hold a JAX array, asked with LibCST nodes (by analysis/dataflow.py's
`is_array_like` and the `values-array-exact` agreement family). The evidence short of proof that a parameter holds
one, and one array or a pytree, are facts/arrays.py's (on `ast`).

A name holds a JAX array only if EVERY binding of it in its scope makes one: a call from an allowlist of
`jax.numpy`/`jax.random` functions that always return a single array, `x.at[i].set(v)`, arithmetic of known
arrays and numbers, indexing, `.T`/`.reshape(...)`/`.astype(...)` of a known array, or a parameter annotated
`jax.Array`/`jnp.ndarray`. Anything else (NumPy arrays, lists, dicts, unannotated parameters, `for`/`with`
targets, `global`/`nonlocal` rebinding) leaves the name unproven. The analysis is flow-insensitive: the proven
names are the greatest set closed under their bindings. The same fact on `ast` is jaxfix/facts/values.py (with
the refinements "at run time" and "inexact", Python ints and JAX's aliasing question, `rebind_blocker`, which
moved there with JF401 after agreeing word for word on every tree); benchmarks/agreement.py's
`values-array-exact` family asks both `is_array`s on every name.
"""

from __future__ import annotations

from functools import cached_property

import libcst as cst
from libcst.metadata import (
    Assignment,
    ClassScope,
    ComprehensionScope,
    Scope,
    ScopeProvider,
)

from jaxfix.analysis.syntax import AT_METHODS
from jaxfix.analysis.traced import Kind
from jaxfix.facts.knowledge import jaxtyping
from jaxfix.facts.knowledge.jax import FRESH_ARRAY_FUNCTIONS as _FRESH_FUNCTIONS, RANDOM_SAMPLERS as _RANDOM
from jaxfix.facts.knowledge.jax import DTYPE_POSITION  # noqa: F401 (read from here by shapes.py)
from jaxfix.facts.knowledge.jax import VIEW_ARRAY_FUNCTIONS as _VIEW_FUNCTIONS
from jaxfix.facts.knowledge.jax import (  # the array methods and attributes: facts/values.py reads them too
    ARRAY_FRESH_METHODS as _FRESH_METHODS, ARRAY_VIEW_ATTRIBUTES as _VIEW_ATTRIBUTES, ARRAY_VIEW_METHODS as _VIEW_METHODS,
)
from jaxfix.facts.knowledge.tables import ARRAY_ANNOTATIONS, TRACED_ARRAY_ANNOTATIONS
from jaxfix.facts.model import ModuleModel

_JNP = "jax.numpy."

_ARITHMETIC = (
    cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power, cst.MatrixMultiply,
    cst.BitAnd, cst.BitOr, cst.BitXor, cst.LeftShift, cst.RightShift,
)  # fmt: skip
# The property of names solved per scope: a JAX array (trusting `jax.Array` annotations). The refinements "at run
# time" and "inexact", and the aliasing questions of JF401, moved to jaxfix/facts/values.py.
_ARRAY = "array"


class ArrayAnalysis:
    def __init__(self, context: ModuleModel) -> None:
        self._context = context
        self._names = context.names
        self._parents = context.parents
        self._scopes = context.wrapper.resolve(ScopeProvider)
        self._solved: dict[tuple[Scope, str], set[str]] = {}
        self._deciding_integer: set[tuple[Scope, str]] = set()

    # ---- queries -------------------------------------------------------------------------------------------

    def is_array(self, name: cst.Name) -> bool:
        """Whether `name`, where it stands, is known to hold a JAX array: every binding of it makes one."""
        owner = self.owner(name)
        return owner is not None and name.value in self._solve(owner, _ARRAY)

    def is_array_expression(self, expr: cst.BaseExpression) -> bool:
        return self._is_array(expr, None, None)

    def qualified(self, expr: cst.BaseExpression) -> str | None:
        return self._names.qualified(expr)

    def callee(self, call: cst.Call) -> str | None:
        return self._names.callee(call)

    def owner(self, name: cst.Name) -> Scope | None:
        """The scope whose bindings `name` refers to (following `global`/`nonlocal`), or None if unbound."""
        scope = self._scopes.get(name)
        if scope is None:
            return None
        assignments = scope[name.value]
        return next(iter(assignments)).scope if assignments else None

    def _solve(self, owner: Scope, prop: str) -> set[str]:
        """The names of `owner` proven to have `prop` (_ARRAY): the greatest set of names
        all of whose bindings give the property, given that the names in the set have it."""
        key = (owner, prop)
        if key in self._solved:
            return self._solved[key]
        self._solved[key] = set()  # while solving, reads of this scope's names from elsewhere are unproven
        if isinstance(owner, (ClassScope, ComprehensionScope)):
            return self._solved[key]
        candidates: dict[str, list] = {}
        for assignment in owner.assignments:
            candidates.setdefault(assignment.name, []).append(assignment)
        env = set(candidates) - self._comprehension_walrus_targets(owner)
        changed = True
        while changed:
            changed = False
            for name in list(env):
                if not all(self._binds(a, owner, env, prop) for a in candidates[name]):
                    env.discard(name)
                    changed = True
        self._solved[key] = env
        return env

    def _binds(self, assignment, owner: Scope, env: set[str], prop: str) -> bool:
        """Whether one binding gives its name `prop`, assuming the names in `env` have it."""
        if not isinstance(assignment, Assignment) or self._scopes.get(assignment.node) is not owner:
            return False  # imports, builtins, and `global`/`nonlocal` rebinding from another scope
        node = assignment.node
        if isinstance(node, cst.Param):
            return self._array_param(node)
        parent = self._parents.get(node)
        value = None
        if isinstance(parent, cst.AssignTarget) and parent.target is node:
            value = self._parents[parent].value
        elif isinstance(parent, (cst.AnnAssign, cst.NamedExpr)) and parent.target is node:
            if parent.value is None:
                return True  # a bare annotation binds nothing
            value = parent.value
        elif isinstance(parent, cst.AugAssign) and parent.target is node:
            return self._array_or_number(parent.value, owner, env, prop)  # every augmented operator is arithmetic
        if value is None:
            return False  # for/with/except targets, unpacking, def, class
        return self._is_array(value, owner, env, prop)

    def _array_param(self, param: cst.Param) -> bool:
        """A parameter annotated `jax.Array`/`jnp.ndarray`, without a default (which could be anything)."""
        if param.default is not None or param.annotation is None:
            return False
        function = self._parents.get(self._parents.get(param))
        if not isinstance(function, cst.FunctionDef):
            return False
        if param is function.params.star_arg or param is function.params.star_kwarg:
            return False
        annotation = param.annotation.annotation
        traced = self._context.traced
        in_traced_code = traced.is_traced(function) and traced.param_kind(function, param.name.value) is Kind.TRACED
        accepted = ARRAY_ANNOTATIONS | TRACED_ARRAY_ANNOTATIONS if in_traced_code else ARRAY_ANNOTATIONS
        if self.qualified(annotation) in accepted:
            return True
        if isinstance(annotation, cst.Subscript):
            head = self.qualified(annotation.value) or ""
            # `npt.NDArray[np.float32]` in traced code
            if head in accepted and head in TRACED_ARRAY_ANNOTATIONS:
                return True
            # jaxtyping's `Float[Array, "n d"]`: an array of the first element's type
            array = annotation.slice[0].slice if len(annotation.slice) == 2 else None
            if head.startswith(jaxtyping.MODULE) and isinstance(array, cst.Index):
                return self.qualified(array.value) in accepted
        return False

    def _name_has(self, name: cst.Name, owner: Scope | None, env: set[str] | None, prop: str) -> bool:
        """Whether `name` has `prop`: by the assumption `env` for names of `owner` (while solving it), else by
        the solution for the scope the name belongs to."""
        scope = self.owner(name)
        if scope is None:
            return False
        if scope is owner and env is not None:
            return name.value in env
        return name.value in self._solve(scope, prop)

    def _is_array(
        self, expr: cst.BaseExpression, owner: Scope | None, env: set[str] | None, prop: str = _ARRAY
    ) -> bool:
        """Whether `expr` makes a JAX array (prop _ARRAY), or makes one even when callers break annotations
        (prop _RUNTIME), given that the names of `owner` in `env` hold one."""
        is_array = lambda e: self._is_array(e, owner, env, prop)  # noqa: E731
        if isinstance(expr, cst.Name):
            return self._name_has(expr, owner, env, prop)
        if isinstance(expr, cst.Call):
            callee = self.callee(expr)
            if callee is not None:
                return self._array_call(callee, expr)
            method = _method(expr)
            if method is None:
                return False
            base, name = method
            if name in AT_METHODS and _at_base(base) is not None:
                return is_array(_at_base(base))
            return (name in _FRESH_METHODS or name in _VIEW_METHODS) and not _has_out(expr) and is_array(base)
        if isinstance(expr, cst.Attribute):
            return expr.attr.value in _VIEW_ATTRIBUTES and is_array(expr.value)
        if isinstance(expr, cst.Subscript):
            return is_array(expr.value)
        if isinstance(expr, cst.BinaryOperation):
            if not isinstance(expr.operator, _ARITHMETIC):
                return False
            sides = [expr.left, expr.right]
            return any(is_array(s) for s in sides) and all(self._array_or_number(s, owner, env, prop) for s in sides)
        if isinstance(expr, cst.UnaryOperation):
            return isinstance(expr.operator, (cst.Minus, cst.Plus, cst.BitInvert)) and is_array(expr.expression)
        if isinstance(expr, cst.IfExp):
            return is_array(expr.body) and is_array(expr.orelse)
        if isinstance(expr, cst.NamedExpr):
            return is_array(expr.value)
        return False

    def _array_call(self, callee: str, call: cst.Call) -> bool:
        if callee not in _FRESH_FUNCTIONS and callee not in _VIEW_FUNCTIONS and callee not in _RANDOM:
            return False
        if _has_out(call) or any(a.keyword is not None and a.keyword.value == "retstep" for a in call.args):
            return False  # `out=` returns the buffer given; `linspace(retstep=True)` returns a tuple
        if callee == _JNP + "where":
            return len(call.args) == 3 and all(a.keyword is None and not a.star for a in call.args)
        return True

    def _array_or_number(self, expr, owner, env, prop) -> bool:
        return _is_number(expr) or self._is_array(expr, owner, env, prop)

    def _comprehension_walrus_targets(self, owner: Scope) -> set[str]:
        """Names a `:=` inside a comprehension binds in `owner` (LibCST files them under the comprehension)."""
        names = set()
        for scope in self._all_scopes:
            if not isinstance(scope, ComprehensionScope):
                continue
            enclosing = scope.parent
            while isinstance(enclosing, ComprehensionScope):
                enclosing = enclosing.parent
            if enclosing is owner:
                for assignment in scope.assignments:
                    if isinstance(self._parents.get(getattr(assignment, "node", None)), cst.NamedExpr):
                        names.add(assignment.name)
        return names

    @cached_property
    def _all_scopes(self) -> list[Scope]:
        return list({id(s): s for s in self._scopes.values() if s is not None}.values())


def _is_number(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, (cst.Integer, cst.Float, cst.Imaginary)):
        return True
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        return _is_number(expr.expression)
    return False


def _method(call: cst.Call) -> tuple[cst.BaseExpression, str] | None:
    if isinstance(call.func, cst.Attribute):
        return call.func.value, call.func.attr.value
    return None


def _at_base(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """`x` in `x.at[idx]`, else None."""
    if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Attribute) and expr.value.attr.value == "at":
        return expr.value.value
    return None


def _has_out(call: cst.Call) -> bool:
    return any(a.keyword is not None and a.keyword.value == "out" for a in call.args)
