"""The real code yardstick: how many hand-judged anti-patterns in real JAX projects jaxfix finds, and where it
reports code that is fine.

    python benchmarks/yardstick.py [ROOT] [--only NAME ...] [--write-docs] [--show-missed] [--check-data]

ROOT (default $JAXFIX_REALSRC, else /work/realsrc) holds the unpacked source distributions of the projects listed
in benchmarks/yardstick/real_code.toml, one folder each (`<name>-<version>/`, as the sdists unpack):

    pip download --no-deps --no-binary :all: -d ROOT flax==0.12.8 optax==0.2.8 equinox==0.13.8 numpyro==0.22.0 \\
        jraph==0.0.6.dev0 gymnax==1.0.1 brax==0.14.2 jumanji==1.1.2 dm-haiku==0.0.17 diffrax==0.7.2
    cd ROOT && for f in *.tar.gz; do tar xzf "$f"; done

For each project it runs `jaxfix check . --output-format json` from the project's folder, as a user would, and
matches the findings to the cases: a finding matches a case when it is in the same file, has the same code, and
the case's line lies within the finding's lines or 2 lines either side. A "fire" case matched is found (recall);
a "quiet" case matched is a false alarm. Findings that match no case are counted too: the yardstick does not
say whether they are right. A case whose line no longer shows its snippet is looked up within 50 lines (another
version of the project); one that cannot be found is left out and reported. A missing project is skipped with a
note. --write-docs puts the tables into docs/benchmarks.md between the yardstick markers.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import os
import subprocess
import sys
import time
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "benchmarks" / "yardstick" / "real_code.toml"
DOCS = REPO / "docs" / "benchmarks.md"
DEFAULT_ROOT = Path(os.environ.get("JAXFIX_REALSRC", "/work/realsrc"))
MARKERS = ("<!-- yardstick:start -->", "<!-- yardstick:end -->")
FIELDS = ("project", "path", "line", "snippet", "code", "expect", "needs", "why")
EXPECTS = ("fire", "quiet")
SLACK = 2  # lines either side of a finding that still match a case
SEARCH = 50  # lines either side of a case's line searched for its snippet


@dataclasses.dataclass(frozen=True)
class Case:
    project: str
    path: str
    line: int
    snippet: str
    code: str
    expect: str
    needs: str
    why: str

    @property
    def tags(self) -> list[str]:
        return [tag.strip() for tag in self.needs.split(",") if tag.strip()]


@dataclasses.dataclass(frozen=True)
class Finding:
    path: str  # relative to the project's root, with forward slashes
    code: str
    line: int
    end_line: int


def load(path: Path = DATA) -> tuple[dict[str, str], list[Case]]:
    """The projects (name -> version) and cases of a yardstick file; ValueError on a malformed one."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    projects = data.get("projects", {})
    cases = []
    for index, raw in enumerate(data.get("case", []), 1):
        missing = [name for name in FIELDS if name not in raw]
        if missing:
            raise ValueError(f"{path}: case {index} lacks {', '.join(missing)}")
        case = Case(**{name: raw[name] for name in FIELDS})
        if case.expect not in EXPECTS:
            raise ValueError(f"{path}: case {index} expects {case.expect!r}, not one of {EXPECTS}")
        if case.project not in projects:
            raise ValueError(f"{path}: case {index} names project {case.project!r}, not in [projects]")
        if not isinstance(case.line, int) or case.line < 1 or not case.snippet.strip():
            raise ValueError(f"{path}: case {index} needs a positive line and a snippet")
        cases.append(case)
    return projects, cases


def project_folder(root: Path, name: str, version: str) -> tuple[Path | None, str]:
    """The folder of a project under `root` and a note (empty when it is the version the cases were read in)."""
    for candidate in (f"{name}-{version}", f"{name.replace('_', '-')}-{version}"):
        if (root / candidate).is_dir():
            return root / candidate, ""
    spellings = {name, name.replace("_", "-")}
    others = sorted(p for s in spellings for p in root.glob(f"{s}-*") if p.is_dir())
    others += [root / s for s in sorted(spellings) if (root / s).is_dir()]
    if others:
        return others[0], f"{others[0].name} is not version {version}: lines are found again by their snippets"
    return None, f"{name}-{version} not found under {root}: skipped"


def locate(folder: Path, case: Case) -> int | None:
    """The line of `case` in `folder`: its own line when that shows the snippet, else the nearest line within
    SEARCH lines that does, else None."""
    path = folder / case.path
    if not path.is_file():
        return None
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    for distance in range(SEARCH + 1):
        for number in {case.line - distance, case.line + distance}:
            if 1 <= number <= len(lines) and case.snippet.strip() in lines[number - 1]:
                return number
    return None


def check_project(folder: Path, cache: bool = False) -> tuple[list[Finding], str]:
    """Run `jaxfix check . --output-format json` in `folder` (every default rule); the findings and a note
    (empty when the run went as it should: exit 0 or 1 with JSON on stdout)."""
    arguments = [sys.executable, "-m", "jaxfix", "check", ".", "--output-format", "json", "--quiet"]
    if not cache:
        arguments.append("--no-cache")
    done = subprocess.run(arguments, cwd=folder, capture_output=True, text=True)
    try:
        records = json.loads(done.stdout or "[]")
    except json.JSONDecodeError:
        return [], f"jaxfix exited {done.returncode} without JSON: {done.stderr.strip()[-300:]}"
    note = "" if done.returncode in (0, 1) else f"jaxfix exited {done.returncode}: {done.stderr.strip()[-300:]}"
    findings = []
    for record in records:
        path = Path(record["filename"])
        path = path if path.is_absolute() else folder / path
        try:
            relative = path.resolve().relative_to(folder.resolve()).as_posix()
        except ValueError:
            relative = path.as_posix()
        end = record.get("end_location") or record["location"]
        findings.append(Finding(relative, record["code"], record["location"]["row"], end["row"]))
    return findings, note


def matches(finding: Finding, case: Case, line: int) -> bool:
    return finding.path == case.path and finding.code == case.code and finding.line - SLACK <= line <= finding.end_line + SLACK


@dataclasses.dataclass
class Result:
    cases: list[tuple[Case, bool]] = dataclasses.field(default_factory=list)  # (case, matched by a finding)
    unmatched: collections.Counter = dataclasses.field(default_factory=collections.Counter)  # project -> findings
    unmatched_codes: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    notes: list[str] = dataclasses.field(default_factory=list)
    lost: list[Case] = dataclasses.field(default_factory=list)  # cases whose line was not found
    projects: list[str] = dataclasses.field(default_factory=list)
    files: int = 0
    seconds: float = 0.0


def score(project: str, cases: list[tuple[Case, int]], findings: list[Finding], result: Result) -> None:
    """Match one project's findings to its located cases, adding to `result`."""
    used = set()
    for case, line in cases:
        hits = [index for index, finding in enumerate(findings) if matches(finding, case, line)]
        used.update(hits)
        result.cases.append((case, bool(hits)))
    for index, finding in enumerate(findings):
        if index not in used:
            result.unmatched[project] += 1
            result.unmatched_codes[finding.code] += 1


def run(root: Path, projects: dict[str, str], cases: list[Case], only: list[str] | None = None, cache: bool = False) -> Result:
    result = Result()
    for name, version in projects.items():
        if only and name not in only:
            continue
        folder, note = project_folder(root, name, version)
        if note:
            result.notes.append(note)
        if folder is None:
            continue
        located = []
        for case in (c for c in cases if c.project == name):
            line = locate(folder, case)
            if line is None:
                result.lost.append(case)
            else:
                located.append((case, line))
        start = time.perf_counter()
        findings, note = check_project(folder, cache)
        result.seconds += time.perf_counter() - start
        if note:
            result.notes.append(f"{folder.name}: {note}")
        result.projects.append(folder.name)
        result.files += sum(1 for _ in folder.rglob("*.py"))
        score(name, located, findings, result)
    return result


def tables(result: Result) -> str:
    """The Markdown the docs show: recall and false alarms per rule, recall per kind of analysis needed, and the
    findings outside the yardstick."""
    by_rule: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0, 0, 0])  # fire, found, quiet, alarms
    for case, hit in result.cases:
        counts = by_rule[case.code]
        if case.expect == "fire":
            counts[0] += 1
            counts[1] += hit
        else:
            counts[2] += 1
            counts[3] += hit
    lines = ["| rule | should fire | found | recall | must stay quiet | false alarms |", "|---|---|---|---|---|---|"]
    total = [0, 0, 0, 0]
    for code in sorted(by_rule):
        fire, found, quiet, alarms = by_rule[code]
        total = [a + b for a, b in zip(total, by_rule[code])]
        lines.append(f"| {code} | {fire} | {found} | {percent(found, fire)} | {quiet} | {alarms} |")
    fire, found, quiet, alarms = total
    lines.append(f"| **all** | {fire} | {found} | {percent(found, fire)} | {quiet} | {alarms} |")
    by_need: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    for case, hit in result.cases:
        if case.expect == "fire":
            for tag in case.tags:
                by_need[tag][0] += 1
                by_need[tag][1] += hit
    lines += ["", "| what jaxfix must know to report it (a case can need several) | should fire | found |", "|---|---|---|"]
    for tag in sorted(by_need, key=lambda t: (-by_need[t][0], t)):
        lines.append(f"| {tag} | {by_need[tag][0]} | {by_need[tag][1]} |")
    outside = sum(result.unmatched.values())
    per_code = ", ".join(f"{code} {count}" for code, count in sorted(result.unmatched_codes.items()))
    lines += ["", f"Findings that match no case (the yardstick does not judge them): {outside}" + (f" ({per_code})." if per_code else ".")]
    if result.lost:
        lines.append(f"Cases left out because their line was not found: {len(result.lost)}.")
    return "\n".join(lines) + "\n"


def percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


def write_docs(body: str, docs: Path = DOCS) -> bool:
    """Put `body` between the yardstick markers of docs/benchmarks.md; whether the file changed."""
    sys.path.insert(0, str(REPO))
    from jaxfix.ruledocs import between_markers

    text = docs.read_text(encoding="utf-8")
    new = between_markers(text, *MARKERS, body, docs)
    if new != text:
        docs.write_text(new, encoding="utf-8")
    return new != text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", nargs="?", type=Path, default=DEFAULT_ROOT, help="folder of the unpacked sdists")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--only", nargs="*", default=None, help="only these projects")
    parser.add_argument("--cache", action="store_true", help="let jaxfix use its result cache (default: --no-cache)")
    parser.add_argument("--write-docs", action="store_true", help="write the tables into docs/benchmarks.md")
    parser.add_argument("--show-missed", action="store_true", help="list every case that went the wrong way")
    parser.add_argument("--check-data", action="store_true", help="only check that every case's line is found")
    options = parser.parse_args(argv)
    try:
        projects, cases = load(options.data)
    except (OSError, ValueError, tomllib.TOMLDecodeError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if not options.root.is_dir():
        print(f"error: {options.root} is not a folder (see `python {Path(__file__).name} --help` to fetch the sources)", file=sys.stderr)
        return 2
    if options.check_data:
        lost = []
        for name, version in projects.items():
            folder, note = project_folder(options.root, name, version)
            if note:
                print(f"note: {note}")
            for case in (c for c in cases if c.project == name and folder is not None):
                line = locate(folder, case)
                if line is None:
                    lost.append(case)
                elif line != case.line:
                    print(f"moved: {case.project} {case.path}:{case.line} is now line {line}")
        for case in lost:
            print(f"lost: {case.project} {case.path}:{case.line} ({case.code}) does not show {case.snippet!r}")
        print(f"{len(cases) - len(lost)} of {len(cases)} cases found")
        return 1 if lost else 0
    result = run(options.root, projects, cases, options.only, options.cache)
    body = tables(result)
    print(body)
    print(f"{len(result.projects)} projects, {result.files} files, jaxfix check took {result.seconds:.1f} s")
    for note in result.notes:
        print(f"note: {note}")
    for case in result.lost:
        print(f"lost: {case.project} {case.path}:{case.line} ({case.code}) does not show {case.snippet!r}")
    if options.show_missed:
        for case, hit in result.cases:
            if (case.expect == "fire") != hit:
                what = "missed" if case.expect == "fire" else "false alarm"
                print(f"{what}: {case.code} {case.project} {case.path}:{case.line} [{case.needs}] {case.why}")
    if options.write_docs:
        print(f"{'wrote' if write_docs(body) else 'unchanged'} {DOCS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
