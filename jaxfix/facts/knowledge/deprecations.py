"""What JAX deprecated, removed or superseded, and what replaces it: the table JF901 (deprecated-api) rewrites from
and JF902 (legacy-prng-key) hints from, as data only (read through `jaxfix.analysis.api_references`)."""

# ---- The table -------------------------------------------------------------------------------------------------------
#
# How each row is rewritten:
#   rename      every reference becomes `new` (calls, decorators, plain references alike)
#   type        `new` in annotations (safe); elsewhere unsafe, since `isinstance(tracer, jax.Array)` is True where
#               `isinstance(tracer, jnp.DeviceArray)` was False
#   at          `op(x, idx, y, **kw)` becomes `x.at[idx].<new>(y, **kw)`; `jax.ops.index[...]` as idx is unwrapped
#   tie_in      `tie_in(x, y)` becomes `y` (tie_in has been a no-op since omnistaging)
#   jit         `pjit(f, in, out, **kw)` becomes `jax.jit(f, in_shardings=in, out_shardings=out, **kw)`
#   shard_map   `shard_map(f, mesh, in_specs, out_specs, check_rep)` becomes `jax.shard_map(f, mesh=..., ...,
#               check_vma=...)`
#   x64         `enable_x64(v=True)` / `disable_x64()` become `jax.enable_x64(v)` / `jax.enable_x64(False)`
#   value       a removed constant: every reference becomes the expression `new`, whose dotted names are
#               qualified names (`jnp.NINF` -> `-jnp.inf`)
#   move        a moved module: its imports are rewritten (`from jax.experimental import stax` -> example_libraries)
#   hint        no exact replacement: a display-only suggestion, never applied
#
# `deprecated`/`removed`: the JAX versions of CHANGELOG.md or of JAX's own deprecation messages. `removed` is the
# version that deleted the name (using it raises ImportError or AttributeError there), "yes" where that version
# is not known exactly, or "" while it still exists (deprecated); `deprecated` is "" for a name removed without
# a deprecation. A row that ends with "." names a module: it matches every name below it.
# tests/test_deprecated_api_table.py checks every row against the installed JAX.

RENAME, TYPE, AT, TIE_IN, JIT, SHARD_MAP, X64, VALUE, MOVE, HINT = (
    "rename", "type", "at", "tie_in", "jit", "shard_map", "x64", "value", "move", "hint",
)  # fmt: skip

# old name                                  how        new name                              deprecated removed
TABLE: tuple[tuple[str, str, str, str, str], ...] = (
    ("jax.tree_map",                          RENAME,    "jax.tree.map",                       "0.4.26", "0.6.0"),
    ("jax.tree_leaves",                       RENAME,    "jax.tree.leaves",                    "0.3.15", "0.6.0"),
    ("jax.tree_flatten",                      RENAME,    "jax.tree.flatten",                   "0.3.15", "0.6.0"),
    ("jax.tree_unflatten",                    RENAME,    "jax.tree.unflatten",                 "0.3.15", "0.6.0"),
    ("jax.tree_structure",                    RENAME,    "jax.tree.structure",                 "0.3.15", "0.6.0"),
    ("jax.tree_transpose",                    RENAME,    "jax.tree.transpose",                 "0.3.15", "0.6.0"),
    ("jax.tree_reduce",                       RENAME,    "jax.tree.reduce",                    "0.3.15", "0.6.0"),
    ("jax.tree_all",                          RENAME,    "jax.tree.all",                       "0.3.15", "0.6.0"),
    ("jax.tree_util.tree_multimap",           RENAME,    "jax.tree_util.tree_map",             "0.3.5",  "0.3.16"),
    ("jax.tree_multimap",                     RENAME,    "jax.tree.map",                       "0.3.5",  "0.3.16"),
    ("jax.experimental.PartitionSpec",        RENAME,    "jax.sharding.PartitionSpec",         "0.4.1",  "yes"),
    ("jax.experimental.pjit.PartitionSpec",   RENAME,    "jax.sharding.PartitionSpec",         "0.4.1",  "yes"),
    ("jax.experimental.maps.Mesh",            RENAME,    "jax.sharding.Mesh",                  "0.4.1",  "yes"),
    ("jax.interpreters.pxla.Mesh",            RENAME,    "jax.sharding.Mesh",                  "0.4.1",  "yes"),
    ("jax.interpreters.pxla.PartitionSpec",   RENAME,    "jax.sharding.PartitionSpec",         "0.4.1",  "yes"),
    ("jax.experimental.pjit.with_sharding_constraint",
                                              RENAME,    "jax.lax.with_sharding_constraint",   "0.4.1",  "yes"),
    ("jax.abstract_arrays.ShapedArray",       RENAME,    "jax.core.ShapedArray",               "0.4.12", "0.4.17"),
    ("jax.ops.index",                         RENAME,    "numpy.s_",                           "0.2.22", "0.3.2"),
    ("jax.partial",                           RENAME,    "functools.partial",                  "",       "0.2.21"),
    ("jax.lax.partial",                       RENAME,    "functools.partial",                  "",       "0.2.21"),
    ("jax.util.partial",                      RENAME,    "functools.partial",                  "",       "0.2.22"),
    ("jax.ShapedArray",                       RENAME,    "jax.core.ShapedArray",               "0.4.8",  "0.4.14"),
    ("jax.numpy.alltrue",                     RENAME,    "jax.numpy.all",                      "0.4.12", "0.4.16"),
    ("jax.numpy.sometrue",                    RENAME,    "jax.numpy.any",                      "0.4.12", "0.4.16"),
    ("jax.numpy.product",                     RENAME,    "jax.numpy.prod",                     "0.4.12", "0.4.16"),
    ("jax.numpy.cumproduct",                  RENAME,    "jax.numpy.cumprod",                  "0.4.12", "0.4.16"),
    ("jax.numpy.row_stack",                   RENAME,    "jax.numpy.vstack",                   "0.4.16", "0.4.24"),
    ("jax.numpy.trapz",                       RENAME,    "jax.scipy.integrate.trapezoid",      "0.4.16", "0.4.24"),
    ("jax.numpy.round_",                      RENAME,    "jax.numpy.round",                    "0.4.32", "0.4.38"),
    ("jax.random.shuffle",                    RENAME,    "jax.random.permutation",             "0.1.66", "0.4.31"),
    ("jax.clear_backends",                    RENAME,    "jax.extend.backend.clear_backends",  "0.4.26", "0.4.36"),
    ("jax.lib.xla_bridge.get_backend",        RENAME,    "jax.extend.backend.get_backend",     "0.4.32", "0.8.0"),
    ("jax.lib.xla_bridge.get_compile_options",
                                              RENAME,    "jax.extend.backend.get_compile_options", "0.7.0", "0.8.0"),
    ("jax.lib.xla_bridge.default_backend",    RENAME,    "jax.default_backend",                "0.4.32", "0.4.38"),
    ("jax.lib.xla_client.Device",             RENAME,    "jax.Device",                         "0.4.34", "0.5.0"),
    ("jax.lib.xla_client.XlaRuntimeError",    RENAME,    "jax.errors.JaxRuntimeError",         "0.4.34", "0.5.0"),
    ("jax.lib.xla_extension.XlaRuntimeError", RENAME,    "jax.errors.JaxRuntimeError",         "0.4.36", "0.6.0"),
    ("jax.lib.xla_client.FftType",            RENAME,    "jax.lax.FftType",                    "0.4.35", "0.6.0"),
    ("jax.experimental.compilation_cache.compilation_cache.initialize_cache",
                                              RENAME,    "jax.experimental.compilation_cache.compilation_cache"
                                                         ".set_cache_dir",                     "0.4.24", "0.8.0"),
    ("jax.numpy.DeviceArray",                 TYPE,      "jax.Array",                          "0.4.7",  "0.4.14"),
    ("jax.interpreters.xla.DeviceArray",      TYPE,      "jax.Array",                          "0.4.7",  "yes"),
    ("jax.interpreters.pxla.ShardedDeviceArray",
                                              TYPE,      "jax.Array",                          "0.4.7",  "yes"),
    ("jax.random.KeyArray",                   TYPE,      "jax.Array",                          "0.4.16", "0.4.24"),
    ("jax.random.PRNGKeyArray",               TYPE,      "jax.Array",                          "0.4.16", "0.4.24"),
    ("jax.lib.xla_client.ArrayImpl",          TYPE,      "jax.Array",                          "0.4.36", "0.6.0"),
    ("jax.lib.xla_extension.ArrayImpl",       TYPE,      "jax.Array",                          "0.4.36", "0.6.0"),
    ("jax.ops.index_update",                  AT,        "set",                                "0.2.22", "0.3.2"),
    ("jax.ops.index_add",                     AT,        "add",                                "0.2.22", "0.3.2"),
    ("jax.ops.index_mul",                     AT,        "multiply",                           "0.2.22", "0.3.2"),
    ("jax.ops.index_min",                     AT,        "min",                                "0.2.22", "0.3.2"),
    ("jax.ops.index_max",                     AT,        "max",                                "0.2.22", "0.3.2"),
    ("jax.lax.tie_in",                        TIE_IN,    "",                                   "0.4.24", "0.4.29"),
    ("jax.experimental.pjit.pjit",            JIT,       "jax.jit",                            "0.8.0",  ""),
    ("jax.experimental.shard_map.shard_map",  SHARD_MAP, "jax.shard_map",                      "0.8.0",  ""),
    ("jax.experimental.enable_x64",           X64,       "jax.enable_x64",                     "0.8.0",  "yes"),
    ("jax.experimental.disable_x64",          X64,       "jax.enable_x64",                     "0.8.0",  "yes"),
    ("jax.experimental.optimizers.",          MOVE,      "jax.example_libraries.optimizers.",  "0.2.25", "0.3.16"),
    ("jax.experimental.stax.",                MOVE,      "jax.example_libraries.stax.",        "0.2.25", "0.3.16"),
    ("jax.linear_util.",                      MOVE,      "jax.extend.linear_util.",            "0.4.16", "0.4.24"),
    ("jax.numpy.NINF",                        VALUE,     "-jax.numpy.inf",                     "0.4.16", "0.4.24"),
    ("jax.numpy.NZERO",                       VALUE,     "-0.0",                               "0.4.16", "0.4.24"),
    ("jax.numpy.PZERO",                       VALUE,     "0.0",                                "0.4.16", "0.4.24"),
    ("jax.numpy.fix",                         HINT,      "jax.numpy.trunc",                    "0.9.0",  "0.10.0"),
    ("jax.random.PRNGKey",                    HINT,      "jax.random.key",                     "",       ""),
    ("jax.xla_computation",                   HINT,      "jax.jit(f).lower(*args).compiler_ir('hlo')",
                                                                                                   "0.4.30", "0.4.34"),
    ("jax.experimental.host_callback.",       HINT,      "jax.pure_callback, jax.experimental.io_callback or "
                                                         "jax.debug.callback",                 "0.4.26", "0.8.0"),
    ("jax.device_put_sharded",                HINT,      "jax.device_put with a sharding",     "0.8.1",  "0.10.0"),
    ("jax.device_put_replicated",             HINT,      "jax.device_put with a sharding",     "0.8.1",  "0.10.0"),
    ("jax.experimental.maps.xmap",            HINT,      "jax.shard_map or jax.vmap(spmd_axis_name=...)",
                                                                                                   "0.4.26", "0.4.31"),
    ("jax.experimental.maps.",                HINT,      "jax.sharding / jax.shard_map",       "0.4.26", "yes"),
    ("jax.experimental.loops.",               HINT,      "jax.lax.fori_loop, scan or while_loop", "0.2.25", "0.3.16"),
    ("jax.abstract_arrays.",                  HINT,      "jax.core",                           "0.4.12", "0.4.17"),
    ("jax.custom_transforms",                 HINT,      "jax.custom_jvp or jax.custom_vjp",   "0.1.63", "0.2.12"),
    ("jax.defjvp",                            HINT,      "jax.custom_jvp",                     "0.1.63", "0.2.12"),
    ("jax.defjvp_all",                        HINT,      "jax.custom_jvp",                     "0.1.63", "0.2.12"),
    ("jax.defvjp",                            HINT,      "jax.custom_vjp",                     "0.1.63", "0.2.12"),
    ("jax.defvjp_all",                        HINT,      "jax.custom_vjp",                     "0.1.63", "0.2.12"),
    ("jax.tree_util.register_keypaths",       HINT,      "jax.tree_util.register_pytree_with_keys",
                                                                                                   "0.4.6",  "0.4.24"),
    ("jax.numpy.in1d",                        HINT,      "jax.numpy.isin(x, y).ravel()",       "0.4.16", "0.4.24"),
    ("jax.numpy.issubsctype",                 HINT,      "jax.numpy.issubdtype(x.dtype, t)",   "0.4.16", "0.4.24"),
    ("jax.core.NamedShape",                   HINT,      "a plain shape tuple",                "",       "0.4.31"),
    ("jax.core.ConcreteArray",                HINT,      "catching jax.errors.ConcretizationTypeError, or a static "
                                                         "argument",                           "",       "0.4.36"),
    ("jax.interpreters.xla.pytype_aval_mappings",
                                              HINT,      "jax.core.pytype_aval_mappings",      "0.5.0",  "0.7.0"),
    ("jax.interpreters.xla.abstractify",      HINT,      "jax.typeof",                         "0.5.0",  "0.7.0"),
    ("jax.interpreters.xla.xb",               HINT,      "jax.extend.backend",                 "0.4.31", "0.4.36"),
    ("jax.interpreters.xla.register_translation",
                                              HINT,      "jax.interpreters.mlir.register_lowering", "0.4.16", "0.4.29"),
    ("jax.interpreters.xla.backend_specific_translations",
                                              HINT,      "jax.interpreters.mlir.register_lowering", "0.4.16", "0.4.29"),
    ("jax.interpreters.xla.translations",     HINT,      "jax.interpreters.mlir.register_lowering", "0.4.16", "0.4.29"),
    ("jax.sharding.PositionalSharding",       HINT,      "jax.sharding.NamedSharding with a jax.sharding.Mesh",
                                                                                                   "0.6.0",  "0.7.0"),
    ("jax.dlpack.to_dlpack",                  HINT,      "x.__dlpack__(), or x passed to the other library's "
                                                         "from_dlpack",                        "0.6.0",  "0.7.0"),
    ("jax.util.safe_map",                     HINT,      "[f(*a) for a in zip(*xs, strict=True)]", "0.6.0", "0.7.0"),
    ("jax.util.safe_zip",                     HINT,      "list(zip(*xs, strict=True))",        "0.6.0",  "0.7.0"),
    ("jax.util.unzip2",                       HINT,      "tuple(zip(*pairs)) (two tuples, also when empty)",
                                                                                                   "0.6.0",  "0.7.0"),
    ("jax.util.cache",                        HINT,      "functools.lru_cache",                "0.6.0",  "0.7.0"),
    ("jax.util.",                             HINT,      "functools, itertools or a helper of your own",
                                                                                                   "0.6.0",  "0.8.0"),
    ("jax.experimental.compilation_cache.compilation_cache.is_initialized",
                                              HINT,      "jax.config.jax_compilation_cache_dir", "0.4.24", "0.8.0"),
    ("jax.lib.xla_bridge.",                   HINT,      "jax.extend.backend",                 "0.4.32", "0.9.0"),
    ("jax.lib.xla_client.",                   HINT,      "jax.Device, jax.errors.JaxRuntimeError, jax.ffi or StableHLO",
                                                                                                   "0.4.32", "0.9.0"),
    ("jax.lib.xla_extension.",                HINT,      "jax.Array, jax.errors.JaxRuntimeError or jax.distributed",
                                                                                                   "0.4.36", "0.9.0"),
    ("jax.tools.colab_tpu.",                  HINT,      "deleting the setup_tpu() call",      "0.4.0",  "0.9.2"),
)  # fmt: skip

# Why a hint is not a fix, shown with it.
HINT_REASONS = {
    "jax.numpy.fix": "the two differ for integer and boolean inputs in older JAX; check the dtypes and rename by hand",
    "jax.random.PRNGKey": "not a safe rename: typed keys from `jax.random.key` have shape () and a key dtype, and "
    "reject indexing and arithmetic that raw uint32[2] keys allow",
    "jax.xla_computation": "it returns a lowered module, not an XlaComputation",
    "jax.experimental.host_callback.": "the callbacks differ in ordering and effects; pick the one that fits",
    "jax.device_put_sharded": "see https://docs.jax.dev/en/latest/migrate_pmap.html#drop-in-replacements",
    "jax.device_put_replicated": "see https://docs.jax.dev/en/latest/migrate_pmap.html#drop-in-replacements",
    "jax.experimental.maps.xmap": "named axes must be rewritten as mesh axes",
    "jax.custom_transforms": "the custom rule is written differently: see the custom derivatives tutorial",
    "jax.defjvp": "rules attach to a jax.custom_jvp function with .defjvp",
    "jax.defjvp_all": "rules attach to a jax.custom_jvp function with .defjvp",
    "jax.defvjp": "rules attach to a jax.custom_vjp function with .defvjp",
    "jax.defvjp_all": "rules attach to a jax.custom_vjp function with .defvjp",
    "jax.tree_util.register_keypaths": "its flatten function returns (key, child) pairs",
    "jax.numpy.in1d": "isin keeps the shape of its first argument where in1d flattened it",
    "jax.numpy.issubsctype": "it took arrays or dtypes; issubdtype takes dtypes",
    "jax.core.NamedShape": "it carried xmap's named axes, removed with xmap",
    "jax.core.ConcreteArray": "JAX no longer marks concrete values with an abstract type",
    "jax.interpreters.xla.pytype_aval_mappings": "it is internal and itself deprecated; jax.typeof gives a value's "
    "type",
    "jax.interpreters.xla.register_translation": "XLA translation rules are gone; lowering rules emit StableHLO",
    "jax.interpreters.xla.backend_specific_translations": "XLA translation rules are gone; lowering rules emit "
    "StableHLO",
    "jax.interpreters.xla.translations": "XLA translation rules are gone; lowering rules emit StableHLO",
    "jax.sharding.PositionalSharding": "devices are laid out by mesh axis names rather than by array position",
    "jax.dlpack.to_dlpack": "most libraries' from_dlpack take a JAX array directly",
    "jax.util.cache": "it also keyed the cache on JAX's trace context",
    "jax.util.": "these were JAX's internal helpers",
    "jax.lib.xla_bridge.": "get_backend and get_compile_options moved there; other names have no public replacement",
    "jax.lib.xla_client.": "the XLA builder API is gone; custom calls go through jax.ffi",
    "jax.tools.colab_tpu.": "setup_tpu has raised RuntimeError since JAX 0.4.0, which finds TPU VMs by itself",
}

# Keywords the new API of a rename needs to compute what the old one did, added to every call; a reference that
# is not called cannot take them, and is reported without a fix.
ADDED_KEYWORDS = {"jax.random.shuffle": {"independent": "True"}}

# Renames that change what some inputs compute: fixed only as unsafe, with the reason.
# What the legacy shard_map's rewrite assumes: JAX 0.8+ forwards `check_rep` as `check_vma`, and checks the mesh as
# jax.shard_map does (JAX 0.7.0's legacy shard_map passed `_skip_mesh_check=True`).
SHARD_MAP_ASSUMES = (
    "assumes JAX 0.8 or later, where the legacy shard_map calls jax.shard_map's own code; before 0.7, `check_rep` "
    "was another replication checker, which also changed how collectives differentiate, and on 0.7 the legacy "
    "one skipped the check that its mesh is the context mesh of `jax.set_mesh`, where jax.shard_map raises "
    "ValueError"
)

# Why a pjit whose shardings hold PartitionSpecs is not rewritten.
SPEC_REASON = (
    "which pjit resolves against the mesh of a legacy `with mesh:` block; `jax.jit` does not read that mesh (it "
    "reads `jax.set_mesh`) and raises RuntimeError there: pass `NamedSharding(mesh, spec)` for each spec and "
    "`NamedSharding(mesh, PartitionSpec())` for `None`, with the mesh the calls run under, then use `jax.jit`"
)

UNSAFE_RENAMES = {
    "jax.random.shuffle": "for a 0-d `x` shuffle returned `x` itself, where permutation permutes `arange(x)`",
}

# Modules that `import jax` does not load: a new name in one of them is imported with its own statement.
EXPLICIT_IMPORTS = frozenset({"jax.extend.backend"})

# Keywords that the old API accepted under a name the new one spells differently.
KEYWORD_RENAMES = {
    "jax.experimental.pjit.pjit": {"in_axis_resources": "in_shardings", "out_axis_resources": "out_shardings"},
    "jax.experimental.shard_map.shard_map": {"check_rep": "check_vma"},
    "jax.experimental.pjit.with_sharding_constraint": {"axis_resources": "shardings"},
}

JIT_KEYWORDS = frozenset(
    "in_shardings out_shardings static_argnums static_argnames donate_argnums donate_argnames keep_unused device "
    "backend inline compiler_options".split()
)
SHARD_MAP_POSITIONAL = ("f", "mesh", "in_specs", "out_specs", "check_vma")

# Rows reported by JF902 legacy-prng-key, an opt-in rule, rather than by JF901: the API still works and is not
# deprecated, so a hint about it is noise in a default run.
LEGACY_ROWS = frozenset({"jax.random.PRNGKey"})
