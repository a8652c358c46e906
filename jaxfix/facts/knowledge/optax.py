"""What optax does, as data: the functions it traces by convention (a transformation's `init` and `update`),
what its calls return, and which optimizers' `init` makes only new arrays."""

from __future__ import annotations

from jaxfix.facts.knowledge.summary import CallSummary

# Functions whose function arguments run under tracing later (inside the jitted train step).
CONVENTION_WRAPPERS: dict[str, tuple[int, ...]] = {
    "optax.GradientTransformation": (0, 1),
    "optax.GradientTransformationExtraArgs": (0, 1),
    "optax._src.base.GradientTransformation": (0, 1),  # optax's own sources
    "optax._src.base.GradientTransformationExtraArgs": (0, 1),
    "optax.stateless": (0,),
    "optax.stateless_with_tree_map": (0,),
}
# How many leading parameters of such a function hold arrays (optax's update: updates, state, params).
CONVENTION_ARITY: dict[str, int] = {
    "optax.GradientTransformation": 3,
    "optax.GradientTransformationExtraArgs": 3,
    "optax._src.base.GradientTransformation": 3,
    "optax._src.base.GradientTransformationExtraArgs": 3,
}

CALL_SUMMARIES: dict[str, CallSummary] = {
    # `jax.tree.map(lambda p, u: jnp.asarray(p + u).astype(p.dtype), params, updates)`: new arrays like params.
    "optax.apply_updates": CallSummary(("params", "updates"), ("params",), (), updates=True),
    # `tx.init(params)`: the optimizer's state; new arrays only for FRESH_INIT_OPTIMIZERS (optax.contrib's
    # mechanize, prodigy, cocob and dog keep `params` itself in their state, measured on optax 0.2.8).
    "optax.GradientTransformation.init": CallSummary(("self", "params"), ("",), ("params",)),
    # `tx.update(grads, opt_state, params)`: updates like the gradients, a state like the old one.
    "optax.GradientTransformation.update": CallSummary(
        ("self", "updates", "state", "params"), ("updates", "state"), ("state",)
    ),
}
# `tx = optax.adam(1e-3)` is an optimizer.
CONSTRUCTED_BY_MODULE: dict[str, str] = {"optax.": "optax.GradientTransformation"}

# optax optimizers whose `init` returns only new arrays (`optax.tree.zeros_like`/`full_like` of the parameters,
# a zero count, empty states), read from optax 0.2.8's `alias.py` and the `scale_by_*` transformations they chain.
FRESH_INIT_OPTIMIZERS = frozenset(
    {"optax.adam", "optax.adamw", "optax.sgd", "optax.rmsprop", "optax.adagrad", "optax.lamb", "optax.lion",
     "optax.adabelief", "optax.radam", "optax.adamax", "optax.clip", "optax.clip_by_global_norm",
     "optax.scale_by_adam"}
)  # fmt: skip
# optax optimizers whose `init` puts the parameters' own arrays in the state (`params0 = params`), measured on
# optax 0.2.8 by comparing buffers (tests/test_summaries.py). A jitted step that receives both the parameters and
# such a state fresh from `init` cannot donate either: XLA refuses a donated buffer that the call also uses.
PARAMS_KEEPING_OPTIMIZERS = frozenset(
    {"optax.contrib.cocob", "optax.contrib.dog", "optax.contrib.dowg", "optax.contrib.madgrad",
     "optax.contrib.mechanize", "optax.contrib.prodigy", "optax.contrib.sam", "optax.contrib.scale_by_cocob",
     "optax.contrib.scale_by_madgrad", "optax.scale_by_distance_over_gradients"}
)  # fmt: skip
# Combinators whose `init` is that of the transformations they are given (a tuple of their states).
FRESH_INIT_COMBINATORS = frozenset({"optax.chain"})
