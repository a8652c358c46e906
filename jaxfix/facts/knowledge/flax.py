"""What Flax (linen, NNX, flax.struct, flax.training) does, as data. Names are fully qualified, as `import
flax.linen as nn; nn.Module` resolves (`flax.linen.Module`)."""

from __future__ import annotations

from jaxfix.facts.knowledge.summary import CallSummary

# Flax's transformations → the JAX transformation each behaves like for tracing (which parameters it traces,
# whether it compiles): `nnx.jit(f)` traces `f` as `jax.jit(f)` does.
TRANSFORM_ALIASES: dict[str, str] = {
    # Flax NNX
    "flax.nnx.jit": "jax.jit",
    "flax.nnx.pmap": "jax.pmap",
    "flax.nnx.vmap": "jax.vmap",
    "flax.nnx.grad": "jax.grad",
    "flax.nnx.value_and_grad": "jax.value_and_grad",
    "flax.nnx.remat": "jax.checkpoint",
    "flax.nnx.shard_map": "jax.shard_map",
    # Flax linen (lifted transformations of functions)
    "flax.linen.jit": "jax.jit",
    "flax.linen.vmap": "jax.vmap",
    "flax.linen.remat": "jax.checkpoint",
    "flax.linen.checkpoint": "jax.checkpoint",
}
# Compiled callables among them, dispatched asynchronously.
COMPILED_CALLABLES = frozenset({"flax.nnx.jit", "flax.nnx.pmap"})
# How it is told to donate: jax.jit's keywords.
DONATION_KEYWORDS: dict[str, tuple[str, ...]] = {"flax.nnx.jit": ("donate_argnums", "donate_argnames")}
# Functions that take a body as some argument, traced as lax.scan's body is: position, keyword.
BODY_ALIASES: dict[str, tuple[tuple[int, ...], tuple[str, ...]]] = {
    "flax.nnx.scan": ((0,), ("f",)),
    "flax.nnx.fori_loop": ((2,), ("body_fun",)),
    "flax.nnx.while_loop": ((0, 1), ("cond_fun", "body_fun")),
    "flax.nnx.cond": ((1, 2), ("true_fun", "false_fun")),
}
_ALL = ("*",)
# A Flax module's methods run inside `apply`, which training code jits ("*": every method but the untraced ones).
TRACED_BASES: dict[str, tuple[str, ...]] = {
    "flax.linen.Module": _ALL,
    "flax.linen.module.Module": _ALL,
    "flax.nnx.Module": ("__call__",),
    "flax.nnx.module.Module": ("__call__",),
}
TRACED_DECORATORS = frozenset({"flax.linen.compact", "flax.linen.module.compact"})
# A linen module's dataclass fields, an NNX module's constructor arguments and literals set in `__init__` are
# hyperparameters (NNX keeps attributes that are not arrays or Variables in the static graph definition).
STATIC_SELF = frozenset({"flax.linen.Module", "flax.linen.module.Module", "flax.nnx.Module", "flax.nnx.module.Module"})
# Bases whose instances are pytrees handed to transformations as they are (`@nnx.jit def step(model)`): an
# attribute holding a Python scalar is static (part of the tree's structure), Variables and arrays are traced.
PYTREE_MODULES = frozenset({"flax.nnx.Module", "flax.nnx.module.Module"})
STRUCT_DATACLASSES = frozenset({"flax.struct.dataclass"})
STRUCT_FIELDS = frozenset({"flax.struct.field"})
STATIC_FIELDS = frozenset({"flax.struct.static_field"})

CALL_SUMMARIES: dict[str, CallSummary] = {
    # `self.replace(step=self.step + 1, params=new_params, opt_state=new_opt_state, **kwargs)`: the other fields
    # are the state's own.
    "flax.training.train_state.TrainState.apply_gradients": CallSummary(
        ("self",), ("self",), ("self",), updates=True, by_method_name=True
    ),
    "flax.training.train_state.TrainState.replace": CallSummary(("self",), ("self",), ("self",)),
    "flax.struct.PyTreeNode.replace": CallSummary(("self",), ("self",), ("self",)),
    # Flax linen (flax 0.12.8): `model.apply(variables, *args)` returns what the module's method returns, by
    # convention one array, though a module may return a tuple or a dict; with `mutable=` (other than False) or
    # `capture_intermediates=`, a tuple (output, collections) whose entries the call did not change are the
    # variables' own arrays. A TrainState's `apply_fn` is that apply, recognised by its name.
    "flax.linen.Module.apply": CallSummary(
        ("self", "variables", "*args", "**kwargs"), ("",), ("variables", "*args", "**kwargs"),
        array_unless=("mutable", "capture_intermediates"),
    ),
    "flax.training.train_state.TrainState.apply_fn": CallSummary(
        ("self", "variables", "*args", "**kwargs"), ("",), ("variables", "*args", "**kwargs"), by_method_name=True,
        array_unless=("mutable", "capture_intermediates"),
    ),
}
# `layer = nn.Dense(3)` is a linen module; `model = MLP()` of `class MLP(nn.Module)` too.
CONSTRUCTED_BY_MODULE: dict[str, str] = {"flax.linen.": "flax.linen.Module"}
INSTANCE_TYPES: dict[str, str] = {
    "flax.linen.Module": "flax.linen.Module",
    "flax.linen.module.Module": "flax.linen.Module",
}
