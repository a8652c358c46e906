"""JF501 (donate-argnums): what stops donation, and the forms of jit keywords it merges into."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

from jaxfix.codemods.donate_argnums import DonateArgnums
from jaxfix.facts.module import FileFacts
from tests.helpers import findings, rewrite

HEAD = """\
import jax
import jax.numpy as jnp


def loss(p, x):
    return jnp.sum((p * x) ** 2)


@jax.jit
def _step(p, x):
    g = jax.grad(loss)(p, x)
    return p - 0.1 * g

"""


def _messages(source: str) -> list[str]:
    return [d.message for d in findings(source, DonateArgnums)]


@pytest.mark.parametrize(
    "body,stopped_by",
    [
        # a closure sees the variable; one called before the next step would read a deleted buffer
        ("def train(x):\n    p = x * 2.0\n    peek = lambda: p\n    for _ in range(3):\n"
         "        p = _step(p, x)\n        print(peek())\n    return p\n", "captured"),
        # a default value keeps the old buffer
        ("def train(x):\n    p = x * 2.0\n    keep = lambda q=p: q\n    p = _step(p, x)\n    return keep()\n",
         "also read"),
        # a subscript of a pytree keeps a leaf of the donated tree
        ("def train(x):\n    p = x * 2.0\n    first = p[0]\n    p = _step(p, x)\n    return p, first\n",
         "also read"),
        # the first value is an argument of the enclosing function
        ("def train(p, x):\n    p = _step(p, x)\n    return p\n", "parameter of the calling function"),
        # an alias of another variable
        ("def train(x):\n    q = x * 2.0\n    p = q\n    p = _step(p, x)\n    return p + q\n", "held elsewhere"),
        # the module differentiates the whole loop: its backward pass reads what the steps would donate
        ("def train(x):\n    p = x * 2.0\n    for _ in range(3):\n        p = _step(p, x)\n    return p.sum()\n\n\n"
         "meta_grad = jax.grad(train)\n", "differentiates `train` with `jax.grad`"),
    ],
)
def test_reports_what_keeps_the_old_buffer(body: str, stopped_by: str) -> None:
    messages = _messages(HEAD + "\n" + body)
    assert len(messages) == 1 and stopped_by in messages[0], messages
    assert rewrite(HEAD + "\n" + body, DonateArgnums) == HEAD + "\n" + body


@pytest.mark.parametrize(
    "body",
    [
        # passed twice: one buffer both donated and read
        "def train(x):\n    p = x * 2.0\n    p = _step(p, p)\n    return p\n",
        # an expression, not a variable
        "def train(x):\n    p = _step(x * 2.0, x)\n    return p\n",
        # not rebound: the result goes elsewhere
        "def train(x):\n    p = x * 2.0\n    return _step(p, x)\n",
        # a call inside a comprehension
        "def train(x):\n    p = x * 2.0\n    return [_step(p, x) for _ in range(2)]\n",
    ],
)
def test_quiet_when_a_call_does_not_rebind(body: str) -> None:
    assert _messages(HEAD + "\n" + body) == []


def test_reads_after_the_last_call_and_of_metadata_are_fine() -> None:
    body = (
        "def train(x):\n    p = x * 2.0\n    for _ in range(3):\n        print(p.shape, p.dtype)\n"
        "        p = _step(p, x)\n        total = p * 2.0\n    snapshot = [p]\n    return snapshot, total\n"
    )
    rewritten = rewrite(HEAD + "\n" + body, DonateArgnums, unsafe=False)
    assert "@partial(jax.jit, donate_argnums=0)" in rewritten
    namespace: dict = {}
    exec(compile(rewritten, "<rewritten>", "exec"), namespace)
    snapshot, total = namespace["train"](jnp.arange(3.0))
    assert not snapshot[0].is_deleted()


def test_a_read_later_in_the_loop_is_read_before_the_next_call() -> None:
    body = (
        "def train(x):\n    p = x * 2.0\n    kept = []\n    for _ in range(3):\n        p = _step(p, x)\n"
        "        kept.append(p)\n    return kept\n"
    )
    messages = _messages(HEAD + "\n" + body)
    assert len(messages) == 1 and "kept.append(p)" in messages[0]


def test_module_level_script() -> None:
    script = HEAD + "\nx = jnp.arange(3.0)\np = jnp.ones(3)\nfor _ in range(2):\n    p = _step(p, x)\n"
    assert "donate_argnums=0" in rewrite(script, DonateArgnums, unsafe=False)


def test_partial_name_taken_uses_functools() -> None:
    source = HEAD.replace("import jax\n", "import jax\npartial = None\n", 1) + (
        "\ndef train(x):\n    p = x * 2.0\n    p = _step(p, x)\n    return p\n"
    )
    rewritten = rewrite(source, DonateArgnums)
    assert "@functools.partial(jax.jit, donate_argnums=0)" in rewritten and "import functools" in rewritten


def test_integer_update_without_gradient_is_not_proven() -> None:
    source = (
        "import jax\n\n@jax.jit\ndef _count(n):\n    return n / 2\n\n"
        "def run(x):\n    n = x + 1\n    n = _count(n)\n    return n\n"
    )
    assert _messages(source) == []  # `n / 2` turns an int array into a float one


def test_jit_call_with_keywords_is_merged() -> None:
    source = HEAD.replace("@jax.jit\ndef _step", "def _step") + (
        "\n_fast = jax.jit(_step, inline=True)\n\n"
        "def train(x):\n    p = x * 2.0\n    p = _fast(p, x)\n    return p\n"
    )
    assert "_fast = jax.jit(_step, inline=True, donate_argnums=0)" in rewrite(source, DonateArgnums, unsafe=False)


def test_donation_deletes_the_argument_on_this_jax() -> None:
    """The premise of the rule's fix safety: on this JAX the donated input is gone after the call."""
    step = jax.jit(lambda p: p + 1.0, donate_argnums=0)
    p = jnp.ones(3)
    step(p)
    assert p.is_deleted()


def test_differentiating_through_donating_steps_raises_on_this_jax() -> None:
    """Why a differentiated loop gets no fix: the backward pass needs the buffers the forward pass donated."""

    def train(x, step):
        p = x * 2.0
        for _ in range(2):
            p = step(p, x)
        return p.sum()

    x = jnp.linspace(0.0, 1.0, 4)
    plain = jax.jit(lambda p, x: p * x)
    donating = jax.jit(lambda p, x: p * x, donate_argnums=0)  # its backward pass needs the donated p
    assert jnp.all(jnp.isfinite(jax.grad(train)(x, plain)))
    with pytest.raises(RuntimeError, match="deleted"):
        jax.grad(train)(x, donating)


def test_calls_unpacking_a_result_the_returns_do_not_spell_out_as_a_tuple() -> None:
    # optax's tests: a nested jitted step returns `opt.update(...)`, which its caller unpacks (crashed JF501)
    source = (
        "import jax\n\n\ndef helper(p, s):\n    return p, s\n\n\ndef test():\n    @jax.jit\n"
        "    def step(p, s):\n        return helper(p * 2.0, s)\n\n    p, s = 1.0, 2.0\n"
        "    for _ in range(2):\n        p, s = step(p, s)\n    return p\n"
    )
    assert findings(source, DonateArgnums) == []


def test_a_donated_buffer_no_output_can_reuse_is_only_warned_about_on_this_jax() -> None:
    """The premise of donating without a shape proof: where no output has the donated argument's shape and
    dtype, XLA warns, the argument stays alive and the values are those computed without donation."""
    fn = lambda p, x: (p.sum() * x, p.mean())  # noqa: E731
    p, x = jnp.arange(6.0).reshape(2, 3), jnp.ones(4)
    expected = jax.jit(fn)(p, x)
    with pytest.warns(UserWarning, match="Some donated buffers were not usable"):
        got = jax.jit(fn, donate_argnums=0)(p, x)
    assert not p.is_deleted()
    assert all(bool(jnp.array_equal(a, b)) for a, b in zip(got, expected))


OPTAX_STEP = """\
import jax
import jax.numpy as jnp
import optax

optimizer = optax.adam(1e-3)


def loss_fn(params, batch):
    return jnp.mean((batch @ params) ** 2)


@jax.jit
def update(params, opt_state, batch):
    loss, grads = jax.value_and_grad(loss_fn)(params, batch)
    updates, opt_state = optimizer.update(grads, opt_state)
    return optax.apply_updates(params, updates), opt_state, loss


def init(n):
    params = jnp.ones(n)
    return params, optimizer.init(params)

"""


def test_an_optax_step_is_donated_on_the_assumption_it_returns_the_update() -> None:
    body = (
        "def train(batches):\n    params, opt_state = init(3)\n"
        "    for batch in batches:\n        params, opt_state, loss = update(params, opt_state, batch)\n    return params\n"
    )
    (message,) = _messages(OPTAX_STEP + "\n" + body)
    assert "`donate_argnums=(0, 1)`" in message
    assert "unsafe fix: assumes `update` returns the updated `params`, `opt_state`" in message
    assert "it is unsafe also because `update` is public" in message
    assert "donate_argnums" not in rewrite(OPTAX_STEP + "\n" + body, DonateArgnums, unsafe=False)


def test_a_step_that_takes_no_gradient_is_not_assumed_to_return_its_argument() -> None:
    source = (
        "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef _scale(p):\n    return jnp.linalg.norm(p), p * 2.0\n\n"
        "def run(x):\n    p = x + 1.0\n    for _ in range(3):\n        n, p = _scale(p)\n    return p\n"
    )
    assert _messages(source) == []


@pytest.mark.parametrize(
    "body,fixed",
    [
        # rebound through a new name right after the call
        ("    for batch in batches:\n        new_params, new_state, loss = update(params, opt_state, batch)\n"
         "        params = new_params\n        opt_state = new_state\n    return params\n", True),
        # the new name is read again before the next call: it holds the buffer the next call donates
        ("    kept = []\n    for batch in batches:\n        new_params, opt_state, loss = update(params, opt_state, batch)\n"
         "        params = new_params\n        kept.append(new_params)\n    return kept\n", False),
        # something runs between the call and the rebinding
        ("    for batch in batches:\n        new_params, opt_state, loss = update(params, opt_state, batch)\n"
         "        print(params)\n        params = new_params\n    return params\n", False),
    ],
)
def test_results_bound_to_new_names_then_rebound(body: str, fixed: bool) -> None:
    source = OPTAX_STEP + (
        "\ndef train(batches):\n    params, opt_state = init(3)\n"
    ) + body
    rewritten = rewrite(source, DonateArgnums, unsafe=True)
    assert ("donate_argnums=(0, 1)" in rewritten) is fixed, rewritten


def test_a_step_reassigning_its_parameter_does_not_read_the_callers_variable() -> None:
    # LibCST credits a read of a parameter that the function later reassigns to the module's variable of the
    # same name too: that read is the step's own parameter, not a capture of the caller's buffer.
    source = HEAD + (
        "@jax.jit\ndef _sgd(params, x):\n    grads = jax.grad(loss)(params, x)\n    params = params - 0.1 * grads\n"
        "    return params\n\n\nparams = jnp.ones(3)\nfor _ in range(2):\n    params = _sgd(params, jnp.arange(3.0))\n"
    )
    assert "@partial(jax.jit, donate_argnums=0)\ndef _sgd" in rewrite(source, DonateArgnums, unsafe=True)


def test_pmap_keeps_its_broadcast_static_arguments_and_keyword_only_parameters() -> None:
    source = HEAD.replace("import jax\n", "import jax\nfrom functools import partial\n", 1) + (
        "@partial(jax.pmap, axis_name='i', static_broadcasted_argnums=1)\n"
        "def _pstep(p, scale, x, *, lr=0.1):\n    g = jax.grad(loss)(p, x)\n    return p - lr * scale * g\n\n\n"
        "def train(x):\n    p = x * 2.0\n    scale = 2.0\n    for _ in range(2):\n        p = _pstep(p, scale, x)\n"
        "    return p\n"
    )
    assert "static_broadcasted_argnums=1, donate_argnums=0)" in rewrite(source, DonateArgnums, unsafe=True)


BUILTIN_CELL = (
    "from functools import partial\n\nimport jax\nimport optax\n\n\n"
    "@partial(jax.jit, static_argnums=(0,))\n"
    "def update_step(tx, opt_state, params, x):\n"
    "    grads = jax.grad(lambda p: ((p * x) ** 2).sum())(params)\n"
    "    updates, opt_state = tx.update(grads, opt_state)\n"
    "    params = optax.apply_updates(params, updates)\n"
    "    return opt_state, params\n\n\n"
    "tx = optax.sgd(learning_rate=0.02)\nparams = jax.numpy.ones(3)\nopt_state = tx.init(params)\n"
    "for _ in range(3):\n"
    "    opt_state, params = update_step(tx, opt_state, params, params)\n"
    "    print('Updated: ', params)\n"
)


def test_module_level_loop_next_to_builtins_does_not_crash() -> None:
    """A flax tutorial notebook's cell, on which `jaxfix check` crashed in JF501 (a name that resolves to a builtin
    has no assignment node); the CLI run reproduced it, this in-process run of the rule alone does not."""
    source = BUILTIN_CELL
    messages = _messages(source)
    assert len(messages) == 1 and "update_step" in messages[0], messages


_FILTER_JIT = """
import equinox as eqx
import jax


def loss(model, x):
    return (model * x).sum()


@eqx.filter_jit
def _step(model, velocity):
    grads = eqx.filter_grad(loss)(model, 1.0)
    velocity = 0.9 * velocity + grads
    return model - 0.1 * velocity, velocity


def train(model, velocity):
    model = model * 1.0
    velocity = velocity * 0.0
    for _ in range(3):
        {call}
    return model
"""


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("model, velocity = _step(model, velocity)", 'donate="warn"'),
        ("model, velocity = _step(model + 0.0, velocity)", 'donate="warn-except-first"'),
        ("model, v = _step(model, velocity)", None),  # `velocity` is passed again: donating it would delete it
    ],
)
def test_filter_jit_donates_all_arguments_or_all_but_the_first(call: str, expected: str | None) -> None:
    reported = findings(_FILTER_JIT.format(call=call), DonateArgnums)
    if expected is None:
        assert reported == []
    else:
        (finding,) = reported
        assert f"`{expected}`" in finding.message


_METHOD = """
import functools
import jax


def loss(p, x):
    return (p * x).sum()


class Learner:
    @functools.partial(jax.jit, static_argnums=0)
    def update(self, p, x):
        return p - 0.1 * jax.grad(loss)(p, x)

    def run(self, x):
        p = x * 2.0
        for _ in range(3):
            p = self.update(p, x)
        return p
{extra}
"""


def test_a_method_called_through_another_name_is_not_followed() -> None:
    assert "donate_argnums=1" in findings(_METHOD.format(extra=""), DonateArgnums)[0].message
    other = "\n\ndef outside(learner, p, x):\n    return learner.update(p, x), p\n"
    assert findings(_METHOD.format(extra=other), DonateArgnums) == []


def test_an_attribute_read_anywhere_in_the_module_blocks_it() -> None:
    source = """
import jax


def loss(p, x):
    return (p * x).sum()


@jax.jit
def _step(p, x):
    return p - 0.1 * jax.grad(loss)(p, x)


class Trainer:
    def __init__(self, x):
        self.p = x * 2.0

    def fit(self, x):
        for _ in range(3):
            self.p = _step(self.p, x)


def peek(trainer):
    return trainer.p
"""
    (finding,) = findings(source, DonateArgnums)
    assert "`self.p` is also read at line 24 (`return trainer.p`)" in finding.message and "donate_argnums" not in finding.message


@pytest.mark.parametrize(
    "body,donated,blocker",
    [
        ("def train(x):\n    p = x * 2.0\n    for _ in range(3):\n        p = _step(p, x)\n    return p\n",
         [(0, "p")], None),
        ("def train(x):\n    p = x * 2.0\n    old = p\n    p = _step(p, x)\n    return p - old\n", [],
         "`p` is also read at line 17 (`old = p`)"),
    ],
)
def test_the_donation_facts_are_read_from_the_file_facts(body: str, donated, blocker: str | None) -> None:
    """What a step may donate is a fact of the module (`FileFacts.donation`, on `ast`), which any reader asks
    without the rule: its steps, the arguments every call rebinds, and why the others are kept."""
    facts = FileFacts(HEAD + "\n" + body)
    (step,) = facts.donation.steps
    found = facts.donation.donatable(step)
    assert step.name == "_step" and found.params == ["p", "x"] and found.assumed == []
    assert [(index, name) for index, name, _ in found.donated] == donated
    assert found.blockers == [] if blocker is None else blocker in found.blockers[0]
