"""JF501: donate the buffers of a jitted step's arguments that every call site rebinds from its results. On `ast`
(`check`): what each step may donate is `facts.donation` (`FileFacts.donation`); the keyword is added on LibCST in
`fix_finding` (`edit.jit.add_jit_keyword`)."""

from __future__ import annotations

from dataclasses import dataclass

from jaxfix.codemod import Codemod, Invalid, Valid
from jaxfix.diagnostics import Diagnostic, Fix, ImportSpec, Safety
from jaxfix.edit.jit import add_jit_keyword_to
from jaxfix.facts.donation import FILTER_JIT, PMAP
from jaxfix.facts.jitted import Jitted, partial_spelling
from jaxfix.facts.module import FileFacts


@dataclass(frozen=True)
class _Plan:
    """What `fix_finding` needs: the step whose compiler gets `key=value`, and how the module writes
    `functools.partial` where a bare decorator becomes `@partial(jax.jit, ...)`."""

    jitted: Jitted
    key: str
    value: str
    partial: tuple[str, ImportSpec | None] | None


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

    looks_at = ("FunctionDef", "Assign")

    @classmethod
    def check(cls, facts: FileFacts) -> list[Diagnostic]:
        """Each step whose calls all rebind an argument, with the donation keyword as the fix, or why not."""
        donation = facts.donation
        found: list[Diagnostic] = []
        for jitted in donation.steps:
            finding = cls._check(facts, jitted)
            if finding is not None:
                found.append(finding)
        return found

    @classmethod
    def _check(cls, facts: FileFacts, jitted: Jitted) -> Diagnostic | None:
        found = facts.donation.donatable(jitted)
        if found is None:
            return None
        donated, assumed, blockers = found.donated, found.assumed, found.blockers
        if jitted.compiler == FILTER_JIT and donated and not _filter_donation(found.params, donated):
            if blockers:
                return cls.finding(facts, cls._anchor(facts, jitted), f"`{jitted.name}` could donate buffers, but {blockers[0]}")
            return None  # `donate=` cannot leave out the arguments that are still read
        if not donated:
            if blockers:
                return cls.finding(facts, cls._anchor(facts, jitted), f"`{jitted.name}` could donate buffers, but {blockers[0]}")
            return None
        return cls._report_fix(facts, jitted, found.params, donated, assumed, blockers)

    @staticmethod
    def _anchor(facts: FileFacts, jitted: Jitted):
        return facts.positions.name_of(jitted.function) if jitted.binding is jitted.function else jitted.binding

    # ---- report and fix ----------------------------------------------------------------------------------

    @classmethod
    def _report_fix(cls, facts: FileFacts, jitted: Jitted, params, donated, assumed: list[str], blockers: list[str]) -> Diagnostic:
        # pmap has no donate_argnames
        by_keyword = jitted.compiler != PMAP and all(site.keyword for _, _, sites in donated for site in sites)
        if jitted.compiler == FILTER_JIT:
            key, items = "donate", [f'"{_filter_donation(params, donated)}"']
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
        donation = facts.donation
        sites = [site for _, _, sites in donated for site in sites if site.unsafe]
        reasons = [site.unsafe for site in sites if not site.shares]
        if jitted.function in donation.methods:
            reasons.insert(0, (
                f"`{jitted.name}` is a method: callers jaxfix does not see (other modules, subclasses, an attribute "
                "holding another instance) lose their arguments"
            ))
        elif jitted.binding not in donation.nested and donation.public(jitted.name):
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
        plan = _Plan(jitted, key, value, partial_spelling(facts.binder) if jitted.call is None else None)
        return cls.finding(
            facts, cls._anchor(facts, jitted), message, safety=safety,
            description=f"add {keyword} to {jitted.compiler}", plan=plan,
        )

    @classmethod
    def fix_finding(cls, finding: Diagnostic, bridge) -> Fix | None:
        """`key=value` appended to the call that carries the compiler's keywords, or the bare decorator turned into
        `@partial(jax.jit, key=value)`."""
        plan: _Plan = finding.plan
        edit = add_jit_keyword_to(bridge, plan.jitted, plan.key, plan.value, plan.partial)
        if edit is None:
            return None
        change, imports = edit
        return Fix(finding.fix.safety, finding.fix.description, (change,), tuple(imports))


def _filter_donation(params: list[str], donated) -> str | None:
    """`eqx.filter_jit`'s `donate=` value that gives away exactly the donated arguments: "warn" when they are all
    of the parameters, "warn-except-first" when all but the first; None otherwise. ("warn" keeps JAX's warning
    where a donated buffer is not usable, which "all" silences.)"""
    names = {param for _, param, _ in donated}
    if names == set(params):
        return "warn"
    if len(params) > 1 and names == set(params[1:]):
        return "warn-except-first"
    return None
