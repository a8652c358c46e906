"""JF703: which transfers count, which guards silence them, and which loops are training loops."""

from __future__ import annotations

import textwrap

import pytest

from codemods.host_transfer_in_loop import HostTransferInLoop
from tests.helpers import findings, rewrite

HEAD = "import jax\nimport jax.numpy as jnp\nimport numpy as np\n\n@jax.jit\ndef step(w):\n    return w * 0.5, w.sum()\n\n"


def _train(body: str) -> str:
    return HEAD + "def train(w, n, verbose):\n" + textwrap.indent(textwrap.dedent(body), "    ")


@pytest.mark.parametrize(
    "body",
    [
        "for i in range(n):\n    w, loss = step(w)\n    x = int(loss)\n",
        "for i in range(n):\n    w, loss = step(w)\n    x = loss.tolist()\n",
        "for i in range(n):\n    w, loss = step(w)\n    x = np.array(loss)\n",
        "for i in range(n):\n    w, loss = step(w)\n    print('loss', loss)\n",
        "for i in range(n):\n    w, loss = step(w)\n    if verbose:\n        print(float(loss))\n",  # every step when verbose
        "for i in range(n):\n    w, loss = step(w)\n    if i % 10 == 0:\n        pass\n    else:\n        print(float(loss))\n",
        "for i in range(n):\n    print(float(loss))\n    w, loss = step(w)\n",  # the previous step's value
        # an evaluation loop that runs at every step of the outer loop
        "for i in range(n):\n    w = w + 1\n    for b in range(3):\n        v, loss = step(w)\n        print(float(loss))\n",
        # an `if` around the outer loop runs once: it throttles nothing
        "if n % 2 == 0:\n    for i in range(n):\n        w, loss = step(w)\n        print(float(loss))\n",
        # an `if` that is no interval around the evaluation loop
        "for i in range(n):\n    if verbose:\n        for b in range(3):\n            v, loss = step(w)\n            print(float(loss))\n",
    ],
)
def test_reported(body: str) -> None:
    source = _train(body)
    found = findings(source, HostTransferInLoop)
    assert len(found) == 1 and found[0].fix is None, [d.message for d in found]
    assert rewrite(source, HostTransferInLoop) == source


@pytest.mark.parametrize(
    "body",
    [
        "for i in range(n):\n    w, loss = step(w)\n    if i == n - 1:\n        print(float(loss))\n",
        "k = 0\nwhile k < n:\n    w, loss = step(w)\n    k += 1\n    if k > 5:\n        print(float(loss))\n",
        "for i in range(n):\n    w, loss = step(w)\n    while float(loss) > 1:\n        loss = loss / 2\n",
        "for i in range(n):\n    w, loss = step(w)\n    f = lambda: float(loss)\n",
        "for i in range(n):\n    w = w + 1\n    print(float(w))\n",  # no jitted call
        "for i in range(n):\n    w, loss = step(w)\n    print(float(n))\n",  # not a result of the step
        # an evaluation loop that the training loop runs once in 10 steps
        "for i in range(n):\n    w, loss = step(w)\n    if i % 10 == 0:\n        for b in range(3):\n"
        "            v, e = step(w)\n            print(float(e))\n",
        # ... or at its last step, by its counter; the interval may be two loops up
        "for i in range(n):\n    w, loss = step(w)\n    if i == n - 1:\n        for b in range(3):\n"
        "            v, e = step(w)\n            print(float(e))\n",
        "k = 0\nwhile k < n:\n    k += 1\n    if k % 5 == 0:\n        for a in range(2):\n            for b in range(3):\n"
        "                v, e = step(w)\n                print(float(e))\n",
    ],
)
def test_quiet(body: str) -> None:
    assert findings(_train(body), HostTransferInLoop) == []


def test_loops_in_traced_code_are_not_training_loops() -> None:
    source = HEAD + "@jax.jit\ndef outer(w):\n    for i in range(3):\n        w, loss = step(w)\n        jax.debug.print('{}', loss)\n    return w\n"
    assert findings(source, HostTransferInLoop) == []
