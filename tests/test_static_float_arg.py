"""JF503 (static-float-arg): the premise it reports on, counted on this JAX."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxfix.codemods.static_float_arg import StaticFloatArg
from tests.helpers import findings


def _compilations(function, values) -> int:
    count = [0]

    def listen(event: str, duration: float, **_) -> None:
        if event == "/jax/core/compile/backend_compile_duration":
            count[0] += 1

    x = jax.block_until_ready(jnp.ones(3))
    jax.monitoring.register_event_duration_secs_listener(listen)
    for value in values:
        jax.block_until_ready(function(x, value))
    jax.monitoring.unregister_event_duration_listener(listen)
    return count[0]


def test_each_static_float_compiles_and_a_traced_one_does_not() -> None:
    rates = [0.1 * 0.9**i for i in range(5)]
    static = jax.jit(lambda x, lr: x * lr, static_argnums=1)
    traced = jax.jit(lambda x, lr: x * lr)
    assert _compilations(static, rates) == 5
    assert _compilations(traced, rates) == 1


def test_a_rate_set_in_an_outer_loop_is_reported_at_the_inner_call() -> None:
    source = (
        "import jax\nfrom functools import partial\n\n@partial(jax.jit, static_argnums=(1,))\n"
        "def f(x, lr):\n    return x * lr\n\ndef run(x):\n    for lr in [0.5, 0.25]:\n"
        "        x = f(x, lr)\n    return x\n"
    )
    reported = findings(source, StaticFloatArg)
    assert len(reported) == 1 and "`lr`" in reported[0].message
    assert reported[0].fix is not None and reported[0].fix.safety.value == "unsafe"


def test_unreadable_static_keywords_are_left_alone() -> None:
    source = (
        "import jax\nfrom functools import partial\nARGS = (1,)\n\n@partial(jax.jit, static_argnums=ARGS)\n"
        "def f(x, lr):\n    return x * lr\n\ndef run(x):\n    for i in range(3):\n        x = f(x, 0.1 * i)\n    return x\n"
    )
    assert findings(source, StaticFloatArg) == []
