"""Configuration objects (ml_collections) that are never traced values: they are not pytrees, so JAX rejects
them as traced arguments, and they reach traced code only as a static argument (a hashable FrozenConfigDict) or
closed over. A parameter annotated with one is a Python value at trace time, and so is every attribute of it
(`range(config.num_layers)` is a static trip count)."""

from __future__ import annotations

STATIC_CONFIG_TYPES = frozenset(
    {"ml_collections.ConfigDict", "ml_collections.FrozenConfigDict", "ml_collections.config_dict.ConfigDict",
     "ml_collections.config_dict.FrozenConfigDict", "ml_collections.config_dict.config_dict.ConfigDict",
     "ml_collections.config_dict.config_dict.FrozenConfigDict"}
)  # fmt: skip
