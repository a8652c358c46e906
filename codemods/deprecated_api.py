"""JF901 deprecated-api: deprecated and removed JAX APIs rewritten to their current form, where the mapping is exact.

The whole rule is a table, `jaxfix.facts.knowledge.deprecations`: one row per old name. `check` reads, on `ast`,
every dotted name that resolves through the module's imports (`FileFacts.references`, so `from jax import tree_map
as tm; tm(...)` is found and a local variable that shadows the name is not) and every import statement, looks them
up there, and decides each finding, its safety and its fix plan (the arguments bound, `jaxfix.facts.arguments`;
what a pjit's shardings hold and where a legacy mesh context is entered, `jaxfix.facts.sharding`); `fix_finding`
builds the row's rewrite on LibCST from that plan (`jaxfix.edit.api_rewrites`).
"""

from __future__ import annotations

import ast
from typing import NamedTuple

from jaxfix.analysis.api_references import DEPRECATED, Api, ReadsApiTable, descend, hint_message
from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.diagnostics import Diagnostic, Fix, ImportSpec, Safety
from jaxfix.edit.api_rewrites import BUILDERS
from jaxfix.facts import arguments
from jaxfix.facts.imports import (
    alone_on_line, block_of, import_bindings, import_is_read, imported_names, string_annotation_names,
)  # fmt: skip
from jaxfix.facts.knowledge.deprecations import (
    ADDED_KEYWORDS, AT, EXPLICIT_IMPORTS, HINT, JIT, JIT_KEYWORDS, KEYWORD_RENAMES, MOVE, RENAME, SHARD_MAP,
    SHARD_MAP_ASSUMES, SHARD_MAP_POSITIONAL, SPEC_REASON, TIE_IN, TYPE, UNSAFE_RENAMES, VALUE, X64,
)  # fmt: skip
from jaxfix.facts.literals import maybe_numpy
from jaxfix.facts.module import FileFacts, dotted, in_order, value_of
from jaxfix.facts.sharding import NONE, SPEC, UNKNOWN, legacy_mesh_sites, sharding_kind


class DeprecatedApi(ReadsApiTable, Codemod):
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


    looks_at = ("Name", "Attribute", "Import", "ImportFrom")

    @classmethod
    def check(cls, facts: FileFacts) -> list[Diagnostic]:
        """Every reference to a row and every import of one, each with its fix plan (`Plan`); nothing where no import
        can reach a row (an early exit before any name is resolved)."""
        if not any(cls.table.reaches(name) for name in imported_names(facts.binder)):
            return []
        return _Findings(cls, facts).run()

    @classmethod
    def fix_finding(cls, finding: Diagnostic, bridge) -> Fix | None:
        """The rewrite `check` planned (`Plan.kind`: one of `jaxfix.edit.api_rewrites.BUILDERS`), built on the CST nodes of the plan's."""
        plan: Plan = finding.plan
        node = bridge.cst_of(plan.node)
        if node is None:
            return None
        changes = BUILDERS[plan.kind](node, plan.data, bridge)
        if changes is None:
            return None
        return Fix(finding.fix.safety, finding.fix.description, tuple(changes), plan.add, plan.remove)


class Plan(NamedTuple):
    """What `fix_finding` builds: `kind` (a key of `api_rewrites.BUILDERS`), the `ast` node whose CST node it rewrites, what
    the kind needs beside it (spellings, places of arguments in `in_order`), and the imports the fix adds and
    removes (the old name's own import, where the reference came through one)."""

    kind: str
    node: ast.AST
    data: tuple = ()
    add: tuple = ()
    remove: tuple = ()


_PJIT_RENAMES = KEYWORD_RENAMES["jax.experimental.pjit.pjit"]
_SHARD_MAP_RENAMES = KEYWORD_RENAMES["jax.experimental.shard_map.shard_map"]
_SHARD_MAP_KEYWORDS = frozenset(SHARD_MAP_POSITIONAL[1:])
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


class _Findings:
    """One module's findings (`DeprecatedApi.check`): the references first, then the imports, which read what the
    references resolved to."""

    def __init__(self, rule: type[DeprecatedApi], facts: FileFacts) -> None:
        self.rule, self.facts, self.binder, self.table = rule, facts, facts.binder, rule.table
        self.found: list[Diagnostic] = []
        self.seen: set[str] = set()  # the qualified names that references to rows resolved to
        self._sites: tuple[str, ...] | None = None
        self._annotated: set[str] | None = None  # `string_annotation_names`, asked for the first import

    def run(self) -> list[Diagnostic]:
        handlers = {
            RENAME: self._rename, TYPE: self._type, AT: self._at, TIE_IN: self._tie_in, JIT: self._jit,
            SHARD_MAP: self._shard_map, X64: self._x64, VALUE: self._value, HINT: self._hint,
        }  # fmt: skip
        for node, qualified in self.facts.references:
            row = self.table.lookup(qualified)
            if row is None:
                continue
            api, prefix = row
            self.seen.add(qualified)
            target = descend(node, qualified.count(".") - prefix.count("."))
            if api.how == MOVE:
                continue  # its imports are rewritten, its uses stay
            if self.facts.stored(node):  # assigning or deleting `jax.tree_map` (a monkeypatch) is not a use of it
                self.facts.decline(self.rule.code, target, "assigned or deleted here, not used")
            elif self.facts.in_shim(target):
                self.facts.decline(self.rule.code, target, "in a compatibility shim (a fallback for another JAX version)")
            elif not self._rehomed(target):
                handlers[api.how](target, api)
        self._imports()
        return self.found

    def report(self, node: ast.AST, message: str, description: str = "", plan: Plan | None = None,
               safety: Safety | None = None) -> None:  # fmt: skip
        self.found.append(self.rule.finding(self.facts, node, message, safety=safety, description=description, plan=plan))

    # ---- one handler per kind of row ---------------------------------------------------------------------------

    def _rename(self, node: ast.expr, api: Api) -> None:
        if api.old == "jax.ops.index" and self._inside_fixable_at(node):
            return  # the enclosing index_update's rewrite unwraps it
        text, add = self._spelled(api.new)
        added = ADDED_KEYWORDS.get(api.old, {})
        spelled = ", ".join(f"{k}={v}" for k, v in added.items())
        message = f"`{api.old}` {api.status}; use `{api.new}`" + (f" with `{spelled}`" if added else "")
        renames = KEYWORD_RENAMES.get(api.old, {})
        call = self._called(node)
        plan = Plan("name", node, (text,), add, self._removed(node))
        if added:
            if call is None:
                return self.report(node, f"{message} (a reference, not a call: rewrite it by hand)")
            if any(_keyword(a) in added for a in in_order(call)):
                return self.report(call, f"{message} (the call already passes one of them: rewrite it by hand)")
            plan = Plan("call", call, (text, {}, added), add, plan.remove)
        elif call is not None and renames and any(_keyword(a) in renames for a in in_order(call)):
            plan = Plan("call", call, (text, renames, {}), add, plan.remove)
        safety = None
        if api.old in UNSAFE_RENAMES:
            message += f" (unsafe: {UNSAFE_RENAMES[api.old]})"
            safety = Safety.UNSAFE
        self.report(node, message, f"Use `{api.new}`", plan, safety)

    def _type(self, node: ast.expr, api: Api) -> None:
        text, add = self._spelled(api.new)
        if self._in_annotation(node):
            message = f"`{api.old}` {api.status}; annotate with `{api.new}`"
            safety = Safety.SAFE
        else:
            message = (
                f"`{api.old}` {api.status}; use `{api.new}` (unsafe: `isinstance` with `{api.new}` is also True "
                f"for tracers, where `{api.old.rsplit('.', 1)[-1]}` was not)"
            )
            safety = Safety.UNSAFE
        self.report(node, message, f"Use `{api.new}`", Plan("name", node, (text,), add, self._removed(node)), safety)

    def _at(self, node: ast.expr, api: Api) -> None:
        call = self._called(node)
        what = f"`{api.old}` {api.status}; use `x.at[idx].{api.new}(y)`"
        if call is None:
            return self.report(node, f"{what} (a reference, not a call: rewrite it by hand)")
        bound = _bind_at(call)
        if bound is None:
            return self.report(call, f"{what} (cannot be rewritten exactly: it unpacks arguments or passes unknown ones)")
        args = in_order(call)
        x, idx = value_of(args[bound["x"]]), value_of(args[bound["idx"]])
        asarray, add = self._spelled("jax.numpy.asarray") if maybe_numpy(self.binder, x) else (None, ())
        # index_update converted its input with jnp.asarray; `.at` exists only on JAX arrays.
        unwrap = type(idx) is ast.Subscript and dotted(idx.value) is not None
        unwrap = unwrap and self.binder.imported(idx.value) == "jax.ops.index"  # `jax.ops.index[i]` is unwrapped
        plan = Plan("at", call, (api.new, bound, asarray, unwrap), add, self._removed(node))
        self.report(call, what, f"Use `.at[].{api.new}`", plan)

    def _inside_fixable_at(self, node: ast.expr) -> bool:
        """Whether `node` (`jax.ops.index`) is subscripted as an argument of an `index_*` call that is rewritten."""
        subscript = self.binder.parent(node)
        if type(subscript) is not ast.Subscript or subscript.value is not node:
            return False
        call = self.binder.parent(subscript)
        if type(call) is ast.keyword and call.arg is not None:
            call = self.binder.parent(call)
        elif type(call) is not ast.Call or call.func is subscript:
            return False
        if type(call) is not ast.Call or dotted(call.func) is None:
            return False
        qualified = self.binder.imported(call.func)
        found = self.table.lookup(qualified) if qualified else None
        return found is not None and found[0].how == AT and _bind_at(call) is not None

    def _tie_in(self, node: ast.expr, api: Api) -> None:
        call = self._called(node)
        what = f"`{api.old}` {api.status} (it has been a no-op since omnistaging); `tie_in(x, y)` is just `y`"
        bound = arguments.bind(in_order(call), ("x", "y"), required=2) if call is not None else None
        if bound is None:
            return self.report(call or node, f"{what} (cannot be rewritten exactly here)")
        plan = Plan("tie_in", call, (bound["y"],), (), self._removed(node))
        if arguments.has_effects(value_of(in_order(call)[bound["x"]])):
            self.report(call, f"{what}; unsafe: dropping `x` drops the call it makes", "Drop `tie_in`", plan, Safety.UNSAFE)
        else:
            self.report(call, what, "Drop `tie_in`", plan)

    def _jit(self, node: ast.expr, api: Api) -> None:
        text, add = self._spelled(api.new)
        what = f"`{api.old}` {api.status}; use `jax.jit` (shardings by keyword)"
        remove = self._removed(node)
        call = self._called(node)
        if self._decorates(node):
            return self._jit_fix(node, what, Plan("name", node, (text,), add, remove), [], [])
        if call is not None:
            args = in_order(call)
            changes = arguments.mapped_keywords(
                args, ("f", "in_shardings", "out_shardings"), _PJIT_RENAMES, JIT_KEYWORDS, unpacked=True
            )
            if changes is None or not args or type(args[0]) in (ast.keyword, ast.Starred):
                why = "cannot be rewritten exactly: pass the function first and the rest by keyword"
                return self.report(call, f"{what} ({why})")
            return self._jit_fix(call, what, Plan("rekey", call, (text, changes), add, remove), args, changes)
        partial = self._partial_of(node)
        if partial is not None:
            rest = in_order(partial)[1:]
            changes = arguments.mapped_keywords(rest, (), _PJIT_RENAMES, JIT_KEYWORDS, unpacked=True)
            if changes is None:
                return self.report(partial, f"{what} (cannot be rewritten exactly: pass pjit's options by keyword)")
            return self._jit_fix(node, what, Plan("partial", partial, (text, changes), add, remove), rest, changes)
        self.report(node, f"{what} (a reference, not a call: check how it is called, then rename it by hand)")

    def _jit_fix(self, target: ast.AST, what: str, plan: Plan, args: list, changes: list) -> None:
        """Report pjit's rewrite with the safety its shardings allow: pjit reads the mesh of a legacy `with mesh:`,
        jax.jit the one of `jax.set_mesh` (`jaxfix.facts.sharding`). `Sharding` objects mean the same under
        both: safe. A PartitionSpec, or what may be one, works under pjit only inside `with mesh:`, where jax.jit
        raises: not fixed. `None` or no sharding at all: the same values, placed on one device instead of
        replicated over a legacy mesh: safe where the project enters none, else unsafe."""
        given = [
            (arg, arguments.keyword(arg, change)) for arg, change in zip(args, changes)
            if _unpacks(arg) or arguments.keyword(arg, change) in ("in_shardings", "out_shardings")
        ]  # fmt: skip
        kinds = [UNKNOWN if _unpacks(arg) else sharding_kind(self.binder, value_of(arg)) for arg, _ in given]
        for (arg, keyword), kind in zip(given, kinds):
            if kind in (SPEC, UNKNOWN):
                holder = arg if type(arg) is ast.keyword else self.binder.parent(arg)
                spelled = self.facts.positions.with_parentheses(value_of(arg), holder)
                shown = f"**{spelled}" if _unpacks(arg) else f"{keyword}={spelled}"
                held = "holds a PartitionSpec" if kind == SPEC else "may hold PartitionSpecs"
                return self.report(target, f"{what} (not fixed: `{shown}` {held}, {SPEC_REASON})")
        safety = None
        if not given or NONE in kinds:
            sites = self._legacy_mesh_sites()
            if sites:
                placed = "what its `None` shardings leave open" if given else "its arguments and results"
                what = (
                    f"{what} (unsafe: under the legacy {sites[0]}, "
                    f"pjit replicates {placed} over that mesh; `jax.jit` reads only `jax.set_mesh` and leaves them "
                    "on one device: the same values, placed otherwise; pass `NamedSharding(mesh, PartitionSpec())` "
                    "to keep them replicated)"
                )
                safety = Safety.UNSAFE
        self.report(target, what, "Use `jax.jit`", plan, safety)

    def _legacy_mesh_sites(self) -> tuple[str, ...]:
        if self._sites is None:
            self._sites = legacy_mesh_sites(self.facts.tree, self.binder, self.facts.project)
        return self._sites

    def _shard_map(self, node: ast.expr, api: Api) -> None:
        text, add = self._spelled(api.new)
        what = f"`{api.old}` {api.status}; use `jax.shard_map` (mesh and specs by keyword, `check_rep` is `check_vma`)"
        unsafe = f"{what} (unsafe: {SHARD_MAP_ASSUMES})"
        remove = self._removed(node)
        call = self._called(node)
        partial = self._partial_of(node) if call is None else None
        if call is not None:
            args = in_order(call)
            changes = arguments.mapped_keywords(
                args, SHARD_MAP_POSITIONAL, _SHARD_MAP_RENAMES, _SHARD_MAP_KEYWORDS, unpacked=False
            )
            if changes is not None and args and type(args[0]) is not ast.keyword:
                plan = Plan("rekey", call, (text, changes), add, remove)
                return self.report(call, unsafe, "Use `jax.shard_map`", plan, Safety.UNSAFE)
        elif partial is not None:
            rest = in_order(partial)[1:]
            changes = arguments.mapped_keywords(rest, (), _SHARD_MAP_RENAMES, _SHARD_MAP_KEYWORDS, unpacked=False)
            named = {arguments.keyword(a, c) for a, c in zip(rest, changes)} if changes is not None else set()
            if changes is not None and {"mesh", "in_specs", "out_specs"} <= named:
                plan = Plan("partial", partial, (text, changes), add, remove)
                return self.report(node, unsafe, "Use `jax.shard_map`", plan, Safety.UNSAFE)
        why = "cannot be rewritten exactly here: `auto=`, unpacked or unknown arguments, or not a call"
        self.report(call or partial or node, f"{what} ({why})")

    def _x64(self, node: ast.expr, api: Api) -> None:
        text, add = self._spelled(api.new)
        call = self._called(node)
        enable = api.old.endswith("enable_x64")
        what = f"`{api.old}` {api.status}; use `jax.enable_x64({'True' if enable else 'False'})`"
        bound = None
        if call is not None and not self._decorates(call):
            bound = arguments.bind(in_order(call), ("new_val",) if enable else (), required=0)
        if bound is None:
            return self.report(call or node, f"{what} (cannot be rewritten exactly here)")
        plan = Plan("x64", call, (text, bound.get("new_val"), enable), add, self._removed(node))
        self.report(call, what, "Use `jax.enable_x64`", plan)

    def _value(self, node: ast.expr, api: Api) -> None:
        spellings, add = {}, []
        for name in _outer_dotted(api.new):
            spellings[name], needed = self._spelled(name)
            add.extend(needed)
        plan = Plan("value", node, (api.new, spellings), tuple(dict.fromkeys(add)), self._removed(node))
        self.report(node, f"`{api.old}` {api.status}; use `{api.new}`", f"Use `{api.new}`", plan)

    def _hint(self, node: ast.expr, api: Api) -> None:
        self.report(node, hint_message(api), f"Consider {api.new}", safety=Safety.DISPLAY_ONLY)

    # ---- imports ---------------------------------------------------------------------------------------------

    def _imports(self) -> None:
        unused: list[tuple[ast.stmt, ast.alias, ImportSpec, Api]] = []  # removed names, if nothing reads them
        dotted: list[tuple[ast.Import, ast.alias, Api]] = []  # `import jax.tools.colab_tpu`
        for statement in self.binder.nodes_of(ast.Import, ast.ImportFrom):
            if self.facts.in_shim(statement):
                continue
            if type(statement) is ast.ImportFrom:
                self._import_from(statement, unused)
            else:
                self._import(statement, unused, dotted)
        for statement, alias, spec, api in unused:
            local = spec.asname or spec.obj or spec.module
            if self._read(statement, local):
                continue
            name = f"{spec.module}.{spec.obj}" if spec.obj else spec.module
            if "__all__" in self.facts.text and (f"'{local}'" in self.facts.text or f'"{local}"' in self.facts.text):
                self.report(alias, f"`{name}` {api.status}, so this import fails; it is re-exported in `__all__`")
                continue
            message = f"`{name}` {api.status}, so this import fails; the name is unused here: remove the import"
            self.report(alias, message, f"Remove the import of `{name}`", Plan("remove", statement, (), (), (spec,)))
        for statement, alias, api in dotted:
            name = alias.name
            message = f"`{api.name}` {api.status}, so `import {name}` fails"
            if any(seen == name or seen.startswith(name + ".") for seen in self.seen):
                self.report(alias, f"{message}; remove it once nothing uses it")
            elif alone_on_line(self.binder, self.facts.positions, statement) and len(statement.names) == 1 and len(block_of(self.binder, statement)) > 1:
                message = f"{message}; nothing uses it here: remove the import"
                self.report(alias, message, f"Remove `import {name}`", Plan("remove_line", statement))
            else:
                self.report(alias, f"{message}; nothing uses it here: remove the import")

    def _import_from(self, statement: ast.ImportFrom, unused: list) -> None:
        if statement.level or not statement.module or any(a.name == "*" for a in statement.names):
            return
        module = statement.module
        found = [self.table.lookup(f"{module}.{alias.name}") for alias in statement.names]
        if any(f is not None and f[0].how == MOVE for f in found):
            return self._moved_from(statement, module, found)
        for index, (alias, hit) in enumerate(zip(statement.names, found)):
            if hit is None:
                continue
            api = hit[0]
            rehome = self._rehome(statement, alias)
            if rehome is not None and self._read(statement, alias.asname or alias.name):
                new_module = api.new.rsplit(".", 1)[0]
                self.report(
                    alias,
                    f"`{api.old}` {api.status}; import it from `{new_module}`",
                    f"Import `{alias.name}` from `{new_module}`",
                    Plan("rehome", statement, (index, *rehome)),
                )
            elif api.removed:
                unused.append((statement, alias, ImportSpec(module, alias.name, alias.asname), api))

    def _import(self, statement: ast.Import, unused: list, dotted: list) -> None:
        for index, alias in enumerate(statement.names):
            found = self.table.lookup(alias.name)
            if found is None:
                continue
            api = found[0]
            if api.how == MOVE:
                new_name = api.new.rstrip(".") + alias.name[len(api.name) :]
                message = f"`{api.name}` {api.status}; it moved to `{api.new.rstrip('.')}`"
                if alias.asname is None:
                    self.report(alias, f"{message} (rewrite this import and the names spelled through it by hand)")
                else:
                    self.report(alias, message, f"Import `{new_name}`", Plan("alias", statement, (index, new_name)))
            elif api.removed and alias.asname is not None:
                unused.append((statement, alias, ImportSpec(alias.name, None, alias.asname), api))
            elif api.removed:
                dotted.append((statement, alias, api))

    def _rehome(self, statement: ast.ImportFrom, alias: ast.alias) -> tuple[str, bool] | None:
        """For a renamed class that only changed module (`from jax.experimental.maps import Mesh`): the module to
        import it from under the same local name, so its uses stay as they are, and whether every name of the
        statement moves there (else the name moves to a statement of its own). None otherwise."""
        if statement.level or not statement.module or alias.name == "*":
            return None
        new_module = self._new_home(statement.module, alias.name)
        if new_module is None or self.facts.in_shim(statement):
            return None
        if all(self._new_home(statement.module, other.name) == new_module for other in statement.names):
            return new_module, True
        return (new_module, False) if alone_on_line(self.binder, self.facts.positions, statement) else None

    def _new_home(self, module: str, name: str) -> str | None:
        """The module that now holds `module.name`, if only its module changed (`Mesh`, `PartitionSpec`)."""
        api = self.table.exact.get(f"{module}.{name}")
        if api is None or api.how != RENAME or api.old in KEYWORD_RENAMES or api.old in ADDED_KEYWORDS:
            return None
        new_module, new_leaf = api.new.rsplit(".", 1)
        return new_module if new_leaf == name else None

    def _moved_from(self, statement: ast.ImportFrom, module: str, moved: list) -> None:
        apis = [m[0] if m is not None and m[0].how == MOVE else None for m in moved]
        api = next(a for a in apis if a is not None)
        message = f"`{api.name}` {api.status}; it moved to `{api.new.rstrip('.')}`"
        if module + "." == api.old or module.startswith(api.old):
            new_module = api.new + module[len(api.old) :] if module != api.name else api.new.rstrip(".")
        elif all(a is not None for a in apis) and all(a.name.rsplit(".", 1)[0] == module for a in apis):
            new_module = api.new.rstrip(".").rsplit(".", 1)[0]
        else:
            return self.report(statement, f"{message} (split this import by hand: it mixes moved and other names)")
        new_module = new_module.rstrip(".")
        self.report(statement, message, f"Import from `{new_module}`", Plan("module", statement, (new_module,)))

    # ---- helpers -------------------------------------------------------------------------------------------

    def _spelled(self, qualified: str) -> tuple[str, tuple[ImportSpec, ...]]:
        """How the fix writes `qualified` here (`Binder.spelling`) and the imports that needs: the module's own
        where `import jax` does not load it (`jax.extend.backend`)."""
        text, needed = self.binder.spelling(qualified)
        spec = ImportSpec(needed) if needed is not None else None
        module = qualified.rsplit(".", 1)[0]
        if module in EXPLICIT_IMPORTS and self.binder.module_aliases.get(module) is None:
            spec = ImportSpec(module)
        return text, (spec,) if spec is not None else ()

    def _removed(self, reference: ast.expr) -> tuple[ImportSpec, ...]:
        """The import that binds `reference`'s leftmost name, if it imports the old API itself (so it must go)."""
        specs = []
        for statement, alias, full in import_bindings(self.binder, reference):
            if self.table.mapped(full):
                module = statement.module if type(statement) is ast.ImportFrom else full
                specs.append(ImportSpec(module, alias.name if type(statement) is ast.ImportFrom else None, alias.asname))
        return tuple(specs)

    def _rehomed(self, reference: ast.expr) -> bool:
        """Whether `reference` is a bare name whose import `_rehome` rewrites instead (so the name itself stays)."""
        return type(reference) is ast.Name and any(
            type(statement) is ast.ImportFrom and self._rehome(statement, alias) is not None
            for statement, alias, _ in import_bindings(self.binder, reference)
        )

    def _read(self, statement: ast.stmt, local: str) -> bool:
        if self._annotated is None:
            self._annotated = string_annotation_names(self.binder)
        return import_is_read(self.binder, statement, local, self._annotated)

    def _called(self, node: ast.AST) -> ast.Call | None:
        parent = self.binder.parent(node)
        return parent if type(parent) is ast.Call and parent.func is node else None

    def _partial_of(self, node: ast.AST) -> ast.Call | None:
        """The `functools.partial(node, ...)` call that `node` is the first argument of."""
        call = self.binder.parent(node)
        if type(call) is not ast.Call or call.func is node or not call.args or call.args[0] is not node:
            return None
        return call if self.binder.qualified(call.func) == "functools.partial" else None

    def _decorates(self, node: ast.AST) -> bool:
        parent = self.binder.parent(node)
        return isinstance(parent, _DEFS) and any(d is node for d in parent.decorator_list)

    def _in_annotation(self, node: ast.AST) -> bool:
        child, current = node, self.binder.parent(node)
        while current is not None and not isinstance(current, ast.stmt):
            if type(current) is ast.arg and child is current.annotation:
                return True
            child, current = current, self.binder.parent(current)
        if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return child is current.returns
        return type(current) is ast.AnnAssign and child is current.annotation

def _bind_at(call: ast.Call) -> dict[str, int] | None:
    """`jax.ops.index_op(x, idx, y, **kw)`'s arguments bound to its parameters."""
    return arguments.bind(in_order(call), ("x", "idx", "y", "indices_are_sorted", "unique_indices"), required=3)


def _keyword(argument: ast.AST) -> str | None:
    return argument.arg if type(argument) is ast.keyword else None


def _unpacks(argument: ast.AST) -> bool:
    return type(argument) is ast.keyword and argument.arg is None


def _outer_dotted(expression: str) -> list[str]:
    """The outermost dotted names of a `value` row's expression (`jax.numpy.inf` of `-jax.numpy.inf`)."""
    tree = ast.parse(expression, mode="eval")
    inner = {id(node.value) for node in ast.walk(tree) if type(node) is ast.Attribute}
    return [ast.unparse(node) for node in ast.walk(tree) if type(node) is ast.Attribute and id(node) not in inner]
