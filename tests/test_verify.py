"""`jaxfix verify` end to end: every correct corpus pair verifies, every planted wrong rewrite is caught with a
shrunk counterexample, and the results do not depend on anything but the seed.

Each group of targets shares one worker process (JAX is imported once); examples per function are kept small
so that the whole corpus verifies in well under a minute.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from jaxfix import corpus
from jaxfix.verify import collect, runner
from jaxfix.verify.settings import VerifySettings, load
from jaxfix.verify.targets import DIFFERS, VERIFIED, Options

PLANTED = Path(__file__).resolve().parent / "planted"
CORPUS_EXAMPLES = 5
CASES = [c for c in corpus.cases() if c.runnable and not c.negative and c.compared]


def _corpus_target(case: corpus.Case):
    return collect.target(
        case.before, case.spec["entry"], case.before.read_text(encoding="utf-8"), case.after.read_text(encoding="utf-8"),
        VerifySettings(), after_path=case.after,
    )


@pytest.fixture(scope="module")
def corpus_reports():
    """All corpus pairs, verified by one worker."""
    targets = [_corpus_target(case) for case in CASES]
    return {report.target: report for report in runner.run(targets, Options(max_examples=CORPUS_EXAMPLES))}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_corpus_pair_verifies(case: corpus.Case, corpus_reports) -> None:
    report = corpus_reports[f"{case.before}::{case.spec['entry']}"]
    assert report.status == VERIFIED, (report.reason, [(d.reason, d.counterexample) for d in report.devices])
    assert report.origin == "case.toml"
    for device in report.devices:
        assert device.examples >= 1
        if "original_raises" not in case.spec:
            # the case's own arguments plus generated ones (a function of Python ints only has few distinct inputs)
            assert device.examples > 1 or all(isinstance(v, (int, bool)) for v in corpus.arguments(case)[0])


# ---- planted wrong rewrites -------------------------------------------------------------------------------

# name: (function, lines the shrunk counterexample must contain)
PLANTED_BUGS = {
    "off_by_one": ("geometric", ["x: float32[1] [0]", "original output: float32[1] [5]", "rewrite output: float32[1] [6]"]),
    "swapped_branches": ("soft_clip", ["limit: 0.0"]),
    "wrong_in_axes": ("project", ["weights: float32[2] [0, 0]"]),
    "changed_constant": ("steps", ["x: float32[] 0", "n: 1", "original output: float32[] 0.01", "rewrite output: float32[] 0.001"]),
}


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """The planted pairs in a project whose pyproject.toml gives `project` its input specs (it has neither
    annotations nor call sites)."""
    folder = tmp_path_factory.mktemp("planted")
    for file in PLANTED.glob("*.py"):
        shutil.copy(file, folder / file.name)
    (folder / "pyproject.toml").write_text('[tool.jaxfix.verify.functions.project]\nrows = "float32[n, d]"\nweights = "float32[d]"\n')
    return folder


GRADIENT_ONLY = {"grad_while_loop": "triple_sine", "grad_where": "soft_sqrt"}  # same values, other gradients


def _planted_reports(folder: Path, options: Options, pairs: dict[str, str] | None = None):
    settings = load(folder)
    targets = []
    pairs = pairs or {**{name: function for name, (function, _) in PLANTED_BUGS.items()}, **GRADIENT_ONLY}
    for name, function in pairs.items():
        targets += collect.pair_targets(folder / f"{name}_before.py", folder / f"{name}_after.py", [function], settings)
    return {report.name: report for report in runner.run(targets, options)}


@pytest.fixture(scope="module")
def planted_reports(planted):
    return _planted_reports(planted, Options(max_examples=20))


@pytest.mark.parametrize("bug", list(PLANTED_BUGS))
def test_planted_wrong_rewrite_is_caught_and_shrunk(bug: str, planted_reports) -> None:
    function, wanted_lines = PLANTED_BUGS[bug]
    report = planted_reports[function]
    assert report.status == DIFFERS, report
    (device,) = report.devices
    assert device.device == "cpu"
    for line in wanted_lines:
        assert line in device.counterexample, device.counterexample


def test_planted_sources_are_the_intended_ones(planted_reports) -> None:
    origins = {name: report.origin for name, report in planted_reports.items()}
    assert origins["geometric"] == "annotations"  # jaxtyping Float[Array, "n"], float
    assert origins["soft_clip"].startswith("call sites ")  # soft_clip(jnp.ones((4, 3)), 2.0) under __main__
    assert origins["project"] == "pyproject.toml"
    assert origins["steps"] == "annotations"  # jax.Array without a shape, int


def test_same_seed_same_counterexample(planted, planted_reports) -> None:
    pairs = {"changed_constant": "steps"}
    again = _planted_reports(planted, Options(max_examples=20), pairs)
    for name in pairs.values():
        assert again[name].devices[0].counterexample == planted_reports[name].devices[0].counterexample


def test_gradients_are_compared_by_default(planted, planted_reports) -> None:
    without_grad = _planted_reports(planted, Options(max_examples=20, grad=False), GRADIENT_ONLY)
    for function in GRADIENT_ONLY.values():
        assert without_grad[function].status == VERIFIED, "the values agree"
    while_loop = planted_reports["triple_sine"].devices[0]
    assert while_loop.status == DIFFERS
    assert "gradient: the original is differentiable; the rewrite raises ValueError: Reverse-mode differentiation does not work" in while_loop.reason
    where = planted_reports["soft_sqrt"].devices[0]
    assert where.status == DIFFERS and where.reason == "gradient: leaf 0: NaN in one and not the other (0 != nan)"
    assert "x: float32[] 0" in where.counterexample and "rewrite gradient[0]: float32[] nan" in where.counterexample
