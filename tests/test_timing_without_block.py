"""JF702: what counts as waiting between a JAX call and the clock read, and where the wait goes."""

from __future__ import annotations

import textwrap

import pytest

from codemods.timing_without_block import TimingWithoutBlock
from tests.helpers import findings, rewrite

HEAD = "import time\nimport jax\nimport jax.numpy as jnp\nimport numpy as np\n\n@jax.jit\ndef f(x):\n    return x + 1\n\n"


def _bench(body: str) -> str:
    return HEAD + "def bench(x):\n" + textwrap.indent(textwrap.dedent(body), "    ")


@pytest.mark.parametrize(
    "body",
    [
        "t0 = time.time()\nout = f(x)\nnp.asarray(out)\nt1 = time.time()\n",
        "t0 = time.time()\nout = f(x)\nprint(out)\nt1 = time.time()\n",
        "t0 = time.time()\nout = f(x)\nlog(out)\nt1 = time.time()\n",  # any call after it may wait
        "t0 = time.time()\nif x is None:\n    out = f(x)\nt1 = time.time()\n",  # not followed into an if
        "t0 = time.time()\nt1 = time.time()\n",
        "t0 = time.time()\nout = x + 1\nt1 = time.time()\n",  # no call: not known to be JAX
        "t0 = time.time()\nout = g(x)\nt1 = time.time()\n",  # an unknown function
        "t0 = time.time()\nout = jax.device_get(f(x))\nt1 = time.time()\n",
    ],
)
def test_quiet(body: str) -> None:
    assert findings(_bench(body), TimingWithoutBlock) == []


def test_statements_without_calls_after_the_computation_are_skipped() -> None:
    source = _bench("t0 = time.time()\nout = f(x)\nn = 3\nt1 = time.time()\n")
    assert "jax.block_until_ready(out)\nt1" in textwrap.dedent(rewrite(source, TimingWithoutBlock)).replace("    ", "")


def test_while_loop_with_state_bound_before() -> None:
    source = _bench("t0 = time.time()\nwhile x.sum() < 10:\n    x = f(x)\nt1 = time.time()\n")
    assert findings(source, TimingWithoutBlock)
    assert "        x = f(x)\n    jax.block_until_ready(x)\n    t1 = time.time()" in rewrite(source, TimingWithoutBlock)


def test_tuple_target_is_waited_for_as_a_pytree() -> None:
    source = _bench("t0 = time.time()\na, b = f(x)\nt1 = time.time()\n")
    assert "jax.block_until_ready((a, b))" in rewrite(source, TimingWithoutBlock)


def test_module_level_script_adds_the_import() -> None:
    source = "from time import time\nfrom jax import jit\nimport jax.numpy as jnp\nf = jit(jnp.sin)\nstart = time()\ny = f(1.0)\nprint(time() - start)\n"
    fixed = rewrite(source, TimingWithoutBlock)
    assert "y = f(1.0)\njax.block_until_ready(y)\nprint(time() - start)" in fixed
    assert "import jax\n" in fixed
    compile(fixed, "<fixed>", "exec")


def test_the_fix_is_safe() -> None:
    source = _bench("t0 = time.time()\nout = f(x)\nt1 = time.time()\n")
    assert rewrite(source, TimingWithoutBlock, unsafe=False) != source


@pytest.mark.parametrize("body", ["pass", "...", '"""Nothing: the benchmark times dispatch."""'])
def test_an_empty_jitted_step_has_nothing_to_wait_for(body: str) -> None:
    """flax's nnx_graph_overhead benchmark: a jitted step whose body is empty returns None and computes nothing;
    a step that returns its input still dispatches work and is reported."""
    source = (
        "import time\nimport jax\n\ndef bench(x, steps):\n    @jax.jit\n    def step(x):\n        BODY\n\n"
        "    t0 = time.time()\n    for _ in range(steps):\n        step(x)\n    return time.time() - t0\n"
    )
    assert findings(source.replace("BODY", body), TimingWithoutBlock) == []
    assert len(findings(source.replace("BODY", "return x * 2"), TimingWithoutBlock)) == 1
    one_line = source.replace("def step(x):\n        BODY\n", "def step(x): pass\n")
    assert findings(one_line, TimingWithoutBlock) == []
