"""JF704 (lists of numbers to jitted functions) and JF705 (manual replication): what counts, what is fixed."""

from __future__ import annotations

import pytest

from codemods.list_to_jit import ListToJit
from codemods.manual_replication import ManualReplication
from tests.helpers import findings, rewrite

JIT = "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    return jnp.sum(jnp.asarray(x))\n\n"


@pytest.mark.parametrize(
    "body, reported",
    [
        ("def run():\n    return f([1, 2, -3])\n", True),
        ("def run():\n    return f(x=[1.5, True])\n", True),
        ("def run(n):\n    return f([i * i for i in range(n)])\n", True),
        ("def run(n):\n    v = [0.0, 1.0]\n    return f(v)\n", True),
        ("def run(n):\n    v = [0.0, 1.0]\n    if n:\n        v = jnp.ones(2)\n    return f(v)\n", False),  # not a list on every path
        ("def run(n):\n    return f([jnp.ones(2)])\n", False),
        ("def run(n, a):\n    return f([a, 1.0])\n", False),  # `a` may be an array
        ("def run(n):\n    return f([g(i) for i in range(n)])\n", False),
        ("def run(n):\n    return f(list(n))\n", False),
        ("def run(n):\n    return g([1.0, 2.0])\n", False),  # not jitted
        ("def run(n):\n    return jax.jit(g)(list(range(n)))\n", True),
        ("def run(n):\n    return f(len, [1, 2])\n", True),  # a builtin name as an argument
        ("def run(n):\n    return f(list)\n", False),
    ],
)
def test_list_arguments(body: str, reported: bool) -> None:
    found = findings(JIT + body, ListToJit)
    assert bool(found) == reported, [d.message for d in found]
    assert all(d.fix is None for d in found)


@pytest.mark.parametrize(
    "source, fixed",
    [
        (
            "import jax.numpy as jnp\n\ndef f(n):\n    w = jnp.zeros(3)\n    return jnp.asarray(n * [w])\n",
            "import jax.numpy as jnp\n\ndef f(n):\n    w = jnp.zeros(3)\n    return jnp.broadcast_to(w, (n,) + w.shape)\n",
        ),
        (
            "from jax.numpy import stack, ones\n\ndef f(n):\n    w = ones(3)\n    return stack([w] * (n + 1))\n",
            "from jax.numpy import stack, ones\nimport jax\n\ndef f(n):\n    w = ones(3)\n"
            "    return jax.numpy.broadcast_to(w, ((n + 1),) + w.shape)\n",
        ),
    ],
)
def test_replication_fixed(source: str, fixed: str) -> None:
    assert rewrite(source, ManualReplication, unsafe=True) == fixed


def test_stack_is_a_safe_fix_and_array_an_unsafe_one() -> None:
    """`jnp.stack([])` raises where the broadcast returns an empty array (safe: the original accepted no such
    input); `jnp.array([])` is an empty 1-d array, which the broadcast does not give (unsafe)."""
    import jax.numpy as jnp

    stack = "import jax.numpy as jnp\n\ndef f(n):\n    w = jnp.zeros(3)\n    return jnp.stack([w] * n)\n"
    array = stack.replace("jnp.stack(", "jnp.array(")
    assert "broadcast_to" in rewrite(stack, ManualReplication, unsafe=False)
    assert rewrite(array, ManualReplication, unsafe=False) == array
    assert "broadcast_to" in rewrite(array, ManualReplication, unsafe=True)
    w = jnp.zeros(3)
    assert jnp.array([w] * 0).shape == (0,) != jnp.broadcast_to(w, (0,) + w.shape).shape


@pytest.mark.parametrize(
    "body, blocker",
    [
        ("w = jnp.zeros(3)\n    return jnp.stack([w] * n, axis=1)", "other arguments"),
        ("w = jnp.zeros(3)\n    return jnp.stack([w * 2] * n)", "not a plain name"),
        ("w = 2.0\n    return jnp.stack([w] * n)", "not proven"),
    ],
)
def test_replication_reported(body: str, blocker: str) -> None:
    found = findings(f"import jax.numpy as jnp\n\ndef f(n):\n    {body}\n", ManualReplication)
    assert len(found) == 1 and found[0].fix is None and blocker in found[0].message


@pytest.mark.parametrize(
    "expr",
    ["jnp.stack([w for i in range(n) if i])", "jnp.stack([w, w] * n)", "jnp.stack([w for i in range(0, n)])",
     "np.stack([w] * n)", "jnp.stack([w] + [w])", "jnp.stack([jnp.ones(2) for _ in range(n)])"],
)
def test_replication_quiet(expr: str) -> None:
    source = f"import numpy as np\nimport jax.numpy as jnp\n\ndef f(n):\n    w = jnp.zeros(3)\n    return {expr}\n"
    assert findings(source, ManualReplication) == []


def test_broadcast_equals_stack_for_arrays_of_each_dtype() -> None:
    """What makes the fix safe: same values, shape and dtype (int, float, bool, a 0-d array, n = 1)."""
    import jax.numpy as jnp
    import numpy as np

    for w in (jnp.arange(6).reshape(2, 3), jnp.float32(2.5), jnp.array([True, False]), jnp.ones((2,), jnp.bfloat16)):
        for n in (1, 3):
            stacked, broadcast = jnp.stack([w] * n), jnp.broadcast_to(w, (n,) + w.shape)
            assert stacked.shape == broadcast.shape and stacked.dtype == broadcast.dtype
            assert stacked.weak_type == broadcast.weak_type
            np.testing.assert_array_equal(np.asarray(stacked), np.asarray(broadcast))
