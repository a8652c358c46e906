"""What JAX itself does, as data: which calls trace the functions they are given and how, which calls and
attributes give Python values at trace time, which return arrays, which annotations mean an array, and JAX's
sharding types. NumPy's and Python's entries that JAX code is judged by (`numpy.shape` is static, `numpy.ndarray`
is an array once traced) are here too. Names are fully qualified (`jax.numpy.sum`, not `jnp.sum`); a prefix
ends in a dot. The libraries' own transformations are in their modules and joined to these families in
`tables.py`.
"""

from __future__ import annotations

# ---- transformations that trace the function passed as their first argument (or that they decorate) ----------
JIT_LIKE = frozenset({"jax.jit", "jax.pmap", "jax.experimental.pjit.pjit", "jax.pjit"})
# Transformations whose result gives the gradient of a loss (and, for value_and_grad, the loss).
GRADIENTS = frozenset({"jax.grad", "jax.value_and_grad"})
GRAD_LIKE = GRADIENTS | {"jax.jacfwd", "jax.jacrev", "jax.hessian"}
VMAP_LIKE = frozenset({"jax.vmap"})
CHECKPOINTS = frozenset({"jax.checkpoint", "jax.remat", "jax.ad_checkpoint.checkpoint"})
SHARD_MAPS = frozenset({"jax.shard_map", "jax.experimental.shard_map.shard_map"})
# `custom_jvp(f)`/`custom_vjp(f)` trace `f` where the result is called under a transformation (and run it on
# concrete values otherwise); `make_jaxpr` and `eval_shape` trace abstractly, `jvp`, `vjp` and `linearize` with
# tangents; `lax.map(f, xs)` and `lax.associative_scan(fn, elems)` trace their function as a scan body.
OTHER_TRANSFORMS = CHECKPOINTS | SHARD_MAPS | {
    "jax.custom_jvp", "jax.custom_vjp", "jax.named_call", "jax.make_jaxpr", "jax.eval_shape", "jax.linearize",
    "jax.jvp", "jax.vjp", "jax.lax.map", "jax.lax.associative_scan",
}  # fmt: skip
TRANSFORMS = JIT_LIKE | GRAD_LIKE | VMAP_LIKE | OTHER_TRANSFORMS
# Transformations that always call the function with tracers, even on NumPy arguments (unlike custom_jvp/vjp).
ALWAYS_TRACING = JIT_LIKE | GRAD_LIKE | VMAP_LIKE | CHECKPOINTS | SHARD_MAPS
# Transformations that stage the function into a jaxpr of abstract values, where `bool()` of a traced value
# raises (a Python `if`/`while` on it fails). jax.grad, jax.jvp, jax.custom_jvp and the like run the function
# eagerly on concrete values when nothing else stages it: there Python control flow on arrays works.
STAGING = JIT_LIKE | VMAP_LIKE | CHECKPOINTS | SHARD_MAPS | {
    "jax.make_jaxpr", "jax.eval_shape", "jax.lax.map", "jax.lax.associative_scan"
}  # fmt: skip
# Transformations that compile what they wrap as one program.
COMPILING = JIT_LIKE | SHARD_MAPS
# Reverse-mode differentiation, which lax.while_loop (and fori_loop with traced bounds) does not support.
REVERSE_MODE = frozenset({"jax.grad", "jax.value_and_grad", "jax.jacrev", "jax.hessian", "jax.vjp"})
# Transformations that return a new function object on each call (`jax.grad(f) is not jax.grad(f)`): a jit of
# their result misses jit's cache, which is keyed on the function object, and compiles again.
FUNCTION_MAKERS = GRAD_LIKE | VMAP_LIKE | CHECKPOINTS

# lax control flow: the argument positions (and keyword names) that hold traced bodies.
LAX_BODIES: dict[str, tuple[tuple[int, ...], tuple[str, ...]]] = {
    "jax.lax.scan": ((0,), ("f",)),
    "jax.lax.fori_loop": ((2,), ("body_fun",)),
    "jax.lax.while_loop": ((0, 1), ("cond_fun", "body_fun")),
    "jax.lax.cond": ((1, 2), ("true_fun", "false_fun")),
    "jax.lax.switch": ((1,), ("branches",)),
    "jax.lax.custom_root": ((0, 2, 3), ("f", "solve", "tangent_solve")),
    "jax.lax.custom_linear_solve": ((0, 2, 3), ("matvec", "solve", "transpose_solve")),
}
# lax loops that call their body once per step with the carry the step before returned: the body's position and
# keyword, the index of its carry parameter, and whether it returns `(carry, y)` (scan) or the carry itself.
LAX_LOOPS: dict[str, tuple[int, str, int, bool]] = {
    "jax.lax.scan": (0, "f", 0, True),
    "jax.lax.fori_loop": (2, "body_fun", 1, False),
    "jax.lax.while_loop": (1, "body_fun", 0, False),
}
# Functions passed here run on the host with concrete values: never traced.
HOST_CALLBACKS = frozenset(
    {"jax.pure_callback", "jax.debug.callback", "jax.experimental.io_callback",
     "jax.experimental.host_callback.id_tap", "jax.experimental.host_callback.call"}
)  # fmt: skip
TREE_MAPS = frozenset({"jax.tree.map", "jax.tree_util.tree_map", "jax.tree_map"})
TREE_STRUCTURES = frozenset({"jax.tree.structure", "jax.tree_util.tree_structure", "jax.tree_structure"})
# Ways to register a class whose instances are static when passed to a transformation.
REGISTER_STATIC = frozenset({"jax.tree_util.register_static"})

# ---- Python values at trace time -----------------------------------------------------------------------------
STATIC_ATTRIBUTES = frozenset({"shape", "ndim", "dtype", "size", "weak_type", "sharding", "out_sharding", "aval"})
STATIC_CALLS = frozenset(
    {
        "len",
        "isinstance",
        "issubclass",
        "type",
        "callable",
        "hasattr",
        "id",
        "jax.numpy.shape",
        "jax.lax.axis_size",  # a Python int: the size of a named mapped axis
        "jax.numpy.ndim",
        "jax.numpy.size",
        "jax.numpy.dtype",
        "jax.numpy.result_type",
        "jax.numpy.issubdtype",
        "jax.numpy.finfo",
        "jax.numpy.iinfo",
        "jax.numpy.promote_types",
        "jax.numpy.isdtype",
        # Types, avals and shapes: Python objects at trace time, never arrays (jax.debug.print rejects them).
        "jax.typeof",
        "jax.core.get_aval",
        "jax.eval_shape",
        "jax.ShapeDtypeStruct",
        "jax.dtypes.result_type",
        "jax.dtypes.issubdtype",
        "jax.dtypes.canonicalize_dtype",
        "jax.devices",
        "jax.device_count",
        "jax.local_device_count",
        "jax.process_index",
        "numpy.shape",
        "numpy.ndim",
        "numpy.dtype",
        "numpy.finfo",
        "numpy.iinfo",
    }
)

# ---- calls that return arrays ----------------------------------------------------------------------------------
# The namespaces whose functions compute arrays, by how much of JAX a reader counts: the core four (what a loop
# rule takes for "an array" at a glance), with jax.scipy (what dispatches asynchronously for the timing rule), and
# with jax.image, jax.ops and device_put (what is staged, traced, inside traced code). Other JAX calls
# (jax.tree.map, jax.eval_shape, ...) return whatever their arguments make them: a tree of Python bools stays
# static.
CORE_ARRAY_NAMESPACES = ("jax.numpy.", "jax.nn.", "jax.random.", "jax.lax.")
ASYNC_ARRAY_NAMESPACES = (*CORE_ARRAY_NAMESPACES, "jax.scipy.")
ARRAY_NAMESPACES = (*ASYNC_ARRAY_NAMESPACES, "jax.image.", "jax.ops.", "jax.device_put")

# The library calls whose value is one array, counted as such at a call site (call-site evidence). Functions
# that return shapes, dtypes, tuples or lists (`jnp.shape`, `jnp.split`, `jnp.meshgrid`) are not listed.
_CONSTRUCTORS = ("array", "asarray", "zeros", "ones", "full", "empty", "zeros_like", "ones_like", "full_like",
                 "empty_like", "arange", "linspace", "logspace", "eye", "identity", "stack", "concatenate", "vstack",
                 "hstack", "tile", "repeat", "reshape", "broadcast_to", "tril", "triu", "diag", "outer")  # fmt: skip
_RANDOM = ("normal", "uniform", "bernoulli", "categorical", "randint", "permutation", "choice", "truncated_normal",
           "gumbel", "split", "PRNGKey", "key", "fold_in", "multivariate_normal", "exponential", "laplace", "beta",
           "gamma", "dirichlet", "poisson", "rademacher", "orthogonal", "cauchy", "logistic")  # fmt: skip
ARRAY_MAKERS = frozenset(
    [f"{library}.{name}" for library in ("jax.numpy", "numpy") for name in _CONSTRUCTORS]
    + [f"jax.random.{name}" for name in _RANDOM]
    + [f"numpy.random.{name}" for name in ("normal", "uniform", "rand", "randn", "randint", "standard_normal")]
    + [f"jax.nn.{name}" for name in ("one_hot", "softmax", "log_softmax", "relu", "sigmoid", "gelu", "silu", "tanh")]
)
# Array-returning calls that raise when given a tuple, list or dict of arrays rather than one array (JAX 0.10.2,
# kept true by tests/test_evidence.py): a rewrite that maps over a pytree where the loop walked a container's
# elements then fails at trace time instead of computing something else.
LOUD_FUNCTIONS = frozenset(
    "jax.numpy." + name
    for name in """
    tanh sin cos exp log sqrt abs sum mean max min dot matmul maximum minimum square exp2 log1p expm1 sign negative
    argmax argmin cumsum linalg.norm einsum where clip outer tensordot
    """.split()
) | frozenset("jax.nn." + name for name in "relu sigmoid softmax gelu log_softmax silu".split())

# ---- annotations that mean an array ----------------------------------------------------------------------------
# One JAX array, wherever the parameter is.
ARRAY_ANNOTATIONS = frozenset({"jax.Array", "jax.numpy.ndarray"})
# A NumPy array: one JAX array only where JAX traces the parameter (a NumPy array handed to a traced function
# arrives as a tracer).
TRACED_ARRAY_ANNOTATIONS = frozenset({"numpy.ndarray", "numpy.typing.NDArray"})

# ---- purity ------------------------------------------------------------------------------------------------------
# Namespaces whose functions are pure (functional JAX APIs, math on static values).
PURE_PREFIXES = (
    "jax.numpy.", "jax.lax.", "jax.nn.", "jax.random.", "jax.scipy.", "jax.image.", "jax.tree.", "jax.tree_util.",
    "jax.ops.", "math.", "operator.", "numpy.",
)  # fmt: skip
PURE_CALLS = frozenset(
    {
        "jax.vmap", "jax.jit", "jax.grad", "jax.value_and_grad", "jax.jacfwd", "jax.jacrev", "jax.hessian",
        "jax.checkpoint", "jax.remat", "jax.named_call", "jax.eval_shape", "jax.jvp", "jax.vjp", "jax.linearize",
        "jax.tree_map", "jax.tree_leaves", "jax.tree_flatten", "jax.tree_unflatten", "jax.tree_structure",
        "jax.device_put", "functools.partial", "jax.dtypes.canonicalize_dtype",
        "jax.dtypes.result_type",
    }
)  # fmt: skip
# Exceptions inside those namespaces: I/O, host callbacks, global random state, effects.
IMPURE_PREFIXES = (
    "numpy.random.", "jax.numpy.save", "jax.numpy.load", "jax.numpy.fromfile", "jax.numpy.frombuffer", "numpy.save",
    "numpy.load", "numpy.fromfile", "numpy.loadtxt", "numpy.savetxt", "numpy.genfromtxt", "numpy.memmap",
    "numpy.set_printoptions", "numpy.seterr", "numpy.copyto", "numpy.put", "numpy.place", "numpy.putmask",
    "numpy.fill_diagonal", "numpy.ndarray", "jax.experimental.", "jax.debug.", "jax.lax.cond_p",
)  # fmt: skip

# ---- sharding ----------------------------------------------------------------------------------------------------
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
