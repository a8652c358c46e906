"""Reading the library call summaries (`CALL_SUMMARIES` of `jaxfix.facts.knowledge.tables`) at a call, on LibCST:
which summary applies (whether it is one array by convention is facts/arrays.py's `array_output`, on `ast`). A
summarised call is pure, which the loop-body purity check of `jaxfix.analysis.dataflow` reads too. What donation
asks of the summaries is on `ast` in `jaxfix.facts.summaries`."""

from __future__ import annotations

import libcst as cst
from libcst.metadata import ScopeProvider

from jaxfix.facts.knowledge import tables
from jaxfix.facts.knowledge.summary import CallSummary
from jaxfix.facts.knowledge.tables import CALL_SUMMARIES
from jaxfix.facts.summaries import BY_METHOD_NAME

def summary_of(context, call: cst.Call) -> tuple[str, CallSummary] | None:
    """The summary that applies to `call` and its name: a library function by its qualified name, or a method of
    a receiver whose type the call that made it tells (CONSTRUCTED_TYPES: `tx = optax.adam(...)`, `net =
    hk.transform(f)`, `@hk.transform`), bound once; or a field of such a named tuple unpacked into names (`init,
    apply = hk.transform(f)`)."""
    name = context.names.qualified(call.func)
    if name in CALL_SUMMARIES:
        return name, CALL_SUMMARIES[name]
    method = _method_name(context, call.func)
    if method in CALL_SUMMARIES:
        return method, CALL_SUMMARIES[method]
    return None


def _method_name(context, func: cst.BaseExpression) -> str | None:
    """`Type.method` for `receiver.method` where the receiver's type is known, or for a name bound to a field of
    a named tuple of a known type."""
    if isinstance(func, cst.Attribute):
        made = _type_of(context, _made_by(context, func.value))
        return f"{made}.{func.attr.value}" if made else None
    bound = _binding(context, func) if isinstance(func, cst.Name) else None
    if isinstance(bound, tuple):
        value, index = bound
        made = _type_of(context, value)
        fields = tables.TYPE_FIELDS.get(made or "", ())
        return f"{made}.{fields[index]}" if index < len(fields) else None
    return None


def _type_of(context, made_by, depth: int = 0) -> str | None:
    """The type of the value that `made_by` (a call, or a decorated function) makes, by CONSTRUCTED_TYPES."""
    if depth > 4 or made_by is None or isinstance(made_by, tuple):
        return None
    if isinstance(made_by, cst.FunctionDef):
        for decorator in made_by.decorators:  # the outermost decides; `without_apply_rng` keeps the type below
            made = tables.CONSTRUCTED_TYPES.get(context.names.qualified(decorator.decorator) or "")
            if made != "=":
                return made
        return None
    if not isinstance(made_by, cst.Call):
        return None
    cls = _binding(context, made_by.func) if isinstance(made_by.func, cst.Name) else None
    if isinstance(cls, cst.ClassDef):
        return _instance_type(context, cls, depth + 1)
    name = context.names.qualified(made_by.func) or ""
    made = tables.CONSTRUCTED_TYPES.get(name)
    if made == "=":
        first = made_by.args[0] if made_by.args and not made_by.args[0].keyword and not made_by.args[0].star else None
        if first is None:
            return None
        inner = first.value if isinstance(first.value, cst.Call) else _binding(context, first.value)
        return _type_of(context, inner, depth + 1)
    if made is not None:
        return made
    return next((t for prefix, t in tables.CONSTRUCTED_BY_MODULE.items() if name.startswith(prefix)), None)


def _instance_type(context, cls: cst.ClassDef, depth: int) -> str | None:
    """The type of an instance of `cls`, a class of this module: by its bases (INSTANCE_TYPES), or its bases'."""
    for base in cls.bases:
        made = tables.INSTANCE_TYPES.get(context.names.qualified(base.value) or "")
        if made is None and depth < 4 and isinstance(base.value, cst.Name):
            parent = _binding(context, base.value)
            made = _instance_type(context, parent, depth + 1) if isinstance(parent, cst.ClassDef) else None
        if made is not None:
            return made
    return None


# The summaries of methods recognised by their name alone, by that name (the first where two share one).
_BY_METHOD_NAME = BY_METHOD_NAME


def by_method_name(call: cst.Call) -> tuple[str, CallSummary] | None:
    """The summary of a method recognised by its name alone (`state.apply_fn(...)`), whatever the receiver: one
    look-up, as the loop-body purity check asks it of every method call."""
    if not isinstance(call.func, cst.Attribute):
        return None
    return _BY_METHOD_NAME.get(call.func.attr.value)


def _binding(context, receiver: cst.BaseExpression):
    """What the name `receiver`, bound once in its scope, is bound to: the value of `receiver = value`, a
    decorated `def receiver`, a class, or (value, index) for `a, receiver = value`; for `self.attr`, the value of the
    module's one store to an attribute of that name (`self._opt = optax.adam(lr)`). Else None."""
    if isinstance(receiver, cst.Attribute) and isinstance(receiver.value, cst.Name) and receiver.value.value == "self":
        return _attribute_binding(context, receiver.attr.value)
    if not isinstance(receiver, cst.Name):
        return None
    scope = context.wrapper.resolve(ScopeProvider).get(receiver)
    if scope is None or receiver.value not in scope:
        return None
    assignments = [a for a in scope[receiver.value] if isinstance(getattr(a, "node", None), cst.CSTNode)]
    if len(assignments) != 1 or len(scope[receiver.value]) != 1:
        return None
    node = assignments[0].node
    if isinstance(node, cst.ClassDef):
        return node
    if isinstance(node, cst.FunctionDef):
        return node if node.decorators else None
    parent = context.parents.get(node)
    if isinstance(parent, cst.Element) and isinstance(context.parents.get(parent), cst.Tuple):
        tuple_ = context.parents.get(parent)
        target = context.parents.get(tuple_)
        assign = context.parents.get(target) if isinstance(target, cst.AssignTarget) else None
        if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1 and isinstance(assign.value, cst.Call)):
            return None
        if any(not isinstance(e, cst.Element) or not isinstance(e.value, cst.Name) for e in tuple_.elements):
            return None  # `*rest`, nested unpacking
        return assign.value, list(tuple_.elements).index(parent)
    assign = context.parents.get(parent) if isinstance(parent, cst.AssignTarget) else None
    if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1):
        return None
    return assign.value


def _made_by(context, receiver: cst.BaseExpression):
    """The call that made `receiver`: itself (`hk.transform(f).init`), or what its name is bound to."""
    return receiver if isinstance(receiver, cst.Call) else _binding(context, receiver)


def _attribute_binding(context, attribute: str) -> cst.BaseExpression | None:
    from jaxfix.analysis.syntax import code_nodes

    stores = []
    for node in code_nodes(context.module):
        if isinstance(node, cst.Attribute) and node.attr.value == attribute:
            parent = context.parents.get(node)
            if isinstance(parent, cst.AssignTarget) or isinstance(parent, (cst.AugAssign, cst.AnnAssign)) and parent.target is node:
                stores.append(context.parents.get(parent) if isinstance(parent, cst.AssignTarget) else parent)
            elif isinstance(parent, (cst.Element, cst.Tuple, cst.List, cst.Del)):
                return None  # stored by unpacking or deleted
    if len(stores) != 1 or not isinstance(stores[0], cst.Assign) or len(stores[0].targets) != 1:
        return None
    return stores[0].value
