"""What Equinox does, as data: its filtered transformations, its modules' traced methods, its fields and what
its tree functions return."""

from __future__ import annotations

from jaxfix.facts.knowledge.summary import CallSummary

# The filtered transformations → the JAX transformation each stands for (whether it stages, compiles or takes a
# reverse-mode gradient). They treat every non-array argument as static, so argument kinds are unknown.
FILTERED_TRANSFORMS: dict[str, str] = {
    "equinox.filter_jit": "jax.jit",
    "equinox.filter_vmap": "jax.vmap",
    "equinox.filter_pmap": "jax.pmap",
    "equinox.filter_grad": "jax.grad",
    "equinox.filter_value_and_grad": "jax.value_and_grad",
    "equinox.filter_checkpoint": "jax.checkpoint",
}
TRANSFORM_ALIASES: dict[str, str] = {"equinox.filter_shard_map": "jax.shard_map"}
# Compiled callables, dispatched asynchronously.
COMPILED_CALLABLES = frozenset({"equinox.filter_jit", "equinox.filter_pmap"})
# One keyword, `donate=`: every argument's arrays ("all"), all but the first's ("all-except-first"), or none.
DONATION_KEYWORDS: dict[str, tuple[str, ...]] = {"equinox.filter_jit": ("donate",)}
TRACED_BASES: dict[str, tuple[str, ...]] = {"equinox.Module": ("__call__",), "equinox._module.Module": ("__call__",)}
STRUCT_FIELDS = frozenset({"equinox.field"})
STATIC_FIELDS = frozenset({"equinox.static_field"})

CALL_SUMMARIES: dict[str, CallSummary] = {
    # A leaf whose update is None is the model's own leaf.
    "equinox.apply_updates": CallSummary(("model", "updates"), ("model",), ("model",), updates=True),
    # `eqx.filter(model, eqx.is_array)`: the model's own leaves (the others replaced by None).
    "equinox.filter": CallSummary(("pytree", "filter_spec"), ("pytree",), ("pytree",)),
}
