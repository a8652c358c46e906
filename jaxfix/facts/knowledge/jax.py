"""What JAX itself does, as data: which calls trace the functions they are given and how, which calls and
attributes give Python values at trace time, which return arrays, which annotations mean an array, and JAX's
sharding types. NumPy's and Python's entries that JAX code is judged by (`numpy.shape` is static, `numpy.ndarray`
is an array once traced) are here too. Names are fully qualified (`jax.numpy.sum`, not `jnp.sum`); a prefix
ends in a dot. The libraries' own transformations are in their modules and joined to these families in
`tables.py`.
"""

from __future__ import annotations

_JNP = "jax.numpy."


def _jnp(names: str) -> frozenset[str]:
    return frozenset(_JNP + name for name in names.split())


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
# How each compiler is told which arguments' buffers it may reuse for its outputs (donation).
DONATION_KEYWORDS: dict[str, tuple[str, ...]] = {
    "jax.jit": ("donate_argnums", "donate_argnames"),
    "jax.pmap": ("donate_argnums",),
}
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
# How a function is passed with some of its arguments bound (a lax loop's body, a jitted function).
PARTIAL = "functools.partial"
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
# The namespaces whose functions compute arrays, by how much of JAX a reader counts: the core four (what the
# loop rules and the dataflow take for "one array" at a glance), with jax.scipy (array math: what the timing rule
# takes for asynchronous, what vmap batches, what makes a traced value in the project index), and with
# jax.image, jax.ops and device_put (what is staged, traced, inside traced code). Other JAX calls (jax.tree.map,
# jax.eval_shape, ...) return whatever their arguments make them: a tree of Python bools stays static.
CORE_ARRAY_NAMESPACES = ("jax.numpy.", "jax.nn.", "jax.random.", "jax.lax.")
NUMERIC_NAMESPACES = (*CORE_ARRAY_NAMESPACES, "jax.scipy.")
ARRAY_NAMESPACES = (*NUMERIC_NAMESPACES, "jax.image.", "jax.ops.", "jax.device_put")
# The namespaces whose calls return new buffers (save ARRAY_CONVERSIONS), for donation.
FRESH_BUFFER_NAMESPACES = ("jax.numpy.", "jax.random.")
# jax.numpy's conversions: one array of what they are given (a list, a tuple, an array), which may be their
# argument itself rather than a new array.
ARRAY_CONVERSIONS = frozenset({"jax.numpy.asarray", "jax.numpy.array"})

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
# jax.numpy functions that always return one new array (NumPy allocates new memory for them too).
FRESH_ARRAY_FUNCTIONS = frozenset(
    "jax.numpy." + name
    for name in """
    zeros ones full empty zeros_like ones_like full_like empty_like array arange linspace logspace geomspace eye
    identity tri tril triu concatenate stack hstack vstack dstack column_stack where copy tile repeat pad sort
    argsort cumsum cumprod diff take clip roll outer kron dot matmul vdot inner tensordot cross abs absolute
    negative exp exp2 expm1 log log1p log2 log10 sqrt cbrt square reciprocal sign floor ceil round rint trunc sin
    cos tan arcsin arccos arctan arctan2 sinh cosh tanh add subtract multiply divide true_divide floor_divide mod
    remainder power maximum minimum fmax fmin hypot logaddexp sum prod mean std var max min amax amin argmax argmin
    all any nansum nanmean logical_and logical_or logical_not logical_xor isnan isinf isfinite equal not_equal less
    less_equal greater greater_equal nan_to_num interp convolve trace
    linalg.norm linalg.inv linalg.det linalg.solve linalg.pinv linalg.cholesky linalg.matrix_power
    """.split()
)
# jax.numpy functions that return one array that, in NumPy, may be a view of (share memory with) an argument.
VIEW_ARRAY_FUNCTIONS = frozenset(
    "jax.numpy." + name
    for name in """
    asarray reshape ravel transpose swapaxes moveaxis squeeze expand_dims broadcast_to flip fliplr flipud rot90
    diagonal real imag matrix_transpose permute_dims einsum
    """.split()
)
# jax.random samplers: each returns one new array (not split/key, which make keys).
RANDOM_SAMPLERS = frozenset(
    "jax.random." + name
    for name in """
    normal uniform randint bernoulli categorical choice permutation truncated_normal gamma beta exponential laplace
    logistic gumbel poisson dirichlet multivariate_normal cauchy rademacher t chisquare lognormal pareto ball
    orthogonal binomial geometric generalized_normal loggamma maxwell double_sided_maxwell weibull_min f
    triangular wald
    """.split()
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

# ---- what jax.numpy, jax.nn and jax.lax functions do to shapes and dtypes ---------------------------------------
# Calls whose result has a shape other than their array argument's: a carried value passed through them grows
# or shrinks from one iteration to the next, which lax loops reject.
RESHAPING = _jnp(
    """
    concatenate stack hstack vstack dstack column_stack append insert delete pad repeat tile expand_dims
    atleast_1d atleast_2d atleast_3d broadcast_to kron outer reshape ravel squeeze diff convolve correlate
    """
)
# Reductions that return a 0-d array when called without an axis.
REDUCTIONS = _jnp(
    """
    sum mean max min prod std var all any argmax argmin amax amin nansum nanmean nanmax nanmin median ptp average
    count_nonzero vdot linalg.norm linalg.det trace logaddexp.reduce
    """
) | frozenset({"jax.nn.logsumexp", "jax.scipy.special.logsumexp"})
# Products whose result has the rank of NumPy's matmul rule; calls that return one dimension (without `axis=`).
MATMULS = frozenset({"jax.numpy.dot", "jax.numpy.matmul"})
RANK_ONE = frozenset({"jax.numpy.arange", "jax.numpy.linspace", "jax.numpy.ravel"})
# Elementwise functions: the result has the broadcast shape of the arguments.
ELEMENTWISE = (
    _jnp(
        """
        sin cos tan arcsin arccos arctan arctan2 sinh cosh tanh exp exp2 expm1 log log1p log2 log10 sqrt cbrt abs
        absolute add subtract multiply divide true_divide floor_divide power mod remainder maximum minimum where
        square sign floor ceil round rint trunc clip logaddexp hypot negative reciprocal float16 float32 float64
        bfloat16 int8 int16 int32 int64 uint8 uint32 complex64 complex128 asarray array logical_and logical_or
        logical_not equal not_equal less less_equal greater greater_equal isnan isfinite nan_to_num
        """
    )
    | frozenset("jax.nn." + n for n in "relu sigmoid softplus silu swish gelu elu leaky_relu tanh log_sigmoid".split())
    | frozenset("jax.lax." + n for n in "add sub mul div max min pow exp log sin cos tanh abs neg stop_gradient".split())
)
LIKE = _jnp("zeros_like ones_like full_like empty_like")
FILLED = _jnp("zeros ones full empty")

# Functions whose result is at least float whatever their argument (sin of an int array is float32).
INEXACT_RESULT = _jnp(
    """
    sin cos tan arcsin arccos arctan arctan2 sinh cosh tanh arcsinh arccosh arctanh exp exp2 expm1 log log1p log2
    log10 sqrt cbrt divide true_divide reciprocal hypot logaddexp mean average std var nanmean median linalg.norm
    linalg.det linalg.inv linalg.solve deg2rad rad2deg sinc
    """
) | frozenset(
    "jax.nn." + n for n in "relu6 sigmoid softplus silu swish gelu elu log_sigmoid softmax log_softmax".split()
) | frozenset({"jax.nn.logsumexp", "jax.scipy.special.logsumexp"})
# Functions whose result has the category of their (promoted) array arguments.
KIND_KEEPING = _jnp(
    """
    abs absolute add subtract multiply maximum minimum square sign negative clip floor_divide mod remainder power
    sum prod max min amax amin cumsum cumprod dot matmul vdot outer kron roll flip transpose reshape ravel
    concatenate stack squeeze expand_dims tile repeat where nan_to_num
    """
) | frozenset({"jax.nn.relu", "jax.lax.stop_gradient", "jax.lax.neg", "jax.lax.abs"})
BOOL_RESULT = _jnp(
    "equal not_equal less less_equal greater greater_equal isnan isfinite isinf logical_and logical_or logical_not all any"
)
INT_RESULT = _jnp("argmax argmin argsort count_nonzero searchsorted")
# Constructors whose default dtype is float.
FLOAT_BY_DEFAULT = _jnp("zeros ones empty eye identity linspace logspace")
RANDOM_FLOAT = frozenset(
    "jax.random." + n for n in "normal uniform truncated_normal beta gamma exponential laplace logistic".split()
)

# Elementwise functions whose result has the dtype of their float operands.
FLOAT_PRESERVING = frozenset(
    _JNP + name
    for name in """
    sin cos tan arcsin arccos arctan arctan2 sinh cosh tanh exp exp2 expm1 log log1p log2 log10 sqrt cbrt abs
    absolute add subtract multiply divide true_divide power maximum minimum square sign floor ceil round rint trunc
    clip logaddexp hypot negative reciprocal
    """.split()
) | frozenset("jax.nn." + n for n in "relu sigmoid softplus silu swish gelu elu leaky_relu tanh log_sigmoid".split())

# ---- what calls accept and return --------------------------------------------------------------------------------
# Calls that accept a traced integer (what a Python loop index becomes inside a loop function) at the given
# argument positions and keywords; ALL: every positional argument.
ALL = -1
INDEX_ACCEPTING: dict[str, tuple[tuple[int, ...], tuple[str, ...]]] = {
    **{
        "jax.numpy." + name: ((ALL,), ())
        for name in """
        sin cos tan arcsin arccos arctan arctan2 sinh cosh tanh exp exp2 expm1 log log1p log2 log10 sqrt cbrt abs
        absolute add subtract multiply divide true_divide floor_divide power float_power mod remainder fmod maximum
        minimum fmax fmin where square sign floor ceil round rint trunc logical_and logical_or logical_not
        logical_xor equal not_equal less less_equal greater greater_equal hypot logaddexp isnan isfinite isinf
        negative positive reciprocal float16 float32 float64 bfloat16 int8 int16 int32 int64 uint8 uint16 uint32
        uint64 complex64 complex128 bool_
        """.split()
    },
    "jax.numpy.clip": ((ALL,), ("min", "max", "a_min", "a_max")),
    "jax.numpy.asarray": ((0,), ("a",)),
    "jax.numpy.array": ((0,), ("object",)),
    "jax.numpy.full": ((1,), ("fill_value",)),
    "jax.numpy.full_like": ((1,), ("fill_value",)),
    "jax.numpy.roll": ((1,), ("shift",)),
    "jax.numpy.take": ((1,), ("indices",)),
    "jax.numpy.take_along_axis": ((1,), ("indices",)),
    "jax.random.fold_in": ((1,), ("data",)),
    "jax.nn.one_hot": ((0,), ("x",)),
    **{
        "jax.lax." + name: ((ALL,), ())
        for name in "add sub mul div rem max min pow neg abs sign select exp log sin cos tanh eq ne lt le gt ge".split()
    },
    "jax.lax.convert_element_type": ((0,), ("operand",)),
    "jax.lax.dynamic_slice": ((1,), ("start_indices",)),
    "jax.lax.dynamic_update_slice": ((2,), ("start_indices",)),
    "jax.lax.dynamic_slice_in_dim": ((1,), ("start_index",)),
    "jax.lax.dynamic_index_in_dim": ((1,), ("index",)),
    "jax.lax.dynamic_update_slice_in_dim": ((2,), ("start_index",)),
    "jax.lax.dynamic_update_index_in_dim": ((2,), ("index",)),
    "jax.lax.cond": ((0,), ("pred",)),
    "jax.lax.switch": ((0,), ("index",)),
    "abs": ((0,), ()),
}
# jax.numpy functions that may return a tuple or list (so that indexing their result needs a Python int).
SEQUENCE_RETURNING = frozenset(
    "jax.numpy." + name
    for name in """
    split array_split hsplit vsplit dsplit meshgrid nonzero where unique histogram gradient ix_ indices
    broadcast_arrays atleast_1d atleast_2d atleast_3d linalg.eigh linalg.eig linalg.svd linalg.qr linalg.slogdet
    linalg.lstsq modf frexp divmod unravel_index tril_indices triu_indices diag_indices
    """.split()
)
# jax.numpy functions that accept Python lists, so an argument passed to them may be a list.
SEQUENCE_ACCEPTING = frozenset(
    "jax.numpy." + name
    for name in "array asarray stack hstack vstack dstack column_stack concatenate block einsum select".split()
)
# lax functions that return whatever pytree their body returns.
PYTREE_RETURNING = frozenset(
    "jax.lax." + name for name in "scan while_loop fori_loop cond switch map associative_scan custom_root".split()
)
# Calls in the array namespaces that return something other than one array: Python values computed from
# shapes and dtypes (`jnp.iscomplexobj(x)`, `lax.axis_size(name)`), tuples and lists, pytrees, functions.
NOT_ONE_ARRAY = (
    frozenset(
        {"jax.device_put", "jax.random.split", "jax.random.key_dtype", "jax.random.key_impl"}
        | {"jax.numpy." + n for n in """
            iscomplexobj isrealobj isscalar isdtype issubdtype ndim shape size promote_types result_type dtype finfo
            iinfo can_cast iterable einsum_path frompyfunc array_split atleast_1d atleast_2d atleast_3d average
            broadcast_arrays broadcast_shapes diag_indices diag_indices_from divmod dsplit frexp histogram histogram2d
            histogramdd hsplit indices intersect1d ix_ mask_indices meshgrid modf nonzero polydiv polyfit split
            tril_indices tril_indices_from triu_indices triu_indices_from unique unique_all unique_counts
            unique_inverse unravel_index unstack vsplit get_printoptions printoptions gradient
        """.split()}
        | {"jax.lax." + n for n in """
            axis_size conv_dimension_numbers dtype padtype_to_pads approx_max_k approx_min_k sort_key_val top_k
            unstack broadcast_shapes reduce reduce_window sort
        """.split()}
    )
    | SEQUENCE_RETURNING
    | PYTREE_RETURNING
)
NOT_ONE_ARRAY_PREFIXES = ("jax.nn.initializers.",)
BOOLEAN_RESULT = frozenset(
    "jax.numpy." + name
    for name in """
    equal not_equal less less_equal greater greater_equal isnan isfinite isinf isneginf isposinf isclose allclose
    array_equal array_equiv logical_and logical_or logical_not logical_xor all any signbit isreal iscomplex
    """.split()
)
# Elementwise tests of one array, whose result has its shape (`jnp.isnan(x)`), and the elementwise logical
# functions of two.
SHAPE_KEEPING_TESTS = _jnp("isnan isfinite isinf isposinf isneginf signbit isreal iscomplex")
LOGICAL_BINARY = _jnp("logical_and logical_or logical_xor")
# Array methods whose result is boolean (`(x > 0).any()`).
BOOLEAN_METHODS = frozenset({"all", "any"})

# ---- derivatives and random keys ---------------------------------------------------------------------------------
# Elementwise functions whose derivative is finite wherever their arguments are finite: evaluating them on the
# inputs of the branch not taken cannot put `0 * inf` into a gradient.
FINITE_DERIVATIVE = frozenset(
    {"jax.numpy." + n for n in """
        abs absolute negative positive sign floor ceil round rint trunc maximum minimum clip where sin cos tanh
        square real imag conj conjugate add subtract multiply logical_and logical_or logical_not equal not_equal
        less less_equal greater greater_equal zeros_like ones_like full_like isnan isfinite float32 float64
        int32 bool_ asarray
    """.split()}
    | {"jax.nn." + n for n in "relu sigmoid softplus silu swish gelu elu leaky_relu relu6 hard_tanh".split()}
    | {"jax.lax." + n for n in "max min abs neg sign sin cos tanh add sub mul select stop_gradient".split()}
)
# The `*_like` constructors whose values are defined (not empty_like).
FILLED_LIKE = frozenset({"jax.numpy.zeros_like", "jax.numpy.ones_like", "jax.numpy.full_like"})
# jax.random functions whose first argument (or `key=`) is a key they consume.
KEY_CONSUMERS = frozenset(
    "jax.random." + name
    for name in """
    normal uniform bernoulli categorical randint permutation choice truncated_normal gumbel exponential gamma
    loggamma beta dirichlet multivariate_normal laplace logistic poisson cauchy rademacher shuffle orthogonal ball
    bits maxwell double_sided_maxwell weibull_min t pareto lognormal chisquare f geometric binomial triangular
    rayleigh wald generalized_normal split
    """.split()
)
# jax.random samplers of floats, with the position of their `dtype` parameter.
RANDOM_FLOAT_DTYPE_POSITION = {
    **{"jax.random." + name: 2 for name in "normal uniform exponential laplace logistic gumbel cauchy".split()},
    **{"jax.random." + name: 3 for name in "gamma dirichlet t".split()},
    **{"jax.random." + name: 4 for name in "truncated_normal beta multivariate_normal".split()},
}
# Where a function takes its dtype positionally (`jnp.zeros(3, jnp.int32)`).
DTYPE_POSITION = {
    **{_JNP + name: 1 for name in "zeros ones empty identity array asarray zeros_like ones_like empty_like".split()},
    **{_JNP + name: 2 for name in "full full_like".split()},
    _JNP + "eye": 3,
    _JNP + "arange": 3,
    _JNP + "linspace": 5,
    _JNP + "logspace": 5,
    _JNP + "geomspace": 4,
    **RANDOM_FLOAT_DTYPE_POSITION,
}
# The same for the filled constructors and the `*_like` ones (`jnp.full(shape, value, dtype)`).
FILLED_DTYPE_POSITION = {name: DTYPE_POSITION[name] for name in FILLED}
LIKE_DTYPE_POSITION = {name: DTYPE_POSITION[name] for name in LIKE}


# ---- what jax.vmap batches ------------------------------------------------------------------------------------

# The calls that stack a list of arrays into one, and how a rewrite spells each.
STACKING = {"jax.numpy.stack": "jnp.stack", "jax.numpy.array": "jnp.array", "jax.numpy.asarray": "jnp.asarray"}
# Functions whose result shape depends on the values: each element may give another shape, and under
# jax.vmap they raise (unless given a static `size=`).
VALUE_SHAPED = frozenset(
    "jax.numpy." + name
    for name in "nonzero argwhere flatnonzero unique unique_values unique_counts compress extract trim_zeros "
    "union1d intersect1d setdiff1d setxor1d".split()
)
# Arguments that are shapes, sizes or counts (positions, keywords): a batched value there has no single value
# under jax.vmap (`jnp.zeros(i)`, `x.reshape(i, -1)`, `jax.random.normal(key, (i,))`).
SHAPE_ARGUMENTS = {
    **{"jax.numpy." + n: ((0,), ("shape",)) for n in "zeros ones empty full".split()},
    **{"jax.numpy." + n: ((), ("shape",)) for n in "zeros_like ones_like empty_like full_like".split()},
    "jax.numpy.arange": ((0, 1, 2), ("start", "stop", "step")),
    "jax.numpy.linspace": ((2,), ("num",)),
    "jax.numpy.logspace": ((2,), ("num",)),
    "jax.numpy.eye": ((0, 1, 2), ("N", "M", "k")),
    "jax.numpy.identity": ((0,), ("n",)),
    "jax.numpy.tri": ((0, 1, 2), ("N", "M", "k")),
    "jax.numpy.broadcast_to": ((1,), ("shape",)),
    "jax.numpy.reshape": ((1,), ("newshape", "shape")),
    "jax.numpy.tile": ((1,), ("reps",)),
    "jax.numpy.repeat": ((1,), ("repeats", "total_repeat_length")),
    "jax.numpy.pad": ((1,), ("pad_width",)),
    "jax.numpy.resize": ((1,), ("new_shape",)),
    "jax.numpy.split": ((1,), ("indices_or_sections",)),
    "jax.numpy.tril": ((1,), ("k",)),
    "jax.numpy.triu": ((1,), ("k",)),
}
# jax.random functions and the position of their `shape` (or count) argument; the key (position 0) and the
# parameters before the shape may be batched. Others take a batched value only as their key.
RANDOM_SHAPE_POSITION = {
    **{n: 1 for n in "normal uniform randint exponential laplace logistic gumbel cauchy rademacher bits split".split()},
    **{n: 2 for n in "bernoulli choice gamma poisson dirichlet t loggamma".split()},
    **{n: 3 for n in "categorical truncated_normal beta".split()},
    "fold_in": None,
}
# Samplers called with positional arguments only: the position of their shape, their number of arguments,
# and the kind of their default dtype (the array they return has that shape and dtype).
POSITIONAL_SAMPLERS = {
    **{"jax.random." + n: (1, 2, "float") for n in "normal uniform exponential laplace logistic gumbel cauchy".split()},
    "jax.random.bernoulli": (2, 3, "bool"),
    "jax.random.randint": (1, 4, "int"),
}
# Reductions that return a 0-d array when given one array and nothing else.
WHOLE_REDUCTIONS = REDUCTIONS - {"jax.numpy.trace", "jax.numpy.logaddexp.reduce", "jax.numpy.vdot"}


# ---- which values are JAX arrays, by their methods and attributes (facts/values.py, analysis/arrays.py) ----------
# `x.at[idx].<method>(...)`: every one but `get` returns a new array.
AT_METHODS = frozenset({"set", "add", "subtract", "multiply", "mul", "divide", "power", "min", "max", "apply", "get"})
# Methods of an array that return one new array (NumPy copies for them too).
ARRAY_FRESH_METHODS = frozenset(
    "astype copy flatten sum mean prod max min std var cumsum cumprod clip round conj argmax argmin argsort dot "
    "all any".split()
)
# Methods and attributes of an array that return one array that, in NumPy, may be a view of it.
ARRAY_VIEW_METHODS = frozenset("reshape ravel transpose squeeze swapaxes diagonal".split())
ARRAY_VIEW_ATTRIBUTES = frozenset({"T", "mT", "real", "imag"})
# The dtype names that mean floating-point or complex numbers (`jnp.float32`, `"float32"`, `float`).
INEXACT_DTYPE_NAMES = frozenset("float16 float32 float64 bfloat16 complex64 complex128 float complex".split())
# jax.numpy constructors (short names) whose default dtype is float, and functions whose result always is.
FLOAT_BY_DEFAULT_SHORT = frozenset("zeros ones empty eye identity linspace logspace geomspace".split())
ALWAYS_INEXACT_SHORT = frozenset(
    """
    exp exp2 expm1 log log1p log2 log10 sqrt cbrt sin cos tan arcsin arccos arctan arctan2 sinh cosh tanh mean std var
    divide true_divide hypot logaddexp nanmean interp linalg.norm linalg.inv linalg.det linalg.solve linalg.pinv
    linalg.cholesky
    """.split()
)
# jax.numpy functions (short names) and array methods whose result has the dtype of their first argument.
DTYPE_KEEPING_SHORT = frozenset(
    """
    copy reshape ravel transpose swapaxes moveaxis squeeze expand_dims broadcast_to flip fliplr flipud rot90 roll tile
    repeat pad sort cumsum cumprod abs absolute negative clip maximum minimum sum prod max min amax amin take diff
    diagonal tril triu trace nansum zeros_like ones_like empty_like full_like
    """.split()
)
DTYPE_KEEPING_METHODS = frozenset("copy flatten sum prod max min cumsum cumprod clip round conj".split())
# jax.numpy functions (short names) that join a list of arrays into one, of the dtype their elements promote to.
JOINING_SHORT = frozenset("concatenate stack hstack vstack dstack column_stack".split())
# What reads an array without keeping a reference to it (so that rebinding the name is what NumPy's in-place
# update would have done): attributes of its metadata, builtins, calls and methods that consume it on the spot.
ARRAY_METADATA_ATTRIBUTES = frozenset({"shape", "dtype", "ndim", "size", "nbytes", "itemsize", "sharding", "weak_type"})
NON_RETAINING_BUILTINS = frozenset("print len float int bool str repr isinstance type id hash format".split())
NON_RETAINING_CALLS = frozenset({"jax.debug.print", _JNP + "shape", _JNP + "ndim", _JNP + "size", _JNP + "result_type"})
NON_RETAINING_METHODS = frozenset({"item", "tolist"})
# The namespaces whose calls JF401 takes for free of side effects (an index and a value made of them keep their
# meaning when `.at[i].set(v)` evaluates the index first).
EFFECT_FREE_NAMESPACES = ("jax.numpy.", "jax.lax.", "jax.nn.")
# Methods of JAX arrays that return a new value and change nothing.
ARRAY_METHODS = frozenset(
    """
    all any argmax argmin argsort astype clip conj conjugate copy cumprod cumsum diagonal dot flatten max mean min
    nonzero prod ptp ravel repeat reshape round searchsorted squeeze std sum swapaxes take trace transpose var view
    """.split()
)
# Uses only an array allows (`x.shape`, `x.at`), evidence that a name holds one rather than a list or a tuple.
ARRAY_EVIDENCE_ATTRIBUTES = frozenset({"shape", "ndim", "dtype", "size", "at", "T", "astype", "reshape"})
