"""JF901 deprecated-api: deprecated and removed JAX APIs rewritten to their current form, where the mapping is exact.

The whole rule is a table, `jaxfix.facts.knowledge.deprecations`: one row per old name. The matcher resolves every
dotted name through the module's imports (`jaxfix.analysis.api_references`, LibCST's qualified names, so `from jax
import tree_map as tm; tm(...)` is found and a local variable that shadows the name is not), looks it up there,
and builds the row's rewrite.
"""

from __future__ import annotations

from typing import Sequence

import libcst as cst
from libcst.metadata import ScopeProvider

from jaxfix.analysis.api_references import (
    DEPRECATED, Api, ApiTable, VisitsApiTable, hint_message, import_bindings, import_is_referenced, in_shim,
    is_dotted, qualified_reference, stored,
)  # fmt: skip
from jaxfix.analysis.sharding import NONE, SPEC, UNKNOWN
from jaxfix.analysis.syntax import dotted_name
from jaxfix.codegen import keep_parens
from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.diagnostics import Fix, ImportSpec, Safety
from jaxfix.edit.api_rewrites import Qualify, TIGHT_EQUAL, bind_arguments, has_effects, jit_arguments, keyword_of, parenthesized, receiver, shard_map_arguments, spelled, with_keywords
from jaxfix.facts.knowledge.deprecations import (
    ADDED_KEYWORDS, AT, HINT, JIT, KEYWORD_RENAMES, MOVE, RENAME, SHARD_MAP, SHARD_MAP_ASSUMES, SPEC_REASON, TIE_IN,
    TYPE, UNSAFE_RENAMES, VALUE, X64,
)  # fmt: skip


class DeprecatedApi(VisitsApiTable, Codemod):
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

    def __init__(self, context) -> None:
        super().__init__(context)
        self._unused_candidates: list[tuple[cst.CSTNode, cst.ImportAlias, ImportSpec, Api]] = []
        self._dotted_imports: list[tuple[cst.Import, cst.ImportAlias, Api]] = []
        self._seen: set[str] = set()  # the qualified names that references to table rows resolved to
        self._resolved: dict[type, object] = {}

    def _metadata(self, provider):
        """Metadata resolved on first use (and shared through the wrapper): most files never need it."""
        if provider not in self._resolved:
            self._resolved[provider] = self.context.wrapper.resolve(provider)
        return self._resolved[provider]

    # ---- references ----------------------------------------------------------------------------------------------

    def referenced(self, node: cst.Name | cst.Attribute, target: cst.BaseExpression, api: Api, qualified: str) -> None:
        self._seen.add(qualified)
        if api.how == MOVE or stored(self.context, node) or in_shim(self.context, target) or self._rehomed(target):
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
            if any(keyword_of(a) in added for a in call.args):
                self.report(call, f"{message} (the call already passes one of them: rewrite it by hand)")
                return
            changes = [(call, call.with_changes(func=new_expr, args=with_keywords(call.args, added)))]
        elif call is not None and renames and any(keyword_of(a) in renames for a in call.args):
            args = [
                a.with_changes(keyword=cst.Name(renames[keyword_of(a)])) if keyword_of(a) in renames else a
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
        bound = bind_arguments(call.args, ("x", "idx", "y", "indices_are_sorted", "unique_indices"), required=3)
        if bound is None:
            return None
        x, idx, y = bound["x"], bound["idx"], bound["y"]
        imports: tuple = ()
        if self._maybe_numpy(x):
            # index_update converted its input with jnp.asarray; `.at` exists only on JAX arrays.
            asarray, imports = self._expression("jax.numpy.asarray", x)
            x = cst.Call(asarray.with_changes(lpar=[], rpar=[]), [cst.Arg(x)])
        if isinstance(idx, cst.Subscript) and qualified_reference(self.context, idx.value) == "jax.ops.index" and is_dotted(idx.value):
            elements = list(idx.slice)
        else:
            elements = [cst.SubscriptElement(cst.Index(idx))]
        keywords = [
            cst.Arg(bound[k], keyword=cst.Name(k), equal=TIGHT_EQUAL)
            for k in ("indices_are_sorted", "unique_indices")
            if k in bound
        ]
        at = cst.Subscript(cst.Attribute(receiver(x), cst.Name("at")), elements)
        new = cst.Call(cst.Attribute(at, cst.Name(api.new)), [cst.Arg(y), *keywords])
        return keep_parens(call, new), imports

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
        if not isinstance(call, cst.Call) or not is_dotted(call.func):
            return False
        qualified = qualified_reference(self.context, call.func)
        found = self.table.lookup(qualified) if qualified else None
        return found is not None and found[0].how == AT and self._at_call(call, found[0]) is not None

    def _tie_in(self, node: cst.BaseExpression, api: Api) -> None:
        call = self._called(node)
        what = f"`{api.old}` {api.status} (it has been a no-op since omnistaging); `tie_in(x, y)` is just `y`"
        bound = bind_arguments(call.args, ("x", "y"), required=2) if call is not None else None
        if bound is None:
            self.report(call or node, f"{what} (cannot be rewritten exactly here)")
            return
        replacement = keep_parens(call, parenthesized(bound["y"], self.context.parents.get(call)))
        if has_effects(bound["x"]):
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
            args = jit_arguments(call.args, positional=("in_shardings", "out_shardings"))
            if args is None or not call.args or call.args[0].keyword is not None or call.args[0].star:
                why = "cannot be rewritten exactly: pass the function first and the rest by keyword"
                self.report(call, f"{what} ({why})")
                return
            self._jit_fix(call, what, [(call, call.with_changes(func=new_expr, args=args))], args, imports, node)
            return
        partial = self._partial_of(node)
        if partial is not None:
            rest = list(partial.args[1:])
            args = jit_arguments(rest, positional=())
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
        given = [a for a in args if a.star == "**" or keyword_of(a) in ("in_shardings", "out_shardings")]
        kinds = [UNKNOWN if a.star else sharding.kind(a.value) for a in given]
        for arg, kind in zip(given, kinds):
            if kind in (SPEC, UNKNOWN):
                spelled = self.context.code_for(arg.value)
                shown = f"**{spelled}" if arg.star else f"{arg.keyword.value}={spelled}"
                held = "holds a PartitionSpec" if kind == SPEC else "may hold PartitionSpecs"
                self.report(target, f"{what} (not fixed: `{shown}` {held}, {SPEC_REASON})")
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
        unsafe = f"{what} (unsafe: {SHARD_MAP_ASSUMES})"
        call = self._called(node)
        partial = self._partial_of(node) if call is None else None
        if call is not None:
            args = shard_map_arguments(call.args, positional=True)
            if args is not None:
                new = call.with_changes(func=new_expr, args=args)
                fix = self._fix("Use `jax.shard_map`", [(call, new)], imports, node, safety=Safety.UNSAFE)
                self.report(call, unsafe, fix)
                return
        elif partial is not None:
            args = shard_map_arguments(list(partial.args[1:]), positional=False)
            if args is not None and {"mesh", "in_specs", "out_specs"} <= {keyword_of(a) for a in args}:
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
            bound = bind_arguments(call.args, ("new_val",) if enable else (), required=0)
        if bound is None:
            self.report(call or node, f"{what} (cannot be rewritten exactly here)")
            return
        value = bound["new_val"] if "new_val" in bound else cst.Name("True" if enable else "False")
        new = keep_parens(call, cst.Call(new_expr, [cst.Arg(value)]))
        self.report(call, what, self._fix("Use `jax.enable_x64`", [(call, new)], imports, node))

    def _value(self, node: cst.BaseExpression, api: Api) -> None:
        qualify = Qualify(self.context.names)
        value = cst.parse_expression(api.new).visit(qualify)
        imports = tuple(dict.fromkeys(qualify.imports))
        if node.lpar:
            value = value.with_changes(lpar=node.lpar, rpar=node.rpar)
        else:
            value = parenthesized(value, self.context.parents.get(node))
        message = f"`{api.old}` {api.status}; use `{api.new}`"
        self.report(node, message, self._fix(f"Use `{api.new}`", [(node, value)], imports, node))

    def _hint(self, node: cst.BaseExpression, api: Api) -> None:
        self.report(node, hint_message(api), self.fix(f"Consider {api.new}", [], safety=Safety.DISPLAY_ONLY))

    # ---- imports ---------------------------------------------------------------------------------------------

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar) or in_shim(self.context, node):
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
            local = alias.evaluated_alias or alias.evaluated_name
            if rehome is not None and import_is_referenced(self._metadata(ScopeProvider), node, local):
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
        if in_shim(self.context, node):
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
        if new_module is None or in_shim(self.context, node):
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
            if import_is_referenced(self._metadata(ScopeProvider), statement, local):
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

    # ---- helpers -------------------------------------------------------------------------------------------

    def _fix(self, description, changes, imports, reference: cst.CSTNode, *, safety: Safety | None = None) -> Fix:
        """A fix that also drops the import of the old name, when the reference came through one."""
        return self.fix(
            description, changes, safety=safety, add_imports=imports, remove_imports=self._removed_import(reference)
        )

    def _expression(self, qualified: str, node: cst.BaseExpression) -> tuple[cst.BaseExpression, tuple]:
        expr, spec = spelled(self.context.names, qualified)
        return keep_parens(node, expr), ((spec,) if spec is not None else ())

    def _removed_import(self, reference: cst.CSTNode) -> tuple[ImportSpec, ...]:
        """The import that binds `reference`'s leftmost name, if it imports the old API itself (so it must go)."""
        specs = []
        for statement, alias, full in import_bindings(self._metadata(ScopeProvider), reference):
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
            for statement, alias, _ in import_bindings(self._metadata(ScopeProvider), reference)
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


    def _in_annotation(self, node: cst.CSTNode) -> bool:
        current = self.context.parents.get(node)
        while current is not None and not isinstance(current, (cst.BaseStatement, cst.BaseSmallStatement)):
            if isinstance(current, cst.Annotation):
                return True
            current = self.context.parents.get(current)
        return False


# ---- module helpers --------------------------------------------------------------------------------------------


def _numpy_value(expr: cst.BaseExpression, names) -> bool:
    if isinstance(expr, (cst.List, cst.Tuple, cst.ListComp, cst.Integer, cst.Float)):
        return True
    if isinstance(expr, cst.Call) and is_dotted(expr.func):
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
