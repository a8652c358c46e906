"""Reading the library call summaries (`libraries.CALL_SUMMARIES`) at a call: which summary applies, whether the
call marks a training step, and whether its result holds an argument's arrays or only new ones."""

from __future__ import annotations

import libcst as cst
from libcst.metadata import ScopeProvider

from jaxfix.analysis import libraries
from jaxfix.analysis.libraries import CALL_SUMMARIES, CallSummary

_OPTIMIZER = "optax.GradientTransformation"
_GRADIENTS = frozenset(
    {"jax.grad", "jax.value_and_grad", "equinox.filter_grad", "equinox.filter_value_and_grad"}
    | {alias for alias, canonical in libraries.TRANSFORM_ALIASES.items() if canonical in ("jax.grad", "jax.value_and_grad")}
)
# What marks a training step: a gradient taken in its body, or an optimizer's update applied (by qualified name,
# or by method name where the receiver's type cannot be seen).
TRAINING_CALLS = _GRADIENTS | {
    name for name, summary in CALL_SUMMARIES.items() if summary.updates and not summary.by_method_name
}
TRAINING_METHODS = frozenset(
    name.rsplit(".", 1)[1] for name, summary in CALL_SUMMARIES.items() if summary.updates and summary.by_method_name
)


def summary_of(context, call: cst.Call) -> tuple[str, CallSummary] | None:
    """The summary that applies to `call` and its name: a library function by its qualified name, or an optax
    optimizer's `init`/`update` on a name bound once to `optax.adam(...)` and the like."""
    name = context.names.qualified(call.func)
    if name in CALL_SUMMARIES:
        return name, CALL_SUMMARIES[name]
    func = call.func
    if isinstance(func, cst.Attribute) and _optimizer(context, func.value) is not None:
        method = f"{_OPTIMIZER}.{func.attr.value}"
        if method in CALL_SUMMARIES:
            return method, CALL_SUMMARIES[method]
    return None


def holds_argument(context, call: cst.Call, argument: cst.BaseExpression) -> bool | None:
    """Whether the result of `call` may hold the arrays of `argument` (one of its arguments) as they are: None
    when no summary tells. An optax optimizer's `init` makes new arrays only for FRESH_INIT_OPTIMIZERS."""
    found = summary_of(context, call)
    if found is None:
        return None
    name, summary = found
    parameter = _parameter_of(call, argument, summary)
    if parameter is None:
        return None
    if name == f"{_OPTIMIZER}.init":
        return not _fresh_init(context, _optimizer(context, call.func.value))
    return parameter in summary.aliases


def fresh_result(context, call: cst.Call) -> bool:
    """Whether the result of `call` holds only new arrays, none of its arguments' (summaries say so)."""
    found = summary_of(context, call)
    if found is None:
        return False
    return all(holds_argument(context, call, arg.value) is False for arg in call.args) and (
        bool(call.args) or not found[1].aliases
    )


def init_keeps_params(context, call: cst.Call) -> bool | None:
    """For an optax optimizer's `init` call: True when its state holds the parameters' own arrays (one of
    PARAMS_KEEPING_OPTIMIZERS, alone or in an `optax.chain`), False when it makes only new arrays, None when
    jaxfix cannot tell (not an `init` of a known optimizer)."""
    found = summary_of(context, call)
    if found is None or found[0] != f"{_OPTIMIZER}.init":
        return None
    constructor = _optimizer(context, call.func.value)
    if _fresh_init(context, constructor):
        return False
    return True if _keeps_params(context, constructor) else None


def _parameter_of(call: cst.Call, argument: cst.BaseExpression, summary: CallSummary) -> str | None:
    """The summary's parameter that `argument` is passed to (a method's receiver counts as "self")."""
    positional = [p for p in summary.parameters if p != "self"]
    index = 0
    for arg in call.args:
        if arg.star:
            return None
        if arg.value is argument:
            if arg.keyword is not None:
                return arg.keyword.value
            return positional[index] if index < len(positional) else None
        if arg.keyword is None:
            index += 1
    return None


def _optimizer(context, receiver: cst.BaseExpression) -> cst.Call | None:
    """The `optax.X(...)` call that the name `receiver` is bound to, once in its scope, or that `self.attr` is
    (the module's one store to an attribute of that name, `self._opt = optax.adam(lr)`); else None."""
    if isinstance(receiver, cst.Attribute) and isinstance(receiver.value, cst.Name) and receiver.value.value == "self":
        return _attribute_optimizer(context, receiver.attr.value)
    if not isinstance(receiver, cst.Name):
        return None
    scope = context.wrapper.resolve(ScopeProvider).get(receiver)
    if scope is None or receiver.value not in scope:
        return None
    assignments = [a for a in scope[receiver.value] if isinstance(getattr(a, "node", None), cst.CSTNode)]
    if len(assignments) != 1 or len(scope[receiver.value]) != 1:
        return None
    target = context.parents.get(assignments[0].node)
    assign = context.parents.get(target) if isinstance(target, cst.AssignTarget) else None
    if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1 and isinstance(assign.value, cst.Call)):
        return None
    constructor = context.names.qualified(assign.value.func) or ""
    return assign.value if constructor.startswith("optax.") else None


def _attribute_optimizer(context, attribute: str) -> cst.Call | None:
    from jaxfix.analysis.syntax import walk

    stores = []
    for node in walk(context.module):
        if isinstance(node, cst.Attribute) and node.attr.value == attribute:
            parent = context.parents.get(node)
            if isinstance(parent, cst.AssignTarget) or isinstance(parent, (cst.AugAssign, cst.AnnAssign)) and parent.target is node:
                stores.append(context.parents.get(parent) if isinstance(parent, cst.AssignTarget) else parent)
            elif isinstance(parent, (cst.Element, cst.Tuple, cst.List, cst.Del)):
                return None  # stored by unpacking or deleted
    if len(stores) != 1 or not isinstance(stores[0], cst.Assign) or len(stores[0].targets) != 1:
        return None
    value = stores[0].value
    if not isinstance(value, cst.Call) or not (context.names.qualified(value.func) or "").startswith("optax."):
        return None
    return value


def _keeps_params(context, constructor: cst.Call | None, depth: int = 0) -> bool:
    """Whether the optimizer that `constructor` makes has an `init` whose state holds the parameters' arrays."""
    if constructor is None or depth > 4:
        return False
    name = context.names.qualified(constructor.func)
    if name in libraries.PARAMS_KEEPING_OPTIMIZERS:
        return True
    if name in libraries.FRESH_INIT_COMBINATORS:
        return any(isinstance(a.value, cst.Call) and _keeps_params(context, a.value, depth + 1) for a in constructor.args)
    return False


def _fresh_init(context, constructor: cst.Call | None, depth: int = 0) -> bool:
    """Whether the optimizer that `constructor` makes has an `init` that returns only new arrays."""
    if constructor is None or depth > 4:
        return False
    name = context.names.qualified(constructor.func)
    if name in libraries.FRESH_INIT_OPTIMIZERS:
        return True
    if name in libraries.FRESH_INIT_COMBINATORS:
        parts = [a.value for a in constructor.args]
        return all(
            not a.keyword and not a.star for a in constructor.args
        ) and all(isinstance(p, cst.Call) and _fresh_init(context, p, depth + 1) for p in parts)
    return False
