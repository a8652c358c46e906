"""What Haiku (dm-haiku) does, as data: its transformations, the functions it traces by convention, and what
`hk.transform`'s result returns."""

from __future__ import annotations

from jaxfix.facts.knowledge.summary import CallSummary

TRANSFORM_ALIASES: dict[str, str] = {
    "haiku.vmap": "jax.vmap",
    "haiku.remat": "jax.checkpoint",
    "haiku.grad": "jax.grad",
    "haiku.value_and_grad": "jax.value_and_grad",
}
BODY_ALIASES: dict[str, tuple[tuple[int, ...], tuple[str, ...]]] = {
    "haiku.scan": ((0,), ("f",)),
    "haiku.fori_loop": ((2,), ("body_fun",)),
    "haiku.while_loop": ((0, 1), ("cond_fun", "body_fun")),
    "haiku.cond": ((1, 2), ("true_fun", "false_fun")),
    "haiku.switch": ((1,), ("branches",)),
}
# Functions whose function argument runs under tracing later (the result is jitted by the caller).
CONVENTION_WRAPPERS: dict[str, tuple[int, ...]] = {
    "haiku.transform": (0,),
    "haiku.transform_with_state": (0,),
    "haiku.without_apply_rng": (0,),
    "haiku.multi_transform": (0,),
    "haiku._src.transform.transform": (0,),  # haiku's own sources
    "haiku._src.transform.transform_with_state": (0,),
}
_ALL = ("*",)
TRACED_BASES: dict[str, tuple[str, ...]] = {"haiku.Module": _ALL, "haiku._src.module.Module": _ALL}
TRACED_DECORATORS = frozenset({"haiku.transparent"})
# A Haiku module's constructor arguments and literals set in `__init__` are hyperparameters.
STATIC_SELF = frozenset({"haiku.Module", "haiku._src.module.Module"})

CALL_SUMMARIES: dict[str, CallSummary] = {
    # dm-haiku 0.0.17, tests/test_summaries.py: `net.init(rng, *args)` returns the parameters its
    # initializers made from a shape and a dtype: new arrays. `net.apply(params, rng, *args)` (no `rng` after
    # `hk.without_apply_rng`, so the argument in that place may be an input) returns what the function computes:
    # new arrays, though it may return an input as it is. A function that returns a parameter as
    # `hk.get_parameter` gives it hands back that very array; a model's output is computed, and should one be a
    # parameter, a donated buffer read later fails loudly (`Array has been deleted`), it does not change numbers.
    "haiku.Transformed.init": CallSummary(("self", "rng", "*args", "**kwargs"), ("",), ()),
    "haiku.Transformed.apply": CallSummary(
        ("self", "params", "rng", "*args", "**kwargs"), ("",), ("rng", "*args", "**kwargs"), array_unless=()
    ),
    # With state: `init` → (params, state), where the state holds what `hk.set_state` was given, which may be an
    # input; `apply(params, state, rng, *args)` → (out, new_state), where every entry `hk.set_state` did not set
    # is the old state's array.
    "haiku.TransformedWithState.init": CallSummary(
        ("self", "rng", "*args", "**kwargs"), ("", ""), ("*args", "**kwargs"), by_output=((), ("*args", "**kwargs"))
    ),
    "haiku.TransformedWithState.apply": CallSummary(
        ("self", "params", "state", "rng", "*args", "**kwargs"), ("", ""), ("state", "rng", "*args", "**kwargs"),
        by_output=(("rng", "*args", "**kwargs"), ("state",)),
    ),
}
# The type of what a call returns: `net = hk.transform(f)` makes `net.apply` a `haiku.Transformed.apply`; "="
# where it is the type of the call's first argument (`hk.without_apply_rng(hk.transform(f))`). A function
# decorated with such a call has that type (`@hk.transform`).
CONSTRUCTED_TYPES: dict[str, str] = {
    "haiku.transform": "haiku.Transformed",
    "haiku.transform_with_state": "haiku.TransformedWithState",
    "haiku.without_state": "haiku.Transformed",
    "haiku.with_empty_state": "haiku.TransformedWithState",
    "haiku.without_apply_rng": "=",
}
# Those types are named tuples, by field: `init, apply = hk.transform(f)` binds `apply` to the method.
TYPE_FIELDS: dict[str, tuple[str, ...]] = {
    "haiku.Transformed": ("init", "apply"),
    "haiku.TransformedWithState": ("init", "apply"),
}
