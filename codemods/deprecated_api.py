"""JF901 deprecated-api: deprecated and removed JAX APIs rewritten to their current form, where the mapping is exact.

The whole rule is the table below: one row per old name. The matcher resolves every dotted name through the
module's imports (LibCST's so `from jax import tree_map as tm; tm(...)` is found and a local
variable that shadows the name is not), looks it up here, and builds the row's rewrite.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Sequence

import libcst as cst
from libcst.metadata import ImportAssignment, QualifiedNameSource, ScopeProvider

from jaxfix.analysis.screen import Screen, other_bindings, dotted, libcst_span, single_import, source_bytes
from jaxfix.analysis.sharding import NONE, SPEC, UNKNOWN
from jaxfix.analysis.syntax import dotted_name
from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.diagnostics import Diagnostic, Fix, ImportSpec, Position, Safety

# ---- The table ---------------------------------------------------------------------------------------------------
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
_SHARD_MAP_ASSUMES = (
    "assumes JAX 0.8 or later, where the legacy shard_map calls jax.shard_map's own code; before 0.7, `check_rep` "
    "was another replication checker, which also changed how collectives differentiate, and on 0.7 the legacy "
    "one skipped the check that its mesh is the context mesh of `jax.set_mesh`, where jax.shard_map raises "
    "ValueError"
)

# Why a pjit whose shardings hold PartitionSpecs is not rewritten.
_SPEC_REASON = (
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


@dataclass(frozen=True)
class Api:
    old: str
    how: str
    new: str
    deprecated: str
    removed: str

    @property
    def module(self) -> bool:
        return self.old.endswith(".")

    @property
    def name(self) -> str:
        return self.old.rstrip(".")

    @property
    def status(self) -> str:
        if self.removed == "yes":
            return f"was deprecated in JAX {self.deprecated} and has since been removed"
        if self.removed:
            return f"was removed in JAX {self.removed}"
        if self.deprecated:
            return f"is deprecated since JAX {self.deprecated}"
        return "is a legacy API"


APIS: tuple[Api, ...] = tuple(Api(*row) for row in TABLE)

# Rows reported by JF902 legacy-prng-key, an opt-in rule, rather than by JF901: the API still works and is not
# deprecated, so a hint about it is noise in a default run.
LEGACY_ROWS = frozenset({"jax.random.PRNGKey"})


def _fewest_tests(groups: set[tuple[str, ...]]) -> tuple[tuple[str, ...], ...]:
    """Word groups that a text holds one of (every word of it) exactly when it holds one of `groups`, in the order
    a text screen tries them: short groups of short words first, which decide most real modules at once (`util`,
    `partial`), and none that holding another one implies (`("cache", "util")` holds `("util",)`, `("defjvp_all",)`
    holds `("defjvp",)`). A group is (a row's last name, its module's last name): the rarer word first. Over the
    1,401 real files the text screen cost 0.26 s trying every group, module name first; 0.09 s so."""
    kept: list[tuple[str, ...]] = []
    for group in sorted(groups, key=lambda g: (len(g), sum(map(len, g)), g)):
        if not any(all(any(word in mine for mine in group) for word in other) for other in kept):
            kept.append(group)
    return tuple(kept)


class ApiTable:
    """Some rows of the table, looked up by qualified name; each rule of this family reads its own rows."""

    def __init__(self, apis: Sequence[Api]) -> None:
        self.apis = tuple(apis)
        self.exact = {api.old: api for api in self.apis if not api.module}
        self.modules = sorted((api for api in self.apis if api.module), key=lambda a: -len(a.old))
        # A reference to a row spells the row's last name, and its module's last name unless that is `jax` (in
        # the reference or in the import that binds it), so a module missing one of these pairs has nothing to find.
        self.screen = _fewest_tests({tuple(p for p in api.name.split(".")[:-3:-1] if p != "jax") for api in self.apis})
        self._found: dict[str, tuple[Api, str] | None] = {}  # `lookup`'s answers

    def lookup(self, qualified: str) -> tuple[Api, str] | None:
        """The row for `qualified` and the prefix of it that the row names (`jax.tree_map` of
        `jax.tree_map.__doc__`), remembered: the screens ask it of every name each module spells."""
        try:
            return self._found[qualified]
        except KeyError:
            found = self._found[qualified] = self._lookup(qualified)
            return found

    def _lookup(self, qualified: str) -> tuple[Api, str] | None:
        parts = qualified.split(".")
        for cut in range(len(parts), 0, -1):
            prefix = ".".join(parts[:cut])
            if prefix in self.exact:
                return self.exact[prefix], prefix
        for api in self.modules:
            if qualified == api.name or qualified.startswith(api.old):
                return api, api.name
        return None

    def mapped(self, qualified: str) -> bool:
        """Whether an import of `qualified` imports an old API of the table (not a module that merely contains one)."""
        found = self.lookup(qualified)
        return found is not None and found[0].how != MOVE and found[1] == qualified


DEPRECATED = ApiTable([api for api in APIS if api.old not in LEGACY_ROWS])
LEGACY = ApiTable([api for api in APIS if api.old in LEGACY_ROWS])


class DeprecatedApi(Codemod):
    """Rewrites deprecated and removed JAX APIs to their current spelling where the mapping is exact.

    ## What it does
    Finds uses of JAX APIs that were deprecated or removed (`jax.tree_map`, `jax.tree_leaves` and the other
    top-level tree functions, `jax.tree_util.tree_multimap`, `jax.ops.index_update` and friends, `jax.lax.tie_in`,
    `jax.experimental.pjit.pjit`, the legacy `jax.experimental.shard_map.shard_map`, `jnp.DeviceArray`,
    `jax.random.KeyArray`, `jax.experimental.enable_x64`, `jax.experimental.optimizers`/`stax`,
    `jax.lib.xla_bridge.get_backend`, `jax.clear_backends`, `jax.random.shuffle`, `jnp.NINF`/`NZERO`/`PZERO`,
    the NumPy 1.x aliases `jnp.row_stack`, `trapz`, `alltrue`, `sometrue`, `product`, `cumproduct` and `round_`,
    `jax.ShapedArray`, `jax.util.partial`, `compilation_cache.initialize_cache`, `jax.linear_util`,
    `jax.lib.xla_client.Device`/`XlaRuntimeError`/`FftType`/`ArrayImpl`, ...), through any import alias, and
    rewrites each to the current API. APIs without an exact replacement get a hint that names what to use
    instead: `jax.xla_computation`, `jax.experimental.host_callback`, `jax.device_put_sharded`, `xmap`,
    `jax.sharding.PositionalSharding`, `jnp.in1d`, `jnp.issubsctype`, `jax.dlpack.to_dlpack`, the rest of
    `jax.lib.xla_bridge`/`xla_client`/`xla_extension`, `jax.util`, `jax.core.NamedShape`/`ConcreteArray`,
    `jax.custom_transforms` and `jax.defvjp_all`, `jax.tree_util.register_keypaths`, removed members of
    `jax.interpreters.xla`, `jax.tools.colab_tpu`. Imports of removed names that are no longer used are deleted.
    Each API's deprecation and removal versions come from JAX's changelog or its own deprecation messages.

    ## Why is this bad?
    A removed name fails at import or attribute lookup (`ImportError: cannot import name 'tree_map' from 'jax'`),
    so the file does not run on current JAX at all; a deprecated one warns on every call and will break on the
    next upgrade.

    ## Example
    ```python
    from jax import tree_map
    from jax.experimental.pjit import pjit

    @pjit
    def step(params, grads):
        return tree_map(lambda p, g: p - 0.1 * g, params, grads)

    def clear(x, i):
        return jax.ops.index_update(x, jax.ops.index[i], 0.0)
    ```

    ## Use instead
    ```python
    import jax

    @jax.jit
    def step(params, grads):
        return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads)

    def clear(x, i):
        return x.at[i].set(0.0)
    ```

    ## Fix safety
    Safe: renames to the same object (`jax.tree.*`, `tree_multimap`, `with_sharding_constraint`, `PartitionSpec`,
    `Mesh`, `ShapedArray`, the `example_libraries` and `jax.extend.linear_util` modules, `jax.ops.index` as
    `np.s_`, `jnp.row_stack` as `jnp.vstack` and the other NumPy aliases, `jax.util.partial` as
    `functools.partial`, `get_backend`, `clear_backends`, `default_backend`, `Device`, `XlaRuntimeError`,
    `FftType`); `jnp.trapz` to `jax.scipy.integrate.trapezoid` and `initialize_cache` to `set_cache_dir` (same
    computation: JAX's sources of the two differ only in a warning or in converting `dx` with `jnp.asarray`,
    which jit does anyway); `jnp.NINF`/`NZERO`/`PZERO` to `-jnp.inf`/`-0.0`/`0.0` (the same Python floats);
    `enable_x64`/`disable_x64` (the old context managers wrapped the same config state); `tie_in(x, y)` to `y`
    (a no-op since omnistaging); `jax.ops.index_*` to `.at[]` (both call the same scatter helper; where `x` may
    be NumPy, a literal, a `numpy` call or a name assigned one, the rewrite keeps index_update's `jnp.asarray`;
    a NumPy array reaching it any other way raises AttributeError, it never computes a different value); `pjit`
    to `jax.jit` where every sharding it is given is a `Sharding` object (`NamedSharding(mesh, spec)`,
    `SingleDeviceSharding(device)`, a tuple of them, or a name assigned one), which names its devices: the two
    then place and compute alike under any context; and where it is given no sharding, or `None`, in a project
    that enters no legacy mesh context. pjit and `jax.jit` do not read the same context mesh: pjit reads the one
    a legacy `with mesh:` block sets, `jax.jit` only the one `jax.set_mesh` sets. Under `with mesh:`, pjit
    resolves a `PartitionSpec` against that mesh, where `jax.jit` raises RuntimeError ("jit requires a
    non-empty mesh in context"), and replicates over the mesh what no sharding or a `None` one leaves open,
    where `jax.jit` leaves it on one device. A `with` that may enter a legacy mesh is one that builds a mesh
    (`with Mesh(devices, ("x",)):`, a call whose name says mesh) or uses an object as its own context manager
    (`with self._mesh:`, `with mesh:`); `jax.set_mesh` is not one. Every module of the project is searched
    (the project index keeps where each may enter one); code outside the project that calls the function
    under `with mesh:` (a library's user) is not seen, and gets its unsharded results on one device instead of
    replicated over the mesh: the same values.
    A replacement in `jax.extend` comes with `import jax.extend.backend`, which `import jax` does not do.
    Unsafe: `tie_in` whose dropped first argument contains a call (the call no longer runs);
    `DeviceArray`/`KeyArray`/`ArrayImpl` to `jax.Array` outside annotations (`isinstance` on a tracer was False
    and is now True; in annotations it is safe); the legacy `shard_map` to `jax.shard_map` (JAX 0.8+ forwards
    `check_rep` as `check_vma`, but before 0.7 `check_rep` was a different replication checker that also
    changed how collectives differentiate, and on 0.7 the legacy one skipped the check that its mesh is the
    context mesh of `jax.set_mesh`, where `jax.shard_map` raises ValueError); `jax.random.shuffle(key, x)` to `jax.random.permutation(key, x,
    independent=True)` (the same shuffle for arrays; a 0-d `x` was returned as it was, where `permutation`
    permutes `arange(x)`); `pjit` without shardings, or with `None` ones, in a project that may enter a legacy
    mesh context (the message names the `with`, in this module if it has one): the same values, placed on one device instead of replicated
    over the mesh, and a later computation that mixes them with arrays on the mesh's devices may raise; pass
    `NamedSharding(mesh, PartitionSpec())` to keep them replicated. Not fixed: a `pjit` whose shardings hold a
    `PartitionSpec`, or may (a parameter, a call of something else, `**kwargs`): it works only under
    `with mesh:`, where `jax.jit` raises; the message says to pass `NamedSharding(mesh, spec)` for each spec,
    with the mesh the calls run under, and then to use `jax.jit`. Display-only hints: everything listed as a
    hint above; `jnp.in1d(x, y)` is `jnp.isin(x, y).ravel()`, and the hint says so.

    None of the unsafe fixes fails loudly, and each message says what it assumes. Dropping a `tie_in` keeps
    the numbers (the call's result was discarded; only its side effects go), and so does pjit's (only where
    they are placed changes). `jax.Array` in an `isinstance`
    and `permutation` of a 0-d `x` **may compute different numbers** than the old JAX did; `jaxfix verify`
    cannot check them on a JAX that no longer has the old name (on JAX 0.10.2 `jax.random.KeyArray`,
    `jnp.DeviceArray` and `jax.random.shuffle` raise AttributeError, and it compares nothing where the
    original raised): review them by hand. The legacy `shard_map` is the same function as `jax.shard_map`
    on JAX 0.8 and later, where `verify` compares the two.

    ## When it stays quiet
    Names that resolve to something else: a local function or parameter called `tree_map` or `random`,
    attributes of non-JAX objects (`optax.tree_map_params`, `obj.tree_map`), `jaxtyping.PRNGKeyArray`.
    `jax.random.PRNGKey`, which JAX does not deprecate: the opt-in rule JF902 (legacy-prng-key) suggests typed
    keys instead. Compatibility shims: code in a `try` that catches `ImportError`/`AttributeError` or in such a
    handler (the fallback for another JAX version), names bound to both the old and the new API, and code under
    an `if` that tests `hasattr` or a version. String annotations. Calls it cannot map exactly (`*args`,
    `**kwargs` into `index_update`, extra positional arguments of `pjit`, `auto=` of `shard_map`, a
    `jax.random.shuffle` that is not called) are reported without a fix.
    """

    code = "JF901"
    name = "deprecated-api"
    summary = "Deprecated or removed JAX API: rewrite it to the current one (jax.tree.map, x.at[].set, jax.jit, ...)"
    fix_safety = Safety.SAFE
    other_fix_safeties = (Safety.UNSAFE, Safety.DISPLAY_ONLY)
    screen = ("jax",)
    table = DEPRECATED  # the rows this rule reports

    VALID = [
        Valid("import jax\n\ny = jax.tree.map(lambda v: v + 1, {'a': 1})\n"),
        Valid("import jax.numpy as jnp\n\ndef f(x):\n    return x.at[0].set(1.0)\n"),
        Valid(  # a parameter that shadows the JAX name
            "import jax\n\ndef apply(tree_map, xs):\n    return tree_map(lambda v: v + 1, xs)\n"
        ),
        Valid(  # a local function of the same name
            "def tree_map(f, xs):\n    return [f(x) for x in xs]\n\nimport jax\nys = tree_map(abs, [1, -2])\n"
        ),
        Valid("import jax\nimport optax\n\nspecs = optax.tree_map_params(opt, lambda p: p, state)\n"),
        Valid("import jax\n\ndef f(obj, x):\n    return obj.tree_map(x)\n"),
        Valid("import jax\nfrom jaxtyping import PRNGKeyArray\n\ndef f(key: PRNGKeyArray) -> None: ...\n"),
        Valid("import jax\n\nkey = jax.random.PRNGKey(0)\n"),  # not deprecated: JF902's opt-in hint
        Valid(  # a compatibility shim
            "try:\n    from jax.tree_util import tree_map\nexcept ImportError:\n    from jax import tree_map\n\n"
            "y = tree_map(abs, [1])\n"
        ),
        Valid("import jax\n\nif hasattr(jax, 'tree_map'):\n    tm = jax.tree_map\nelse:\n    tm = jax.tree.map\n"),
        Valid("import jax\n\nx: 'jax.numpy.DeviceArray' = None\n"),
        Valid("import jax\n\njax.tree_map = jax.tree_util.tree_map  # a monkeypatch for old callers\n"),
        Valid(  # the fallback for an older JAX, in the handler of a shim
            "try:\n    from jax.extend.backend import get_backend\nexcept ImportError:\n"
            "    from jax.lib.xla_bridge import get_backend\n\nplatform = get_backend().platform\n"
        ),
        Valid("import jax.numpy as jnp\n\nmask_value = -jnp.inf\n"),
    ]
    INVALID = [
        Invalid(
            "import jax\n\ny = jax.tree_map(lambda v: v + 1, {'a': 1})\n",
            fixed="import jax\n\ny = jax.tree.map(lambda v: v + 1, {'a': 1})\n",
            message="`jax.tree_map` was removed in JAX 0.6.0",
        ),
        Invalid(
            "from jax import tree_map as tm\n\ny = tm(abs, [1])\nf = tm\n",
            fixed="import jax\n\ny = jax.tree.map(abs, [1])\nf = jax.tree.map\n",
            message="use `jax.tree.map`",
        ),
        Invalid(
            "from jax.tree_util import tree_multimap\nimport jax\n\nz = tree_multimap(max, [1], [2])\n",
            fixed="import jax\n\nz = jax.tree_util.tree_map(max, [1], [2])\n",
            message="tree_multimap",
        ),
        Invalid(
            "import jax\n\ndef f(a, b, i):\n    return jax.ops.index_add(a + b, jax.ops.index[i, 1:], 2.0)\n",
            fixed="import jax\n\ndef f(a, b, i):\n    return (a + b).at[i, 1:].add(2.0)\n",
            message="x.at[idx].add",
        ),
        Invalid(
            "import jax\nfrom jax.ops import index_update\n\n"
            "def f(x):\n    return index_update(x, 0, 1.0, unique_indices=True)\n",
            fixed="import jax\n\ndef f(x):\n    return x.at[0].set(1.0, unique_indices=True)\n",
            message="index_update",
        ),
        Invalid(
            "import jax\n\ndef f(x, *rest):\n    return jax.ops.index_update(x, *rest)\n",
            fixed=None,
            message="cannot be rewritten exactly",
        ),
        Invalid(
            "from jax import lax\n\ndef f(x, y):\n    return lax.tie_in(x, y + 1) * 2\n",
            fixed="from jax import lax\n\ndef f(x, y):\n    return (y + 1) * 2\n",
            message="tie_in",
        ),
        Invalid(
            "from functools import partial\nfrom jax.experimental.pjit import pjit\n\n"
            "@partial(pjit, in_axis_resources=None, static_argnums=1)\ndef f(x, n):\n    return x * n\n",
            fixed="from functools import partial\nimport jax\n\n"
            "@partial(jax.jit, in_shardings=None, static_argnums=1)\ndef f(x, n):\n    return x * n\n",
            message="jax.jit",
        ),
        Invalid(
            "import jax\nfrom jax.experimental.pjit import pjit\n\ng = pjit(f, None, None, donate_argnums=0)\n",
            fixed="import jax\n\ng = jax.jit(f, in_shardings=None, out_shardings=None, donate_argnums=0)\n",
            message="pjit",
        ),
        Invalid(  # a Sharding object names its devices: both place alike under any context
            "import jax\nfrom jax.experimental.pjit import pjit\nfrom jax.sharding import NamedSharding, PartitionSpec\n\n"
            "def compile_step(step, mesh):\n    rows = NamedSharding(mesh, PartitionSpec('data'))\n"
            "    return pjit(step, in_shardings=rows, out_shardings=rows)\n",
            fixed="import jax\nfrom jax.sharding import NamedSharding, PartitionSpec\n\n"
            "def compile_step(step, mesh):\n    rows = NamedSharding(mesh, PartitionSpec('data'))\n"
            "    return jax.jit(step, in_shardings=rows, out_shardings=rows)\n",
            message="use `jax.jit`",
        ),
        Invalid(  # pjit resolves the spec against the mesh of `with self.mesh:`; jax.jit would raise there
            "import jax\nfrom jax.experimental.pjit import pjit\n\nclass Sharded:\n    def __init__(self, f, mesh):\n"
            "        self.mesh = mesh\n        self.f = pjit(f, out_shardings=jax.sharding.PartitionSpec('x'))\n\n"
            "    def __call__(self, x):\n        with self.mesh:\n            return self.f(x)\n",
            fixed=None,
            message="holds a PartitionSpec",
        ),
        Invalid(  # under `with mesh:` pjit replicates the result over the mesh; jax.jit leaves it on one device
            "from jax.experimental.pjit import pjit\n\ndef run(f, x, mesh):\n    with mesh:\n"
            "        return pjit(f)(x)\n",
            fixed="import jax\n\ndef run(f, x, mesh):\n    with mesh:\n        return jax.jit(f)(x)\n",
            message="unsafe: under the legacy `with mesh:` (line 4)",
        ),
        Invalid(
            "import jax.numpy as jnp\n\ndef f(x: jnp.DeviceArray) -> jnp.DeviceArray:\n    return x\n",
            fixed="import jax.numpy as jnp\nimport jax\n\ndef f(x: jax.Array) -> jax.Array:\n    return x\n",
            message="jax.Array",
        ),
        Invalid(  # unsafe outside annotations
            "import jax\n\ndef is_array(x):\n    return isinstance(x, jax.random.KeyArray)\n",
            fixed="import jax\n\ndef is_array(x):\n    return isinstance(x, jax.Array)\n",
            message="isinstance",
        ),
        Invalid(
            "from jax.experimental import host_callback as hcb\n\ndef f(x):\n    return hcb.id_print(x)\n",
            fixed=None,
            message="host_callback",
        ),
        Invalid(
            "import jax\nfrom jax import tree_leaves\n\nx = 1\n",
            fixed="import jax\n\nx = 1\n",
            message="unused",
        ),
        Invalid(
            "from jax.experimental import stax, optimizers as optim\n\nnet = stax.serial(stax.Dense(3))\n",
            fixed="from jax.example_libraries import stax, optimizers as optim\n\nnet = stax.serial(stax.Dense(3))\n",
            message="example_libraries",
        ),
        Invalid(
            "import jax\nfrom jax.experimental.shard_map import shard_map\n\n"
            "g = shard_map(f, mesh, P('x'), P('x'), check_rep=False)\n",
            fixed="import jax\n\ng = jax.shard_map(f, mesh=mesh, in_specs=P('x'), out_specs=P('x'), check_vma=False)\n",
            message="jax.shard_map",
        ),
        Invalid(  # the import moves, the uses stay
            "from jax.experimental.maps import Mesh, xmap\n\nm = Mesh(devices, ('x',))\nf = xmap(g)\n",
            fixed="from jax.experimental.maps import xmap\nfrom jax.sharding import Mesh\n\n"
            "m = Mesh(devices, ('x',))\nf = xmap(g)\n",
            message="import it from `jax.sharding`",
        ),
        Invalid(
            "import jax\nimport numpy as np\n\nidx = jax.ops.index[0, ::2]\n",
            fixed="import jax\nimport numpy as np\n\nidx = np.s_[0, ::2]\n",
            message="numpy.s_",
        ),
        Invalid(
            "import jax\n\nwith jax.experimental.enable_x64():\n    pass\n",
            fixed="import jax\n\nwith jax.enable_x64(True):\n    pass\n",
            message="enable_x64",
        ),
        Invalid(
            "import jax.numpy as jnp\n\ndef f(x, m):\n    return jnp.where(m, x, jnp.NINF) * jnp.NZERO\n",
            fixed="import jax.numpy as jnp\n\ndef f(x, m):\n    return jnp.where(m, x, -jnp.inf) * (-0.0)\n",
            message="use `-jax.numpy.inf`",
        ),
        Invalid(  # `import jax` does not load jax.extend
            "import jax\n\nplatform = jax.lib.xla_bridge.get_backend().platform\n",
            fixed="import jax\nimport jax.extend.backend\n\nplatform = jax.extend.backend.get_backend().platform\n",
            message="jax.extend.backend.get_backend",
        ),
        Invalid(
            "from jax.util import partial\n\ng = partial(f, 1)\n",
            fixed="from functools import partial\n\ng = partial(f, 1)\n",
            message="import it from `functools`",
        ),
        Invalid(  # unsafe: a 0-d `x` was returned as it was
            "import jax\n\ndef f(k, x):\n    return jax.random.shuffle(k, x, axis=1)\n",
            fixed="import jax\n\ndef f(k, x):\n    return jax.random.permutation(k, x, axis=1, independent=True)\n",
            message="with `independent=True`",
        ),
        Invalid("from jax.random import shuffle\n\nop = shuffle\n", fixed=None, message="a reference, not a call"),
        Invalid(
            "from jax import linear_util as lu\n\nf = lu.wrap_init(g)\n",
            fixed="from jax.extend import linear_util as lu\n\nf = lu.wrap_init(g)\n",
            message="jax.extend.linear_util",
        ),
        Invalid(
            "import jax\n\ns = jax.sharding.PositionalSharding(jax.devices())\n",
            fixed=None,
            message="NamedSharding",
        ),
    ]

    @classmethod
    def docs(cls) -> str:
        """The docstring, then the table of the APIs this rule reports (built from the rows it reads)."""
        lines = ["## APIs", "| API | Use instead | Fix | Deprecated in | Removed in |", "|---|---|---|---|---|"]
        for api in cls.table.apis:
            new = f"`{api.new.rstrip('.')}`" if api.how != HINT else api.new.replace("*", "\\*")
            if api.how == AT:
                new = f"`x.at[idx].{api.new}(y)`"
            elif api.how == TIE_IN:
                new = "its second argument"
            elif api.old in ADDED_KEYWORDS:
                new += " with " + ", ".join(f"`{k}={v}`" for k, v in ADDED_KEYWORDS[api.old].items())
            unknown = {"yes": "yes (version unknown)", "": "not yet" if api.deprecated else "-"}
            removed = unknown.get(api.removed, api.removed)
            lines.append(f"| `{api.name}` | {new} | {_fix_kind(api)} | {api.deprecated or '-'} | {removed} |")
        return super().docs() + "\n\n" + "\n".join(lines) + "\n"

    def __init__(self, context) -> None:
        super().__init__(context)
        self._unused_candidates: list[tuple[cst.CSTNode, cst.ImportAlias, ImportSpec, Api]] = []
        self._dotted_imports: list[tuple[cst.Import, cst.ImportAlias, Api]] = []
        self._seen: set[str] = set()  # the qualified names that references to table rows resolved to
        self._resolved: dict[type, object] = {}
        self._inner: set[cst.CSTNode] = set()  # the `.value` of an Attribute (`jax` in `jax.tree_map`)

    def _metadata(self, provider):
        """Metadata resolved on first use (and shared through the wrapper): most files never need it."""
        if provider not in self._resolved:
            self._resolved[provider] = self.context.wrapper.resolve(provider)
        return self._resolved[provider]

    @classmethod
    def may_match(cls, text: str) -> bool:
        return any(all(word in text for word in words) for words in cls.table.screen)

    @classmethod
    def may_match_tree(cls, screen: Screen) -> bool:
        """Everything this codemod reports starts from `lookup` of an import statement's name, or of the
        qualified name of a name node, which LibCST derives from an import of its first part: so some import
        must name a row, or some name spelled in the module must resolve through some import to one."""
        if any(cls.table.lookup(name) for name in screen.imported_names()):
            return True
        return any(cls.table.lookup(qualified) for qualified in screen.spelled_names)

    # ---- references ----------------------------------------------------------------------------------------------

    def visit_Name(self, node: cst.Name) -> None:
        self._reference(node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._inner.add(node.value)  # visited before its children: they learn that they are not outermost
        self._reference(node)

    def _reference(self, node: cst.Name | cst.Attribute) -> None:
        if node in self._inner:
            return  # the outermost dotted name decides
        if not _is_dotted(node):
            return  # `jax.tree_map(f, x).foo` has a misleading qualified name
        qualified = self._qualified(node)
        if qualified is None:
            return
        found = self.table.lookup(qualified)
        if found is None:
            return
        api, prefix = found
        self._seen.add(qualified)
        target = _descend(node, qualified.count(".") - prefix.count("."))
        if api.how == MOVE or self._stored(node) or self._guarded(target) or self._rehomed(target):
            return  # assigning or deleting `jax.tree_map` (a monkeypatch) is not a use of it
        handler = {
            RENAME: self._rename,
            TYPE: self._type,
            AT: self._at,
            TIE_IN: self._tie_in,
            JIT: self._jit,
            SHARD_MAP: self._shard_map,
            X64: self._x64,
            VALUE: self._value,
            HINT: self._hint,
        }[api.how]
        handler(target, api)

    def _qualified(self, node: cst.CSTNode) -> str | None:
        """The one imported name `node` refers to; None if it is local, unknown, or bound to several names (a shim).
        A dotted name whose first name no import binds refers to none: LibCST's scopes are not asked (most of the
        names this rule visits are locals: `x`, `self.f`)."""
        head = node
        while isinstance(head, cst.Attribute):
            head = head.value
        imported = self.context.bound_by_imports
        if isinstance(head, cst.Name) and imported is not None and head.value not in imported:
            return None
        names = self.context.qualified_names.get(node, ())
        distinct = {(q.name, q.source) for q in names}
        if len(distinct) != 1:
            return None
        (name, source), = distinct
        return name if source is QualifiedNameSource.IMPORT else None

    # ---- one handler per kind of row ---------------------------------------------------------------------------

    def _rename(self, node: cst.BaseExpression, api: Api) -> None:
        if api.old == "jax.ops.index" and self._inside_fixable_at(node):
            return  # the enclosing index_update's rewrite unwraps it
        new_expr, imports = self._expression(api.new, node)
        added = ADDED_KEYWORDS.get(api.old, {})
        spelled = ", ".join(f"{k}={v}" for k, v in added.items())
        message = f"`{api.old}` {api.status}; use `{api.new}`" + (f" with `{spelled}`" if added else "")
        renames = KEYWORD_RENAMES.get(api.old, {})
        call = self._called(node)
        changes: list[tuple[cst.CSTNode, cst.CSTNode]] = [(node, new_expr)]
        if added:
            if call is None:
                self.report(node, f"{message} (a reference, not a call: rewrite it by hand)")
                return
            if any(_keyword(a) in added for a in call.args):
                self.report(call, f"{message} (the call already passes one of them: rewrite it by hand)")
                return
            changes = [(call, call.with_changes(func=new_expr, args=_with_keywords(call.args, added)))]
        elif call is not None and renames and any(_keyword(a) in renames for a in call.args):
            args = [
                a.with_changes(keyword=cst.Name(renames[_keyword(a)])) if _keyword(a) in renames else a
                for a in call.args
            ]
            changes = [(call, call.with_changes(func=new_expr, args=args))]
        safety = None
        if api.old in UNSAFE_RENAMES:
            message += f" (unsafe: {UNSAFE_RENAMES[api.old]})"
            safety = Safety.UNSAFE
        self.report(node, message, self._fix(f"Use `{api.new}`", changes, imports, node, safety=safety))

    def _type(self, node: cst.BaseExpression, api: Api) -> None:
        new_expr, imports = self._expression(api.new, node)
        if self._in_annotation(node):
            message = f"`{api.old}` {api.status}; annotate with `{api.new}`"
            safety = Safety.SAFE
        else:
            message = (
                f"`{api.old}` {api.status}; use `{api.new}` (unsafe: `isinstance` with `{api.new}` is also True "
                f"for tracers, where `{api.old.rsplit('.', 1)[-1]}` was not)"
            )
            safety = Safety.UNSAFE
        self.report(node, message, self._fix(f"Use `{api.new}`", [(node, new_expr)], imports, node, safety=safety))

    def _at(self, node: cst.BaseExpression, api: Api) -> None:
        call = self._called(node)
        what = f"`{api.old}` {api.status}; use `x.at[idx].{api.new}(y)`"
        if call is None:
            self.report(node, f"{what} (a reference, not a call: rewrite it by hand)")
            return
        built = self._at_call(call, api)
        if built is None:
            self.report(call, f"{what} (cannot be rewritten exactly: it unpacks arguments or passes unknown ones)")
            return
        replacement, imports = built
        self.report(call, what, self._fix(f"Use `.at[].{api.new}`", [(call, replacement)], imports, node))

    def _at_call(self, call: cst.Call, api: Api) -> tuple[cst.BaseExpression, tuple] | None:
        """`x.at[idx].op(y, **kw)` for `jax.ops.index_op(x, idx, y, **kw)`, and the imports it needs."""
        bound = _bind(call.args, ("x", "idx", "y", "indices_are_sorted", "unique_indices"), required=3)
        if bound is None:
            return None
        x, idx, y = bound["x"], bound["idx"], bound["y"]
        imports: tuple = ()
        if self._maybe_numpy(x):
            # index_update converted its input with jnp.asarray; `.at` exists only on JAX arrays.
            asarray, imports = self._expression("jax.numpy.asarray", x)
            x = cst.Call(asarray.with_changes(lpar=[], rpar=[]), [cst.Arg(x)])
        if isinstance(idx, cst.Subscript) and self._qualified(idx.value) == "jax.ops.index" and _is_dotted(idx.value):
            elements = list(idx.slice)
        else:
            elements = [cst.SubscriptElement(cst.Index(idx))]
        keywords = [
            cst.Arg(bound[k], keyword=cst.Name(k), equal=_EQUAL)
            for k in ("indices_are_sorted", "unique_indices")
            if k in bound
        ]
        at = cst.Subscript(cst.Attribute(_receiver(x), cst.Name("at")), elements)
        new = cst.Call(cst.Attribute(at, cst.Name(api.new)), [cst.Arg(y), *keywords])
        return _keep_parens(call, new), imports

    def _maybe_numpy(self, expr: cst.BaseExpression) -> bool:
        """Whether `expr` may be a NumPy array or a Python sequence rather than a JAX array: a literal, a `numpy`
        call, or a name that some assignment in its scope binds to one."""
        if _numpy_value(expr, self.context.names):
            return True
        if not isinstance(expr, cst.Name):
            return False
        scope = self._metadata(ScopeProvider).get(expr)
        if scope is None:
            return False
        for assignment in scope[expr.value]:
            target = self.context.parents.get(getattr(assignment, "node", None))
            statement = self.context.parents.get(target) if isinstance(target, cst.AssignTarget) else None
            if isinstance(statement, cst.Assign) and _numpy_value(statement.value, self.context.names):
                return True
        return False

    def _inside_fixable_at(self, node: cst.CSTNode) -> bool:
        subscript = self.context.parents.get(node)
        arg = self.context.parents.get(subscript) if isinstance(subscript, cst.Subscript) else None
        call = self.context.parents.get(arg) if isinstance(arg, cst.Arg) else None
        if not isinstance(call, cst.Call) or not _is_dotted(call.func):
            return False
        qualified = self._qualified(call.func)
        found = self.table.lookup(qualified) if qualified else None
        return found is not None and found[0].how == AT and self._at_call(call, found[0]) is not None

    def _tie_in(self, node: cst.BaseExpression, api: Api) -> None:
        call = self._called(node)
        what = f"`{api.old}` {api.status} (it has been a no-op since omnistaging); `tie_in(x, y)` is just `y`"
        bound = _bind(call.args, ("x", "y"), required=2) if call is not None else None
        if bound is None:
            self.report(call or node, f"{what} (cannot be rewritten exactly here)")
            return
        replacement = _keep_parens(call, _parenthesized(bound["y"], self.context.parents.get(call)))
        if _has_effects(bound["x"]):
            self.report(
                call,
                f"{what}; unsafe: dropping `x` drops the call it makes",
                self._fix("Drop `tie_in`", [(call, replacement)], (), node, safety=Safety.UNSAFE),
            )
        else:
            self.report(call, what, self._fix("Drop `tie_in`", [(call, replacement)], (), node))

    def _jit(self, node: cst.BaseExpression, api: Api) -> None:
        new_expr, imports = self._expression(api.new, node)
        what = f"`{api.old}` {api.status}; use `jax.jit` (shardings by keyword)"
        parent = self.context.parents.get(node)
        call = self._called(node)
        if isinstance(parent, cst.Decorator) and parent.decorator is node:
            self._jit_fix(node, what, [(node, new_expr)], (), imports)
            return
        if call is not None:
            args = _jit_args(call.args, positional=("in_shardings", "out_shardings"))
            if args is None or not call.args or call.args[0].keyword is not None or call.args[0].star:
                why = "cannot be rewritten exactly: pass the function first and the rest by keyword"
                self.report(call, f"{what} ({why})")
                return
            self._jit_fix(call, what, [(call, call.with_changes(func=new_expr, args=args))], args, imports, node)
            return
        partial = self._partial_of(node)
        if partial is not None:
            rest = list(partial.args[1:])
            args = _jit_args(rest, positional=())
            if args is None:
                self.report(partial, f"{what} (cannot be rewritten exactly: pass pjit's options by keyword)")
                return
            new = partial.with_changes(args=[partial.args[0].with_changes(value=new_expr), *args])
            self._jit_fix(node, what, [(partial, new)], args, imports)
            return
        self.report(node, f"{what} (a reference, not a call: check how it is called, then rename it by hand)")

    def _jit_fix(self, target, what: str, changes, args: Sequence[cst.Arg], imports, reference=None) -> None:
        """Report pjit's rewrite with the safety its shardings allow: pjit reads the mesh of a legacy `with mesh:`,
        jax.jit the one of `jax.set_mesh` (`jaxfix.analysis.sharding`). `Sharding` objects mean the same under
        both: safe. A PartitionSpec, or what may be one, works under pjit only inside `with mesh:`, where jax.jit
        raises: not fixed. `None` or no sharding at all: the same values, placed on one device instead of
        replicated over a legacy mesh: safe where the project enters none, else unsafe."""
        sharding = self.context.sharding
        given = [a for a in args if a.star == "**" or _keyword(a) in ("in_shardings", "out_shardings")]
        kinds = [UNKNOWN if a.star else sharding.kind(a.value) for a in given]
        for arg, kind in zip(given, kinds):
            if kind in (SPEC, UNKNOWN):
                spelled = self.context.code_for(arg.value)
                shown = f"**{spelled}" if arg.star else f"{arg.keyword.value}={spelled}"
                held = "holds a PartitionSpec" if kind == SPEC else "may hold PartitionSpecs"
                self.report(target, f"{what} (not fixed: `{shown}` {held}, {_SPEC_REASON})")
                return
        reference = reference if reference is not None else target
        safety = None
        if not given or NONE in kinds:
            sites = sharding.legacy_mesh_contexts
            if sites:
                placed = "what its `None` shardings leave open" if given else "its arguments and results"
                what = (
                    f"{what} (unsafe: under the legacy {sites[0]}, "
                    f"pjit replicates {placed} over that mesh; `jax.jit` reads only `jax.set_mesh` and leaves them "
                    "on one device: the same values, placed otherwise; pass `NamedSharding(mesh, PartitionSpec())` "
                    "to keep them replicated)"
                )
                safety = Safety.UNSAFE
        self.report(target, what, self._fix("Use `jax.jit`", changes, imports, reference, safety=safety))

    def _shard_map(self, node: cst.BaseExpression, api: Api) -> None:
        new_expr, imports = self._expression(api.new, node)
        what = f"`{api.old}` {api.status}; use `jax.shard_map` (mesh and specs by keyword, `check_rep` is `check_vma`)"
        unsafe = f"{what} (unsafe: {_SHARD_MAP_ASSUMES})"
        call = self._called(node)
        partial = self._partial_of(node) if call is None else None
        if call is not None:
            args = _shard_map_args(call.args, positional=True)
            if args is not None:
                new = call.with_changes(func=new_expr, args=args)
                fix = self._fix("Use `jax.shard_map`", [(call, new)], imports, node, safety=Safety.UNSAFE)
                self.report(call, unsafe, fix)
                return
        elif partial is not None:
            args = _shard_map_args(list(partial.args[1:]), positional=False)
            if args is not None and {"mesh", "in_specs", "out_specs"} <= {_keyword(a) for a in args}:
                new = partial.with_changes(args=[partial.args[0].with_changes(value=new_expr), *args])
                fix = self._fix("Use `jax.shard_map`", [(partial, new)], imports, node, safety=Safety.UNSAFE)
                self.report(node, unsafe, fix)
                return
        why = "cannot be rewritten exactly here: `auto=`, unpacked or unknown arguments, or not a call"
        self.report(call or partial or node, f"{what} ({why})")

    def _x64(self, node: cst.BaseExpression, api: Api) -> None:
        new_expr, imports = self._expression(api.new, node)
        call = self._called(node)
        enable = api.old.endswith("enable_x64")
        what = f"`{api.old}` {api.status}; use `jax.enable_x64({'True' if enable else 'False'})`"
        bound = None
        if call is not None and not isinstance(self.context.parents.get(call), cst.Decorator):
            bound = _bind(call.args, ("new_val",) if enable else (), required=0)
        if bound is None:
            self.report(call or node, f"{what} (cannot be rewritten exactly here)")
            return
        value = bound["new_val"] if "new_val" in bound else cst.Name("True" if enable else "False")
        new = _keep_parens(call, cst.Call(new_expr, [cst.Arg(value)]))
        self.report(call, what, self._fix("Use `jax.enable_x64`", [(call, new)], imports, node))

    def _value(self, node: cst.BaseExpression, api: Api) -> None:
        qualify = _Qualify(self.context.names)
        value = cst.parse_expression(api.new).visit(qualify)
        imports = tuple(dict.fromkeys(qualify.imports))
        if node.lpar:
            value = value.with_changes(lpar=node.lpar, rpar=node.rpar)
        else:
            value = _parenthesized(value, self.context.parents.get(node))
        message = f"`{api.old}` {api.status}; use `{api.new}`"
        self.report(node, message, self._fix(f"Use `{api.new}`", [(node, value)], imports, node))

    def _hint(self, node: cst.BaseExpression, api: Api) -> None:
        changes = []
        if api.old == "jax.random.PRNGKey":
            new_expr, _ = self.context.names.expression_for(api.new)
            changes = [(node, _keep_parens(node, new_expr))]
        self.report(node, _hint_message(api), self.fix(f"Consider {api.new}", changes, safety=Safety.DISPLAY_ONLY))

    @classmethod
    def findings_from_tree(cls, screen: Screen) -> list[Diagnostic] | None:
        """The display-only hints (`jax.random.PRNGKey`, `jax.device_put_replicated`, ...), from the `ast` alone,
        where the module is plain enough to be sure of the LibCST run's answer (see `_hints`); None otherwise.
        Nearly all of this rule's findings in real code are hints, and a module whose only findings are hints
        then skips LibCST altogether."""
        spots = _hints(screen, cls.table)
        if spots is None:
            return None
        found = []
        for spot, api in spots:
            start, end = libcst_span(screen, spot)
            fix = Fix(Safety.DISPLAY_ONLY, f"Consider {api.new}", ())
            found.append(Diagnostic(cls.code, cls.name, _hint_message(api), Position(*start), Position(*end), fix))
        return found

    # ---- imports ---------------------------------------------------------------------------------------------

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar) or self._guarded(node):
            return
        module = dotted_name(node.module)
        found = [self.table.lookup(f"{module}.{alias.evaluated_name}") for alias in node.names]
        if any(f is not None and f[0].how == MOVE for f in found):
            self._moved_from(node, module, found)
            return
        for alias, hit in zip(node.names, found):
            if hit is None:
                continue
            api = hit[0]
            rehome = self._rehome(node, alias)
            if rehome is not None and self._referenced(node, alias.evaluated_alias or alias.evaluated_name):
                new_module = api.new.rsplit(".", 1)[0]
                self.report(
                    alias,
                    f"`{api.old}` {api.status}; import it from `{new_module}`",
                    self.fix(f"Import `{alias.evaluated_name}` from `{new_module}`", [rehome]),
                )
            elif api.removed:
                spec = ImportSpec(module, alias.evaluated_name, alias.evaluated_alias)
                self._unused_candidates.append((node, alias, spec, api))

    def visit_Import(self, node: cst.Import) -> None:
        if self._guarded(node):
            return
        for alias in node.names:
            found = self.table.lookup(alias.evaluated_name)
            if found is None:
                continue
            api = found[0]
            if api.how == MOVE:
                rest = alias.evaluated_name[len(api.name) :]
                new_name = api.new.rstrip(".") + rest
                message = f"`{api.name}` {api.status}; it moved to `{api.new.rstrip('.')}`"
                if alias.asname is None:
                    self.report(alias, f"{message} (rewrite this import and the names spelled through it by hand)")
                else:
                    new = alias.with_changes(name=cst.parse_expression(new_name))
                    self.report(alias, message, self.fix(f"Import `{new_name}`", [(alias, new)]))
            elif api.removed and alias.asname is not None:
                spec = ImportSpec(alias.evaluated_name, None, alias.evaluated_alias)
                self._unused_candidates.append((node, alias, spec, api))
            elif api.removed:
                self._dotted_imports.append((node, alias, api))

    def _rehome(self, node: cst.ImportFrom, alias: cst.ImportAlias) -> tuple[cst.CSTNode, cst.CSTNode] | None:
        """For a renamed class that only changed module (`from jax.experimental.maps import Mesh`): the change that
        imports it from the new module under the same local name, so its uses stay as they are. None otherwise."""
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return None
        new_module = _new_home(node, alias, self.table)
        if new_module is None or self._guarded(node):
            return None
        module_expr = cst.parse_expression(new_module)
        if all(_new_home(node, other, self.table) == new_module for other in node.names):
            return node, node.with_changes(module=module_expr)  # every name moves to the same module
        line = self.context.parents.get(node)
        if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
            return None
        rest = [a for a in node.names if a is not alias]
        rest[-1] = rest[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        moved = cst.ImportFrom(module=module_expr, names=[alias.with_changes(comma=cst.MaybeSentinel.DEFAULT)])
        kept = line.with_changes(body=[node.with_changes(names=rest)])
        return line, cst.FlattenSentinel([kept, cst.SimpleStatementLine([moved])])

    def _moved_from(self, node: cst.ImportFrom, module: str, moved: list) -> None:
        apis = [m[0] if m is not None and m[0].how == MOVE else None for m in moved]
        api = next(a for a in apis if a is not None)
        message = f"`{api.name}` {api.status}; it moved to `{api.new.rstrip('.')}`"
        if module + "." == api.old or module.startswith(api.old):
            new_module = api.new + module[len(api.old) :] if module != api.name else api.new.rstrip(".")
        elif all(a is not None for a in apis) and all(a.name.rsplit(".", 1)[0] == module for a in apis):
            new_module = api.new.rstrip(".").rsplit(".", 1)[0]
        else:
            self.report(node, f"{message} (split this import by hand: it mixes moved and other names)")
            return
        new = node.with_changes(module=cst.parse_expression(new_module.rstrip(".")))
        self.report(node, message, self.fix(f"Import from `{new_module.rstrip('.')}`", [(node, new)]))

    def leave_Module(self, original_node: cst.Module) -> None:
        for statement, alias, spec, api in self._unused_candidates:
            local = spec.asname or spec.obj or spec.module
            if self._referenced(statement, local):
                continue
            name = f"{spec.module}.{spec.obj}" if spec.obj else spec.module
            if self._exported(local):
                self.report(alias, f"`{name}` {api.status}, so this import fails; it is re-exported in `__all__`")
                continue
            self.report(
                alias,
                f"`{name}` {api.status}, so this import fails; the name is unused here: remove the import",
                self.fix(f"Remove the import of `{name}`", [], remove_imports=[spec]),
            )
        for statement, alias, api in self._dotted_imports:
            name = alias.evaluated_name
            message = f"`{api.name}` {api.status}, so `import {name}` fails"
            if any(seen == name or seen.startswith(name + ".") for seen in self._seen):
                self.report(alias, f"{message}; remove it once nothing uses it")
                continue
            line = self.context.parents.get(statement)
            block = self.context.parents.get(line)
            body = getattr(block, "body", ())
            alone = isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 and len(statement.names) == 1
            if alone and len(body) > 1:
                self.report(
                    alias,
                    f"{message}; nothing uses it here: remove the import",
                    self.fix(f"Remove `import {name}`", [(line, cst.RemovalSentinel.REMOVE)]),
                )
            else:
                self.report(alias, f"{message}; nothing uses it here: remove the import")

    def _exported(self, local: str) -> bool:
        code = self.context.module.code
        return "__all__" in code and (f"'{local}'" in code or f'"{local}"' in code)

    def _referenced(self, statement: cst.CSTNode, local: str) -> bool:
        scope = self._metadata(ScopeProvider).get(statement)
        if scope is None:
            return True
        for assignment in scope.assignments[local]:
            if isinstance(assignment, ImportAssignment) and assignment.node is statement and assignment.references:
                return True
        return False

    # ---- helpers -------------------------------------------------------------------------------------------

    def _fix(self, description, changes, imports, reference: cst.CSTNode, *, safety: Safety | None = None) -> Fix:
        """A fix that also drops the import of the old name, when the reference came through one."""
        return self.fix(
            description, changes, safety=safety, add_imports=imports, remove_imports=self._removed_import(reference)
        )

    def _expression(self, qualified: str, node: cst.BaseExpression) -> tuple[cst.BaseExpression, tuple]:
        expr, spec = _spelled(self.context.names, qualified)
        return _keep_parens(node, expr), ((spec,) if spec is not None else ())

    def _bindings(self, reference: cst.CSTNode) -> list[tuple[cst.Import | cst.ImportFrom, cst.ImportAlias, str]]:
        """The imports that bind `reference`'s leftmost name: (statement, alias, the full name the alias imports)."""
        base = reference
        while isinstance(base, cst.Attribute):
            base = base.value
        if not isinstance(base, cst.Name):
            return []
        scope = self._metadata(ScopeProvider).get(base)
        if scope is None:
            return []
        found = []
        for assignment in scope[base.value]:
            if not isinstance(assignment, ImportAssignment):
                continue
            statement = assignment.node
            if isinstance(statement, cst.ImportFrom):
                if statement.relative or statement.module is None or isinstance(statement.names, cst.ImportStar):
                    continue
                module = dotted_name(statement.module)
                for alias in statement.names:
                    if (alias.evaluated_alias or alias.evaluated_name) == base.value:
                        found.append((statement, alias, f"{module}.{alias.evaluated_name}"))
            elif isinstance(statement, cst.Import):
                for alias in statement.names:
                    if alias.evaluated_alias == base.value:
                        found.append((statement, alias, alias.evaluated_name))
        return found

    def _removed_import(self, reference: cst.CSTNode) -> tuple[ImportSpec, ...]:
        """The import that binds `reference`'s leftmost name, if it imports the old API itself (so it must go)."""
        specs = []
        for statement, alias, full in self._bindings(reference):
            if not self.table.mapped(full):
                continue
            if isinstance(statement, cst.ImportFrom):
                specs.append(ImportSpec(dotted_name(statement.module), alias.evaluated_name, alias.evaluated_alias))
            else:
                specs.append(ImportSpec(full, None, alias.evaluated_alias))
        return tuple(specs)

    def _rehomed(self, reference: cst.CSTNode) -> bool:
        """Whether `reference` is a bare name whose import `_rehome` rewrites instead (so the name itself stays)."""
        if not isinstance(reference, cst.Name):
            return False
        return any(
            isinstance(statement, cst.ImportFrom) and self._rehome(statement, alias) is not None
            for statement, alias, _ in self._bindings(reference)
        )

    def _called(self, node: cst.CSTNode) -> cst.Call | None:
        parent = self.context.parents.get(node)
        return parent if isinstance(parent, cst.Call) and parent.func is node else None

    def _partial_of(self, node: cst.CSTNode) -> cst.Call | None:
        """The `functools.partial(node, ...)` call that `node` is the first argument of."""
        arg = self.context.parents.get(node)
        call = self.context.parents.get(arg) if isinstance(arg, cst.Arg) else None
        if not isinstance(call, cst.Call) or not call.args or call.args[0] is not arg or arg.keyword or arg.star:
            return None
        return call if self.context.names.qualified(call.func) == "functools.partial" else None

    def _stored(self, node: cst.CSTNode) -> bool:
        """Whether `node` is assigned or deleted (`jax.tree_map = ...`, `del x.y`, a `for` or `with` target)."""
        child, parent = node, self.context.parents.get(node)
        while isinstance(parent, (cst.Tuple, cst.List, cst.Element, cst.StarredElement)):
            child, parent = parent, self.context.parents.get(parent)
        if isinstance(parent, (cst.AssignTarget, cst.Del, cst.AsName)):
            return True
        if isinstance(parent, (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor, cst.NamedExpr)):
            return parent.target is child
        return False

    def _in_annotation(self, node: cst.CSTNode) -> bool:
        current = self.context.parents.get(node)
        while current is not None and not isinstance(current, (cst.BaseStatement, cst.BaseSmallStatement)):
            if isinstance(current, cst.Annotation):
                return True
            current = self.context.parents.get(current)
        return False

    def _guarded(self, node: cst.CSTNode) -> bool:
        """Inside a compatibility shim: a `try` catching ImportError/AttributeError or such a handler (the fallback
        for another JAX version), or an `if` on hasattr/version."""
        child, current = node, self.context.parents.get(node)
        while current is not None:
            in_try = isinstance(current, cst.Try) and child is current.body
            if in_try and any(_catches_missing(h) for h in current.handlers):
                return True
            if isinstance(current, cst.ExceptHandler) and child is current.body and _catches_missing(current):
                return True
            if isinstance(current, (cst.If, cst.IfExp, cst.While)) and child is not current.test:
                test = self.context.code_for(current.test)
                if "hasattr" in test or "version" in test.lower():
                    return True
            child, current = current, self.context.parents.get(current)
        return False


# ---- module helpers --------------------------------------------------------------------------------------------


def _spelled(names, qualified: str) -> tuple[cst.BaseExpression, ImportSpec | None]:
    """`names.expression_for`, and the import of the name's module itself where `import jax` does not load it."""
    expr, spec = names.expression_for(qualified)
    module = qualified.rsplit(".", 1)[0]
    if module in EXPLICIT_IMPORTS and names.module_alias(module) is None:
        spec = ImportSpec(module)
    return expr, spec


class _Qualify(cst.CSTTransformer):
    """A `value` row's expression with each dotted name spelled as this module can name it."""

    def __init__(self, names) -> None:
        self.names = names
        self.imports: list[ImportSpec] = []

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return False  # the outermost dotted name is one qualified name

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        expr, spec = _spelled(self.names, dotted_name(original_node))
        if spec is not None:
            self.imports.append(spec)
        return expr


def _with_keywords(args: Sequence[cst.Arg], added: dict[str, str]) -> list[cst.Arg]:
    """`args` and then `added` as keyword arguments, a trailing comma kept last."""
    out = list(args)
    new = [cst.Arg(cst.parse_expression(v), keyword=cst.Name(k), equal=_EQUAL) for k, v in added.items()]
    if out and isinstance(out[-1].comma, cst.Comma):
        new[-1] = new[-1].with_changes(comma=out[-1].comma)
        out[-1] = out[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return out + new


def _fix_kind(api: Api) -> str:
    """The docs table's Fix column for a row."""
    if api.how == HINT:
        return "hint"
    if api.how == MOVE:
        return "safe (imports)"
    if api.how == SHARD_MAP or api.old in UNSAFE_RENAMES:
        return "unsafe"
    if api.how == TYPE:
        return "safe in annotations, else unsafe"
    if api.how == TIE_IN:
        return "safe, unsafe if the first argument calls"
    if api.how == JIT:
        return "safe with `Sharding` objects; unsafe under `with mesh:`; none with `PartitionSpec`s"
    return "safe"


def _hint_message(api: Api) -> str:
    shown = api.new if " " in api.new or "(" in api.new else f"`{api.new}`"
    message = f"`{api.name}` {api.status}; consider {shown}"
    reason = HINT_REASONS.get(api.old)
    return f"{message} ({reason})" if reason else message


_EQUAL = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))
_MISSING = {"ImportError", "ModuleNotFoundError", "AttributeError"}  # what a missing API raises



def _is_dotted(node: cst.CSTNode) -> bool:
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name)




def _descend(node: cst.BaseExpression, steps: int) -> cst.BaseExpression:
    for _ in range(steps):
        if not isinstance(node, cst.Attribute):
            break
        node = node.value
    return node


def _catches_missing(handler: cst.ExceptHandler) -> bool:
    if handler.type is None:
        return False  # a bare `except:` guards anything; it does not mark a compatibility shim
    kinds = handler.type.elements if isinstance(handler.type, cst.Tuple) else [handler.type]
    for kind in kinds:
        expr = kind.value if isinstance(kind, cst.Element) else kind
        if _is_dotted(expr) and dotted_name(expr).rsplit(".", 1)[-1] in _MISSING:
            return True
    return False


def _numpy_value(expr: cst.BaseExpression, names) -> bool:
    if isinstance(expr, (cst.List, cst.Tuple, cst.ListComp, cst.Integer, cst.Float)):
        return True
    if isinstance(expr, cst.Call) and _is_dotted(expr.func):
        callee = names.qualified(expr.func)
        return callee is not None and callee.split(".")[0] == "numpy"
    return False


def _new_home(node: cst.ImportFrom, alias: cst.ImportAlias, table: ApiTable) -> str | None:
    """The module that now holds what `alias` imports, if only its module changed (`Mesh`, `PartitionSpec`)."""
    api = table.exact.get(f"{dotted_name(node.module)}.{alias.evaluated_name}")
    if api is None or api.how != RENAME or api.old in KEYWORD_RENAMES or api.old in ADDED_KEYWORDS:
        return None
    new_module, new_leaf = api.new.rsplit(".", 1)
    return new_module if new_leaf == alias.evaluated_name else None


def _keyword(arg: cst.Arg) -> str | None:
    return arg.keyword.value if arg.keyword is not None else None


def _bind(args: Sequence[cst.Arg], params: Sequence[str], *, required: int) -> dict[str, cst.BaseExpression] | None:
    """Arguments bound to parameter names as Python would; None for `*`/`**`, unknown, repeated or missing ones,
    or keywords given out of order where moving them would reorder a call's side effects."""
    bound: dict[str, cst.BaseExpression] = {}
    order: list[str] = []
    positional = 0
    for arg in args:
        if arg.star:
            return None
        if arg.keyword is None:
            if positional >= len(params):
                return None
            name = params[positional]
            positional += 1
        else:
            name = arg.keyword.value
            if name not in params:
                return None
        if name in bound:
            return None
        bound[name] = arg.value
        order.append(name)
    if any(p not in bound for p in params[:required]):
        return None
    canonical = [p for p in params if p in bound]
    if order != canonical and any(_has_effects(bound[n]) for n in order):
        return None
    return bound


def _jit_args(args: Sequence[cst.Arg], *, positional: Sequence[str]) -> list[cst.Arg] | None:
    """pjit's arguments for jax.jit: positional shardings as keywords, legacy keywords renamed; None if impossible."""
    renames = KEYWORD_RENAMES["jax.experimental.pjit.pjit"]
    out: list[cst.Arg] = []
    seen: set[str] = set()
    index = 0
    for position, arg in enumerate(args):
        if arg.star == "*":
            return None
        if arg.star == "**":
            out.append(arg)
            continue
        if arg.keyword is None:
            if positional and position == 0:
                out.append(arg)  # the function
                continue
            if index >= len(positional):
                return None
            name = positional[index]
            index += 1
            arg = arg.with_changes(keyword=cst.Name(name), equal=_EQUAL)
        else:
            name = renames.get(arg.keyword.value, arg.keyword.value)
            if name not in JIT_KEYWORDS:
                return None
            if name != arg.keyword.value:
                arg = arg.with_changes(keyword=cst.Name(name))
        if name in seen:
            return None
        seen.add(name)
        out.append(arg)
    return out


def _shard_map_args(args: Sequence[cst.Arg], *, positional: bool) -> list[cst.Arg] | None:
    """The legacy shard_map's arguments for jax.shard_map; None if they do not map exactly."""
    out: list[cst.Arg] = []
    seen: set[str] = set()
    for position, arg in enumerate(args):
        if arg.star:
            return None
        if arg.keyword is None:
            if not positional or position >= len(SHARD_MAP_POSITIONAL):
                return None
            if position == 0:
                out.append(arg)
                continue
            name = SHARD_MAP_POSITIONAL[position]
            arg = arg.with_changes(keyword=cst.Name(name), equal=_EQUAL)
        else:
            name = KEYWORD_RENAMES["jax.experimental.shard_map.shard_map"].get(arg.keyword.value, arg.keyword.value)
            if name not in SHARD_MAP_POSITIONAL[1:]:
                return None  # `f=` (positional-only now), `auto=` (no equivalent), anything unknown
            if name != arg.keyword.value:
                arg = arg.with_changes(keyword=cst.Name(name))
        if name in seen:
            return None
        seen.add(name)
        out.append(arg)
    if positional and (not out or out[0].keyword is not None):
        return None
    return out


_ATOMS = (
    cst.Name, cst.Attribute, cst.Subscript, cst.Call, cst.List, cst.Dict, cst.Set, cst.SimpleString,
    cst.ConcatenatedString, cst.FormattedString, cst.Ellipsis, cst.ListComp, cst.DictComp, cst.SetComp,
)  # fmt: skip


def _receiver(expr: cst.BaseExpression) -> cst.BaseExpression:
    """`expr` fit to stand before `.at`: parenthesized unless it is already a primary."""
    if expr.lpar or isinstance(expr, (cst.Name, cst.Attribute, cst.Subscript, cst.Call)):
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


_NO_PARENS_NEEDED = (cst.Arg, cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Return, cst.Expr, cst.Element,
                     cst.DictElement, cst.Index, cst.Yield)  # fmt: skip


def _parenthesized(expr: cst.BaseExpression, parent: cst.CSTNode | None) -> cst.BaseExpression:
    """`expr` put where a call stood: parenthesized unless it is atomic or its new place cannot bind tighter."""
    if expr.lpar or isinstance(expr, _ATOMS) or isinstance(parent, _NO_PARENS_NEEDED):
        return expr
    if isinstance(expr, (cst.Integer, cst.Float, cst.Imaginary)) and not isinstance(parent, cst.Attribute):
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _keep_parens(old: cst.BaseExpression, new: cst.BaseExpression) -> cst.BaseExpression:
    """`new` wearing the parentheses that `old` had."""
    if old.lpar:
        return new.with_changes(lpar=[*old.lpar, *new.lpar], rpar=[*new.rpar, *old.rpar])
    return new


class _Effects(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found = False

    def visit_Call(self, node) -> bool:
        self.found = True
        return False

    def visit_Await(self, node) -> bool:
        self.found = True
        return False

    def visit_Yield(self, node) -> bool:
        self.found = True
        return False

    def visit_NamedExpr(self, node) -> bool:
        self.found = True
        return False

    def visit_Lambda(self, node) -> bool:
        return False  # its body does not run here


def _has_effects(expr: cst.CSTNode) -> bool:
    """Whether evaluating `expr` may do more than read names (a call, await, yield or walrus inside it)."""
    visitor = _Effects()
    expr.visit(visitor)
    return visitor.found


# ---- the hints from the `ast` (DeprecatedApi.findings_from_tree) ------------------------------------------------

_SHIM_WORDS = (b"hasattr", b"version")  # what `_guarded` looks for in a test


class _Undecided(Exception):
    """The module has something `_hints` does not model: the LibCST run decides."""


def _hints(screen: Screen, table: ApiTable) -> list[tuple[ast.expr, Api]] | None:
    """The expressions the LibCST run reports as hints (rows without an exact replacement), with their rows, or
    None where the module may hold any other finding of this rule or anything that makes the answer less than
    plain:
    - every import that names a row of the table is `from jax.random import PRNGKey [as x]` (the LibCST run
      reports nothing else of it) or sits in a shim (`_guards`); no import's module path runs through a row;
    - a dotted name resolves through the module's imports as LibCST does only where its first name is bound by
      absolute imports of one and the same thing, at module level among them, and by nothing else anywhere (no
      assignment, parameter, def, class, `global`, relative import, ...: `single_import`); one that module-level
      imports alone bind to several things (`try: from jax import enable_x64` / `except ImportError: from
      jax.experimental import enable_x64`) resolves to nothing, as LibCST's qualified names then disagree; a name
      that resolves to a row otherwise is undecided;
    - a reference that resolves to a row other than a hint or a moved module (whose references the LibCST run
      leaves alone: it rewrites their imports), that is assigned or deleted, sits in an f-string, or
      sits under an `if`/`while`/conditional expression whose header mentions hasattr or version (`_guarded`'s
      shims, judged on a wider text than the test's own) is undecided, unless it sits in a shim that `_guards`
      is sure of: there the LibCST run reports nothing (`_guarded`), and neither does this.
    tests/test_tree_findings.py compares the answer with the LibCST run on the corpus, examples and probes."""
    try:
        guards, doubtful = _guards(screen)
        imports = _plain_imports(screen, table, guards)
        if not imports:
            return []
        return _hint_references(screen, imports, table, guards, doubtful)
    except _Undecided:
        return None


def _guards(screen: Screen) -> tuple[list[tuple[ast.AST, ast.AST]], list[ast.AST]]:
    """The shims where `DeprecatedApi._guarded` surely holds, as (first, last) nodes: the body of a `try` that
    catches a missing API and such a handler's body; the body and `else` of an `if`/`while` and the branches of a
    conditional expression whose test's own text has `hasattr` or (in any case) `version` (LibCST's code of the
    test holds that text and maybe its parentheses). Beside them, what may be a shim or hides positions: tests
    whose header's wider text names a shim word (comments included), and f-strings."""
    guards: list[tuple[ast.AST, ast.AST]] = []
    doubtful: list[ast.AST] = []
    for node in screen.nodes_of(ast.Try, ast.If, ast.While, ast.IfExp, ast.JoinedStr):
        kind = type(node)
        if kind is ast.Try:
            catching = [h for h in node.handlers if _catches_missing_ast(h)]
            if catching:
                guards.append((node.body[0], node.body[-1]))
                guards.extend((h.body[0], h.body[-1]) for h in catching)
        elif kind is ast.JoinedStr:
            doubtful.append(node)  # `ast` positions inside f-strings are not LibCST's in every Python this runs on
        elif _mentions_shim(screen, node):
            doubtful.append(node)
            test = node.test
            text = source_bytes(screen, (test.lineno, test.col_offset), (test.end_lineno, test.end_col_offset))
            if b"hasattr" in text or b"version" in text.lower():
                if kind is ast.IfExp:
                    guards.extend(((node.body, node.body), (node.orelse, node.orelse)))
                else:
                    guards.extend((block[0], block[-1]) for block in (node.body, node.orelse) if block)
    return guards, doubtful


def _plain_imports(screen: Screen, table: ApiTable, guards) -> dict[str, set[str] | None]:
    """Every name an absolute import binds → the full names it stands for where `single_import` says so, or none
    where module-level imports alone bind it to several (`_only_module_imports`: LibCST gives no one name), else
    None. Undecided where an import outside the `guards` names a row of the table (other than `from jax.random
    import PRNGKey`): the LibCST run reports nothing of an import in a shim."""
    for statement, _ in screen.statements:
        if isinstance(statement, ast.Import):
            if any(table.lookup(a.name) for a in statement.names) and not _guarded(statement, guards):
                raise _Undecided  # `import jax.random.PRNGKey`: the LibCST run resolves the alias itself
        elif isinstance(statement, ast.ImportFrom) and statement.module and not statement.level:
            if table.lookup(statement.module) and not _guarded(statement, guards):
                raise _Undecided
            for alias in statement.names:
                found = table.lookup(f"{statement.module}.{alias.name}") if alias.name != "*" else None
                if found is not None and (found[0].old != "jax.random.PRNGKey" or statement.module != "jax.random"):
                    if not _guarded(statement, guards):
                        raise _Undecided  # another row: its own reports (moved modules, unused removed names, ...)
    several = _only_module_imports(screen)
    return {
        local: fulls if single_import(screen, local) else set() if len(fulls) > 1 and local in several else None
        for local, fulls in screen.imports.items()
    }


def _only_module_imports(screen: Screen) -> frozenset[str]:
    """The names that only absolute imports at module level bind (LibCST's scope of every use of one then holds
    all those imports, and nothing else)."""
    module, elsewhere = set(), set()
    for statement, scope in screen.statements:
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            names = module if scope is screen.tree and not getattr(statement, "level", 0) else elsewhere
            names.update((a.asname or a.name).split(".")[0] for a in statement.names if a.name != "*")
    return frozenset(module - elsewhere - other_bindings(screen))


def _guarded(node: ast.AST, guards) -> bool:
    return any(_within(node, guard) for guard in guards)


def _hint_references(
    screen: Screen, imports: dict[str, set[str] | None], table: ApiTable, guards, doubtful
) -> list[tuple[ast.expr, Api]]:
    """What `DeprecatedApi._reference` reports as hints: each outermost dotted name (not the `.value` of an
    attribute) that resolves to a hint's row, cut to the row's own name (`jax.random.PRNGKey` of `...PRNGKey.__doc__`).
    Which constructs enclose a reference is read from positions (`ast` spans nest), not from a walk with a stack;
    only for the names that resolve to a row (most resolve to none)."""
    inner: set[int] = set()
    named: list[ast.expr] = []
    for node in screen.nodes_of(ast.Attribute, ast.Name):
        if type(node) is ast.Attribute:
            inner.add(id(node.value))
        named.append(node)
    fstrings = [span for span in doubtful if type(span) is ast.JoinedStr]
    found = []
    for node in named:
        if id(node) in inner:
            continue
        try:
            hint = _hint_target(screen, node, imports, table)
        except _Undecided:
            hint = _Undecided
        if hint is None:
            continue
        if _guarded(node, guards) and not _guarded(node, fstrings):
            continue  # `_guarded`: the LibCST run reports nothing of any row here
        if hint is _Undecided or _guarded(node, doubtful):
            raise _Undecided
        found.append(hint)
    return found


def _hint_target(
    screen: Screen, node: ast.expr, imports: dict[str, set[str] | None], table: ApiTable
) -> tuple[ast.expr, Api] | None:
    """The expression to report and its row if `node` resolves to a hint; None if it resolves to no row or to a
    moved module (the LibCST run reports the import, not the references)."""
    parts = dotted(node)
    if parts is None or parts[0] not in imports:
        return None
    fulls = imports[parts[0]]
    if fulls is None:  # bound in other ways too: LibCST's answer depends on scopes
        if any(table.lookup(q) for q in screen.qualified_names(parts)):
            raise _Undecided
        return None
    if not fulls:  # several imports: LibCST gives the name no one qualified name
        return None
    (full,) = fulls
    qualified = ".".join((full, *parts[1:]))
    found = table.lookup(qualified)
    if found is None:
        return None
    api, prefix = found
    if api.how == MOVE:
        return None
    if api.how != HINT or not isinstance(node.ctx, ast.Load):
        raise _Undecided
    for _ in range(qualified.count(".") - prefix.count(".")):
        node = node.value
    return node, api


def _within(node: ast.AST, span) -> bool:
    """Whether `node` lies inside `span`: a node, or (first, last) nodes."""
    first, last = span if isinstance(span, tuple) else (span, span)
    start, end = (node.lineno, node.col_offset), (node.end_lineno, node.end_col_offset)
    return (first.lineno, first.col_offset) <= start and end <= (last.end_lineno, last.end_col_offset)


def _mentions_shim(screen: Screen, node: ast.If | ast.While | ast.IfExp) -> bool:
    """Whether the text of the header (from the keyword to the body, or the whole conditional expression) names
    what `_guarded` looks for in the test's code."""
    if isinstance(node, ast.IfExp):
        end = (node.end_lineno, node.end_col_offset)
    else:
        end = (node.body[0].lineno, node.body[0].col_offset)
    text = source_bytes(screen, (node.lineno, node.col_offset), end).lower()
    return any(word in text for word in _SHIM_WORDS)


def _catches_missing_ast(handler: ast.ExceptHandler) -> bool:
    """`_catches_missing` on the `ast`."""
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any((parts := dotted(kind)) is not None and parts[-1] in _MISSING for kind in kinds if kind is not None)
