"""What chex does, as data: its array annotations and its dataclasses."""

from __future__ import annotations

ARRAY_ANNOTATIONS = frozenset({"chex.Array", "chex.ArrayDevice"})
STRUCT_DATACLASSES = frozenset({"chex.dataclass"})
STRUCT_FIELDS = frozenset({"chex.field"})
