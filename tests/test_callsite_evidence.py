"""The project's call sites as evidence for rewriting: which parameters every call in the project passes an array
(project.py's `Project.call_site_evidence`), where the rules use it, and that the cache follows the callers."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from jaxfix import corpus
from jaxfix.analysis.project import ModuleFacts
from jaxfix.codemods.batch_loop_to_vmap import BatchLoopToVmap
from jaxfix.codemods.loop_to_scan import LoopToScan
from jaxfix.diagnostics import Safety
from jaxfix.project_io import build_project
from tests.helpers import invoke_in, project_findings

ROWS_CASE = corpus.ROOT / "loop_to_scan" / "project_called_rows"
TUPLE_CASE = corpus.ROOT / "loop_to_scan" / "project_called_tuple"

MODEL = """\
import jax
import jax.numpy as jnp


@jax.jit
def encode(h, xs, w):
    for x in xs:
        h = jnp.tanh(h @ w + x)
    return h
"""

CALLER = """\
import jax
import jax.numpy as jnp
import numpy as np

import model


def run(seed):
    xs = jax.random.normal(jax.random.PRNGKey(seed), (8, 4))
    return model.encode(jnp.zeros(4), xs, w=jnp.eye(4))


def warm_up():
    return model.encode(jnp.zeros(4), np.ones((8, 4)), jnp.eye(4) * 0.5)
"""


def _evidence(tmp_path: Path, caller: str, model: str = MODEL) -> dict:
    """What the project of model.py and train.py (`caller`) says of `encode`'s parameters."""
    (tmp_path / "model.py").write_text(model)
    (tmp_path / "train.py").write_text(caller)
    project = build_project([tmp_path], root=tmp_path)
    return dict(project.facts_for(str(tmp_path / "model.py")).called_with.get("encode", {}))


# ---- what the project's calls say ------------------------------------------------------------------------------


def test_a_parameter_counts_where_every_call_passes_an_array(tmp_path: Path) -> None:
    """`jnp.*`, `np.*` and `jax.random.*` constructors count, there or through a local bound once to one, by
    position and by keyword; `jnp.eye(4) * 0.5` is an expression, not a constructor: `w` does not count."""
    assert _evidence(tmp_path, CALLER) == {"h": 2, "xs": 2}


@pytest.mark.parametrize(
    "passed",
    [
        "(jnp.ones(4), jnp.ones(4))",  # a tuple
        "[jnp.ones(4)]",  # a list
        "rows",  # a parameter of the caller, passed through
        "jnp.ones((8, 4)).T",  # an attribute of an array: not a constructor's value
        "jnp.split(jnp.ones((8, 4)), 2)",  # a list of arrays
        "ROWS",  # a module-level name
    ],
)
def test_one_call_passing_anything_but_an_array_is_no_evidence(tmp_path: Path, passed: str) -> None:
    caller = CALLER + f"\n\nROWS = jnp.ones((8, 4))\n\n\ndef other(rows):\n    return model.encode(jnp.zeros(4), {passed}, jnp.eye(4))\n"
    assert _evidence(tmp_path, caller) == {"h": 3}


def test_a_local_bound_twice_is_no_evidence(tmp_path: Path) -> None:
    caller = CALLER.replace("    return model.encode(jnp.zeros(4), xs,", "    if seed:\n        xs = [xs]\n    return model.encode(jnp.zeros(4), xs,")
    assert _evidence(tmp_path, caller) == {"h": 2}


def test_a_call_with_star_args_is_no_evidence(tmp_path: Path) -> None:
    caller = CALLER + "\n\ndef spread(args):\n    return model.encode(jnp.zeros(4), *args)\n"
    assert _evidence(tmp_path, caller) == {}


def test_a_parameter_left_to_its_default_or_bound_by_partial_is_no_evidence(tmp_path: Path) -> None:
    model = MODEL.replace("def encode(h, xs, w):", "def encode(h, xs, w=None):")
    caller = CALLER.replace(", w=jnp.eye(4))", ")")
    assert _evidence(tmp_path, caller, model) == {"h": 2, "xs": 2}


def test_extra_positional_arguments_are_not_given_to_a_keyword_only_parameter(tmp_path: Path) -> None:
    model = MODEL.replace("def encode(h, xs, w):", "def encode(h, *rest, xs=None, w=None):")
    caller = "import jax.numpy as jnp\nimport model\n\n\ndef run():\n    return model.encode(jnp.zeros(4), jnp.ones((8, 4)), jnp.eye(4))\n"
    assert _evidence(tmp_path, caller, model) == {"h": 1}


@pytest.mark.parametrize(
    "escape",
    [
        "encode_fast = jax.jit(model.encode)",  # called through another name: those calls are not seen
        "STEPS = [model.encode]",
        "def apply(m, x):\n    return m.encode(jnp.zeros(4), x, jnp.eye(4))",  # an unresolved call by its name
        "def apply(ms, x):\n    return ms[0].encode(jnp.zeros(4), x, jnp.eye(4))",
    ],
)
def test_a_function_that_calls_may_reach_unseen_has_no_evidence(tmp_path: Path, escape: str) -> None:
    assert _evidence(tmp_path, CALLER + "\n\n" + escape + "\n") == {}


def test_no_call_or_an_unknown_decorator_is_no_evidence(tmp_path: Path) -> None:
    assert _evidence(tmp_path, "import model\n") == {}
    wrapped = MODEL.replace("@jax.jit\n", "@jax.jit\n@some_wrapper\n")
    assert _evidence(tmp_path, CALLER, "from helpers import some_wrapper\n" + wrapped) == {}


def test_a_method_another_class_defines_too_has_no_evidence(tmp_path: Path) -> None:
    """`self.encode(x)` in a base class may run the subclass's `encode`: the index does not tell them apart."""
    model = (
        "import jax.numpy as jnp\n\n\nclass Encoder:\n    def encode(self, xs):\n        return xs\n\n"
        "    def run(self):\n        return self.encode(jnp.ones((8, 4)))\n"
    )
    (tmp_path / "model.py").write_text(model)
    train = "import jax\nfrom model import Encoder\n\n\n@jax.jit\ndef step():\n    encoder = Encoder()\n    return encoder.run()\n"
    (tmp_path / "train.py").write_text(train)
    facts = build_project([tmp_path], root=tmp_path).facts_for(str(tmp_path / "model.py"))
    assert facts.called_with == {"Encoder.encode": {"xs": 1}}
    (tmp_path / "other.py").write_text("from model import Encoder\n\n\nclass Pairs(Encoder):\n    def encode(self, xs):\n        return xs[0]\n")
    facts = build_project([tmp_path], root=tmp_path).facts_for(str(tmp_path / "model.py"))
    assert facts.called_with == {}


def test_the_evidence_is_kept_with_the_stored_facts_and_in_their_digest() -> None:
    facts = ModuleFacts(called_with={"encode": {"xs": 2}})
    assert ModuleFacts.from_json(facts.to_json()) == facts
    assert facts.digest() != ModuleFacts(called_with={"encode": {"xs": 3}}).digest() != ModuleFacts().digest()


# ---- the rules on the evidence -----------------------------------------------------------------------------------


def _copy(case: Path, tmp_path: Path) -> Path:
    folder = tmp_path / case.name
    shutil.copytree(case / "before", folder)
    return folder


def test_jf102_scans_the_rows_of_an_argument_every_call_passes_an_array(tmp_path: Path) -> None:
    (found,) = project_findings(_copy(ROWS_CASE, tmp_path), LoopToScan)
    name, diagnostic = found
    assert name == "model.py" and diagnostic.fix.safety is Safety.UNSAFE
    assert (
        "evidence: every call of `encode` in the project passes an array for `xs` (2 call sites); not proven for "
        "callers outside it: check with `jaxfix apply --verify`"
    ) in diagnostic.message


def test_jf102_stays_quiet_where_one_call_passes_a_tuple(tmp_path: Path) -> None:
    assert project_findings(_copy(TUPLE_CASE, tmp_path), LoopToScan) == []


def test_an_annotation_that_says_otherwise_wins_over_the_calls(tmp_path: Path) -> None:
    folder = _copy(ROWS_CASE, tmp_path)
    model = folder / "model.py"
    model.write_text(model.read_text().replace("def encode(h, xs, w):", "def encode(h, xs: tuple, w):"))
    assert project_findings(folder, LoopToScan) == []


def test_jf301_maps_over_an_argument_every_call_passes_an_array(tmp_path: Path) -> None:
    """`x * 2` does not fail on a tuple (it repeats it): nothing in model.py shows that `xs` is an array."""
    (tmp_path / "model.py").write_text("import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\ndef doubled(xs):\n    return jnp.stack([x * 2 for x in xs])\n")
    (tmp_path / "train.py").write_text("import jax.numpy as jnp\nfrom model import doubled\n\n\ndef run():\n    return doubled(jnp.ones((4, 3)))\n")
    (found,) = project_findings(tmp_path, BatchLoopToVmap)
    assert found[1].fix.safety is Safety.UNSAFE
    assert "every call of `doubled` in the project passes an array for `xs` (1 call site)" in found[1].message
    (tmp_path / "train.py").write_text((tmp_path / "train.py").read_text() + "\n\ndef pair(a, b):\n    return doubled((a, b))\n")
    assert project_findings(tmp_path, BatchLoopToVmap) == []


def test_editing_a_caller_re_checks_the_callee(tmp_path: Path) -> None:
    """The evidence is part of model.py's facts, and so of its findings' cache key: a call that now passes a
    tuple in train.py takes the finding in model.py away, though model.py did not change."""
    folder = _copy(ROWS_CASE, tmp_path)
    (folder / "pyproject.toml").write_text("")
    first = invoke_in(folder, "check", "--select", "JF102", ".")
    assert first.exit_code == 1 and "model.py:7:14: JF102 [*unsafe]" in first.output, first.output
    train = folder / "train.py"
    train.write_text(train.read_text().replace("jnp.ones((8, 4))", "(jnp.ones(4), jnp.ones(4))"))
    again = invoke_in(folder, "check", "--select", "JF102", ".")
    assert again.exit_code == 0 and "0 findings" in again.output, again.output


def test_the_docs_show_the_message_check_prints(tmp_path: Path) -> None:
    ((_, diagnostic),) = project_findings(_copy(ROWS_CASE, tmp_path), LoopToScan)
    evidence = diagnostic.message[diagnostic.message.index("evidence: ") :].split("; keep the Python loop")[0]
    docs = " ".join((Path(corpus.ROOT).parent / "docs" / "how-it-works.md").read_text().split())
    assert f'"{evidence}"' in docs


def test_apply_verify_checks_the_fix_on_the_calls_that_are_its_evidence(tmp_path: Path) -> None:
    """train.py's calls are evidence for the rewrite and, where their arguments are literals (`jnp.ones((8, 4))`),
    inputs for `--verify` too: with only `run(seed)`, whose key comes from a parameter, there is nothing to check
    it with and the fix is reverted; with `warm_up()` beside it, it verifies."""
    folder = _copy(ROWS_CASE, tmp_path)
    (folder / "pyproject.toml").write_text("")
    before, caller = (folder / "model.py").read_text(), (folder / "train.py").read_text()
    (folder / "train.py").write_text(caller[: caller.index("def warm_up")].rstrip() + "\n")
    reverted = invoke_in(folder, "apply", "--verify", "--select", "JF102", "--max-examples", "5", ".")
    assert reverted.exit_code == 0 and "reverted function model.py::encode" in reverted.output, reverted.output
    assert (folder / "model.py").read_text() == before
    (folder / "train.py").write_text(caller)
    kept = invoke_in(folder, "apply", "--verify", "--select", "JF102", "--max-examples", "5", ".")
    assert kept.exit_code == 0 and "fixed model.py (1 fix; verified: encode)" in kept.output, kept.output
    assert (folder / "model.py").read_text() == (ROWS_CASE / "after" / "model.py").read_text()
