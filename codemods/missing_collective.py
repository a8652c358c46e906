"""JF803 missing-collective: a pmap or shard_map training step that applies per-device gradients without
averaging them across devices (`lax.pmean`), so every replica trains its own model."""

from __future__ import annotations

import ast

import libcst as cst
from libcst.metadata import ScopeProvider

from jaxfix.analysis.screen import dotted, single_import
from jaxfix.analysis.syntax import code_nodes, walk
from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.facts.knowledge.jax import GRADIENTS, SHARD_MAPS
from jaxfix.facts.knowledge.tables import UPDATE_METHOD_NAMES

_PMAP = frozenset({"jax.pmap"})
_PARTIAL = "functools.partial"
_COLLECTIVES = frozenset(
    "jax.lax." + n for n in "pmean psum pmax pmin all_gather psum_scatter all_to_all ppermute pshuffle".split()
)
# Libraries whose functions do not communicate across devices behind the caller's back.
_LIBRARIES = ("jax.", "optax.", "flax.", "numpy.", "equinox.", "chex.", "builtins.", "functools.", "math.")


class MissingCollective(Codemod):
    """
    ## What it does
    Finds a function that `jax.pmap(..., axis_name=...)` or `shard_map` runs on every device, that computes
    gradients with `jax.grad`/`jax.value_and_grad` and uses them to update something it returns (parameters,
    optimizer state), with no collective (`lax.pmean`, `psum`, `pmax`, `all_gather`, ...) applied to the
    gradients or to what comes of them.

    ## Why is this bad?
    Under pmap or shard_map each device sees its own shard of the batch, so `jax.grad` gives each device the
    gradient of its shard's loss. Without `lax.pmean(grads, axis_name)` each device applies a different
    update: the replicas, identical at the start, drift apart from the first step, and the model trained is
    no data-parallel model at all (effectively n models, each on 1/n of the data). Nothing fails: the loss
    still goes down on every device, which is why the bug survives.

    ## Example
    ```python
    @partial(jax.pmap, axis_name="batch")
    def train_step(params, x, y):
        grads = jax.grad(loss_fn)(params, x, y)
        return jax.tree.map(lambda p, g: p - 0.01 * g, params, grads)
    ```

    ## Use instead
    ```python
    @partial(jax.pmap, axis_name="batch")
    def train_step(params, x, y):
        grads = jax.grad(loss_fn)(params, x, y)
        grads = jax.lax.pmean(grads, axis_name="batch")
        return jax.tree.map(lambda p, g: p - 0.01 * g, params, grads)
    ```

    ## Fix safety
    No fix: whether to average (`pmean`) or sum (`psum`), over which axis, and before or after clipping are the
    author's choices, and an ensemble trained on purpose with pmap needs none.

    ## When it stays quiet
    `jax.pmap` without `axis_name` (no collective is possible there: a batch of independent models, such as an
    ensemble); steps that return the gradients themselves (to be reduced by the caller); gradients passed
    to a collective, or to a function of this module that contains one, or to a function of another module
    (it may reduce them); a collective inside the differentiated function (its transpose communicates the
    gradients), or a differentiated function jaxfix cannot see (imported, a method); functions with no
    gradients.
    """

    code = "JF803"
    name = "missing-collective"
    summary = "pmap/shard_map training step without lax.pmean/psum of the gradients: replicas diverge"
    fix_safety = None
    screen = ("pmap", "shard_map")

    @classmethod
    def may_match(cls, text: str) -> bool:
        """A finding needs a pmap or shard_map and a gradient."""
        return ("pmap" in text or "shard_map" in text) and "grad" in text

    @classmethod
    def may_match_tree(cls, screen) -> bool:
        """A finding needs a def that may run on every device (`_screen_parallel`) and whose body has a call of
        something that may be `jax.grad`/`value_and_grad`, a `return` with a value, and gradients that no surely
        collective call on a later line reduces (`_screen_all_reduced`)."""
        defs = [n for n, _ in screen.statements if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        parallel = _screen_parallel(screen, defs)
        for function in defs:
            if not (id(function) in parallel or function.name in parallel):
                continue
            inside = [n for statement in function.body for n in ast.walk(statement)]
            if any(isinstance(n, ast.Return) and n.value is not None for n in inside) and any(
                isinstance(n, ast.Call) and screen.may_resolve_to(n.func, GRADIENTS) for n in inside
            ) and not _screen_all_reduced(screen, inside):
                return True
        return False

    VALID = (
        Valid(
            "import jax\nfrom functools import partial\n\ndef loss(p, x):\n    return (p * x).sum()\n\n"
            "@partial(jax.pmap, axis_name='i')\ndef step(p, x):\n    g = jax.grad(loss)(p, x)\n"
            "    g = jax.lax.pmean(g, axis_name='i')\n    return p - 0.1 * g\n"
        ),
        # no axis name: independent models
        Valid(
            "import jax\n\ndef loss(p, x):\n    return (p * x).sum()\n\n@jax.pmap\ndef step(p, x):\n"
            "    g = jax.grad(loss)(p, x)\n    return p - 0.1 * g\n"
        ),
        # gradients returned for the caller to reduce
        Valid(
            "import jax\n\ndef loss(p, x):\n    return (p * x).sum()\n\ndef grads(p, x):\n"
            "    return jax.grad(loss)(p, x)\n\npgrads = jax.pmap(grads, axis_name='i')\n"
        ),
    )
    INVALID = (
        Invalid(
            "import jax\nfrom functools import partial\n\ndef loss(p, x):\n    return (p * x).sum()\n\n"
            "@partial(jax.pmap, axis_name='i')\ndef step(p, x):\n    g = jax.grad(loss)(p, x)\n"
            "    return p - 0.1 * g\n",
            None,
            message="lax.pmean",
        ),
        Invalid(
            "import jax\nimport optax\n\ntx = optax.sgd(0.1)\n\ndef step(params, opt_state, x):\n"
            "    def loss(p):\n        return (p * x).sum()\n"
            "    value, grads = jax.value_and_grad(loss)(params)\n"
            "    metrics = jax.lax.pmean(value, 'batch')\n"
            "    updates, opt_state = tx.update(grads, opt_state)\n"
            "    return optax.apply_updates(params, updates), opt_state, metrics\n\n"
            "p_step = jax.pmap(step, axis_name='batch')\n",
            None,
            message="replicas",
        ),
    )

    def visit_Module(self, node: cst.Module) -> None:
        for function, axis in self._parallel_functions(node):
            self._check(function, axis)

    # ---- which functions run on every device ---------------------------------------------------------------

    def _parallel_functions(self, module: cst.Module):
        names = self.context.names
        seen = set()
        for node in code_nodes(module):
            if isinstance(node, cst.FunctionDef):
                for decorator in node.decorators:
                    axis = self._axis_of(decorator.decorator, decorated=True)
                    if axis is not None and node not in seen:
                        seen.add(node)
                        yield node, axis
            elif isinstance(node, cst.Call) and node.args and node.args[0].keyword is None:
                callee = names.callee(node)
                if callee not in _PMAP | SHARD_MAPS:
                    continue
                axis = self._axis_of(node, decorated=False)
                if axis is None:
                    continue
                for function in self._functions_named(node.args[0].value):
                    if function not in seen:
                        seen.add(function)
                        yield function, axis

    def _axis_of(self, expr: cst.BaseExpression, *, decorated: bool) -> str | None:
        """How the step names its device axis (`'batch'`, or the mesh's axes for shard_map), or None when
        `expr` is no pmap with an axis name and no shard_map."""
        names = self.context.names
        if not isinstance(expr, cst.Call):
            return "the mesh axes" if names.qualified(expr) in SHARD_MAPS else None
        callee = names.callee(expr)
        args = list(expr.args)
        if callee == _PARTIAL and args and args[0].keyword is None:
            callee = names.qualified(args[0].value)
            args = args[1:]
        elif not decorated:
            args = args[1:]  # jax.pmap(f, ...): the function is not an option
        if callee in SHARD_MAPS:
            return "the mesh axes"
        if callee not in _PMAP:
            return None
        for arg in args:
            if arg.keyword is not None and arg.keyword.value == "axis_name":
                return self.context.code_for(arg.value)
        return None

    def _functions_named(self, expr: cst.BaseExpression) -> list:
        if isinstance(expr, cst.Lambda):
            return [expr]
        if not isinstance(expr, cst.Name):
            return []
        scope = self.context.wrapper.resolve(ScopeProvider).get(expr)
        if scope is None:
            return []
        bindings = list(scope[expr.value])
        found = [a.node for a in bindings if isinstance(getattr(a, "node", None), cst.FunctionDef)]
        others = [getattr(a, "node", None) for a in bindings if not isinstance(getattr(a, "node", None), cst.FunctionDef)]
        if None in others:
            return []  # also bound as a builtin (no node to read; crashed on haiku's imagenet example): unknown
        if len(found) == 1 and all(self._wraps(node, expr.value) for node in others):
            return found  # `step = jax.pmap(step, ...)` rebinds the one def to its transformed self
        return found if not others else []

    def _wraps(self, node: cst.CSTNode, name: str) -> bool:
        """Whether `node` is the target of `name = transform(name, ...)`."""
        target = self.context.parents.get(node)
        assign = self.context.parents.get(target) if isinstance(target, cst.AssignTarget) else None
        if not (isinstance(assign, cst.Assign) and isinstance(assign.value, cst.Call) and assign.value.args):
            return False
        first = assign.value.args[0].value
        return isinstance(first, cst.Name) and first.value == name

    # ---- the step ------------------------------------------------------------------------------------------

    def _check(self, function, axis: str) -> None:
        if isinstance(function, cst.Lambda):
            return
        body = list(walk(function.body))
        names = self.context.names
        grad_fns: dict[str, cst.Call] = {}  # name -> the jax.grad(...) call it holds
        for node in body:
            if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
                if isinstance(node.value, cst.Call) and names.callee(node.value) in GRADIENTS:
                    grad_fns[node.targets[0].target.value] = node.value
        for node in body:
            if not (isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.value, cst.Call)):
                continue
            call = node.value
            transform = None
            if isinstance(call.func, cst.Call) and names.callee(call.func) in GRADIENTS:
                transform = call.func
            elif isinstance(call.func, cst.Name) and call.func.value in grad_fns:
                transform = grad_fns[call.func.value]
            if transform is None:
                continue
            grads = self._gradient_names(node.targets[0].target, transform)
            if not grads:
                continue
            start = self.context.positions[node].end
            after = [n for n in body if (self.context.positions[n].start.line, self.context.positions[n].start.column)
                     >= (start.line, start.column)]
            blocker = self._synced(function, after, transform, grads)
            if blocker is None:
                named = axis[:1] in ("'", '"')
                where = f"axis {axis}" if named else axis
                self.report(
                    call,
                    f"`{function.name.value}` runs on every device ({where}) and updates with the gradients of "
                    f"`{self.context.code_for(call)}` without a collective: each device applies its own shard's "
                    "gradient and the replicas drift apart; average them first: "
                    f"`grads = jax.lax.pmean(grads, axis_name={axis if named else '...'})`",
                )

    def _gradient_names(self, target: cst.BaseExpression, transform: cst.Call) -> set[str]:
        """The names the gradients are bound to: all of `g = grad(f)(...)`, the second of `value, g =
        value_and_grad(f)(...)`, the first of `g, aux = grad(f, has_aux=True)(...)`."""
        has_aux = any(a.keyword and a.keyword.value == "has_aux" for a in transform.args)
        value_and_grad = self.context.names.callee(transform) == "jax.value_and_grad"
        if not (value_and_grad or has_aux):
            return {target.value} if isinstance(target, cst.Name) else set()
        if not isinstance(target, (cst.Tuple, cst.List)) or len(target.elements) != 2:
            return set()
        part = target.elements[1 if value_and_grad else 0].value
        return {part.value} if isinstance(part, cst.Name) else set()

    def _synced(self, function, body, transform: cst.Call, grads: set[str]) -> str | None:
        """Why the gradients may be reduced or not applied (None: they are applied unreduced). `body`: the
        nodes of the step after the statement that computes the gradients."""
        names = self.context.names
        differentiated = transform.args[0].value if transform.args and transform.args[0].keyword is None else None
        if differentiated is None:
            return "the differentiated function is not visible"
        if isinstance(differentiated, cst.Lambda):
            inner = [differentiated]
        else:
            inner = self._functions_named(differentiated)
            if not inner:
                return "the differentiated function is not visible"
        if any(self._has_collective(f, set()) for f in inner):
            return "a collective inside the differentiated function"
        derived = set(grads)
        changed = True
        while changed:  # names computed from the gradients, in any order of statements
            changed = False
            for node in body:
                if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)) and node.value is not None:
                    if _mentions_any(node.value, derived):
                        targets = node.targets if isinstance(node, cst.Assign) else [node]
                        for t in targets:
                            for n in walk(t.target):
                                if isinstance(n, cst.Name) and n.value not in derived:
                                    derived.add(n.value)
                                    changed = True
        updated = False
        for node in body:
            if isinstance(node, cst.Call) and any(_mentions_any(a.value, derived) for a in node.args):
                callee = names.callee(node)
                if callee in _COLLECTIVES:
                    return "a collective on the gradients"
                if isinstance(node.func, cst.Name) and names.is_builtin(node.func, node.func.value):
                    continue
                local = self._functions_named(node.func) if isinstance(node.func, cst.Name) else []
                if local:
                    if any(self._has_collective(f, set()) for f in local):
                        return "a local function with a collective receives them"
                    updated = True
                    continue
                if isinstance(node.func, cst.Attribute) and callee is None:
                    if node.func.attr.value not in UPDATE_METHOD_NAMES:
                        return "a method jaxfix does not know receives them"
                    updated = True
                    continue
                if callee is None or not callee.startswith(_LIBRARIES):
                    return "a function of another module receives them"
                updated = True
            elif isinstance(node, cst.BinaryOperation) and _mentions_any(node, derived):
                updated = True
        returned = [n.value for n in body if isinstance(n, cst.Return) and n.value is not None]
        parts = [e.value for r in returned for e in (r.elements if isinstance(r, cst.Tuple) else [cst.Element(r)])]
        applied = [
            p for p in parts if _mentions_any(p, derived) and not (isinstance(p, cst.Name) and p.value in grads)
        ]
        if not updated or not applied:
            return "the gradients are not applied to anything returned"
        return None

    def _has_collective(self, function, seen: set) -> bool:
        """Whether `function` or a function of this module it calls by name (transitively) uses a collective."""
        if function in seen:
            return False
        seen.add(function)
        for node in walk(function):
            if isinstance(node, cst.Call):
                if self.context.names.callee(node) in _COLLECTIVES:
                    return True
                if isinstance(node.func, cst.Name):
                    if any(self._has_collective(f, seen) for f in self._functions_named(node.func)):
                        return True
        return False


def _screen_parallel(screen, defs) -> set:
    """A superset of `_parallel_functions` on the `ast`: the id() of each def with a decorator that may be
    shard_map or pmap with an `axis_name=` (also through `partial`), and the names passed first to a call that
    may be one of those (the defs of that name, in any scope)."""
    found: set = set()

    def first_positional(call: ast.Call):  # LibCST's first argument without a keyword: maybe `*a`, or `**k`
        first = call.args[0] if call.args else next((k for k in call.keywords if k.arg is None), None)
        return first.value if isinstance(first, (ast.Starred, ast.keyword)) else first

    def axis(call: ast.Call, callee: ast.AST | None) -> bool:
        if callee is None:
            return False
        if screen.may_resolve_to(callee, SHARD_MAPS):
            return True
        return screen.may_resolve_to(callee, _PMAP) and any(k.arg == "axis_name" for k in call.keywords)

    for function in defs:
        for decorator in function.decorator_list:
            if not isinstance(decorator, ast.Call):
                parallel = screen.may_resolve_to(decorator, SHARD_MAPS)
            else:
                parallel = axis(decorator, decorator.func) or axis(decorator, first_positional(decorator))
            if parallel:
                found.add(id(function))
    for node in screen.nodes_of(ast.Call):
        if axis(node, node.func):
            first = first_positional(node)
            if isinstance(first, ast.Name):
                found.add(first.id)
    return found


def _screen_all_reduced(screen, inside: list[ast.AST]) -> bool:
    """Whether `_check` surely reports nothing for the step whose body's nodes are `inside`: each `target =
    <grad>(...)(...)` in it binds gradients (`_gradient_names`, for each way the transform may resolve) that a
    call on a later line mentions which surely is a collective (`_surely_collective`), so `_synced` returns a
    blocker there or before; and no `target = g(...)` calls a name bound to a gradient transform."""
    held = {
        n.targets[0].id for n in inside
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)
        and isinstance(n.value, ast.Call) and screen.may_resolve_to(n.value.func, GRADIENTS)
    }
    calls = [n for n in inside if isinstance(n, ast.Call)]
    for node in inside:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Call)):
            continue
        func = node.value.func
        if isinstance(func, ast.Name) and func.id in held:
            return False  # a gradient function held in a name: not followed here
        if not (isinstance(func, ast.Call) and screen.may_resolve_to(func.func, GRADIENTS)):
            continue
        parts = dotted(func.func)
        transforms = {q for q in screen.qualified_names(parts) if q in GRADIENTS} if parts else set()
        has_aux = any(k.arg == "has_aux" for k in func.keywords)
        target = node.targets[0]
        for value_and_grad in {q == "jax.value_and_grad" for q in transforms}:
            if not (value_and_grad or has_aux):
                grads = {target.id} if isinstance(target, ast.Name) else set()
            elif isinstance(target, (ast.Tuple, ast.List)) and len(target.elts) == 2:
                part = target.elts[1 if value_and_grad else 0]
                grads = {part.id} if isinstance(part, ast.Name) else set()
            else:
                grads = set()
            if grads and not any(
                call.lineno > node.end_lineno and _surely_collective(screen, call.func) and any(
                    isinstance(n, ast.Name) and n.id in grads
                    for argument in (*call.args, *(k.value for k in call.keywords)) for n in ast.walk(argument)
                )
                for call in calls
            ):
                return False
    return True


def _surely_collective(screen, func: ast.AST) -> bool:
    """Whether LibCST surely resolves `func` to one of `_COLLECTIVES` (NameAnalysis.qualified: exactly one
    imported name): its first name is bound by module-level imports only, to one name in all."""
    parts = dotted(func)
    if parts is None or not single_import(screen, parts[0]):
        return False
    candidates = set(screen.qualified_names(parts))
    return len(candidates) == 1 and candidates <= _COLLECTIVES


def _mentions_any(node: cst.CSTNode, names: set[str]) -> bool:
    return any(isinstance(n, cst.Name) and n.value in names for n in walk(node))
