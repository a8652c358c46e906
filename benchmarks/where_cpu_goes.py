"""Where the CPU of a cold `jaxfix check` on one process goes, by stage: a sampling profile of the check run in
this interpreter, from its first import to its last line of output, beside the `ast.parse` floor of the same
files (notebooks' code cells included).

    python benchmarks/where_cpu_goes.py PATH ...        (or: python benchmarks/tool_speed.py --profile PATH ...)

Why sampling and not cProfile: cProfile's cost per call falls on the small functions the analyses call millions
of times, and so changes the shares it measures. Here a CPU-time timer interrupts the run about every
millisecond; each interrupt charges the CPU time used since the one before to one stage, the first in `STAGES`
that some frame of the Python stack belongs to (a LibCST parse called by a rule counts as the parse, an analysis
called by a rule as the analysis). Time in C (`compile`, LibCST's native parser) is charged when it returns to
the Python frame that called it. The check's output goes to /dev/null: only times are printed.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tool_speed import ast_parse_seconds, floor_sources  # noqa: E402  (this folder, beside this file)

INTERVAL = 0.001  # seconds of CPU between samples


def _in(folder: str):
    return lambda filename, function: folder in filename


def _named(name: str, within: str):
    return lambda filename, function: function == name and within in filename


# jaxfix/analysis/metadata.py's own traversal of the rules' batch (`fast_visits`): the rules' tree walk, not a fact
WALK = frozenset({
    "visit", "fast_visits", "_walk", "_walk_batch", "_walk_fields", "_calls", "_calls_of", "_own_methods", "_hooks",
    "_is_hook", "_hooked_fields", "_hooks_trivia", "_bound_on_visit", "_bound_on_leave", "_override", "_function",
    "sequences_only",
})
# jaxfix's cheaper equivalents of LibCST's metadata (scopes, expression contexts, parents, positions)
JAXFIX_METADATA = tuple(os.path.join("jaxfix", "analysis", name) for name in ("metadata.py", "scopes.py", "expression_contexts.py"))


def _walking(filename: str, function: str) -> bool:
    return filename.endswith(JAXFIX_METADATA[0]) and function in WALK


def _metadata(filename: str, function: str) -> bool:
    if filename.endswith(JAXFIX_METADATA):
        return not _walking(filename, function)
    return function == "_resolve_impl" or (  # wrapper.py's other functions are the rules' visit
        os.path.join("libcst", "metadata") in filename and not filename.endswith("wrapper.py"))


def _analysis(filename: str, function: str) -> bool:  # fastnodes: LibCST's own node checks, made cheaper
    return (os.path.join("jaxfix", "analysis") in filename and not filename.endswith("fastnodes.py")
            and not _walking(filename, function))


def _rules(filename: str, function: str) -> bool:
    return (os.sep + "codemods" + os.sep in filename or os.sep + "libcst" + os.sep in filename
            or filename.endswith(os.path.join("jaxfix", "codemod.py")) or _walking(filename, function))


# (stage, whether a frame (file name, function name) belongs to it): the first stage any frame of a sample's stack
# belongs to takes the sample. Names that later versions no longer have simply match nothing.
STAGES = [
    ("imports", lambda filename, function: filename.startswith("<frozen importlib")),
    ("ast.parse (jaxfix's own parses of each file)",
     lambda filename, function: function == "parse" and filename.endswith((os.sep + "ast.py", "parsed.py"))),
    ("LibCST parse", _in(os.path.join("libcst", "_parser"))),
    ("screens (`may_match`, `may_match_tree`, jaxfix/analysis/screen.py)",
     lambda filename, function: function in ("may_match", "may_match_tree", "_screened")
     or filename.endswith(os.path.join("analysis", "screen.py"))),
    ("facts on `ast` and the rules' `check` (jaxfix/facts/: the binder and its queries; Codemod.check)",
     lambda filename, function: os.path.join("jaxfix", "facts") + os.sep in filename
     or (function == "check" and os.sep + "codemods" + os.sep in filename)),
    ("project index: solve", _named("solve", within=os.path.join("analysis", "project.py"))),
    ("project index: summaries (listing, reading, summarising each file)",
     lambda filename, function: filename.endswith((os.path.join("analysis", "project.py"),
                                                   os.path.join("analysis", "summaries.py")))),
    ("metadata (LibCST's providers and jaxfix's equivalents: scopes, parents, positions...)", _metadata),
    ("ModuleContext analyses (jaxfix/analysis/ on LibCST)", _analysis),
    ("rule visitors and their tree walks (codemods/, jaxfix/codemod.py, LibCST, fast_visits)", _rules),
    ("rendering (jaxfix/report/)", _in(os.path.join("jaxfix", "report"))),
    ("rest of the check (engine, cache, notebooks' JSON, compile checks, gc)",
     _named("process_files", within="engine.py")),
]
START_UP = "start-up and the command line around the check (imports, arguments, finding the files, exit)"


class Sampler:
    """Charges CPU time to stages, from a SIGPROF handler."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.last = time.process_time()
        self.busy = False  # a signal that comes while the handler runs leaves its time to the next sample

    def __call__(self, signum, frame) -> None:
        if self.busy:
            return
        self.busy = True
        now = time.process_time()
        stage = self.stage(frame)
        self.seconds[stage] = self.seconds.get(stage, 0.0) + now - self.last
        self.last = now
        self.busy = False

    @staticmethod
    def stage(frame) -> str:
        frames = []
        while frame is not None:
            frames.append((frame.f_code.co_filename, frame.f_code.co_name))
            frame = frame.f_back
        return stage_of(frames)

    def start(self) -> None:
        signal.signal(signal.SIGPROF, self)
        signal.setitimer(signal.ITIMER_PROF, INTERVAL, INTERVAL)

    def stop(self) -> None:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
        self(None, sys._getframe(1))


def stage_of(frames: list[tuple[str, str]]) -> str:
    """The stage a sample with these frames (file name, function name; innermost first) is charged to."""
    for name, belongs in STAGES:
        if any(belongs(filename, function) for filename, function in frames):
            checking = any(function == "process_files" for _, function in frames)
            return START_UP if name == "imports" and not checking else name
    return START_UP


def _count_libcst_parses() -> list[int]:
    """Patches `libcst.parse_module` to count the modules the check parses with LibCST."""
    import libcst

    parsed: list[int] = []
    original = libcst.parse_module

    def counted(source, *args, **kwargs):
        parsed.append(len(source))
        return original(source, *args, **kwargs)

    libcst.parse_module = counted
    return parsed


def profile(paths: list[str]) -> tuple[dict[str, float], float, float, int]:
    """Seconds of CPU per stage, the CPU and wall seconds of the whole check, and the modules parsed by LibCST."""
    sampler = Sampler()
    saved = os.dup(1), os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY)
    start, cpu = time.perf_counter(), time.process_time()
    sampler.last = cpu
    sampler.start()
    parsed = _count_libcst_parses()
    from jaxfix import cli

    sys.argv = ["jaxfix", "check", "--no-cache", "-j", "1", *paths]
    sys.stdout.flush()
    os.dup2(null, 1)
    os.dup2(null, 2)
    try:
        cli.main()
    except SystemExit:
        pass
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        sampler.stop()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
    return sampler.seconds, time.process_time() - cpu, time.perf_counter() - start, len(parsed)


def _times(seconds: float, floor: float, digits: int = 1) -> str:
    return f"{seconds / floor:.{digits}f}x" if floor > 0 else "-"  # a floor too small for the clock


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+")
    options = parser.parse_args()
    load_before = os.getloadavg()
    stages, cpu, wall, libcst_modules = profile(options.paths)
    sources, python_files, notebooks = floor_sources(options.paths)
    _, floor_cpu = ast_parse_seconds(sources)
    print(f"{python_files} Python files and {notebooks} notebooks under {', '.join(options.paths)}; "
          f"cold check on one process: {cpu:.2f} s CPU ({wall:.2f} s wall), {_times(cpu, floor_cpu)} the ast.parse "
          f"floor ({floor_cpu:.2f} s CPU); {libcst_modules} modules parsed by LibCST; load average "
          f"{load_before[0]:.2f} before, {os.getloadavg()[0]:.2f} after\n")
    print("| stage | CPU s | share | x ast.parse floor |\n|---|---|---|---|")
    names = [START_UP] + [name for name, _ in STAGES if name != "imports"] + ["imports"]
    for name in names:
        seconds = stages.get(name, 0.0)
        label = "imports during the check (lazy imports)" if name == "imports" else name
        print(f"| {label} | {seconds:.2f} | {seconds / cpu:.0%} | {_times(seconds, floor_cpu, 2)} |")
    print(f"| **total** | {sum(stages.values()):.2f} | | {_times(sum(stages.values()), floor_cpu)} |")


if __name__ == "__main__":
    main()
