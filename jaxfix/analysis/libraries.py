"""What the libraries JAX users build on trace by convention: one table, read by the project index and the traced
analysis alike. Names are fully qualified, as `import flax.linen as nn; nn.Module` resolves (`flax.linen.Module`).

- TRANSFORM_ALIASES: a library's transformation → the JAX transformation it behaves like for tracing (which
  parameters it traces, whether it compiles). `nnx.jit(f)` traces `f` as `jax.jit(f)` does.
- TRACED_BASES: a base class → the methods of its subclasses that run under tracing (`"*"`: every method but
  those in UNTRACED_METHODS). A Flax module's methods run inside `apply`, which training code jits; an optax
  transformation's `update` runs inside the jitted train step; an environment's `step` and `reset` are jitted
  by every trainer built on gymnax, brax or jumanji.
- TRACED_DECORATORS: decorators that mark a method as traced (`@nn.compact`).
- STATIC_SELF: bases whose instances' declared attributes are hyperparameters (static at trace time): a linen
  module's dataclass fields, a Haiku or NNX module's constructor arguments and literals set in `__init__` (NNX keeps
  attributes that are not arrays or Variables in the static graph definition).
- ARRAY_TYPES: annotations that mean "an array" (`chex.Array`).
- STATIC_CONFIG_TYPES: configuration classes whose instances are never traced (`ml_collections.ConfigDict`).
- CALL_SUMMARIES: what a library call returns, in structure and shape terms (`optax.apply_updates(params, u)`:
  a tree like `params`), whether its arrays are new buffers or may be its arguments', and whether it applies an
  optimizer's update; FRESH_INIT_OPTIMIZERS: the optax optimizers whose `init` makes only new arrays;
  PARAMS_KEEPING_OPTIMIZERS: those whose state holds the parameters' own arrays. Read by donation (JF501)
  through `jaxfix.analysis.summaries`. A method's summary is keyed by the type of its receiver
  (`haiku.Transformed.apply`), which CONSTRUCTED_TYPES tells from the call the receiver was made by.
- SHARDING_CLASSES, PARTITION_SPECS, MESH_CLASSES, CONTEXT_MESH_SETTERS: JAX's sharding types, read by
  `jaxfix.analysis.sharding`: what a sharding argument holds, and where a module enters a legacy mesh context
  (`with mesh:`, which `jax.experimental.pjit.pjit` reads and `jax.jit` does not).
"""

from __future__ import annotations

from dataclasses import dataclass

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
    # Haiku
    "haiku.vmap": "jax.vmap",
    "haiku.remat": "jax.checkpoint",
    "haiku.grad": "jax.grad",
    "haiku.value_and_grad": "jax.value_and_grad",
    # Equinox (the filtered transformations are known to traced.py by their own names)
    "equinox.filter_shard_map": "jax.shard_map",
}

# Library functions that take a body as some argument, traced as lax.scan's body is: position, keyword.
BODY_ALIASES: dict[str, tuple[tuple[int, ...], tuple[str, ...]]] = {
    "flax.nnx.scan": ((0,), ("f",)),
    "flax.nnx.fori_loop": ((2,), ("body_fun",)),
    "flax.nnx.while_loop": ((0, 1), ("cond_fun", "body_fun")),
    "flax.nnx.cond": ((1, 2), ("true_fun", "false_fun")),
    "haiku.scan": ((0,), ("f",)),
    "haiku.fori_loop": ((2,), ("body_fun",)),
    "haiku.while_loop": ((0, 1), ("cond_fun", "body_fun")),
    "haiku.cond": ((1, 2), ("true_fun", "false_fun")),
    "haiku.switch": ((1,), ("branches",)),
}

# Functions whose function argument runs under tracing later, as a convention (the result is jitted by the
# caller): its parameters are of unknown kind.
CONVENTION_WRAPPERS: dict[str, tuple[int, ...]] = {
    "haiku.transform": (0,),
    "haiku.transform_with_state": (0,),
    "haiku.without_apply_rng": (0,),
    "haiku.multi_transform": (0,),
    "optax.GradientTransformation": (0, 1),
    "optax.GradientTransformationExtraArgs": (0, 1),
    "optax._src.base.GradientTransformation": (0, 1),  # optax's own sources
    "optax._src.base.GradientTransformationExtraArgs": (0, 1),
    "haiku._src.transform.transform": (0,),  # haiku's own sources
    "haiku._src.transform.transform_with_state": (0,),
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

_ALL = ("*",)
TRACED_BASES: dict[str, tuple[str, ...]] = {
    "flax.linen.Module": _ALL,
    "flax.linen.module.Module": _ALL,
    "flax.nnx.Module": ("__call__",),
    "flax.nnx.module.Module": ("__call__",),
    "haiku.Module": _ALL,
    "haiku._src.module.Module": _ALL,
    "equinox.Module": ("__call__",),
    "equinox._module.Module": ("__call__",),
    "gymnax.environments.environment.Environment": ("step", "reset", "step_env", "reset_env", "get_obs"),
    "brax.envs.base.Env": ("step", "reset"),
    "brax.envs.base.PipelineEnv": ("step", "reset"),
    "brax.envs.env.Env": ("step", "reset"),
    "brax.envs.Env": ("step", "reset"),
    "brax.envs.PipelineEnv": ("step", "reset"),
    "jumanji.env.Environment": ("step", "reset"),
    "jumanji.Environment": ("step", "reset"),
}
# Methods that construct or describe a module rather than compute with it.
UNTRACED_METHODS = frozenset(
    {"__init__", "__post_init__", "setup", "__repr__", "__str__", "__hash__", "__eq__", "__getattr__",
     "__setattr__", "__init_subclass__", "__new__", "__getstate__", "__setstate__", "tree_flatten",
     "tree_unflatten", "observation_space", "action_space", "state_space", "name", "num_actions",
     "default_params", "observation_spec", "action_spec", "render", "close", "__enter__", "__exit__"}
)  # fmt: skip
TRACED_DECORATORS = frozenset({"flax.linen.compact", "flax.linen.module.compact", "haiku.transparent"})
STATIC_SELF = frozenset(
    {"flax.linen.Module", "flax.linen.module.Module", "flax.nnx.Module", "flax.nnx.module.Module", "haiku.Module",
     "haiku._src.module.Module"}
)  # fmt: skip
# Bases whose instances are pytrees handed to transformations as they are (`@nnx.jit def step(model)`): an
# attribute holding a Python scalar is static (part of the tree's structure), Variables and arrays are traced.
PYTREE_MODULES = frozenset({"flax.nnx.Module", "flax.nnx.module.Module"})
ARRAY_TYPES = frozenset(
    {"chex.Array", "chex.ArrayDevice", "chex.ArrayNumpy", "jax.Array", "jax.numpy.ndarray", "jaxtyping.Array",
     "jax.typing.ArrayLike"}
)  # fmt: skip
# Configuration objects that are never traced values: they are not pytrees, so JAX rejects them as traced
# arguments, and they reach traced code only as a static argument (a hashable FrozenConfigDict) or closed over.
# A parameter annotated with one is a Python value at trace time, and so is every attribute of it
# (`range(config.num_layers)` is a static trip count).
STATIC_CONFIG_TYPES = frozenset(
    {"ml_collections.ConfigDict", "ml_collections.FrozenConfigDict", "ml_collections.config_dict.ConfigDict",
     "ml_collections.config_dict.FrozenConfigDict", "ml_collections.config_dict.config_dict.ConfigDict",
     "ml_collections.config_dict.config_dict.FrozenConfigDict"}
)  # fmt: skip
# Ways to register a class whose instances are static when passed to a transformation.
REGISTER_STATIC = frozenset({"jax.tree_util.register_static"})
STRUCT_DATACLASSES = frozenset({"flax.struct.dataclass", "chex.dataclass"})
STRUCT_FIELDS = frozenset({"flax.struct.field", "equinox.field", "chex.field"})
STATIC_FIELDS = frozenset({"flax.struct.static_field", "equinox.static_field"})
# Parameters of a conventionally traced function that hold Python values, not arrays: by name, or by annotation.
FLAG_PARAMETERS = frozenset(
    {"train", "training", "is_training", "deterministic", "decode", "use_running_average", "mutable", "method",
     "rngs", "mode", "inference", "return_state", "return_aux", "verbose", "debug", "capture_intermediates",
     "config", "cfg", "hparams", "name"}
)  # fmt: skip
# ---- sharding ------------------------------------------------------------------------------------------------
# Constructors of `jax.sharding.Sharding` objects: a sharding that names its devices, which no context changes.
SHARDING_CLASSES = frozenset(
    {"jax.sharding.NamedSharding", "jax.sharding.SingleDeviceSharding", "jax.sharding.PositionalSharding",
     "jax.sharding.GSPMDSharding", "jax.NamedSharding"}
)  # fmt: skip
# PartitionSpec under every name it had: a spec that names mesh axes, resolved against the context mesh.
PARTITION_SPECS = frozenset(
    {"jax.sharding.PartitionSpec", "jax.P", "jax.experimental.PartitionSpec", "jax.experimental.pjit.PartitionSpec",
     "jax.interpreters.pxla.PartitionSpec"}
)  # fmt: skip
MESH_CLASSES = frozenset(
    {"jax.sharding.Mesh", "jax.experimental.maps.Mesh", "jax.interpreters.pxla.Mesh", "jax.make_mesh"}
)  # fmt: skip
# Context managers that set the new context mesh (which jax.jit reads), not the legacy one of `with mesh:`.
CONTEXT_MESH_SETTERS = frozenset({"jax.set_mesh", "jax.sharding.use_mesh", "jax.sharding.set_mesh"})

PYTHON_TYPES = frozenset({"bool", "int", "str", "float", "Callable", "Sequence", "Tuple", "tuple", "list", "List",
                          "dict", "Dict", "Optional", "Any", "type", "Type"})  # fmt: skip


# ---- what library calls return ------------------------------------------------------------------------------

@dataclass(frozen=True)
class CallSummary:
    """What one library call returns, in structure and shape terms (checked against the library's source). Every
    call summarised is pure: it returns new values and changes neither its arguments nor its receiver (a loop body
    that calls it can become a lax loop's body)."""

    parameters: tuple[str, ...]  # its positional parameters; a method's receiver is "self"
    returns: tuple[str, ...]  # per output (one for a single value): the parameter whose pytree structure, leaf
    #                           shapes and dtypes it has, or "" where that is not known
    aliases: tuple[str, ...]  # the parameters whose arrays the result may hold as they are (not new buffers)
    updates: bool = False  # applies an optimizer's update: marks a training step, whose output is the new state
    by_method_name: bool = False  # a method recognised by its name alone: the receiver is a step's parameter
    #                              whose type cannot be seen (`state.apply_gradients(grads=g)`)
    by_output: tuple[tuple[str, ...], ...] = ()  # per output, where outputs differ: the parameters whose arrays
    #                                              that output may hold (`aliases` is their union)
    array_unless: tuple[str, ...] | None = None  # evidence, not proof: the output is one array by convention
    #                                              (a model's logits), unless a keyword named here is passed

    def output_aliases(self, output: int | None) -> tuple[str, ...]:
        """The parameters whose arrays output `output` (None: the whole result) may hold as they are."""
        return self.by_output[output] if output is not None and self.by_output else self.aliases


CALL_SUMMARIES: dict[str, CallSummary] = {
    # `jax.tree.map(lambda p, u: jnp.asarray(p + u).astype(p.dtype), params, updates)`: new arrays like params.
    "optax.apply_updates": CallSummary(("params", "updates"), ("params",), (), updates=True),
    # A leaf whose update is None is the model's own leaf.
    "equinox.apply_updates": CallSummary(("model", "updates"), ("model",), ("model",), updates=True),
    # `self.replace(step=self.step + 1, params=new_params, opt_state=new_opt_state, **kwargs)`: the other fields
    # are the state's own.
    "flax.training.train_state.TrainState.apply_gradients": CallSummary(
        ("self",), ("self",), ("self",), updates=True, by_method_name=True
    ),
    "flax.training.train_state.TrainState.replace": CallSummary(("self",), ("self",), ("self",)),
    "flax.struct.PyTreeNode.replace": CallSummary(("self",), ("self",), ("self",)),
    # `eqx.filter(model, eqx.is_array)`: the model's own leaves (the others replaced by None).
    "equinox.filter": CallSummary(("pytree", "filter_spec"), ("pytree",), ("pytree",)),
    # `tx.init(params)`: the optimizer's state; new arrays only for FRESH_INIT_OPTIMIZERS (optax.contrib's
    # mechanize, prodigy, cocob and dog keep `params` itself in their state, measured on optax 0.2.8).
    "optax.GradientTransformation.init": CallSummary(("self", "params"), ("",), ("params",)),
    # `tx.update(grads, opt_state, params)`: updates like the gradients, a state like the old one.
    "optax.GradientTransformation.update": CallSummary(
        ("self", "updates", "state", "params"), ("updates", "state"), ("state",)
    ),
    # Haiku (dm-haiku 0.0.17, tests/test_summaries.py): `net.init(rng, *args)` returns the parameters its
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

# The type of what a library call returns, for the summaries keyed by a receiver's type: `net = hk.transform(f)`
# makes `net.apply` a `haiku.Transformed.apply`; "=" where it is the type of the call's first argument
# (`hk.without_apply_rng(hk.transform(f))`). A function decorated with such a call has that type (`@hk.transform`).
CONSTRUCTED_TYPES: dict[str, str] = {
    "haiku.transform": "haiku.Transformed",
    "haiku.transform_with_state": "haiku.TransformedWithState",
    "haiku.without_state": "haiku.Transformed",
    "haiku.with_empty_state": "haiku.TransformedWithState",
    "haiku.without_apply_rng": "=",
}
# Modules whose functions, bound to a name, all make one type: `tx = optax.adam(1e-3)` is an optimizer, `layer =
# nn.Dense(3)` a linen module.
CONSTRUCTED_BY_MODULE: dict[str, str] = {"optax.": "optax.GradientTransformation", "flax.linen.": "flax.linen.Module"}
# Base classes whose subclasses' instances have a type of the summaries: `model = MLP()` of `class MLP(nn.Module)`.
INSTANCE_TYPES: dict[str, str] = {
    "flax.linen.Module": "flax.linen.Module",
    "flax.linen.module.Module": "flax.linen.Module",
}
# Those types that are named tuples, by field: `init, apply = hk.transform(f)` binds `apply` to the method.
TYPE_FIELDS: dict[str, tuple[str, ...]] = {
    "haiku.Transformed": ("init", "apply"),
    "haiku.TransformedWithState": ("init", "apply"),
}

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
