"""Real test suites before and after `jaxfix apply --unsafe-fixes`: for each project named in
benchmarks/real_suites/projects.toml, run its tests on a pristine copy of its sources and on a copy that jaxfix
rewrote, and list every test that turned red with the fix that did it.

    python benchmarks/real_suites.py [--only NAME ...] [--sources DIR ...] [--work DIR] [--output TABLE.md]
                                     [--write-docs] [--fresh] [--no-bisect] [--prepare] [--report]

For each project: a venv with its test dependencies (jax and jaxlib pinned to the version jaxfix runs with),
kept under --work and reused while its spec is unchanged; the sources, from --sources (NAME-VERSION/ unpacked,
or its archive there or in DIR/dl/) or fetched with `pip download --no-deps --no-binary :all: NAME==VERSION`; a
pristine copy, and a fixed copy on which `jaxfix check --unsafe-fixes --output-format json .` records the fixes
and `jaxfix apply --unsafe-fixes .` makes them, both run from the copy's root as a user runs them. The tests run
on both copies one at a time (pytest, `-p no:cacheprovider`, no `-x`, a per-test timeout), from the copy's root,
so the copy is what `import NAME` finds. The before run is cached, keyed on the project's spec and the pristine
sources, so a rerun after a change to jaxfix runs only the after side (--fresh runs both again).

A test turned red when it passed before and fails, errors or is gone after (its module no longer imports). Each
red test is put down to a fix: the rewritten files its traceback passes through, with their fixes; where that
names no file or several, a bisection copies the rewritten version of one file at a time into a fresh pristine
copy and reruns only the red tests, and names the files (and their rules) that turn them red alone.

Prints a Markdown table and exits with 1 when any test turned red, so it can gate a release; --output also
writes the table to a file, with the fixes, the red tests' failures and the green tests beside it
(NAME.details.md), and --write-docs puts it into docs/benchmarks.md between the real-suites markers. Logs (pip,
jaxfix, pytest) go to --work/logs/ and each project's results to --work/results/; --report builds the table
from those without running anything, and --prepare only fetches the sources and builds the venvs.
"""

from __future__ import annotations

import argparse
import dataclasses
import fcntl
import hashlib
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import tomllib
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent / "real_suites"
DATA = HERE / "projects.toml"
PLUGIN = HERE / "outcomes_plugin.py"
SMOKE = HERE / "smoke_test.py"
SMOKE_NAME = "real_suites_smoke_test.py"  # the smoke tests' name inside a copy
DOCS = REPO / "docs" / "benchmarks.md"
MARKERS = ("<!-- real-suites:start -->", "<!-- real-suites:end -->")
DEFAULT_WORK = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "jaxfix-real-suites"
SKIPPED_DIRS = {"__pycache__", ".jaxfix_cache", ".pytest_cache", ".git"}
RED = ("failed", "error", "missing")
# How every suite runs: no cache written into the copy, failures listed, and the other modules still run when one
# fails to import (pytest stops before any test otherwise).
PYTEST_OPTIONS = ("-p", "no:cacheprovider", "-q", "-rN", "--continue-on-collection-errors")
RUN_TIMEOUT = 3600  # seconds a whole pytest run may take


@dataclasses.dataclass(frozen=True)
class Project:
    name: str
    version: str
    install: tuple[str, ...]
    tests: tuple[str, ...]
    timeout: int
    subset: str = ""
    archive: str = ""
    deselect: tuple[str, ...] = ()
    keyword: str = ""  # a pytest -k expression, for a subset of parametrized unittest methods (no node id names them)
    smoke: tuple[tuple[str, object], ...] = ()

    @property
    def folder(self) -> str:
        return f"{self.archive or self.name}-{self.version}"

    def spec(self) -> dict:
        return {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}


@dataclasses.dataclass(frozen=True)
class Outcome:
    outcome: str  # passed, failed, error, skipped, xfailed; "missing" only in comparisons
    duration: float = 0.0
    text: str = ""


@dataclasses.dataclass(frozen=True)
class Fix:
    code: str
    line: int
    cell: int | None
    unsafe: bool
    message: str

    def label(self) -> str:
        where = f"cell {self.cell}:{self.line}" if self.cell is not None else f"line {self.line}"
        return f"{self.code} {where}{' (unsafe)' if self.unsafe else ''}"


def load_projects(path: Path = DATA) -> dict[str, Project]:
    data = tomllib.loads(path.read_text())
    projects = {}
    for name, entry in data["project"].items():
        projects[name] = Project(
            name=name, version=entry["version"], install=tuple(entry.get("install", ())),
            tests=tuple(entry.get("tests", ())), timeout=int(entry["timeout"]), subset=entry.get("subset", ""),
            archive=entry.get("archive", ""), deselect=tuple(entry.get("deselect", ())),
            keyword=entry.get("keyword", ""), smoke=tuple(sorted(entry.get("smoke", {}).items())))
    return projects


def digest(value: object) -> str:
    """A short, stable key for a JSON-able value."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=list).encode()).hexdigest()[:16]


def tree_digest(root: Path) -> str:
    """The key of a source tree: every file's relative path and bytes."""
    sha = hashlib.sha256()
    for path in sorted(_files(root)):
        sha.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return sha.hexdigest()[:16]


def _files(root: Path):
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        for name in names:
            path = Path(folder, name)
            if path.is_file() and not path.is_symlink():
                yield path


def venv_requirements(project: Project, jax_version: str) -> list[str]:
    return ["pytest", "pytest-timeout", f"jax=={jax_version}", f"jaxlib=={jax_version}", *project.install]


def venv_key(project: Project, jax_version: str) -> str:
    return digest({"requirements": venv_requirements(project, jax_version), "python": sys.version})


def before_key(project: Project, pristine_digest: str) -> str:
    return digest({"project": project.spec(), "sources": pristine_digest, "plugin": PLUGIN.read_text(),
                   "pytest": PYTEST_OPTIONS,
                   "smoke": SMOKE.read_text() if project.smoke else ""})


# ---- outcomes ----------------------------------------------------------------------------------------------

def fold_outcomes(lines: list[str]) -> dict[str, Outcome]:
    """One outcome per test from the plugin's records of its phases; a collection error is an error of the
    collected node (a module that fails to import)."""
    phases: dict[str, list[dict]] = {}
    for line in lines:
        if line.strip():
            record = json.loads(line)
            phases.setdefault(record["nodeid"], []).append(record)
    outcomes = {}
    for nodeid, records in phases.items():
        duration = sum(r["duration"] for r in records)
        text = "\n".join(r["text"] for r in records if r["text"])
        failed = {r["when"] for r in records if r["outcome"] == "failed"}
        if failed & {"collect", "setup", "teardown"}:
            outcome = "error"
        elif "call" in failed:
            outcome = "failed"
        elif any(r["outcome"] == "skipped" for r in records):
            outcome = "xfailed" if any(r["xfail"] for r in records) else "skipped"
        else:
            outcome = "passed"
        outcomes[nodeid] = Outcome(outcome, duration, text)
    return outcomes


def counts(outcomes: dict[str, Outcome]) -> dict[str, int]:
    tally = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
    for outcome in outcomes.values():
        key = outcome.outcome if outcome.outcome in tally else "skipped"
        tally[key] += 1
    return tally


def compare(before: dict[str, Outcome], after: dict[str, Outcome]) -> tuple[dict[str, Outcome], list[str]]:
    """The tests that turned red (passed before; failed, errored or gone after: a gone test takes the error of
    the collected node that contains it) and the tests that turned green (pass after, not before)."""
    red = {}
    for nodeid, outcome in before.items():
        if outcome.outcome != "passed":
            continue
        now = after.get(nodeid)
        if now is None:
            container = next((after[n] for n in sorted(after, key=len, reverse=True)
                              if after[n].outcome == "error" and _contains(n, nodeid)), None)
            red[nodeid] = Outcome("missing", 0.0, container.text if container else "")
        elif now.outcome in RED:
            red[nodeid] = now
    green = sorted(n for n, o in after.items()
                   if o.outcome == "passed" and before.get(n, Outcome("")).outcome != "passed")
    return red, green


def _contains(node: str, nodeid: str) -> bool:
    return nodeid.startswith(node + "::") or (node.endswith("/") and nodeid.startswith(node)) or \
        (node != "" and nodeid.startswith(node.rstrip("/") + "/"))


# ---- attribution -------------------------------------------------------------------------------------------

_PYTEST_LOCATION = re.compile(r"^([^\s:\"']+\.py):(\d+):", re.M)
_PYTHON_LOCATION = re.compile(r'File "([^"]+\.py)", line (\d+)')


def traceback_files(text: str, root: Path) -> list[tuple[str, int]]:
    """The (file relative to root, line) pairs a failure's text passes through, in order, once each: pytest's
    `path:line:` entries and Python's `File "path", line N` ones; files outside root are left out."""
    seen, found = set(), []
    for match in sorted([*_PYTEST_LOCATION.finditer(text), *_PYTHON_LOCATION.finditer(text)], key=lambda m: m.start()):
        path = Path(match.group(1))
        if path.is_absolute():
            try:
                path = path.resolve().relative_to(root.resolve())
            except ValueError:
                continue
        key = (path.as_posix(), int(match.group(2)))
        if key not in seen:
            seen.add(key)
            found.append(key)
    return found


def suspects(outcome: Outcome, nodeid: str, root: Path, fixes: dict[str, list[Fix]]) -> list[str]:
    """The rewritten files a red test's failure passes through (its own test file first when rewritten)."""
    files = [path for path, _ in traceback_files(outcome.text, root)]
    test_file = nodeid.split("::", 1)[0]
    ordered = [test_file] + files
    return list(dict.fromkeys(path for path in ordered if path in fixes))


def fixes_near(file_fixes: list[Fix], lines: list[int], slack: int = 3) -> list[Fix]:
    """The fixes of a file whose lines lie within `slack` of a traceback line through it, else all of them."""
    near = [fix for fix in file_fixes if fix.cell is None and any(abs(fix.line - line) <= slack for line in lines)]
    return near or file_fixes


# ---- the work ----------------------------------------------------------------------------------------------

class Log:
    def __init__(self, folder: Path, project: str):
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / f"{project}.log"
        self.path.write_text("")

    def run(self, arguments: list, cwd: Path | None = None, env: dict | None = None, timeout: int | None = None,
            check: bool = True) -> subprocess.CompletedProcess:
        with self.path.open("a") as out:
            out.write(f"\n$ (cd {cwd or os.getcwd()}) {' '.join(map(str, arguments))}\n")
            out.flush()
            try:
                done = subprocess.run(list(map(str, arguments)), cwd=cwd, env=env, capture_output=True, text=True,
                                      timeout=timeout)
            except subprocess.TimeoutExpired:
                out.write(f"\n[timed out after {timeout} s]\n")
                return subprocess.CompletedProcess(arguments, 124, "", "")
            out.write(done.stdout + done.stderr)
        if check and done.returncode != 0:
            command = " ".join(map(str, arguments[:4]))
            raise RuntimeError(f"{command} ... exited with {done.returncode}; see {self.path}")
        return done

    def note(self, text: str) -> None:
        with self.path.open("a") as out:
            out.write(text + "\n")
        print(text, file=sys.stderr, flush=True)


def ensure_venv(project: Project, work: Path, jax_version: str, log: Log) -> Path:
    folder = work / "venvs" / f"{project.name}-{venv_key(project, jax_version)}"
    python = folder / "bin" / "python"
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another run (--prepare) may be building this venv
        if not (folder / "ready").exists():
            _build_venv(project, folder, jax_version, log)
    return python


def _build_venv(project: Project, folder: Path, jax_version: str, log: Log) -> None:
    python = folder / "bin" / "python"
    shutil.rmtree(folder, ignore_errors=True)
    log.note(f"{project.name}: creating its venv in {folder}")
    log.run([sys.executable, "-m", "venv", folder])
    log.run([python, "-m", "pip", "install", "-q", *venv_requirements(project, jax_version)], timeout=3600)
    log.run([python, "-m", "pip", "freeze"])
    (folder / "ready").write_text(json.dumps(venv_requirements(project, jax_version)))


def ensure_sources(project: Project, sources: list[Path], work: Path, log: Log) -> Path:
    for folder in sources:
        if (folder / project.folder).is_dir():
            return folder / project.folder
    unpacked = work / "sources"
    if (unpacked / project.folder).is_dir():
        return unpacked / project.folder
    archive = next((a for folder in [*sources, *(s / "dl" for s in sources), unpacked / "dl"]
                    for a in sorted(folder.glob(f"{project.folder}.*")) if a.suffix in (".gz", ".zip")), None)
    if archive is None:
        log.note(f"{project.name}: downloading {project.archive or project.name}=={project.version}")
        log.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "-d", unpacked / "dl",
                 f"{project.archive or project.name}=={project.version}"])
        archive = next(a for a in sorted((unpacked / "dl").iterdir())
                       if a.name.lower().replace("_", "-").startswith(project.folder.lower().replace("_", "-")))
    unpacked.mkdir(parents=True, exist_ok=True)
    if archive.suffix == ".zip":
        with zipfile.ZipFile(archive) as handle:
            handle.extractall(unpacked)
    else:
        with tarfile.open(archive) as handle:
            handle.extractall(unpacked, filter="data")
    return unpacked / project.folder


def copy_tree(source: Path, destination: Path) -> None:
    """A writable copy (sdists unpack read-only here and there), without caches."""
    shutil.rmtree(destination, ignore_errors=True)
    shutil.copytree(source, destination, symlinks=True, ignore=shutil.ignore_patterns(*SKIPPED_DIRS))
    for folder, _, names in os.walk(destination):
        os.chmod(folder, 0o755)
        for name in names:
            path = Path(folder, name)
            if not path.is_symlink():
                os.chmod(path, 0o644)


def fix_copy(copy: Path, log: Log) -> tuple[dict[str, list[Fix]], list[str]]:
    """Fixes the copy as a user would (check, then apply, from its root); the fixes by file, from check's JSON,
    and the files apply changed."""
    jaxfix = [sys.executable, "-m", "jaxfix"]
    listed = log.run([*jaxfix, "check", "--no-cache", "--unsafe-fixes", "--output-format", "json", "--exit-zero",
                      "."], cwd=copy)
    findings = json.loads(listed.stdout)
    before = {p.relative_to(copy).as_posix(): p.read_bytes() for p in _files(copy)}
    log.run([*jaxfix, "apply", "--no-cache", "--unsafe-fixes", "."], cwd=copy, check=False)
    changed = sorted(p.relative_to(copy).as_posix() for p in _files(copy)
                     if before.get(p.relative_to(copy).as_posix()) != p.read_bytes())
    return fixes_by_file(findings, copy), changed


def fixes_by_file(findings: list[dict], root: Path) -> dict[str, list[Fix]]:
    fixes: dict[str, list[Fix]] = {}
    for finding in findings:
        if not finding.get("fix") or finding["fix"].get("applicability") not in ("safe", "unsafe"):
            continue
        path = Path(finding["filename"])
        relative = (path.resolve().relative_to(root.resolve()) if path.is_absolute() else path).as_posix()
        fixes.setdefault(relative, []).append(Fix(finding["code"], finding["location"]["row"], finding.get("cell"),
                                                  finding["fix"]["applicability"] == "unsafe", finding["message"]))
    return fixes


def run_tests(project: Project, python: Path, root: Path, log: Log, nodeids: list[str] | None = None,
              label: str = "") -> tuple[dict[str, Outcome], float]:
    outcomes_file = root.parent / f"{root.name}.outcomes.jsonl"
    outcomes_file.unlink(missing_ok=True)
    smoke = dict(project.smoke)
    if smoke:
        shutil.copyfile(SMOKE, root / SMOKE_NAME)
    paths = nodeids if nodeids is not None else [*project.tests, *([SMOKE_NAME] if smoke else [])]
    env = {**{k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")},
           "PYTHONPATH": os.pathsep.join([str(root), str(PLUGIN.parent)]), "REAL_SUITES_OUTCOMES": str(outcomes_file),
           "REAL_SUITES_SMOKE": json.dumps(smoke), "JAX_PLATFORMS": "cpu", "PYTHONDONTWRITEBYTECODE": "1"}
    deselect = [arg for nodeid in project.deselect for arg in ("--deselect", nodeid)]
    if project.keyword and nodeids is None:
        deselect += ["-k", project.keyword]
    start = time.perf_counter()
    log.run([python, "-m", "pytest", "-p", PLUGIN.stem, *PYTEST_OPTIONS, f"--timeout={project.timeout}", *deselect,
             *paths], cwd=root, env=env, timeout=RUN_TIMEOUT, check=False)
    seconds = time.perf_counter() - start
    lines = outcomes_file.read_text().splitlines() if outcomes_file.exists() else []
    outcomes = fold_outcomes(lines)
    log.note(f"{project.name}: {label or 'tests'} {counts(outcomes)} in {seconds:.0f} s")
    return outcomes, seconds


def check_imports_from(python: Path, root: Path, package: str, log: Log) -> None:
    """The copy, not an installed release, must be what the tests import."""
    done = log.run([python, "-c", f"import {package}; print({package}.__file__)"], cwd=root,
                   env={**os.environ, "PYTHONPATH": str(root), "JAX_PLATFORMS": "cpu"}, check=False)
    where = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    if done.returncode == 0 and not Path(where).resolve().is_relative_to(root.resolve()):
        raise RuntimeError(f"{package} imports from {where}, not from the copy {root}")


def bisect(project: Project, python: Path, pristine: Path, fixed: Path, files: list[str], red: list[str],
           scratch: Path, log: Log) -> dict[str, list[str]]:
    """For each file, the red tests that turn red when only that file's rewrite is applied to a pristine copy."""
    culprits = {}
    for path in files:
        copy_tree(pristine, scratch)
        shutil.copyfile(fixed / path, scratch / path)
        outcomes, _ = run_tests(project, python, scratch, log, nodeids=sorted({n for n in red}),
                                label=f"bisection, only {path} rewritten:")
        turned = [n for n in red if outcomes.get(n, Outcome("missing")).outcome in RED]
        if turned:
            culprits[path] = turned
    shutil.rmtree(scratch, ignore_errors=True)
    return culprits


@dataclasses.dataclass
class Result:
    project: Project
    before: dict[str, Outcome]
    after: dict[str, Outcome]
    seconds_before: float
    seconds_after: float
    fixes: dict[str, list[Fix]]
    changed: list[str]
    red: dict[str, Outcome]
    green: list[str]
    blame: dict[str, list[tuple[str, list[Fix]]]]  # red test -> [(file, fixes)]
    how: dict[str, str]  # red test -> "traceback" or "bisection" or "unknown"


def save_result(result: Result, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(dataclasses.asdict(result), default=list))


def load_result(path: Path) -> Result:
    """A Result that save_result wrote: the table can be built again from the latest run of each project."""
    saved = json.loads(path.read_text())
    outcomes = {key: {n: Outcome(**o) for n, o in saved[key].items()} for key in ("before", "after", "red")}
    fixes = {f: [Fix(**fix) for fix in file_fixes] for f, file_fixes in saved["fixes"].items()}
    blame = {n: [(f, [Fix(**fix) for fix in file_fixes]) for f, file_fixes in named]
             for n, named in saved["blame"].items()}
    project = Project(**{k: tuple(map(tuple, v)) if k == "smoke" else tuple(v) if isinstance(v, list) else v
                         for k, v in saved["project"].items()})
    return Result(project, outcomes["before"], outcomes["after"], saved["seconds_before"], saved["seconds_after"],
                  fixes, saved["changed"], outcomes["red"], saved["green"], blame, saved["how"])


def run_project(project: Project, options, jax_version: str) -> Result:
    work = options.work
    log = Log(work / "logs", project.name)
    sources = ensure_sources(project, options.sources, work, log)
    python = ensure_venv(project, work, jax_version, log)
    copies = work / "copies" / project.name
    pristine, fixed = copies / "pristine", copies / "fixed"
    copy_tree(sources, pristine)
    package = dict(project.smoke)["package"].split(".")[0] if project.smoke else project.folder.split("-")[0]
    check_imports_from(python, pristine, package, log)
    cache = work / "before" / f"{project.name}-{before_key(project, tree_digest(pristine))}.json"
    if cache.exists() and not options.fresh:
        saved = json.loads(cache.read_text())
        before = {n: Outcome(**o) for n, o in saved["outcomes"].items()}
        seconds_before = saved["seconds"]
        log.note(f"{project.name}: before {counts(before)} (cached in {cache.name})")
    else:
        before, seconds_before = run_tests(project, python, pristine, log, label="before")
        if not before:
            raise RuntimeError(f"no test ran on the pristine copy (a test path or node id that names nothing?); "
                               f"see {log.path}")
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps({"outcomes": {n: dataclasses.asdict(o) for n, o in before.items()},
                                     "seconds": seconds_before}))
    copy_tree(sources, fixed)
    fixes, changed = fix_copy(fixed, log)
    log.note(f"{project.name}: {sum(map(len, fixes.values()))} fixes in {len(fixes)} files; "
             f"apply changed {len(changed)} files")
    after, seconds_after = run_tests(project, python, fixed, log, label="after")
    red, green = compare(before, after)
    blame, how = {}, {}
    ambiguous = []
    for nodeid, outcome in red.items():
        files = suspects(outcome, nodeid, fixed, fixes)
        if len(files) == 1:
            lines = [line for path, line in traceback_files(outcome.text, fixed) if path == files[0]]
            blame[nodeid] = [(files[0], fixes_near(fixes[files[0]], lines))]
            how[nodeid] = "traceback"
        else:
            ambiguous.append(nodeid)
    if ambiguous and not options.no_bisect:
        candidates = sorted({f for n in ambiguous for f in suspects(red[n], n, fixed, fixes)} or set(changed))
        culprits = bisect(project, python, pristine, fixed, candidates, ambiguous, copies / "bisect", log)
        for nodeid in ambiguous:
            named = [path for path, turned in culprits.items() if nodeid in turned]
            blame[nodeid] = [(path, fixes.get(path, [])) for path in named]
            how[nodeid] = "bisection" if named else "unknown"
    for nodeid in ambiguous:
        blame.setdefault(nodeid, [])
        how.setdefault(nodeid, "unknown")
    result = Result(project, before, after, seconds_before, seconds_after, fixes, changed, red, green, blame, how)
    save_result(result, work / "results" / f"{project.name}.json")
    return result


# ---- the report --------------------------------------------------------------------------------------------

def _tally(outcomes: dict[str, Outcome]) -> str:
    c = counts(outcomes)
    return f"{c['passed']} / {c['failed']} / {c['error']}"


def fix_summary(fixes: dict[str, list[Fix]]) -> str:
    by_rule: dict[str, int] = {}
    for file_fixes in fixes.values():
        for fix in file_fixes:
            by_rule[fix.code] = by_rule.get(fix.code, 0) + 1
    total = sum(by_rule.values())
    rules = ", ".join(f"{code} {count}" for code, count in sorted(by_rule.items()))
    files = f"{len(fixes)} file{'s' if len(fixes) != 1 else ''}"
    return f"{total} in {files} ({rules})" if total else "none"


def markdown(results: list[Result], jax_version: str) -> str:
    lines = [f"jax {jax_version}; passed / failed / errors (a module that fails to import counts one error)", "",
             "| project | tests run | before | after | turned red | turned green | time before → after "
             "| fixes applied |",
             "|---|---|---|---|---|---|---|---|"]
    for r in results:
        p = r.project
        lines.append(f"| {p.name} {p.version} | {'subset' if p.subset else 'all'} | {_tally(r.before)} | "
                     f"{_tally(r.after)} | {len(r.red)} | {len(r.green)} | {r.seconds_before:.0f} s → "
                     f"{r.seconds_after:.0f} s | {fix_summary(r.fixes)} |")
    reds = [(r, n) for r in results for n in sorted(r.red)]
    lines += ["", f"Tests that turned red: {len(reds)}."]
    for r, nodeid in reds:
        named = "; ".join(f"`{path}` ({', '.join(f.label() for f in fixes) or 'no recorded fix'})"
                          for path, fixes in r.blame[nodeid]) or "no rewritten file found"
        lines.append(f"- {r.project.name} `{nodeid}`: {r.red[nodeid].outcome} after; {named} [{r.how[nodeid]}]")
    subsets = [r.project for r in results if r.project.subset]
    if subsets:
        lines += ["", "Subsets:"] + [f"- {p.name}: {p.subset}." for p in subsets]
    return "\n".join(lines) + "\n"


def details(results: list[Result]) -> str:
    """Per project: the fixes by file, the files apply changed, the red tests' failures and the green tests."""
    out = []
    for r in results:
        out.append(f"## {r.project.name} {r.project.version}\n")
        out.append("Fixes:\n" + "".join(f"- {path}: {', '.join(f.label() for f in fixes)}\n"
                                        for path, fixes in sorted(r.fixes.items())))
        out.append("Files apply changed: " + (", ".join(r.changed) or "none") + "\n")
        for nodeid in sorted(r.red):
            out.append(f"\n### red: {nodeid} ({r.red[nodeid].outcome})\n\n```\n{r.red[nodeid].text[-4000:]}\n```\n")
        out.append(f"\nTurned green ({len(r.green)}):\n" + "".join(f"- {n}\n" for n in r.green) + "\n")
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", metavar="NAME", help="these projects only (default: all in the data)")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--sources", type=Path, nargs="+",
                        default=[Path(os.environ.get("JAXFIX_REALSRC", "/work/realsrc"))],
                        help="folders holding NAME-VERSION/ or its archive (default: $JAXFIX_REALSRC or /work/realsrc)")
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK,
                        help=f"venvs, copies, caches, logs (default: {DEFAULT_WORK})")
    parser.add_argument("--fresh", action="store_true", help="run the before side again, ignoring its cache")
    parser.add_argument("--no-bisect", action="store_true", help="name red tests' suspects from tracebacks only")
    parser.add_argument("--prepare", action="store_true", help="only fetch the sources and build the venvs")
    parser.add_argument("--report", action="store_true",
                        help="run nothing: the table of the latest results saved under --work")
    parser.add_argument("--write-docs", action="store_true", help=f"put the table into {DOCS.name} between its markers")
    parser.add_argument("--output", type=Path, help="also write the table here (and the details beside it)")
    options = parser.parse_args()
    options.work = options.work.resolve()
    projects = load_projects(options.data)
    names = options.only or list(projects)
    unknown = [n for n in names if n not in projects]
    if unknown:
        parser.error(f"not in {options.data}: {', '.join(unknown)}")
    jax_version = importlib.metadata.version("jax")
    results, broken = [], []
    for name in names:
        try:
            if options.prepare:
                log = Log(options.work / "logs", f"{name}-prepare")
                ensure_sources(projects[name], options.sources, options.work, log)
                ensure_venv(projects[name], options.work, jax_version, log)
                continue
            if options.report:
                results.append(load_result(options.work / "results" / f"{name}.json"))
                continue
            results.append(run_project(projects[name], options, jax_version))
        except (RuntimeError, OSError, subprocess.SubprocessError, ValueError, StopIteration) as error:
            broken.append(f"{name}: {error}")
            print(f"{name}: could not run: {error}", file=sys.stderr)
    if options.prepare:
        print("\n".join(broken) or f"ready: {', '.join(names)}")
        return 1 if broken else 0
    table = markdown(results, jax_version) + "".join(f"\nNot run: {line}\n" for line in broken)
    print(table)
    if options.output:
        options.output.write_text(table)
        options.output.with_suffix(".details.md").write_text(details(results))
    if options.write_docs:
        from jaxfix.ruledocs import between_markers

        page = DOCS.read_text(encoding="utf-8")
        DOCS.write_text(between_markers(page, *MARKERS, table, DOCS), encoding="utf-8")
    return 1 if broken or any(r.red for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
