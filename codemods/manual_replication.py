"""JF705: an array copied n times by hand (`jnp.stack([w] * n)`) where a broadcast or vmap's `in_axes=None` says
the same without n copies in the program."""

from __future__ import annotations

import ast
from dataclasses import dataclass

import libcst as cst

from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.diagnostics import Diagnostic, Fix, ImportSpec, Safety
from jaxfix.facts.flow import activity, target_names
from jaxfix.facts.module import FileFacts, in_order

_BUILDERS = frozenset({"jax.numpy.stack", "jax.numpy.array", "jax.numpy.asarray"})
_PLACEMENT = frozenset({"jax.device_put", "jax.device_put_replicated", "jax.device_put_sharded"})


class ManualReplication(Codemod):
    """An array replicated by hand: `jnp.stack([w] * n)`, `jnp.array([w for _ in range(n)])`.

    ## What it does
    Finds `jnp.stack`, `jnp.array` or `jnp.asarray` of a list that repeats one value: `[w] * n`, `n * [w]`
    or `[w for _ in range(n)]` (where `w` does not depend on the comprehension's variable). Where `w` is a
    name proven to hold a JAX array it rewrites the call to `jnp.broadcast_to(w, (n,) + w.shape)`; otherwise
    it reports, suggesting the same or `jax.vmap(..., in_axes=None)` for the replicated argument.

    ## Why is this bad?
    The list holds n references to one array, and stacking them makes an n-operand concatenation: under jit
    the program grows with n (tracing and compiling take longer, and the n copies are materialized), where
    a broadcast is one operation that XLA can fuse into its consumer. Usually the copies exist only to line
    up with a batch: `jax.vmap` with `in_axes=None` for that argument needs none. Measured with
    `python benchmarks/replication.py` (JAX 0.10.2, this 2-core CPU shared with other jobs, a 64x64 weight
    replicated 256 times for an einsum): compiling took 1.58 s with `jnp.stack([w] * n)`, 0.88 s with
    `jnp.broadcast_to` and 0.28 s with `jax.vmap(..., in_axes=(0, None))`; run eagerly, 173 ms, 112 ms and
    36 ms. The jitted run was no faster with the broadcast (0.24 ms against 0.41 ms, within this machine's
    noise: XLA sees through the concatenation once compiled); vmap ran in 0.09 ms. The broadcast's payoff is
    the smaller program; vmap's is the batch-free code.

    ## Example
    ```python
    replicated = jnp.stack([weights] * len(batch))
    out = jnp.einsum("bi,bij->bj", batch, replicated)
    ```

    ## Use instead
    ```python
    replicated = jnp.broadcast_to(weights, (len(batch),) + weights.shape)
    # or, better, no replication at all:
    out = jax.vmap(lambda x, w: x @ w, in_axes=(0, None))(batch, weights)
    ```

    ## Fix safety
    Safe for `jnp.stack`: `jnp.broadcast_to(w, (n,) + w.shape)` has the values, shape and dtype of
    `jnp.stack([w] * n)` for every JAX array `w` and every `n` the original accepted (with `n` = 0 the
    original raises; the rewrite returns an empty array). Unsafe for `jnp.array`/`jnp.asarray` of the list:
    the same for `n` >= 1, but with `n` = 0 the original returns an empty 1-d array of shape `(0,)` where the
    broadcast gives `(0,) + w.shape` (`jaxfix verify` found this corner on the corpus): that fix **may compute
    a different result** (another shape, which `jaxfix apply --verify` and `jaxfix verify` check), and its
    message says what it assumes (`n` >= 1). With `jnp.stack` and `n` = 0 the rewrite runs where the
    original raised. No case fails loudly. It is applied only
    when every binding of `w` makes a JAX array (a `jax.numpy` result, or a parameter annotated
    `jax.Array`), so that `w.shape` exists (a Python number or a list would not have it), `w` is a plain
    name (evaluated once, as in `[w] * n`), and the call has no other arguments. Otherwise it is reported
    without a fix.

    ## When it stays quiet
    - Lists of different values (`[a, b]`, `[f(k) for k in keys]`), comprehensions whose element reads the
      comprehension's variable, and `jnp.stack(..., axis=1)` (reported, not fixed: the broadcast would need
      a transpose).
    - `jnp.array([v] * n)` / `jnp.asarray` where `v` is not proven to be a JAX array: a list of Python
      numbers is converted on the host in one go, with no concatenation (numpyro's `hsgp` makes its
      per-dimension lengths so).
    - Replicas placed on devices at once, `jax.device_put(jnp.stack([x] * n), sharding)` (flax's
      `jax_utils.replicate`): one copy per device is the point there.
    - Replication written as `jnp.tile` or `jnp.repeat`, which jaxfix leaves alone.
    """

    code = "JF705"
    name = "manual-replication"
    summary = "jnp.stack([w] * n) copies an array n times by hand: use jnp.broadcast_to or vmap's in_axes=None"
    fix_safety = Safety.SAFE
    other_fix_safeties = (Safety.UNSAFE,)
    screen = ("stack", "array")

    VALID = (
        Valid("import jax.numpy as jnp\n\ndef f(a, b):\n    return jnp.stack([a, b])\n"),
        Valid("import jax.numpy as jnp\n\ndef f(xs):\n    return jnp.stack([x * 2 for x in xs])\n"),
        Valid("import jax.numpy as jnp\n\ndef f(w, n):\n    return jnp.broadcast_to(w, (n,) + w.shape)\n"),
    )
    INVALID = (
        Invalid(
            "import jax.numpy as jnp\n\ndef f(x):\n    w = jnp.ones((3, 3))\n    return jnp.stack([w] * len(x))\n",
            "import jax.numpy as jnp\n\ndef f(x):\n    w = jnp.ones((3, 3))\n    return jnp.broadcast_to(w, (len(x),) + w.shape)\n",
            message="broadcast_to",
        ),
        Invalid(
            "import jax.numpy as jnp\n\ndef f(n):\n    w = jnp.ones((3, 3))\n    return jnp.array([w] * n)\n",
            "import jax.numpy as jnp\n\ndef f(n):\n    w = jnp.ones((3, 3))\n    return jnp.broadcast_to(w, (n,) + w.shape)\n",
            message="unsafe: assumes n >= 1",
        ),
        Invalid(
            "import jax\nimport jax.numpy as jnp\n\ndef replicate(params, n):\n"
            "    return jax.tree.map(lambda x: jnp.stack([x] * n), params)\n",
            None,
            message="not fixed",
        ),
    )

    looks_at = ("Call",)

    @classmethod
    def check(cls, facts: FileFacts) -> list[Diagnostic]:
        """A finding at each `jnp.stack`/`jnp.array`/`jnp.asarray` of a list that repeats one value (for
        `jnp.array`/`jnp.asarray`, a name proven to hold a JAX array: facts/values.py), not placed on devices at
        once; fixed with `jnp.broadcast_to` where the value is a plain name proven to hold an array."""
        binder, values, positions = facts.binder, facts.values, facts.positions
        found = []
        for call in binder.calls:
            arguments = in_order(call)
            if not arguments or type(arguments[0]) in (ast.keyword, ast.Starred):
                continue
            repeated = _repeated(facts, arguments[0])
            if repeated is None:
                continue
            builder = binder.callee(call)
            if builder not in _BUILDERS or _placed_on_devices(facts, call):
                continue
            value, count, holder, counter = repeated
            if builder != "jax.numpy.stack" and not (type(value) is ast.Name and values.is_array(value)):
                continue  # jnp.array of a list of Python numbers converts it on the host in one go: no concatenation
            shown = positions.with_parentheses(value, holder)
            count_code = positions.with_parentheses(count, counter)
            message = (
                f"`{positions.callee(call)}` of `{shown}` repeated {count_code} times copies one array by hand "
                f"(an n-operand concatenation under jit): use `jnp.broadcast_to`, or `jax.vmap` with `in_axes=None` "
                f"for the replicated argument"
            )
            blocker = _blocker(facts, arguments, value, shown)
            if blocker is not None:
                found.append(cls.finding(facts, call, f"{message}; not fixed: {blocker}"))
                continue
            stack = builder == "jax.numpy.stack"
            name = value.id
            if not stack:  # the one input where the two differ: say what the fix assumes
                message += (
                    f" (unsafe: assumes {count_code} >= 1; for 0 copies `{positions.callee(call)}` gives shape (0,), "
                    f"the broadcast (0,) + {name}.shape)"
                )
            broadcast, module = binder.spelling("jax.numpy.broadcast_to")
            plan = _Plan(call, f"{broadcast}({name}, ({count_code},) + {name}.shape)", module)
            found.append(cls.finding(
                facts, call, message, description=f"`jnp.broadcast_to({name}, ({count_code},) + {name}.shape)`",
                safety=Safety.SAFE if stack else Safety.UNSAFE,  # jnp.array([]) is an empty 1-d array, not an error
                plan=plan,
            ))
        return found

    @classmethod
    def fix_finding(cls, finding: Diagnostic, bridge) -> Fix | None:
        """The planned `jnp.broadcast_to(w, (n,) + w.shape)` in place of the call, built on LibCST."""
        plan: _Plan = finding.plan
        call = bridge.cst_of(plan.call)
        if not isinstance(call, cst.Call):
            return None
        imports = (ImportSpec(plan.module),) if plan.module is not None else ()
        return Fix(finding.fix.safety, finding.fix.description, ((call, cst.parse_expression(plan.replacement)),), imports)


@dataclass(frozen=True)
class _Plan:
    """The call to replace, the code of its replacement, and the module that code needs imported (or None)."""

    call: ast.Call
    replacement: str
    module: str | None


_EVALUATED = (ast.Call, ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)


def _repeated(facts: FileFacts, argument: ast.expr):
    """(value, count, the node holding value, the node holding count) when `argument` is `[value] * count`,
    `count * [value]` or `[value for _ in range(count)]` (the value reading no comprehension variable and
    calling nothing: evaluated n times, only a side-effect-free value repeats one value)."""
    if type(argument) is ast.BinOp and isinstance(argument.op, ast.Mult):
        for single, count in ((argument.left, argument.right), (argument.right, argument.left)):
            if type(single) is ast.List and len(single.elts) == 1 and type(single.elts[0]) is not ast.Starred:
                if type(count) is not ast.List:
                    return single.elts[0], count, single, argument
        return None
    if type(argument) is not ast.ListComp or len(argument.generators) != 1 or argument.generators[0].ifs:
        return None
    loop = argument.generators[0]
    iterable = loop.iter
    if not (type(iterable) is ast.Call and facts.binder.is_builtin(iterable.func, "range")):
        return None
    if len(iterable.args) + len(iterable.keywords) != 1 or not iterable.args or type(iterable.args[0]) is ast.Starred:
        return None
    if set(target_names(loop.target)) & set(activity(argument.elt).reads):
        return None
    if any(isinstance(node, _EVALUATED) for node in ast.walk(argument.elt)):
        return None
    return argument.elt, iterable.args[0], argument, iterable


def _placed_on_devices(facts: FileFacts, call: ast.Call) -> bool:
    """`jax.device_put(jnp.stack([x] * n), sharding)`: the copies are the point, one per device."""
    parents = facts.binder.parents
    outer = parents.get(call)
    if type(outer) in (ast.keyword, ast.Starred):
        outer = parents.get(outer)
    elif type(outer) is ast.Call and outer.func is call:
        return False
    return type(outer) is ast.Call and facts.binder.callee(outer) in _PLACEMENT


def _blocker(facts: FileFacts, arguments: list[ast.AST], value: ast.expr, shown: str) -> str | None:
    extra = arguments[1:]
    if extra:
        only = extra[0]
        if not (len(extra) == 1 and type(only) is ast.keyword and only.arg == "axis"
                and type(only.value) is ast.Constant and type(only.value.value) is int and only.value.value == 0):
            return "the call has other arguments (an axis, a dtype) than the list"
    if type(value) is not ast.Name:
        return f"`{shown}` is not a plain name"
    if not facts.values.is_array(value):
        return f"`{value.id}` is not proven to be a JAX array (a number or a list has no `.shape`)"
    return None
