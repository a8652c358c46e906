"""JF705: an array copied n times by hand (`jnp.stack([w] * n)`) where a broadcast or vmap's `in_axes=None` says
the same without n copies in the program."""

from __future__ import annotations

import ast

import libcst as cst

from jaxfix.analysis.dataflow import activity
from jaxfix.analysis.screen import once_per_screen, dotted, single_import
from jaxfix.analysis.syntax import target_names, walk
from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.diagnostics import Safety

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

    @classmethod
    def may_match_tree(cls, screen) -> bool:
        """A finding needs a call of jnp.stack/array/asarray whose first argument repeats one value as
        `_repeated` reads it: `[x] * n`, `n * [x]`, or `[x for _ in range(n)]` with an `x` that calls nothing and
        reads no loop variable, and that is not surely an argument of `jax.device_put` and the like
        (`_placed_on_devices`). jnp.array and jnp.asarray also need `x` to be a name that ArrayAnalysis may prove
        an array where it is read (`Screen.may_hold_array`)."""
        found = []
        for node in screen.imported_calls:
            if node.args and screen.may_resolve_to(node.func, _BUILDERS):
                value = _repeated_form(node.args[0])
                if value is not None and id(node) not in _placed(screen):
                    if screen.may_resolve_to(node.func, {"jax.numpy.stack"}):
                        return True
                    if isinstance(value, ast.Name):
                        found.append((node, value.id))
        asked = frozenset(name for _, name in found)
        return any(screen.may_hold_array(_reading_scope(screen, node), name, asked) for node, name in found)

    def visit_Call(self, node: cst.Call) -> None:
        if not node.args or node.args[0].keyword is not None or node.args[0].star:
            return
        found = self._repeated(node.args[0].value)
        if found is None:
            return
        if self.context.names.qualified(node.func) not in _BUILDERS:
            return
        if self._placed_on_devices(node):
            return
        value, count = found
        if self.context.names.qualified(node.func) != "jax.numpy.stack" and not (
            isinstance(value, cst.Name) and self.context.arrays.is_array(value)
        ):
            return  # jnp.array of a list of Python numbers converts it on the host in one go: no concatenation
        builder = self.context.code_for(node.func)
        message = (
            f"`{builder}` of `{self.context.code_for(value)}` repeated {self.context.code_for(count)} times copies one "
            f"array by hand (an n-operand concatenation under jit): use `jnp.broadcast_to`, or `jax.vmap` with "
            f"`in_axes=None` for the replicated argument"
        )
        blocker = self._blocker(node, value)
        if blocker is not None:
            self.report(node, f"{message}; not fixed: {blocker}")
            return
        broadcast, spec = self.context.names.expression_for("jax.numpy.broadcast_to")
        name = value.value
        count_code = self.context.code_for(count)
        replacement = cst.parse_expression(
            f"{self.context.code_for(broadcast)}({name}, ({count_code},) + {name}.shape)"
        )
        stack = self.context.names.qualified(node.func) == "jax.numpy.stack"
        fix = self.fix(
            f"`jnp.broadcast_to({name}, ({count_code},) + {name}.shape)`",
            [(node, replacement)],
            safety=Safety.SAFE if stack else Safety.UNSAFE,  # jnp.array([]) is an empty 1-d array, not an error
            add_imports=[spec] if spec else [],
        )
        if not stack:  # the one input where the two differ: say what the fix assumes
            message += (
                f" (unsafe: assumes {count_code} >= 1; for 0 copies `{builder}` gives shape (0,), the broadcast "
                f"(0,) + {name}.shape)"
            )
        self.report(node, message, fix)

    def _placed_on_devices(self, call: cst.Call) -> bool:
        """`jax.device_put(jnp.stack([x] * n), sharding)`: the copies are the point, one per device."""
        arg = self.context.parents.get(call)
        outer = self.context.parents.get(arg) if isinstance(arg, cst.Arg) else None
        return isinstance(outer, cst.Call) and self.context.names.qualified(outer.func) in _PLACEMENT

    def _repeated(self, expr: cst.BaseExpression):
        """(value, count) when `expr` is `[value] * count`, `count * [value]` or `[value for _ in range(count)]`."""
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply):
            for single, count in ((expr.left, expr.right), (expr.right, expr.left)):
                if isinstance(single, cst.List) and len(single.elements) == 1 and not isinstance(single.elements[0], cst.StarredElement):
                    if not isinstance(count, cst.List):
                        return single.elements[0].value, count
            return None
        if isinstance(expr, cst.ListComp) and expr.for_in.inner_for_in is None and not expr.for_in.ifs:
            loop = expr.for_in
            if not (isinstance(loop.iter, cst.Call) and self.context.names.is_builtin(loop.iter.func, "range")):
                return None
            if len(loop.iter.args) != 1 or loop.iter.args[0].keyword or loop.iter.args[0].star:
                return None
            bound = set(target_names(loop.target))
            if bound & set(activity(cst.Expr(expr.elt)).reads):
                return None
            if any(isinstance(n, (cst.Call, cst.Await, cst.Yield, cst.NamedExpr)) for n in walk(expr.elt)):
                return None  # evaluated n times: only side-effect-free values repeat one value
            return expr.elt, loop.iter.args[0].value
        return None

    def _blocker(self, call: cst.Call, value: cst.BaseExpression) -> str | None:
        extra = call.args[1:]
        if extra:
            if not (len(extra) == 1 and extra[0].keyword is not None and extra[0].keyword.value == "axis"
                    and isinstance(extra[0].value, cst.Integer) and int(extra[0].value.value) == 0):
                return "the call has other arguments (an axis, a dtype) than the list"
        if not isinstance(value, cst.Name):
            return f"`{self.context.code_for(value)}` is not a plain name"
        if not self.context.arrays.is_array(value):
            return f"`{value.value}` is not proven to be a JAX array (a number or a list has no `.shape`)"
        return None


# ---- the screen ------------------------------------------------------------------------------------------------

_EVALUATED = (ast.Call, ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)
_SCOPES = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _repeated_form(expr: ast.expr) -> ast.expr | None:
    """The value of `[value] * count`, `count * [value]` or `[value for _ in range(count)]` as `_repeated` reads
    them (a comprehension's value may read its variable only inside a nested scope, which is not judged here)."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mult):
        for single, count in ((expr.left, expr.right), (expr.right, expr.left)):
            if isinstance(single, ast.List) and len(single.elts) == 1 and not isinstance(single.elts[0], ast.Starred):
                if not isinstance(count, ast.List):
                    return single.elts[0]
        return None
    if not isinstance(expr, ast.ListComp) or len(expr.generators) != 1 or expr.generators[0].ifs:
        return None
    loop = expr.generators[0]
    iterable = loop.iter
    if not (isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "range"):
        return None
    if len(iterable.args) != 1 or iterable.keywords or isinstance(iterable.args[0], ast.Starred):
        return None
    bound = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
    stack = [expr.elt]
    while stack:
        node = stack.pop()
        if isinstance(node, _EVALUATED) or isinstance(node, ast.Name) and node.id in bound:
            return None
        if not isinstance(node, _SCOPES):
            stack.extend(ast.iter_child_nodes(node))
    return expr.elt


@once_per_screen
def _placed(screen) -> frozenset[int]:
    """id() of the arguments of the calls that surely are `_PLACEMENT` calls: a dotted name whose first name
    only one absolute import binds (`single_import`), so that LibCST's qualified name is the import's."""
    found: set[int] = set()
    for call in screen.imported_calls:
        parts = dotted(call.func)
        if parts is None or not single_import(screen, parts[0]):
            continue
        (full,) = screen.imports[parts[0]]
        if ".".join((full, *parts[1:])) in _PLACEMENT:
            found.update(id(argument) for argument in (*call.args, *(k.value for k in call.keywords)))
    return frozenset(found)


def _reading_scope(screen, node: ast.AST) -> ast.AST:
    """The def or module whose body holds `node`, past lambdas: a lambda (or comprehension, or class inside the
    def) that binds the name itself makes it a name ArrayAnalysis never proves (a lambda's parameters are not a
    def's, a comprehension's target is a loop's, a class body proves nothing), so asking the def around it errs
    only towards "may"."""
    index = screen._index
    positions = _positions_of_scoped(screen)
    scope = index.scopes[positions[id(node)]]
    while isinstance(scope, ast.Lambda):
        scope = index.scopes[positions[id(scope)]]
    return scope if scope is not None else screen.tree


@once_per_screen
def _positions_of_scoped(screen) -> dict[int, int]:
    """id() of each call and lambda → its position in the screen's index."""
    nodes = screen._index.nodes
    return {id(nodes[p]): p for p in screen._positions((ast.Call, ast.Lambda))}
