"""`BatchableCSTVisitor.get_visitors` (the visit_/leave_ methods a batched traversal calls) with the class's
attributes sorted out once per class: the same mapping, in the same order.

LibCST's runs `inspect.getmembers` over the ~1,640 attributes of every visitor instance (nearly all of them
LibCST's empty `visit_<Node>`/`leave_<Node>` stubs): 0.7 ms per instance, two metadata providers per module
sent to LibCST (244 in a cold check of 10 real trees); this one takes under 0.01 ms. Whatever the instance,
`getmembers` finds a class attribute that is a plain function as that function bound to the instance, unless
the instance's own dict shadows it: such a function, and a plain value, is selected or not once and for all.
What remains to evaluate per instance is the few descriptors (properties, classmethods, `__dict__`), evaluated
as `getmembers` evaluates them, and the instance's own dict; where that dict holds something selected (a method
stored on the instance), LibCST's own answers.
"""

from __future__ import annotations

import inspect
import types
from typing import Callable

import libcst as cst

_LIBCST_GET_VISITORS = cst.BatchableCSTVisitor.get_visitors
_PREFIXES = ("visit_", "leave_")
# Descriptors whose `__get__` never gives a bound method (`__eq__`, `__sizeof__`, `__subclasshook__`).
_NEVER_METHODS = (types.WrapperDescriptorType, types.MethodDescriptorType, types.ClassMethodDescriptorType)
_UNSET = object()


def _selected(value: object) -> bool:
    """LibCST's `get_visitors` predicate."""
    return (
        inspect.ismethod(value)
        and (value.__name__.startswith("visit_") or value.__name__.startswith("leave_"))
        and not getattr(value, "_is_no_op", False)
    )


def _class_attribute(kind: type, name: str) -> object:
    """What an instance's attribute lookup finds for `name` in the class (before its own dict): the first
    definition along the MRO; _UNSET where none."""
    for base in kind.__mro__:
        found = base.__dict__.get(name, _UNSET)
        if found is not _UNSET:
            return found
    return _UNSET


def _may_be_selected(kind: type, name: str) -> bool:
    """Whether getattr(instance, name) can be selected for some instance of `kind` whose own dict holds nothing
    selected: a plain function (bound to the instance) or a plain value are selected or not whatever the
    instance; a descriptor other than a builtin slot is asked per instance."""
    found = _class_attribute(kind, name)
    if found is _UNSET:
        return True
    if type(found) is types.FunctionType:
        return found.__name__.startswith(_PREFIXES) and not getattr(found, "_is_no_op", False)
    if isinstance(found, _NEVER_METHODS):
        return False
    if hasattr(type(found), "__get__"):
        return True
    return _selected(found)


# class → (the length of each class dict along its MRO, when the names were found; the names to ask per instance)
_CANDIDATES: dict[type, tuple[tuple[int, ...], tuple[str, ...]]] = {}


def _candidates(kind: type) -> tuple[str, ...] | None:
    """The sorted names of `kind`'s attributes that `_may_be_selected`, found again where a class along the MRO
    has gained or lost an attribute since (a method added by a patch). None where `kind` changes how its
    attributes are listed or looked up: LibCST's own lookup then answers."""
    sizes = tuple(len(base.__dict__) for base in kind.__mro__)
    cached = _CANDIDATES.get(kind)
    if cached is not None and cached[0] == sizes:
        return cached[1]
    if (
        kind.__dir__ is not object.__dir__
        or kind.__getattribute__ is not object.__getattribute__
        or hasattr(kind, "__getattr__")
    ):
        return None
    names = tuple(name for name in dir(kind) if _may_be_selected(kind, name))
    _CANDIDATES[kind] = (sizes, names)
    return names


def get_visitors(self: cst.BatchableCSTVisitor) -> dict[str, Callable]:
    """`BatchableCSTVisitor.get_visitors`, evaluating only the attributes that may be selected."""
    own = getattr(self, "__dict__", None)
    names = _candidates(type(self)) if own is not None else None
    if names is None or any(_selected(value) for value in own.values()):
        return _LIBCST_GET_VISITORS(self)
    methods = {}
    for name in names:
        try:
            value = getattr(self, name)
        except AttributeError:
            continue
        if _selected(value):
            methods[name] = value
    return methods


def install() -> None:
    """Make every batchable visitor that keeps LibCST's `get_visitors` (the metadata providers) use this one."""
    if cst.BatchableCSTVisitor.get_visitors is _LIBCST_GET_VISITORS:
        cst.BatchableCSTVisitor.get_visitors = get_visitors
