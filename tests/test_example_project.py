"""examples/, the project the README's first command runs on: the program runs and learns, `jaxfix check` finds
exactly what examples/README.md lists, and after `jaxfix apply --unsafe-fixes` the program still runs and prints
the same numbers, except those the key-reuse fix changes on purpose."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("optax")  # the example trains with optax: `pip install -e ".[test]"` installs it

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
EPOCHS = 5

# What `jaxfix check examples/` reports, as (file, code): examples/README.md shows it, so a change in the analysis
# that changes it must change this on purpose (and the README's table, which test_the_readme_lists_them compares).
EXPECTED = Counter({
    ("mlp/data.py", "JF701"): 1,
    ("mlp/data.py", "JF804"): 2,
    ("mlp/evaluate.py", "JF901"): 1,
    ("mlp/evaluate.py", "JF101"): 1,
    ("mlp/evaluate.py", "JF502"): 1,
    ("mlp/evaluate.py", "JF702"): 1,
    ("mlp/train.py", "JF501"): 1,
    ("mlp/train.py", "JF601"): 1,
    ("mlp/train.py", "JF503"): 1,
    ("mlp/train.py", "JF703"): 1,
    ("notebooks/damped_spring.ipynb", "JF101"): 1,
    ("notebooks/damped_spring.ipynb", "JF601"): 1,
    ("notebooks/damped_spring.ipynb", "JF901"): 1,
})

# Whether each folder's test inputs are its first training inputs (in the original one key draws both; JF701's fix
# splits it), in one process: the second folder's draws reuse the first's compilations.
LEAK = """
import sys
import jax, jax.numpy as jnp
for folder in sys.argv[1:]:
    for name in [m for m in sys.modules if m == "mlp" or m.startswith("mlp.")]:
        del sys.modules[name]
    sys.path.insert(0, folder)
    from mlp.data import make_dataset
    sys.path.pop(0)
    (x_train, _), (x_test, _) = make_dataset(jax.random.key(1), 1024, 256)
    print(bool(jnp.array_equal(x_test, x_train[:256])))
"""


def _jaxfix(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "jaxfix", *args, "--no-cache"], cwd=cwd, capture_output=True,
                          text=True, timeout=300)
    output = done.stdout + done.stderr
    assert done.returncode in (0, 1) and "Traceback" not in output and "internal error" not in output, output
    return done


def _start(folder: Path, *command: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.Popen([sys.executable, *command], cwd=folder, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _finish(process: subprocess.Popen) -> str:
    stdout, stderr = process.communicate(timeout=300)
    assert process.returncode == 0, stdout + stderr
    return stdout


def _numbers(stdout: str) -> dict:
    """The program's output as numbers: `epoch` (its losses), `validation` (the lines as printed), and one entry
    per `name: value` line."""
    found: dict = {"epoch": [], "validation": []}
    for line in stdout.splitlines():
        if match := re.fullmatch(r"epoch \d+: loss ([\d.]+)", line):
            found["epoch"].append(float(match[1]))
        elif line.startswith("validation loss: "):
            found["validation"].append(line.removeprefix("validation loss: "))
        elif match := re.fullmatch(r"([a-z -]+): ([\d.]+)( .*)?", line):
            found[match[1]] = float(match[2])
    return found


def _sources(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted((folder / "mlp").glob("*.py"))}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict:
    """The program's output, original and after `apply --unsafe-fixes` (all fixes, and all but JF701's), run side
    by side; and whether each version's test set leaks its training set."""
    base = tmp_path_factory.mktemp("example")
    folders = {name: base / name for name in ("original", "fixed", "same_keys")}
    for folder in folders.values():
        shutil.copytree(EXAMPLES, folder, ignore=shutil.ignore_patterns(".jaxfix", ".jaxfix_cache", "__pycache__"))
    _jaxfix("apply", "--unsafe-fixes", str(folders["fixed"]))
    _jaxfix("apply", "--unsafe-fixes", "--ignore", "JF701", str(folders["same_keys"]))
    programs = {name: _start(folder, "-m", "mlp") for name, folder in folders.items()}
    leaks = _start(base, "-c", LEAK, str(folders["original"]), str(folders["fixed"]))
    return {
        "folders": folders,
        "output": {name: _finish(p) for name, p in programs.items()},
        "leaks": dict(zip(("original", "fixed"), (line == "True" for line in _finish(leaks).split()))),
    }


def test_the_program_runs_and_learns(runs) -> None:
    numbers = _numbers(runs["output"]["original"])
    losses = numbers["epoch"]
    assert len(losses) == EPOCHS and losses[-1] < 0.7 * losses[0], losses
    assert all(later < earlier for earlier, later in zip(losses, losses[1:])), losses
    assert 0.6 < numbers["train accuracy"] <= 1 and 0.6 < numbers["test accuracy"] <= 1, numbers
    assert 0 <= numbers["calibration error"] < 0.5 and numbers["inference"] > 0, numbers
    # The print in the jitted validation loss runs once, at trace time, and shows a tracer (JF601's finding).
    assert len(numbers["validation"]) == 1 and "Tracer" in numbers["validation"][0], numbers["validation"]


def test_check_finds_what_the_readme_lists() -> None:
    done = _jaxfix("check", "--output-format", "json", str(EXAMPLES))
    found = Counter(
        (Path(d["filename"]).resolve().relative_to(EXAMPLES).as_posix(), d["code"]) for d in json.loads(done.stdout)
    )
    assert found == EXPECTED, f"unexpected: {found - EXPECTED}, missing: {EXPECTED - found}"


def test_the_readme_lists_them() -> None:
    readme = (EXAMPLES / "README.md").read_text(encoding="utf-8")
    rows = Counter(re.findall(r"^\| (mlp/\w+\.py|notebooks/\w+\.ipynb) \| (JF\d{3}) \|", readme, flags=re.MULTILINE))
    assert rows == EXPECTED


def test_the_fixes_keep_the_numbers(runs) -> None:
    original, fixed = _numbers(runs["output"]["original"]), _numbers(runs["output"]["same_keys"])
    # Every fix but JF701's computes the same values; fori_loop and jit may round the last bits differently. The
    # printed values have 4 decimals; an accuracy may move by one example of 256 at most.
    assert fixed["epoch"] == pytest.approx(original["epoch"], abs=2e-3)
    for name in ("train accuracy", "test accuracy"):
        assert fixed[name] == pytest.approx(original[name], abs=1 / 256 + 1e-4), name
    assert fixed["calibration error"] == pytest.approx(original["calibration error"], abs=2e-3)
    assert fixed["parameters"] == original["parameters"]
    # jax.debug.print shows the value after each epoch.
    assert len(fixed["validation"]) == EPOCHS and all(math.isfinite(float(v)) for v in fixed["validation"])


def test_the_key_fix_draws_a_test_set_of_its_own(runs) -> None:
    assert runs["leaks"] == {"original": True, "fixed": False}
    numbers = _numbers(runs["output"]["fixed"])
    losses = numbers["epoch"]
    assert len(losses) == EPOCHS and losses[-1] < 0.7 * losses[0], losses
    assert 0.6 < numbers["test accuracy"] <= 1 and len(numbers["validation"]) == EPOCHS, numbers
    # New draws: the training data, hence every loss, differ from the original's.
    assert losses != _numbers(runs["output"]["original"])["epoch"]


def test_apply_changes_the_files_it_says(runs) -> None:
    folders = runs["folders"]
    original = _sources(folders["original"])
    for name, changed in (("fixed", {"data.py", "evaluate.py", "train.py"}), ("same_keys", {"evaluate.py", "train.py"})):
        after = _sources(folders[name])
        assert {f for f in original if original[f] != after[f]} == changed, name
        # JF504's fix, which JF901's turns up: `eval_step` calls two jitted functions, `forward` no longer a pjit.
        assert "@jax.jit\ndef eval_step(" in after["evaluate.py"], name


def test_a_second_apply_changes_nothing(runs) -> None:
    folder = runs["folders"]["fixed"]
    before = _sources(folder)
    done = _jaxfix("apply", "--unsafe-fixes", str(folder))
    assert _sources(folder) == before, done.stdout
    assert not re.search(r"^fixed ", done.stdout, flags=re.MULTILINE), done.stdout
