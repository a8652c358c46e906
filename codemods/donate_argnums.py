"""JF501: donate the buffers of a jitted step's arguments that every call site rebinds from its results."""

from __future__ import annotations

import ast
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import ScopeProvider

from jaxfix.analysis.dataflow import UNDEFINED, Parameter, block_activity, body_statements
from jaxfix.analysis.jit import (
    Jitted, add_jit_keyword, call_sites, jit_keywords, jitted_functions, jitted_methods, nested_jitted_functions,
    static_parameters,
)
from jaxfix.analysis.screen import ast_target_names, node_binds, statement_blocks
from jaxfix.analysis.summaries import (
    TRAINING_CALLS, TRAINING_METHODS, fresh_result, holds_argument, init_keeps_params,
)
from jaxfix.analysis.syntax import code_children, code_nodes, walk
from jaxfix.analysis.traced import REVERSE_MODE
from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.diagnostics import Safety
from jaxfix.facts.knowledge.jax import ARRAY_CONVERSIONS, FILLED_LIKE, FRESH_BUFFER_NAMESPACES, TREE_MAPS
from jaxfix.facts.knowledge.tables import DONATION_KEYWORDS

_PMAP = "jax.pmap"
_FILTER_JIT = "equinox.filter_jit"  # one keyword, `donate=`: every argument's arrays, or all but the first's
_COMPILERS = frozenset(DONATION_KEYWORDS)
# Those that take jax.jit's keywords (donate_argnums and donate_argnames): the ones whose jitted methods are judged.
_BY_NAME = frozenset(c for c, keywords in DONATION_KEYWORDS.items() if "donate_argnames" in keywords)
_PARTIAL = "functools.partial"
# What marks a training step (a gradient taken in its body, or an optimizer's update applied) is in the library
# summaries: TRAINING_CALLS, TRAINING_METHODS. A step with none of these is not assumed to return the updated
# value of its arguments.
_TREE_MAP = TREE_MAPS
_ELEMENTWISE = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide)
_MAY_ALIAS, _LIKE = ARRAY_CONVERSIONS, FILLED_LIKE
_METADATA_ATTRIBUTES = frozenset({"shape", "dtype", "ndim", "size"})


@dataclass
class _Site:
    """One call site, for one parameter: the caller's variable and what the call does with it."""

    call: cst.Call
    variable: str
    keyword: bool
    position: int  # 0: the whole result; n: the n-th element of the returned tuple
    relay: cst.Name | None = None  # `state = new_state` right after `new_state, m = step(state, b)`: its value
    blocker: str | None = None  # why donation would be wrong here: reported, never fixed
    unsafe: str | None = None  # why donation is right only if the first value is held nowhere else
    # The first value may hold the arrays of another argument of the same call (`opt_state = tx.init(params)`,
    # `step(params, opt_state)`): XLA then refuses the donation on the first call. Its reason is shown first.
    shares: bool = False


class DonateArgnums(Codemod):
    """Donate the arguments of a jitted function that every call rebinds from its results.

    ## What it does
    Finds a jitted or pmapped function (`@jax.jit`, `@partial(jax.jit, ...)`, `step = jax.jit(fn, ...)`, the
    same with `jax.pmap`, Flax's `nnx.jit` or Equinox's `eqx.filter_jit`), at module level, defined in a
    function's body next to its calls, or a method jitted with `self` static (`@partial(jax.jit,
    static_argnums=0)`, called as `self.update(...)` in its class), whose every call in the module rebinds an
    argument from the function's own result (`params, opt_state = step(params, opt_state, batch)`, `state,
    metrics = train_step(state, batch)`, `new_state, m = step(state, b)` followed at once by `state =
    new_state`, or `self.state, m = step(self.state, b)`), and which is a training step: it takes a gradient or
    applies an optimizer's update. It adds `donate_argnums` (or `donate_argnames`, where the calls pass the argument by
    keyword; pmap has only `donate_argnums`) to the compiler's keywords. `eqx.filter_jit` donates all arguments'
    arrays or all but the first's: it gets `donate="warn"` when every call rebinds every argument, and
    `donate="warn-except-first"` when it rebinds all but the first (`model, opt_state, loss =
    make_step((x, y), model, opt_state)`). "warn" keeps JAX's warning where a donated buffer is not usable.

    ## Why is this bad?
    Without donation XLA must keep the input buffers alive until the call returns and allocate new ones for
    the outputs: a training step holds two copies of the parameters and optimizer state, and an asynchronous
    loop waits on the allocator. With `donate_argnums` XLA writes the new values into the old buffers. The
    issue measured a train step on 96 MiB of parameters: the process grew by 737 MiB without donation and by
    49 MiB with `donate_argnums=(0, 1)`, and the loop ran 2.6x faster. On this CPU (2 cores, JAX 0.10.2;
    `benchmarks/donation.py`: momentum SGD on 64 MiB of parameters and 64 MiB of velocity, 20 steps
    dispatched asynchronously, two runs) `memory_analysis()` shows 64 of the 128 MiB of outputs aliased to
    inputs when the parameters are donated, all 128 MiB when both are; the process's peak memory grew by
    135-146 MiB over the steps without donation, 77-86 MiB donating the parameters and 0 donating both; a
    step took 55-91 ms, 32-38 ms and 12 ms.

    ## Example
    ```python
    @jax.jit
    def step(params, x):
        grads = jax.grad(loss)(params, x)
        return params - 0.1 * grads

    def train(x):
        params = jnp.zeros(1024)
        for _ in range(100):
            params = step(params, x)
        return params
    ```

    ## Use instead
    ```python
    @partial(jax.jit, donate_argnums=0)
    def step(params, x):
        grads = jax.grad(loss)(params, x)
        return params - 0.1 * grads
    ```

    ## Fix safety
    A donated argument's buffer is deleted by the call: reading the old array afterwards raises
    `RuntimeError: Array has been deleted`. The values computed never change: where no output has the donated
    argument's shape and dtype, XLA only warns ("Some donated buffers were not usable") and the argument stays
    alive. jaxfix donates only when every call in the module passes a local variable and rebinds it from the
    result (in the same statement, or through new names rebound right after it), the variable is read nowhere
    else in that function except as a shape, an operand of arithmetic, or an argument of a library call whose
    result holds only new arrays (`opt_state = optimizer.init(params)` where `optimizer` is `optax.adam(...)`,
    `adamw`, `sgd`, `rmsprop`, `adagrad`, `lamb`, `lion`, `adabelief`, `radam`, `adamax`, `clip`,
    `clip_by_global_norm`, `scale_by_adam` or an `optax.chain` of them; some `optax.contrib` optimizers keep
    `params` itself in their state; `net.apply(params, x)` where `net` is a Haiku `hk.transform(f)`, whose
    output the forward computes; not the new state of `hk.transform_with_state`'s `apply`, which holds the
    entries it did not set as they were) (`old = params`, a list of snapshots, a closure, a subscript would keep
    the old buffer), and each value the call receives comes from an earlier call of the same function,
    arithmetic, a `jax.numpy`/`jax.random` constructor, such an optimizer's `init`, a Haiku `net.init(rng, x)`
    (the parameters of `hk.transform_with_state`'s `init`, not its state, which holds what `hk.set_state` was
    given), copies (`jax.tree.map(jnp.copy, x)`), or a dict, list or tuple of these.

    A first value made from another argument of the same call (`opt_state = optimizer.init(params)`, then
    `step(params, opt_state, x)`) must not hold that argument's arrays: XLA refuses a call that donates a buffer
    it also receives, on the first call (`Attempt to donate a buffer which is also used by the same call`,
    whether it donates the state, the parameters or both). Where the optimizer is known to keep them
    (optax.contrib's `prodigy`, `dog`, `dowg`, `cocob`, `madgrad`, `mechanize`, `sam`, and
    `optax.scale_by_distance_over_gradients`, measured on optax 0.2.8), neither is donated, and the report
    names the way out: `opt_state = jax.tree.map(jnp.copy, optimizer.init(params))`, which donates both. Where
    jaxfix does not know the optimizer, the fix is unsafe and its message says that the first call raises if
    the state holds the parameters' arrays.

    The fix is safe only when jaxfix also proves that the function returns the updated argument with its
    shape and dtype: `p - lr * g`-style arithmetic (and the same under `jax.tree.map`) of the parameter, its
    gradient from `jax.grad`/`jax.value_and_grad` of that parameter, and numeric constants; or an optimizer
    state that adds the gradient of a donated parameter (`0.9 * velocity + grads`) when every value it
    receives is an earlier output or `jnp.zeros_like(params)` (`ones_like`, `full_like`, `jax.tree.map` of
    them) of the value passed with it. Otherwise (`optax.apply_updates`, `tx.update`,
    `state.apply_gradients(...)`, a learning rate passed as an argument that might broadcast) the fix is
    unsafe and says what it assumes: that the step returns the updated argument; if not, XLA only warns that
    the donated buffer was not usable. The fix is also unsafe when the function is public (a module-level
    name without a leading underscore that `__all__` does not leave out: other modules may call it and read
    their argument after the call) or when a call's first value comes from a function jaxfix cannot see (it
    might return an array that is also held elsewhere). Differentiating through the calling loop (`jax.grad`
    of a whole training run) raises `RuntimeError: Array has been deleted` once the steps donate, since the
    backward pass reads the buffers the forward pass gave away: jaxfix reports without a fix where this
    module differentiates the calling function.

    A method's fix is always unsafe (callers in other modules or subclasses are not seen), and so is donating
    an attribute (`self.params`): it is donated only when no other place in the module reads an attribute of
    that name (another method reading `self.params` between steps, `p = self.params`, may keep the old value)
    and it is set once besides the calls, but code in other modules may still read it.

    Every risk of an unsafe donation is of the kind that **fails loudly**: a first value that holds another
    argument's arrays makes the first call raise (above), and a read of the old array, by this module, another
    module or a backward pass, raises `RuntimeError: Array has been deleted` (measured:
    `jax.grad` through a donating loop with respect to another argument raises it; with respect to the
    donated argument itself, a tracer then, nothing is donated and the gradient is right). None **computes
    different numbers**: a wrong assumption about what the step returns costs only the memory it meant to
    save (JAX 0.10.2 warns and keeps the argument, whose values stay readable).

    ## When it stays quiet
    - Functions already donating, functions with other decorators, methods whose `self` is traced, jitted
      functions defined inside a loop or branch (JF502's matter), and functions passed around as values (not
      all call sites are visible). A jitted function defined in a function's body that closes over the variable it would
      donate is reported without a fix (its trace holds the first buffer).
    - Functions that neither take a gradient (`jax.grad`, `jax.value_and_grad`, their `nnx`/Equinox
      counterparts) nor apply an optimizer's update (`optax.apply_updates`, `eqx.apply_updates`,
      `.apply_gradients(...)`): nothing says that what they return is the updated argument.
    - `eqx.filter_jit` steps with an argument other than the first that the calls do not rebind (the usual
      `make_step(model, x, y, opt_state)`): `donate=` would delete the batch too. Pass the batch first to get
      `donate="warn-except-first"`.
    - Static arguments (`static_argnums`, pmap's `static_broadcasted_argnums`), arguments passed as
      expressions or twice, calls whose result is bound to new names that are not rebound to the argument in
      the statements right after the call, or that are read again before the next call (`new_params, s =
      step(params, s)`: the old value may be read later).
    It reports without a fix, saying what stopped it, when the calls of a training step rebind an argument but
    the old value may be read elsewhere, or the first value is a parameter of the caller (its own caller
    would find its array deleted).
    """

    code = "JF501"
    name = "donate-argnums"
    summary = "jitted step whose calls rebind arguments from its results: add donate_argnums to reuse their buffers"
    fix_safety = Safety.SAFE
    other_fix_safeties = (Safety.UNSAFE,)
    screen = ("jit", "pmap")

    VALID = (
        # already donated
        Valid(
            "import jax\nfrom functools import partial\n\n@partial(jax.jit, donate_argnums=0)\n"
            "def _step(p, x):\n    return p - 0.1 * jax.grad(lambda q: (q * x).sum())(p)\n\n"
            "def train(x):\n    p = x * 2.0\n    p = _step(p, x)\n    return p\n"
        ),
        # the old value is kept
        Valid(
            "import jax\n\n@jax.jit\ndef _step(p, x):\n    return p + 1.0\n\n"
            "def train(x):\n    p = x * 2.0\n    new = _step(p, x)\n    return new - p\n"
        ),
    )
    INVALID = (
        Invalid(
            "import jax\n\ndef loss(p, x):\n    return (p * x).sum()\n\n@jax.jit\n"
            "def _step(p, x):\n    g = jax.grad(loss)(p, x)\n    return p - 0.1 * g\n\n"
            "def train(x):\n    p = x * 2.0\n    for _ in range(3):\n        p = _step(p, x)\n    return p\n",
            "import jax\nfrom functools import partial\n\ndef loss(p, x):\n    return (p * x).sum()\n\n"
            "@partial(jax.jit, donate_argnums=0)\n"
            "def _step(p, x):\n    g = jax.grad(loss)(p, x)\n    return p - 0.1 * g\n\n"
            "def train(x):\n    p = x * 2.0\n    for _ in range(3):\n        p = _step(p, x)\n    return p\n",
            message="donate_argnums=0",
        ),
        Invalid(
            "import jax\n\ndef loss(p, x):\n    return (p * x).sum()\n\n@jax.jit\n"
            "def _step(p, x):\n    g = jax.grad(loss)(p, x)\n    return p - 0.1 * g\n\n"
            "def train(x):\n    p = x * 2.0\n    old = p\n    p = _step(p, x)\n    return p - old\n",
            None,
            message="line 13",
        ),
    )

    @classmethod
    def may_match_tree(cls, screen) -> bool:
        """A finding needs a function (module-level, a method, or defined in a function's body) with one decorator that
        may be `jax.jit`/`jax.pmap` or a `partial` of one, or such a `name = jax.jit(fn, ...)` of an undecorated
        def, with no donation keyword and no `*args`, whose body returns a value and takes a gradient or applies
        an optimizer's update (`_trains`); and calls of its name that may all rebind one parameter's variable from
        one output (`p = step(p, x)`, `p, s = step(p, s)`, `new, s = step(p, s)` before `p = new`, `self.p, m =
        self.update(self.p, x)`), as `_CallSites` reads them: `loss = step(model, x)` or `_ = step(p, s)` among
        the calls, the step passed as a value or bound twice, stop it."""
        may = screen.may_resolve_to
        tree = screen.tree
        functions = screen.nodes_of(ast.FunctionDef, ast.AsyncFunctionDef)
        defs: dict[str, list[ast.AST]] = {}
        for function in functions:
            defs.setdefault(function.name, []).append(function)

        def steps(function: ast.AST) -> bool:
            return function.args.vararg is None and _returns_and_trains(function, may)

        compilers = set(_COMPILERS)
        candidates: list[tuple[str, ast.AST, ast.AST]] = []  # (the name calls call, the def, where it is bound)
        classes = screen.nodes_of(ast.ClassDef)
        for owner in (tree, *functions, *classes):
            for stmt in owner.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and len(stmt.decorator_list) == 1:
                    decorator = stmt.decorator_list[0]
                    if may(decorator.func if isinstance(decorator, ast.Call) else decorator, compilers | {_PARTIAL}):
                        if not _donates(decorator) and steps(stmt):
                            candidates.append((stmt.name, stmt, owner))
                elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                    value = stmt.value
                    if isinstance(value, ast.Call) and may(value.func, compilers) and not _donates(value) and value.args:
                        first = value.args[0]
                        if isinstance(first, ast.Name):
                            for function in defs.get(first.id, ()):
                                if not function.decorator_list and steps(function):
                                    candidates.append((stmt.targets[0].id, function, owner))
        if not candidates:
            return False
        sites = _CallSites(screen)
        return any(sites.may_rebind(name, function, owner) for name, function, owner in candidates)

    def visit_Module(self, node: cst.Module) -> None:
        jitted = list(jitted_functions(self.context, node, _COMPILERS))
        self._nested = set()
        self._methods: dict[cst.FunctionDef, cst.ClassDef] = {}  # a jitted method -> its class
        for cls in node.body:
            if isinstance(cls, cst.ClassDef):
                for method in jitted_methods(self.context, cls, _COMPILERS):
                    if method.binding is method.function and method.compiler in _BY_NAME:
                        jitted.append(method)
                        self._methods[method.function] = cls
        for function in _statements(node):
            if isinstance(function, cst.FunctionDef):
                for inner in nested_jitted_functions(self.context, function, _COMPILERS):
                    jitted.append(inner)
                    self._nested.add(inner.binding)
        if not jitted:
            return
        self._by_node = {}  # what scope analysis records as the binding of each jitted name -> the Jitted
        for item in jitted:
            self._by_node[item.binding] = item
            if isinstance(item.binding, cst.Assign):
                self._by_node[item.binding.targets[0].target] = item
        self._scopes = self.context.wrapper.resolve(ScopeProvider)
        self._global = self._scopes[node]
        for item in jitted:
            self._check(item)

    # ---- one jitted function -----------------------------------------------------------------------------

    def _check(self, jitted: Jitted) -> None:
        keywords = jit_keywords(jitted)
        if "donate_argnums" in keywords or "donate_argnames" in keywords or "donate" in keywords:
            return
        function = jitted.function
        fparams = function.params
        if isinstance(fparams.star_arg, cst.Param):
            return  # `*args`: positions past the named parameters (a bare `*` only starts keyword-only ones)
        if jitted.compiler == _FILTER_JIT and (fparams.kwonly_params or fparams.star_kwarg):
            return  # filter_jit's `donate=` would give these away too
        params = [p.name.value for p in (*fparams.posonly_params, *fparams.params)]
        if jitted.compiler == _PMAP:
            broadcast = keywords.get("static_broadcasted_argnums")
            static = static_parameters({} if broadcast is None else {"static_argnums": broadcast}, params)
        else:
            static = static_parameters(keywords, params)
        if static is None:
            return
        offset = 0  # where the call's first positional argument lands in the signature
        if function in self._methods:
            if not params or params[0] != "self" or "self" not in static:
                return  # a method whose `self` is traced: a pytree class, whose calls jaxfix does not follow
            offset = 1
        calls = self._method_call_sites(jitted) if offset else self._call_sites(jitted)
        if not calls:
            return
        returns = self._returns(function)
        if not returns:
            return
        arity = self._arity(returns)
        if arity is None:
            return
        donated: list[tuple[int, str, list[_Site]]] = []
        assumed: list[str] = []  # donated without a proof that the step returns them updated
        blockers: list[str] = []
        self._calls = set(calls)
        self._relays: set[cst.Name] = set()
        trains = self._trains(function)
        candidates = []
        for index, param in enumerate(params):
            if param in static:
                continue
            sites = [self._site(call, index - offset, param, jitted) for call in calls]
            positions = {s.position for s in sites if s is not None}
            if any(s is None for s in sites) or len(positions) != 1:
                continue  # some call does not rebind this argument from one output
            position = positions.pop()
            if (position == 0) != (arity == 0) or position > arity:
                continue  # the calls unpack what the returns do not spell out as a tuple (or the other way)
            peers = self._updates(function, returns, param, position)
            if peers is None and not trains:
                continue  # not a training step: nothing says the output is the updated argument
            candidates.append((index, param, sites, peers))
            self._relays.update(site.relay for site in sites if site.relay is not None)
        proven = {param: sites for _, param, sites, peers in candidates if peers is not None and not peers}
        for index, param, sites, peers in candidates:
            if peers is None or peers and not all(
                peer in proven and self._shaped_like(site, proven[peer][n]) for peer in peers for n, site in enumerate(sites)
            ):
                if not trains:
                    continue
                assumed.append(param)
            self._donating = {self._argument(site) for site in sites}
            checked = [self._aliasing(site) for site in sites]
            blocked = sorted((c for c in checked if c.blocker), key=lambda c: not c.shares)
            if blocked:
                if blocked[0].shares:  # the call itself would raise: the first thing to say
                    blockers.insert(0, blocked[0].blocker)
                else:
                    blockers.append(blocked[0].blocker)
                if param in assumed:
                    assumed.remove(param)
                continue
            donated.append((index, param, checked))
        if jitted.compiler == _FILTER_JIT and donated and not self._filter_donation(params, donated):
            if blockers:
                self.report(self._anchor(jitted), f"`{jitted.name}` could donate buffers, but {blockers[0]}")
            return  # `donate=` cannot leave out the arguments that are still read
        if not donated:
            if blockers:
                self.report(self._anchor(jitted), f"`{jitted.name}` could donate buffers, but {blockers[0]}")
            return
        self._report_fix(jitted, donated, assumed, blockers)

    @staticmethod
    def _filter_donation(params: list[str], donated) -> str | None:
        """`eqx.filter_jit`'s `donate=` value that gives away exactly the donated arguments: "warn" when they are
        all of the parameters, "warn-except-first" when all but the first; None otherwise. ("warn" keeps JAX's
        warning where a donated buffer is not usable, which "all" silences.)"""
        names = {param for _, param, _ in donated}
        if names == set(params):
            return "warn"
        if len(params) > 1 and names == set(params[1:]):
            return "warn-except-first"
        return None

    def _trains(self, function: cst.FunctionDef) -> bool:
        """Whether the function (nested functions included) takes a gradient or applies an optimizer's update."""
        names = self.context.names
        for node in code_nodes(function):
            if isinstance(node, (cst.Name, cst.Attribute)) and names.qualified(node) in TRAINING_CALLS:
                return True
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in TRAINING_METHODS:
                return True
        return False

    def _method_call_sites(self, jitted: Jitted) -> list[cst.Call] | None:
        """Every `self.name(...)` call in the methods of the jitted method's class, or None when the module uses
        the attribute `name` of a name any other way (`learner.name(...)`, `self.name` passed or stored). An
        attribute of an attribute (`self._opt.update(...)`) is taken for another object's: the fix is unsafe."""
        cls = self._methods[jitted.function]
        calls = []
        for node in code_nodes(self.context.module):
            if not (isinstance(node, cst.Attribute) and node.attr.value == jitted.name and isinstance(node.value, cst.Name)):
                continue
            call = self.context.parents.get(node)
            method = self.context.dataflow.enclosing_function(node)
            if not (
                isinstance(call, cst.Call) and call.func is node and isinstance(node.value, cst.Name)
                and node.value.value == "self" and method is not None and self.context.parents.get(
                    self.context.parents.get(method)) is cls
            ):
                return None
            calls.append(call)
        return calls

    def _anchor(self, jitted: Jitted) -> cst.CSTNode:
        return jitted.function.name if jitted.binding is jitted.function else jitted.binding

    def _call_sites(self, jitted: Jitted) -> list[cst.Call] | None:
        return call_sites(self.context, jitted)

    # ---- what the function returns -----------------------------------------------------------------------

    def _returns(self, function: cst.FunctionDef) -> list[cst.Return]:
        found = []
        stack = list(body_statements(function.body))
        while stack:
            node = stack.pop()
            if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                continue
            if isinstance(node, cst.Return):
                found.append(node)
                continue
            stack.extend(code_children(node))
        return found

    def _arity(self, returns: list[cst.Return]) -> int | None:
        """0 for a single returned value, n for a tuple of n; None when returns differ or unpack."""
        arities = set()
        for ret in returns:
            value = ret.value
            if value is None:
                return None
            if isinstance(value, cst.Tuple):
                if any(isinstance(e, cst.StarredElement) for e in value.elements):
                    return None
                arities.add(len(value.elements))
            else:
                arities.add(0)
        return arities.pop() if len(arities) == 1 else None

    def _updates(self, function: cst.FunctionDef, returns, param: str, position: int) -> frozenset[str] | None:
        """Whether every return's output `position` is provably the updated `param`, with its shape and dtype:
        None when not; else the other parameters whose gradients it adds (`0.9 * velocity + grads`), which
        must then have the shape of `param` at every call (empty: nothing more to prove)."""
        writes = block_activity(body_statements(function.body)).writes
        if param in writes:
            return None  # `param` is rebound: a later use of the name is not the argument
        self._fn_params = {
            p.name.value for p in (*function.params.posonly_params, *function.params.params)
        } - set(writes)
        flow = self.context.dataflow.flow(function)
        peers: set[str] = set()
        for ret in returns:
            value = ret.value if position == 0 and not isinstance(ret.value, cst.Tuple) else ret.value.elements[position - 1].value
            statement = self.context.parents[ret]
            kinds = self._shaped(value, param, flow, statement, {}, 0)
            if kinds is None or "param" not in kinds or kinds == {"param"}:
                return None  # no gradient in it: an integer array could turn into a float one
            peers |= {kind.split(":", 1)[1] for kind in kinds if kind.startswith("grad:")}
        return frozenset(peers)

    def _shaped(self, expr, param, flow, statement, env, depth) -> set[str] | None:
        """For an elementwise expression of `param`, its gradients and numbers: the kinds of array operands in
        it ({"param", "grad"}, empty for a number); None for anything else."""
        if depth > 8:
            return None
        if isinstance(expr, (cst.Integer, cst.Float)):
            return set()
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
            return self._shaped(expr.expression, param, flow, statement, env, depth + 1)
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, _ELEMENTWISE):
            left = self._shaped(expr.left, param, flow, statement, env, depth + 1)
            right = self._shaped(expr.right, param, flow, statement, env, depth + 1)
            return None if left is None or right is None else left | right
        if isinstance(expr, cst.Call):
            return self._tree_map(expr, param, flow, statement, depth)
        if not isinstance(expr, cst.Name):
            return None
        if expr.value in env:
            return set(env[expr.value])
        if expr.value == param and not env:
            return {"param"}
        if self._module_number(expr.value):
            return set()
        if env:
            return None
        sources = flow.reaching(statement, expr.value)
        if len(sources) != 1:
            return None
        (source,) = sources
        of = self._gradient_of(source, expr.value)
        if of == param:
            return {"grad"}
        if of is not None and of in self._fn_params:
            return {f"grad:{of}"}
        if isinstance(source, cst.BaseExpression):
            return self._shaped(source, param, flow, self._statement_of(source), env, depth + 1)
        return None

    def _statement_of(self, node: cst.CSTNode) -> cst.CSTNode:
        parents = self.context.parents
        while not isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            node = parents[node]
        return node

    def _tree_map(self, call: cst.Call, param, flow, statement, depth) -> set[str] | None:
        """`jax.tree.map(lambda p, g: p - lr * g, params, grads)`: each tree is `param` or its gradient."""
        if self.context.names.qualified(call.func) not in _TREE_MAP:
            return None
        if any(a.keyword or a.star for a in call.args) or len(call.args) < 2:
            return None
        fn, *trees = [a.value for a in call.args]
        if not isinstance(fn, cst.Lambda):
            return None
        lam = fn.params
        if lam.star_arg is not cst.MaybeSentinel.DEFAULT and lam.star_arg is not None or lam.kwonly_params or lam.star_kwarg:
            return None
        names = [p.name.value for p in (*lam.posonly_params, *lam.params)]
        if len(names) != len(trees) or not isinstance(trees[0], cst.Name) or trees[0].value != param:
            return None
        env = {}
        for name, tree in zip(names, trees):
            kinds = self._shaped(tree, param, flow, statement, {}, depth + 1)
            if kinds not in ({"param"}, {"grad"}):
                return None
            env[name] = kinds
        return self._shaped(fn.body, param, flow, statement, env, depth + 1)

    def _gradient_of(self, source, name: str) -> str | None:
        """`g = jax.grad(f)(p, ...)`, `loss, g = jax.value_and_grad(f)(p, ...)` (argnums 0): the name `p`."""
        if isinstance(source, cst.Call):
            call, index, arity = source, None, 0
        elif isinstance(source, cst.Assign) and len(source.targets) == 1 and isinstance(source.value, cst.Call):
            target = source.targets[0].target
            if not isinstance(target, (cst.Tuple, cst.List)):
                return None
            elements = [e.value for e in target.elements]
            found = [i for i, e in enumerate(elements) if isinstance(e, cst.Name) and e.value == name]
            if len(found) != 1 or any(isinstance(e, cst.StarredElement) for e in target.elements):
                return None
            call, index, arity = source.value, found[0], len(elements)
        else:
            return None
        transform = call.func
        if not isinstance(transform, cst.Call) or not call.args:
            return None
        kind = self.context.names.qualified(transform.func)
        keywords = {a.keyword.value: a.value for a in transform.args if a.keyword}
        if set(keywords) - {"has_aux", "argnums"}:
            return None
        argnums = keywords.get("argnums")
        if argnums is not None and not (isinstance(argnums, cst.Integer) and argnums.value == "0"):
            return None
        aux = keywords.get("has_aux")
        if aux is not None and not (isinstance(aux, cst.Name) and aux.value in ("True", "False")):
            return None
        has_aux = aux is not None and aux.value == "True"
        if kind == "jax.grad":
            wanted = (0, 2) if has_aux else (None, 0)
        elif kind == "jax.value_and_grad":
            wanted = (1, 2)
        else:
            return None
        first = call.args[0]
        if first.keyword or first.star or not isinstance(first.value, cst.Name) or (index, arity) != wanted:
            return None
        return first.value.value

    def _module_number(self, name: str) -> bool:
        """A module-level constant bound once to a number (`LEARNING_RATE = 0.1`)."""
        if name not in self._global:
            return False
        assignments = list(self._global.assignments[name])
        if len(assignments) != 1:
            return False
        node = self.context.parents.get(_bound_node(assignments[0]))
        if isinstance(node, cst.AssignTarget):
            node = self.context.parents.get(node)
        if isinstance(node, cst.Assign) and len(node.targets) == 1:
            value = node.value
            while isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus):
                value = value.expression
            return isinstance(value, (cst.Integer, cst.Float))
        return False

    # ---- call sites --------------------------------------------------------------------------------------

    def _site(self, call: cst.Call, index: int, param: str, jitted: Jitted):
        """The call passes a local variable for `param` and rebinds it from one output: the site, else None."""
        if any(a.star for a in call.args):
            return None
        keyword = next((a for a in call.args if a.keyword and a.keyword.value == param), None)
        positional = [a for a in call.args if a.keyword is None]
        arg = keyword if keyword is not None else (positional[index] if index < len(positional) else None)
        if arg is not None and _self_attribute(arg.value) is not None:
            return self._attribute_site(call, arg, keyword is not None)
        if arg is None or not isinstance(arg.value, cst.Name):
            return None
        variable = arg.value.value
        for other in call.args:
            if other is not arg and any(isinstance(n, cst.Name) and n.value == variable for n in walk(other.value)):
                return None  # passed twice: the same buffer donated and read
        assign = self.context.parents.get(call)
        if not (isinstance(assign, cst.Assign) and assign.value is call and len(assign.targets) == 1):
            return None
        target = assign.targets[0].target
        position = self._position(target, variable)
        relay = None
        if position is None:
            relay = self._relay(assign, variable)
            if relay is None:
                return None
            position = self._position(target, relay.value)
            if position is None:
                return None
        return _Site(call, variable, keyword is not None, position, relay)

    def _attribute_site(self, call: cst.Call, arg: cst.Arg, keyword: bool) -> _Site | None:
        """`self.params, self.opt_state = step(self.params, self.opt_state, batch)`: the site for `self.params`,
        rebound in the same statement (its variable is written `self.params`)."""
        variable = f"self.{_self_attribute(arg.value)}"
        for other in call.args:
            if other is not arg and any(_self_attribute(n) == variable[5:] for n in walk(other.value)):
                return None  # passed twice
        assign = self.context.parents.get(call)
        if not (isinstance(assign, cst.Assign) and assign.value is call and len(assign.targets) == 1):
            return None
        target = assign.targets[0].target
        if isinstance(target, (cst.Tuple, cst.List)) and not any(isinstance(e, cst.StarredElement) for e in target.elements):
            hits = [i for i, e in enumerate(target.elements) if _self_attribute(e.value) == variable[5:]]
            position = hits[0] + 1 if len(hits) == 1 else None
        else:
            position = 0 if _self_attribute(target) == variable[5:] else None
        return None if position is None else _Site(call, variable, keyword, position)

    @staticmethod
    def _position(target: cst.BaseAssignTargetExpression, name: str) -> int | None:
        """0 when the target is `name`; n when `name` is its n-th element; None otherwise."""
        if isinstance(target, cst.Name):
            return 0 if target.value == name else None
        if isinstance(target, (cst.Tuple, cst.List)) and not any(isinstance(e, cst.StarredElement) for e in target.elements):
            hits = [i for i, e in enumerate(target.elements) if isinstance(e.value, cst.Name) and e.value.value == name]
            return hits[0] + 1 if len(hits) == 1 else None
        return None

    def _relay(self, assign: cst.Assign, variable: str) -> cst.Name | None:
        """`new_state, m = step(state, b)` followed at once by `state = new_state` (among other such `a = new_a`
        statements): the name `new_state` in that statement, when the call's statement is the only binding of
        `new_state` in its scope and nothing but the relay reads it before the last call (after which it names
        the same last value as `state`)."""
        line = self.context.parents.get(assign)
        block = self.context.parents.get(line)
        if not (isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1) or block is None:
            return None
        body = list(block.body if isinstance(block, (cst.Module, cst.IndentedBlock)) else ())
        if line not in body:
            return None
        target = assign.targets[0].target
        bound = {e for e in walk(target) if isinstance(e, cst.Name)}
        relay = None
        for following in body[body.index(line) + 1:]:
            small = following.body[0] if isinstance(following, cst.SimpleStatementLine) and len(following.body) == 1 else None
            if not (
                isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)
                and isinstance(small.value, cst.Name) and small.value.value in {n.value for n in bound}
            ):
                break  # the relays are the plain `a = new_a` statements right after the call
            if small.targets[0].target.value == variable:
                relay = small
                break
        if relay is None or relay.value.value == variable:
            return None
        new = relay.value.value
        scope = self._scopes.get(assign.value)
        if scope is None or new not in scope.assignments:
            return None
        for assignment in scope.assignments[new]:
            if _bound_node(assignment) not in bound:
                return None  # bound elsewhere too
            for access in assignment.references:
                if access.node is relay.value:
                    continue
                if access.scope is not scope or not self._after_every_call(access.node, scope):
                    return None
        return relay.value

    def _shaped_like(self, site: _Site, peer: _Site) -> bool:
        """Whether at this call the variable `site` passes has the shape and dtype of the one `peer` passes,
        by induction over the calls: each value it may hold is either an earlier call's output (which has the
        shape of the peer's, whose own output keeps its shape) or `jnp.zeros_like(peer)` (also `ones_like`,
        `full_like`, or `jax.tree.map` of one of them) taken from the same values of the peer that reach the call."""
        if "." in site.variable or "." in peer.variable:
            return False  # `self.params`: no data flow to prove a first value from
        flow = self.context.dataflow.flow(self.context.dataflow.enclosing_function(site.call))
        statement = self._statement_of(site.call)
        peer_initial = {s for s in flow.reaching(statement, peer.variable) if not self._is_rebinding(s)}
        for source in flow.reaching(statement, site.variable):
            if self._is_rebinding(source):
                continue
            if not isinstance(source, cst.Call):
                return False
            callee = self.context.names.qualified(source.func)
            args = [a for a in source.args if not a.keyword and not a.star]
            if callee in _TREE_MAP and len(source.args) == 2 and len(args) == 2:
                callee, args = self.context.names.qualified(args[0].value), args[1:]
            elif callee in _TREE_MAP:
                return False
            if callee not in _LIKE or not args or not isinstance(args[0].value, cst.Name):
                return False
            if args[0].value.value != peer.variable or any(a.keyword and a.keyword.value in ("dtype", "shape") for a in source.args):
                return False
            if set(flow.reaching(self._statement_of(source), peer.variable)) != peer_initial:
                return False
        return True

    def _makes_like(self, call: cst.Call) -> bool:
        """`jnp.zeros_like(x)` and its kin, or `jax.tree.map` of one of them: new arrays shaped like `x`."""
        names = self.context.names
        callee = names.qualified(call.func)
        if callee in _TREE_MAP and call.args:
            callee = names.qualified(call.args[0].value)
        return callee in _LIKE

    def _is_rebinding(self, source) -> bool:
        return isinstance(source, cst.Assign) and source.value in self._calls or source in self._relays

    def _argument(self, site: _Site) -> cst.BaseExpression:
        for arg in site.call.args:
            if isinstance(arg.value, cst.Name) and arg.value.value == site.variable:
                return arg.value
            if site.variable.startswith("self.") and _self_attribute(arg.value) == site.variable[5:]:
                return arg.value
        raise AssertionError("a site always passes its variable")

    def _aliasing(self, site: _Site) -> _Site:
        """Fill in what may still hold the caller's old buffer: a blocker, or an unsafe reason."""
        if site.variable.startswith("self."):
            return self._attribute_aliasing(site)
        dataflow = self.context.dataflow
        enclosing = dataflow.enclosing_function(site.call)
        flow = dataflow.flow(enclosing)
        statement = self._statement_of(site.call)
        variable = site.variable
        scope = self._scopes.get(site.call)
        owner = self._owner(scope) if scope is not None else None
        if owner is not enclosing or variable in flow.declared or variable not in flow.locals:
            line = self.context.positions[site.call].start.line
            site.blocker = f"`{variable}` at line {line} is not a local variable of the calling function"
            return site
        reverse = sorted(self.context.traced.transforms(enclosing) & REVERSE_MODE) if enclosing is not None else []
        if reverse:
            site.blocker = (
                f"this module differentiates `{enclosing.name.value}` with `{reverse[0]}`, and its backward pass reads "
                "the buffers the call would donate (`Array has been deleted`)"
            )
            return site
        for source in flow.reaching(statement, variable):
            reason = self._source_problem(source, variable)
            if reason is None:
                continue
            if reason.startswith("!"):
                site.blocker = reason[1:]
                return site
            shared = self._shared_with_call(source, site)
            if shared is not None:
                site.shares = True
                if shared.startswith("!"):
                    site.blocker = shared[1:]
                    return site
                site.unsafe = shared
            site.unsafe = site.unsafe or reason
        # The first read with a problem, in source order (the same on every run). Positions are asked only of the
        # reads with a problem: placing the caller's statement generates its code (1.5 s of the rule's 3.3 s of
        # CPU on the 30 real files it runs on, where sorting every read first placed them all).
        accesses = {access for assignment in scope.assignments[variable] for access in assignment.references}
        problems = [(access, problem) for access in accesses if (problem := self._read_problem(access, scope, variable))]
        if problems:
            site.blocker = min(problems, key=lambda found: self.context.source_order(found[0].node))[1]
        return site

    def _attribute_aliasing(self, site: _Site) -> _Site:
        """For `self.params` rebound at every call: a blocker where the module reads an attribute of that name
        anywhere else (another method may keep the old value: `p = self.params`, `return self.params`), stores it
        elsewhere but once (the first value), or differentiates the caller; an unsafe reason for a first value
        that may be held elsewhere, and always one for callers and subclasses in other modules."""
        name = site.variable[5:]
        enclosing = self.context.dataflow.enclosing_function(site.call)
        reverse = sorted(self.context.traced.transforms(enclosing) & REVERSE_MODE) if enclosing is not None else []
        if reverse:
            site.blocker = (
                f"this module differentiates `{enclosing.name.value}` with `{reverse[0]}`, and its backward pass reads "
                "the buffers the call would donate (`Array has been deleted`)"
            )
            return site
        stores = []
        for node in code_nodes(self.context.module):
            if not (isinstance(node, cst.Attribute) and node.attr.value == name):
                continue
            if node in self._donating:
                continue
            parent = self.context.parents.get(node)
            if isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value in _METADATA_ATTRIBUTES:
                continue
            statement = self._statement_of(node)
            small = node
            while not isinstance(small, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
                small = self.context.parents[small]
            if isinstance(small, cst.Assign) and small.value in self._calls:
                if any(t.target is node or node in walk(t.target) for t in small.targets):
                    continue  # rebound from a donating call
            if isinstance(parent, cst.AssignTarget) and isinstance(small, cst.Assign) and _self_attribute(node) == name:
                stores.append(small)
                continue
            line = self.context.positions[node].start.line
            text = self.context.code_for(statement).strip().splitlines()[0]
            site.blocker = f"`{site.variable}` is also read at line {line} (`{text}`), which may keep the old buffer"
            return site
        if len(stores) != 1:
            site.blocker = f"`{site.variable}` is set in {len(stores)} places besides the calls"
            return site
        reason = self._source_problem(stores[0], site.variable)
        if reason is not None and reason.startswith("!"):
            site.blocker = reason[1:]
        site.unsafe = site.unsafe or reason or (
            f"`{site.variable}` is an attribute: code in other modules or subclasses may keep its old value"
        )
        return site

    def _source_problem(self, source, variable: str) -> str | None:
        """None for a fresh value; "!reason" for one that may be shared (a blocker); "reason" for an unsafe one."""
        if source is UNDEFINED:
            return f"!`{variable}` may be unbound before the call"
        if isinstance(source, Parameter):
            return f"!`{variable}` is a parameter of the calling function: its caller's array would be deleted"
        if isinstance(source, cst.Assign) and source.value in self._calls or source in self._calls or source in self._relays:
            return None  # rebound from an earlier call of the same function: a new buffer
        if isinstance(source, cst.Assign) and isinstance(source.value, cst.Call):
            if fresh_result(self.context, source.value, _unpacked_at(source, variable)) or self._copies(source.value):
                return None  # new arrays, by the library's summary (`params, state = forward.init(rng, x)`), or copies
            return f"`{variable}` starts as the result of `{self.context.code_for(source.value.func)}(...)`, which may be held elsewhere"
        if isinstance(source, cst.AugAssign):
            return None
        if isinstance(source, (cst.BinaryOperation, cst.UnaryOperation)):
            return None
        if isinstance(source, cst.Assign) and self._fresh(source.value) or self._fresh(source):
            return None  # `params = {"w": jax.random.normal(k, (3, 8)) * 0.1, "b": jnp.zeros(8)}`
        if isinstance(source, cst.Call):
            callee = self.context.names.qualified(source.func) or ""
            if callee.startswith(FRESH_BUFFER_NAMESPACES) and callee not in _MAY_ALIAS or self._makes_like(source):
                return None
            if fresh_result(self.context, source) or self._copies(source):
                return None  # new arrays, by the library's summary (`opt_state = optax.adam(1e-3).init(params)`)
            if self._jitted_called(source) is not None and self._returns_fresh(self._jitted_called(source)):
                return None
            return f"`{variable}` starts as the result of `{self.context.code_for(source.func)}(...)`, which may be held elsewhere"
        line = self.context.positions[source].start.line if source in self.context.positions else "?"
        return f"!`{variable}` is bound at line {line} to a value that may be held elsewhere"

    def _copies(self, call: cst.Call) -> bool:
        """`jax.tree.map(jnp.copy, x)`: new arrays with the values of `x`, holding none of its buffers."""
        names = self.context.names
        return (
            names.qualified(call.func) in _TREE_MAP
            and len(call.args) == 2
            and not any(a.keyword or a.star for a in call.args)
            and names.qualified(call.args[0].value) == "jax.numpy.copy"
        )

    def _shared_with_call(self, source, site: _Site) -> str | None:
        """For a first value made by a call from another argument of the same donating call (`opt_state =
        optimizer.init(params)`, then `step(params, opt_state)`): "!reason" (a blocker) when the library's
        summary says its result holds that argument's arrays, else the unsafe reason naming the assumption; None
        when the value is not made so. XLA rejects a call that donates a buffer it also receives (measured on
        JAX 0.10.2 with optax.contrib.prodigy, mechanize, cocob and dog: donating the state, the parameters or
        both raises `Attempt to donate a buffer which is also used by the same call` or its kin)."""
        call = source.value if isinstance(source, cst.Assign) else source
        if not isinstance(call, cst.Call):
            return None
        received = {a.value.value for a in site.call.args if isinstance(a.value, cst.Name)} - {site.variable}
        shared = next(
            (n.value for a in call.args for n in walk(a.value) if isinstance(n, cst.Name) and n.value in received),
            None,
        )
        if shared is None:
            return None
        made = f"`{site.variable} = {_one_line(self.context.code_for(call))}`"
        error = "`Attempt to donate a buffer which is also used by the same call`"
        if init_keeps_params(self.context, call):
            return (
                f"!{made} keeps the arrays of `{shared}` in its state, and the call also receives `{shared}`: "
                f"donating either raises on the first call ({error}); to donate, make the state from copies: "
                f"`{site.variable} = jax.tree.map(jnp.copy, {_one_line(self.context.code_for(call))})`"
            )
        init = isinstance(call.func, cst.Attribute) and call.func.attr.value == "init"
        return (
            f"{made} may hold the arrays of `{shared}`{' (optax.contrib.prodigy keeps them)' if init else ''}, and "
            f"the call also receives `{shared}`: then the first call raises ({error})"
        )

    def _passed_to_fresh(self, call: cst.Call, value: cst.BaseExpression) -> bool:
        """Whether `value`, an argument of `call`, ends in a result of new arrays only, by the library summaries:
        `optimizer.init(params)`, or `optimizer.init(eqx.filter(model, eqx.is_array))` through a call whose
        result holds the argument and is itself passed on."""
        for _ in range(4):
            held = holds_argument(self.context, call, value)
            if held is False:
                return True
            arg = self.context.parents.get(call)
            outer = self.context.parents.get(arg)
            if isinstance(outer, cst.Call) and self._copies(outer) and outer.args[1] is arg:
                return True  # `jax.tree.map(jnp.copy, optimizer.init(params))`: whatever init kept is copied
            if not (held and isinstance(arg, cst.Arg) and arg.value is call and isinstance(outer, cst.Call)):
                return False
            value, call = call, outer
        return False

    def _fresh(self, expr, depth: int = 0) -> bool:
        """Whether `expr` is a dict, list or tuple display whose leaves are all new arrays or numbers: arithmetic,
        `jax.numpy`/`jax.random` constructors, library calls that make new arrays."""
        if depth > 6 or not isinstance(expr, (cst.Dict, cst.List, cst.Tuple)):
            return False
        values = []
        for element in expr.elements:
            if not isinstance(element, (cst.DictElement, cst.Element)):
                return False  # `**other`, `*rest`
            values.append(element.value)
        for value in values:
            if isinstance(value, (cst.Integer, cst.Float, cst.BinaryOperation, cst.UnaryOperation)):
                continue
            if isinstance(value, cst.Call):
                callee = self.context.names.qualified(value.func) or ""
                if callee.startswith(FRESH_BUFFER_NAMESPACES) and callee not in _MAY_ALIAS:
                    continue
                if self._makes_like(value) or fresh_result(self.context, value):
                    continue
                return False
            if not self._fresh(value, depth + 1):
                return False
        return True

    def _jitted_called(self, call: cst.Call) -> Jitted | None:
        """The jitted function (module-level or nested) that `call` calls by its name, or None."""
        if not isinstance(call.func, cst.Name):
            return None
        scope = self._scopes.get(call.func)
        if scope is None:
            return None
        for access in scope.accesses[call.func]:
            if access.node is call.func:
                found = [self._by_node.get(_bound_node(r)) for r in access.referents]
                return found[0] if found and all(f is found[0] for f in found) else None
        return None

    def _returns_fresh(self, jitted: Jitted) -> bool:
        """Whether no return of the jitted function hands back one of its parameters unchanged (jit may then
        forward the input buffer as the output)."""
        fparams = jitted.function.params
        params = {p.name.value for p in (*fparams.posonly_params, *fparams.params, *fparams.kwonly_params)}
        for ret in self._returns(jitted.function):
            values = ret.value.elements if isinstance(ret.value, cst.Tuple) else [ret.value]
            for value in values:
                value = value.value if isinstance(value, cst.BaseElement) else value
                if value is None or (isinstance(value, cst.Name) and value.value in params):
                    return False
        return True

    def _read_problem(self, access, scope, variable: str) -> str | None:
        """None when this read of `variable` cannot keep its buffer alive past a donating call."""
        node = access.node
        if access.scope is not scope:
            if any(a.scope is access.scope for a in access.scope.assignments[variable]):
                return None  # a parameter or local of that scope of the same name (LibCST may credit both)
            line = self.context.positions[node].start.line
            return f"`{variable}` is captured by a nested function or comprehension at line {line}"
        if self._after_every_call(node, scope):
            return None  # reads the last new value, which nothing donates any more
        parent = self.context.parents.get(node)
        if isinstance(parent, cst.Arg) and parent.value is node:
            call = self.context.parents.get(parent)
            if call in self._calls and node in self._donating:
                return None  # the donating call itself (`self.update(params, ...)`)
            if isinstance(call, cst.Call) and self._jitted_called(call) is not None:
                if node in self._donating or self._returns_fresh(self._jitted_called(call)):
                    return None
            if isinstance(call, cst.Call) and self._makes_like(call):
                return None  # only the shape and dtype are read
            if isinstance(call, cst.Call) and self._passed_to_fresh(call, node):
                return None  # a library call whose result holds new arrays only (`tx.init(params)` of optax.adam)
            if isinstance(call, cst.Call) and (self.context.names.is_builtin(call.func, "print") or self.context.names.is_builtin(call.func, "float")):
                return None
        if isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value in _METADATA_ATTRIBUTES:
            return None
        if isinstance(parent, (cst.BinaryOperation, cst.UnaryOperation, cst.Comparison, cst.ComparisonTarget)):
            return None
        if isinstance(parent, (cst.Assign, cst.AugAssign)) and not (isinstance(parent, cst.Assign) and parent.value is node):
            return None  # a store, not a read
        if isinstance(parent, (cst.Element, cst.Tuple, cst.List)) and self._is_store_target(parent):
            return None
        small = node
        while not isinstance(small, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
            small = self.context.parents[small]
        line = self.context.positions[node].start.line
        text = self.context.code_for(small).strip().splitlines()[0]
        return f"`{variable}` is also read at line {line} (`{text}`), which may keep the old buffer alive"

    def _owner(self, scope) -> cst.CSTNode:
        return self.context.module if scope is self._global else scope.node

    def _top_statement(self, node: cst.CSTNode, owner: cst.CSTNode) -> cst.CSTNode | None:
        """The statement of `owner`'s own body (a function's or the module's) that contains `node`."""
        parents = self.context.parents
        while node is not None:
            parent = parents.get(node)
            if parent is owner or (isinstance(parent, cst.IndentedBlock) and parents.get(parent) is owner):
                return node
            node = parent
        return None

    def _after_every_call(self, node: cst.CSTNode, scope) -> bool:
        """Whether `node` runs after every donating call in its scope has run for the last time: it lies in a
        later statement of the function's (or module's) own body than each of them."""
        owner = self._owner(scope)
        body = list(owner.body if isinstance(owner, cst.Module) else body_statements(owner.body))
        read = self._top_statement(node, owner)
        if read not in body:
            return False
        for call in self._calls:
            if self._scopes.get(call) is not scope:
                continue
            top = self._top_statement(call, owner)
            if top not in body or body.index(top) >= body.index(read):
                return False
        return True

    def _is_store_target(self, node: cst.CSTNode) -> bool:
        parents = self.context.parents
        while isinstance(node, (cst.Element, cst.Tuple, cst.List)):
            parent = parents.get(node)
            if isinstance(parent, cst.AssignTarget) or (isinstance(parent, (cst.For, cst.CompFor)) and parent.target is node):
                return True
            node = parent
        return False

    # ---- report and fix ----------------------------------------------------------------------------------

    def _public(self, name: str) -> bool:
        if name.startswith("_"):
            return False
        module = self.context.module
        for stmt in module.body:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Assign) and any(
                        isinstance(t.target, cst.Name) and t.target.value == "__all__" for t in small.targets
                    ):
                        value = small.value
                        if isinstance(value, (cst.List, cst.Tuple)) and all(
                            isinstance(e.value, cst.SimpleString) for e in value.elements
                        ):
                            return name in {e.value.evaluated_value for e in value.elements}
                        return True
        return True

    def _report_fix(self, jitted: Jitted, donated, assumed: list[str], blockers: list[str]) -> None:
        # pmap has no donate_argnames
        by_keyword = jitted.compiler != _PMAP and all(site.keyword for _, _, sites in donated for site in sites)
        if jitted.compiler == _FILTER_JIT:
            fparams = jitted.function.params
            params = [p.name.value for p in (*fparams.posonly_params, *fparams.params)]
            key, items = "donate", [f'"{self._filter_donation(params, donated)}"']
        elif by_keyword:
            items = [f'"{param}"' for _, param, _ in donated]
            key = "donate_argnames"
        else:
            items = [str(index) for index, _, _ in donated]
            key = "donate_argnums"
        value = items[0] if len(items) == 1 else f"({', '.join(items)})"
        keyword = f"{key}={value}"
        names = ", ".join(f"`{param}`" for _, param, _ in donated)
        message = (
            f"every call of `{jitted.name}` rebinds {names} from its result: `{keyword}` lets XLA write the new "
            "values into the old buffers instead of holding both"
        )
        if blockers:
            message += f" (not donating more: {blockers[0]})"
        sites = [site for _, _, sites in donated for site in sites if site.unsafe]
        reasons = [site.unsafe for site in sites if not site.shares]
        if jitted.function in self._methods:
            reasons.insert(0, (
                f"`{jitted.name}` is a method: callers jaxfix does not see (other modules, subclasses, an attribute "
                "holding another instance) lose their arguments"
            ))
        elif jitted.binding not in self._nested and self._public(jitted.name):
            reasons.insert(0, f"`{jitted.name}` is public: callers in other modules lose their arguments")
        reasons[:0] = [site.unsafe for site in sites if site.shares]  # the call itself may raise: said first
        if assumed:
            names = ", ".join(f"`{p}`" for p in assumed)
            reasons.insert(0, (
                f"assumes `{jitted.name}` returns the updated {names}; if not, XLA only warns that the donated "
                "buffer was not usable"
            ))
        safety = Safety.UNSAFE if reasons else Safety.SAFE
        if reasons:
            message += f"; unsafe fix: {reasons[0]}"
        if len(reasons) > 1:
            message += f"; it is unsafe also because {reasons[1]}"
        change, imports = self._edit(jitted, key, value)
        fix = self.fix(f"add {keyword} to {jitted.compiler}", [change], safety=safety, add_imports=imports)
        self.report(self._anchor(jitted), message, fix)

    def _edit(self, jitted: Jitted, key: str, value: str):
        return add_jit_keyword(self.context, jitted, key, value)


# The nodes that hold statements: a def can only be among their children (never inside an expression).
_HOLDS_STATEMENTS = (
    cst.Module, cst.IndentedBlock, cst.BaseCompoundStatement, cst.Else, cst.ExceptHandler, cst.ExceptStarHandler,
    cst.Finally, cst.MatchCase,
)


def _statements(module: cst.Module):
    """`walk(module)` less the inside of expressions and simple statements, in the same order: every def of the
    module. (Walking every node for them took 0.5 s of CPU on the 30 real files the rule runs on.)"""
    stack: list[cst.CSTNode] = [module]
    while stack:
        current = stack.pop()
        yield current
        if isinstance(current, _HOLDS_STATEMENTS):
            stack.extend(code_children(current))


def _one_line(code: str) -> str:
    """The first line of `code`, with `...` where more followed (for a call quoted in a message)."""
    lines = code.strip().splitlines()
    return lines[0] + (" ..." if len(lines) > 1 else "")


def _self_attribute(expr) -> str | None:
    """`attr` for the expression `self.attr`, else None."""
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
        return expr.attr.value
    return None


def _unpacked_at(assign: cst.Assign, variable: str) -> int | None:
    """Which element of the tuple `assign` unpacks binds `variable` (`params, state = ...`: 0 for params); None
    when the result is not unpacked into names."""
    if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, (cst.Tuple, cst.List)):
        return None
    elements = assign.targets[0].target.elements
    if any(not isinstance(e, cst.Element) or not isinstance(e.value, cst.Name) for e in elements):
        return None
    names = [e.value.value for e in elements]
    return names.index(variable) if names.count(variable) == 1 else None


def _bound_node(assignment) -> cst.CSTNode | None:
    """The node a scope assignment binds; None for a builtin (`print`, `len`), which has no assignment node."""
    return getattr(assignment, "node", None)


# ---- the screen ------------------------------------------------------------------------------------------------

def _donates(call: ast.expr) -> bool:
    """`jax.jit(..., donate_argnums=...)`, `partial(jax.jit, donate_argnames=...)`: a keyword that `_check` skips."""
    return isinstance(call, ast.Call) and any(k.arg in ("donate_argnums", "donate_argnames") for k in call.keywords)


def _returns_and_trains(function: ast.AST, may) -> bool:
    """Whether `function` returns a value and may take a gradient or apply an optimizer's update (a superset of
    `DonateArgnums._trains`, which a proof of the update also needs: it reads `jax.grad`/`jax.value_and_grad`)."""
    returns = trains = False
    for node in ast.walk(function):
        if isinstance(node, ast.Return) and node.value is not None:
            returns = True
        elif isinstance(node, (ast.Name, ast.Attribute)) and not trains:
            trains = may(node, TRAINING_CALLS) or isinstance(node, ast.Attribute) and node.attr in TRAINING_METHODS
        if returns and trains:
            return True
    return False


class _CallSites:
    """The calls of a candidate step that the rule would see (`call_sites`, `_method_call_sites`), as far as the
    `ast` tells them, and whether they can all rebind one argument from the result (`DonateArgnums._site`).
    Scopes are told apart by positions (a node lies in a scope whose span holds it), with no walk of the tree:
    walking each candidate's scope cost 0.05 s of CPU over the 10 real trees, twice what the rule's other screen
    work costs."""

    def __init__(self, screen) -> None:
        self.screen = screen
        self._values: dict[int, ast.Assign] | None = None
        self._blocks: dict[int, tuple[list[ast.stmt], int]] | None = None

    def may_rebind(self, name: str, function: ast.AST, owner: ast.AST) -> bool:
        """Whether the step `function`, called `name` and bound in `owner`'s body, may have call sites that all
        rebind one of its parameters. The calls looked at are some of those the rule sees (all of them for a
        method): where one of them rebinds no parameter that the others rebind too, the rule finds nothing."""
        arguments = function.args
        params = [a.arg for a in (*arguments.posonlyargs, *arguments.args)]
        if isinstance(owner, ast.ClassDef):
            if owner not in self.screen.tree.body or not function.decorator_list or params[:1] != ["self"]:
                return False  # `jitted_methods`: a def (not `name = jax.jit(fn)`) of a module-level class, `self` first
            calls = self._method_calls(name)
            return bool(calls) and self._rebind_one(calls, params, 1)
        named = [node for node in self.screen.nodes_of(ast.Call) if type(node.func) is ast.Name and node.func.id == name]
        if not any(self._position(call, index, param) is not None for call in named for index, param in enumerate(params)):
            return False  # no call of the name anywhere rebinds a parameter
        calls = self._calls_in_scope(name, owner, named)
        if calls is None:
            return False
        return self._rebind_one(calls, params, 0) if calls else True  # none known to be the rule's: any may be

    def _method_calls(self, name: str) -> list[ast.Call]:
        """`_method_call_sites`: every `x.name` of the module, where each must be a call `self.name(...)` (the rule
        follows none otherwise: empty)."""
        attributes = [
            node for node in self.screen.nodes_of(ast.Attribute)
            if node.attr == name and isinstance(node.value, ast.Name)
        ]
        calls = [
            node for node in self.screen.nodes_of(ast.Call)
            if isinstance(node.func, ast.Attribute) and node.func.attr == name and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "self"
        ]
        return calls if len(calls) == len(attributes) else []

    def _calls_in_scope(self, name: str, owner: ast.AST, named: list[ast.Call]) -> list[ast.Call] | None:
        """Those of `named`, the calls `name(...)`, that LibCST's scopes surely resolve to `owner`'s binding of
        the name: in `owner`'s body, in no nested scope that may bind the name itself. None where the rule
        surely finds nothing: `owner` binds the name twice (`step = jax.jit(step)`), or reads it other than as
        a callee (the step passed as a value: `call_sites` gives up). Empty where no call is surely the rule's."""
        screen = self.screen
        if any(name in node.names for node in screen.nodes_of(ast.Global, ast.Nonlocal)):
            return []  # a binding in another scope: LibCST's answer is not followed here
        span = None if owner is screen.tree else (_start(owner.body[0]), _end(owner.body[-1]))

        def inside(node: ast.AST, outer: tuple | None) -> bool:
            return outer is None or outer[0] <= _start(node) and _end(node) <= outer[1]

        scopes = [node for node in screen.nodes_of(*_SCOPES) if node is not owner and inside(node, span)]
        binders = [
            node for node in (
                *screen.nodes_of(ast.Name), *screen.nodes_of(ast.arg), *screen.nodes_of(*_NAMED_SCOPES),
                *screen.nodes_of(ast.Import, ast.ImportFrom), *screen.nodes_of(ast.ExceptHandler),
                *screen.nodes_of(ast.MatchAs, ast.MatchStar, ast.MatchMapping),
            ) if node_binds(node, name)  # no global/nonlocal among them
        ]
        spans = [(_start(scope), _end(scope), scope) for scope in scopes]
        shadowing = [
            (first, last) for first, last, scope in spans
            if any(first <= _start(b) and _end(b) <= last for b in binders if b is not scope)
            or type(scope) in _NAMED_SCOPES and scope.name == name  # bound around it, not in it: left out all the same
        ]

        def resolved(node: ast.AST) -> bool:
            return inside(node, span) and not any(first <= _start(node) and _end(node) <= last for first, last in shadowing)

        calls = [call for call in named if resolved(call)]
        callees = {id(call.func) for call in calls}
        loads = (n for n in screen.nodes_of(ast.Name) if n.id == name and type(n.ctx) is ast.Load and id(n) not in callees)
        if any(resolved(n) for n in loads):
            return None
        own = [  # the bindings of `owner`'s own scope that LibCST surely counts: defs, classes, `=` and `for` targets
            node for node in (
                *(s for s in scopes if type(s) in _NAMED_SCOPES and s.name == name),
                *(a for a in screen.nodes_of(ast.Assign) if any(name in ast_target_names(t) for t in a.targets)),
                *(f for f in screen.nodes_of(ast.For, ast.AsyncFor) if name in ast_target_names(f.target)),
            ) if inside(node, span) and not any(
                first <= _start(node) and _end(node) <= last for first, last, scope in spans if scope is not node
            )
        ]
        return None if len(own) > 1 else calls

    def _rebind_one(self, calls: list[ast.Call], params: list[str], offset: int) -> bool:
        """Whether some parameter (past `offset`, the static `self`) is rebound by every call, from one output."""
        for index in range(offset, len(params)):
            positions = set()
            for call in calls:
                position = self._position(call, index - offset, params[index])
                if position is None:
                    break
                positions.add(position)
            else:
                if len(positions) == 1:
                    return True
        return False

    def _position(self, call: ast.Call, index: int, param: str) -> int | None:
        """`DonateArgnums._site`'s position where it may find a site (the caller's scopes aside): which output of
        the call rebinds the variable passed for `param`, at `index` or by keyword (0: the whole result)."""
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return None
        keyword = next((k for k in call.keywords if k.arg == param), None)
        arg = keyword.value if keyword is not None else call.args[index] if index < len(call.args) else None
        if self._values is None:
            self._values = {
                id(a.value): a for a in self.screen.nodes_of(ast.Assign) if len(a.targets) == 1 and type(a.value) is ast.Call
            }
        assign = self._values.get(id(call))
        if arg is None or assign is None:
            return None
        target = assign.targets[0]
        others = [a for a in (*call.args, *(k.value for k in call.keywords)) if a is not arg]
        attribute = _ast_self_attribute(arg)
        if attribute is not None:  # `_attribute_site`
            if any(_ast_self_attribute(n) == attribute for other in others for n in ast.walk(other)):
                return None
            if isinstance(target, (ast.Tuple, ast.List)):
                if any(isinstance(e, ast.Starred) for e in target.elts):
                    return None
                hits = [i for i, e in enumerate(target.elts) if _ast_self_attribute(e) == attribute]
                return hits[0] + 1 if len(hits) == 1 else None
            return 0 if _ast_self_attribute(target) == attribute else None
        if not isinstance(arg, ast.Name):
            return None
        variable = arg.id
        if any(isinstance(n, ast.Name) and n.id == variable for other in others for n in ast.walk(other)):
            return None  # passed twice
        position = _ast_position(target, variable)
        if position is not None:
            return position
        return self._relayed(assign, variable)

    def _relayed(self, assign: ast.Assign, variable: str) -> int | None:
        """`_relay`: `new, m = step(p, b)` followed by `a = new` statements, one of which is `p = new`: the position
        of `new` in the target."""
        target = assign.targets[0]
        bound = {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
        bound |= {n.attr for n in ast.walk(target) if isinstance(n, ast.Attribute)}  # LibCST's `attr` is a Name
        if not any(_relay_of(a, variable, bound) for a in self.screen.nodes_of(ast.Assign)):
            return None  # no `p = new` anywhere: the statements after the call need not be found
        if self._blocks is None:
            self._blocks = {}
            blocks = [self.screen.tree.body]
            while blocks:
                block = blocks.pop()
                for at, statement in enumerate(block):
                    self._blocks[id(statement)] = (block, at)
                    blocks.extend(statement_blocks(statement))
        block, at = self._blocks[id(assign)]
        for following in block[at + 1:]:
            if not _relay_of(following, None, bound):
                return None
            if following.targets[0].id == variable:
                new = following.value.id
                return None if new == variable else _ast_position(target, new)
        return None


def _relay_of(statement: ast.AST, variable: str | None, bound: set[str]) -> bool:
    """Whether `statement` is `a = new` with `new` among `bound` (and `a` being `variable`, where given)."""
    return (
        type(statement) is ast.Assign and len(statement.targets) == 1 and type(statement.targets[0]) is ast.Name
        and type(statement.value) is ast.Name and statement.value.id in bound
        and (variable is None or statement.targets[0].id == variable)
    )


def _start(node: ast.AST) -> tuple[int, int]:
    return node.lineno, node.col_offset


def _end(node: ast.AST) -> tuple[int, int]:
    return node.end_lineno, node.end_col_offset


_NAMED_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_SCOPES = frozenset({*_NAMED_SCOPES, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp})


def _ast_self_attribute(expr: ast.AST) -> str | None:
    """`attr` for the expression `self.attr`, else None (`_self_attribute` on the `ast`)."""
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
        return expr.attr
    return None


def _ast_position(target: ast.expr, name: str) -> int | None:
    """`DonateArgnums._position` on the `ast`: 0 when the target is `name`; n when `name` is its n-th element."""
    if isinstance(target, ast.Name):
        return 0 if target.id == name else None
    if isinstance(target, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in target.elts):
        hits = [i for i, e in enumerate(target.elts) if isinstance(e, ast.Name) and e.id == name]
        return hits[0] + 1 if len(hits) == 1 else None
    return None
