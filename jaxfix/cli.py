"""The `jaxfix` command: options in, one engine call, a renderer out. Exit codes as Ruff's: 0 clean, 1 findings
(`apply`: findings left, or with --diff changes to make), 2 errors; docs/cli.md lists them per command."""

from __future__ import annotations

import dataclasses
import functools
import os
import sys
from pathlib import Path
from typing import List, Optional

import typer

from jaxfix import __version__, config, notebook, registry
from jaxfix.discovery import discover
from jaxfix.engine import FileResult, Settings, process_files, process_notebook, process_text, settings_from_config
from jaxfix.files import SourceError, SourceFile, decode
from jaxfix.report import diff, github, text
from jaxfix.report.progress import Progress
from jaxfix.workers import leave_garbage, tune_gc, untune_gc


class _Command(typer.core.TyperCommand):
    """A command whose help reads as a person writes it: `Usage: jaxfix check [OPTIONS] PATH...` and `PATH...  Files
    or folders...`, where recent typer versions print `{paths}...` and a Python type beside every argument."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            if isinstance(param, typer.core.TyperArgument):
                param.display_type_rich = lambda ctx: None  # type: ignore[method-assign]  (`<list[Path]>`)

    def collect_usage_pieces(self, ctx) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if isinstance(param, typer.core.TyperArgument):
                name = (param.metavar or param.name or "").upper()
                name += "..." if param.nargs != 1 and not name.endswith("...") else ""
                pieces.append(name if param.required else f"[{name}]")
        return pieces


app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: docstrings reflowed, no type column
    help="Find JAX performance anti-patterns and rewrite them into the idioms.",
)
command = functools.partial(app.command, cls=_Command)

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2

PathsArg = typer.Argument(..., metavar="PATH", help="Files or folders to look at; `-` reads stdin.", show_default=False)
SelectOpt = typer.Option(
    None, "--select", metavar="CODES",
    help="Only these codes, code prefixes (JF1) or names; comma-separated. Default: every rule that is not opt-in.",
)
ExtendSelectOpt = typer.Option(
    None, "--extend-select", metavar="CODES", help="Add these to the selection (opt-in rules such as JF902 by code or name)."
)
IgnoreOpt = typer.Option(None, "--ignore", metavar="CODES", help="Skip these codes, prefixes or names; comma-separated.")
ExcludeOpt = typer.Option(None, "--exclude", metavar="PATTERNS", help="Skip paths matching these gitignore-style patterns.")
JobsOpt = typer.Option(None, "--jobs", "-j", min=1, metavar="N", help="Worker processes (default: one per core).")
SeedOpt = typer.Option(None, "--seed", metavar="N", help="Seed of the input search (default 0): the same seed draws the same inputs.")
MaxExamplesOpt = typer.Option(None, "--max-examples", min=1, metavar="N", help="Inputs per function and device (default 50).")
TimeoutOpt = typer.Option(None, "--timeout", min=1.0, metavar="SECONDS", help="Seconds per function before it is given up (default 120).")
StatisticsOpt = typer.Option(False, "--statistics", help="One line per rule (count, code, name, fixes) instead of one per finding.")
ExitZeroOpt = typer.Option(False, "--exit-zero", help="Exit with 0 even when findings are left (errors still exit with 2).")
NoCacheOpt = typer.Option(
    False, "--no-cache",
    help="Neither read nor write the result cache (.jaxfix_cache/; each run prunes it, `jaxfix clean` empties it).",
)
QuietOpt = typer.Option(False, "--quiet", "-q", help="Print findings only: no progress bar and no summary.")
PythonOpt = typer.Option(
    None, "--python", metavar="PATH",
    help="The Python (or virtualenv folder) that runs your code, without jaxfix installed there; default: [tool.jaxfix] python, "
    "else the active virtualenv, else jaxfix's own.",
)
DeadlineOpt = typer.Option(None, "--deadline", min=0.1, metavar="SECONDS", help="Seconds one call may run; longer counts as not terminating (default 5).")
FORMATS = ("text", "json", "sarif", "github")
FormatOpt = typer.Option("text", "--output-format", metavar="FORMAT", help="How findings are written: text, json, sarif or github.")
StdinNameOpt = typer.Option(
    None, "--stdin-filename", metavar="PATH", help="With PATH `-`: the file the text on stdin is, for the config, per-file-ignores and messages."
)
STDIN = "-"


def _split(values: Optional[List[str]]) -> list[str]:
    return [part.strip() for value in values or [] for part in value.split(",") if part.strip()]


def _fail(message: str) -> typer.Exit:
    typer.echo(f"jaxfix: error: {message}", err=True)
    return typer.Exit(EXIT_ERROR)


def _prepare(
    paths, select, ignore, exclude, unsafe_fixes: bool, *, stdin_filename: Optional[Path] = None, text_edits: bool = False,
    extend_select=None,
) -> tuple[Settings, list[str], list[tuple[str, str]]]:
    """Settings from [tool.jaxfix] (the nearest above the first path) and the options; the files to look at."""
    given = [str(p) for p in paths]
    start = Path(stdin_filename) if given == [STDIN] and stdin_filename else Path(given[0]) if given and given[0] != STDIN else None
    try:
        settings_file = config.load(start)
    except config.ConfigError as error:
        raise _fail(str(error))
    try:
        settings = settings_from_config(
            settings_file, select=_split(select), extend_select=_split(extend_select), ignore=_split(ignore),
            unsafe_fixes=unsafe_fixes, text_edits=text_edits,
        )
    except config.ConfigError as error:
        raise _fail(str(error))
    if STDIN in given and given != [STDIN]:
        raise _fail("`-` (stdin) cannot be mixed with other paths")
    found = discover(
        [] if given == [STDIN] else given, _split(exclude), config_exclude=settings_file.exclude,
        config_root=settings_file.source.parent if settings_file.source else None,
    )
    return settings, found.files, found.errors


def _check_format(output_format: str) -> str:
    chosen = output_format.lower()
    if chosen not in FORMATS:
        raise _fail(f"unknown --output-format {output_format!r} (choose from {', '.join(FORMATS)})")
    return chosen


def _read_stdin(stdin_filename: Optional[Path]) -> tuple[str, SourceFile]:
    """The path to name and the source read from stdin; bad bytes end the run (exit 2, nothing on stdout)."""
    name = str(stdin_filename) if stdin_filename else STDIN
    try:
        return name, decode(sys.stdin.buffer.read())
    except SourceError as error:
        raise _fail(f"{name}: {error}")


def _stdin_facts(name: str, text: str):
    """The project facts of a text read from stdin and named by --stdin-filename (its project is the one around
    that path, with this text in place of the file's); none for plain `-`."""
    if name == STDIN:
        return None
    from jaxfix.engine import _project_facts, project_of

    try:
        project = project_of([name], texts={name: text})
    except Exception:  # noqa: BLE001 - the index is evidence, never a reason to fail
        return None
    return _project_facts([name], None, project)[name]


def _notebook_facts(name: str, raw: bytes):
    """The project facts of a notebook read from stdin (its code cells as one module); none if it cannot be read
    or is skipped (the check itself then says why)."""
    source = notebook.python_source(raw)
    return _stdin_facts(name, source) if source is not None else None


def _render_findings(
    output_format: str, results: list[FileResult], settings: Settings, shown: dict[str, list], *, err: bool = False
) -> None:
    """The findings in a machine-readable format, all at once on stdout (stderr for `apply -`)."""
    if output_format == "json":
        from jaxfix.report import json as json_report

        typer.echo(json_report.render(results, shown), err=err)
    elif output_format == "sarif":
        from jaxfix.report import sarif

        typer.echo(sarif.render(results, settings.codemods, shown), err=err)
    elif output_format == "github":
        for result in results:
            for line in github.lines(result.path, shown.get(result.path, [])):
                typer.echo(line, err=err)


def _cache(settings: Settings, disabled: bool):
    """The result cache of this run, unless --no-cache or JAXFIX_NO_CACHE=1 turns it off."""
    if disabled or os.environ.get("JAXFIX_NO_CACHE", "") not in ("", "0"):
        return None
    from jaxfix.cache import ResultCache

    cache = ResultCache.for_settings(settings)
    cache.prune()  # marks this run's entries used, drops other versions' and settings' (jaxfix/cache.py)
    return cache


def _targets(paths, names, pending: bool, loaded, select, ignore, exclude, extend_select=None):
    """The functions `verify` and `bench` compare: those of the pair BEFORE AFTER, or those that the rewrites
    `apply --unsafe-fixes` would make to PATHs change (computed in memory). Returns (targets, whether some path
    had a problem, already reported, whether they are pending rewrites); a bad pair ends the run."""
    from jaxfix.verify import collect

    if len(paths) == 2 and all(p.is_file() for p in paths) and not pending:
        try:
            return collect.pair_targets(paths[0], paths[1], names, loaded), False, False
        except collect.PairError as error:
            raise _fail(str(error))
    settings, files, missing = _prepare(paths, select, ignore, exclude, True, extend_select=extend_select)
    on_purpose = {c.code for c in settings.codemods if c.changes_values}
    if on_purpose:  # their rewrites would only show as differing: compare the others
        settings = dataclasses.replace(settings, codes=tuple(c for c in settings.codes if c not in on_purpose))
    rewrites = collect.pending(files, settings)
    had_errors = _report_problems([r.result for r in rewrites], missing)
    return collect.pending_targets(rewrites, names, loaded), had_errors, True


def _report_problems(results: list[FileResult], missing: list[tuple[str, str]]) -> bool:
    for path, reason in missing:
        typer.echo(f"{path}: error: {reason}", err=True)
    for line in text.problem_lines(results):
        typer.echo(line, err=True)
    return bool(missing) or any(r.error or r.internal_errors for r in results)


@command(short_help="Report anti-patterns in files and folders.")
def check(
    paths: List[Path] = PathsArg,
    select: Optional[List[str]] = SelectOpt,
    extend_select: Optional[List[str]] = ExtendSelectOpt,
    ignore: Optional[List[str]] = IgnoreOpt,
    exclude: Optional[List[str]] = ExcludeOpt,
    unsafe_fixes: bool = typer.Option(False, "--unsafe-fixes", help="Count unsafe fixes as available."),
    jobs: Optional[int] = JobsOpt,
    output_format: str = FormatOpt,
    statistics: bool = StatisticsOpt,
    exit_zero: bool = ExitZeroOpt,
    stdin_filename: Optional[Path] = StdinNameOpt,
    add_noqa: bool = typer.Option(False, "--add-noqa", help="Add `# noqa: CODES` to every line with a finding, and fix nothing."),
    no_cache: bool = NoCacheOpt,
    quiet: bool = QuietOpt,
) -> None:
    """Report anti-patterns, one `path:line:col: CODE [*] message` line each, where [*] marks a fix `jaxfix apply`
    makes ([*unsafe]: with --unsafe-fixes; [hint]: a suggestion never applied). Exits with 1 when there are
    findings, 2 on errors."""
    output_format = _check_format(output_format)
    if statistics and output_format != "text":
        raise _fail("--statistics is a text report: it cannot be combined with --output-format")
    settings, files, missing = _prepare(
        paths, select, ignore, exclude, unsafe_fixes, stdin_filename=stdin_filename, text_edits=output_format == "json",
        extend_select=extend_select,
    )
    if add_noqa:
        _add_noqa(paths, files, missing, settings, jobs)
        return
    if [str(p) for p in paths] == [STDIN] and stdin_filename is not None and notebook.is_notebook(str(stdin_filename)):
        raw = sys.stdin.buffer.read()
        facts = _notebook_facts(str(stdin_filename), raw)
        results = iter([process_notebook(str(stdin_filename), raw, settings, fix=False, project=facts)])
    elif [str(p) for p in paths] == [STDIN]:
        name, source = _read_stdin(stdin_filename)
        results = iter([process_text(name, source.text, settings, fix=False, project=_stdin_facts(name, source.text))])
    else:
        results = process_files(files, settings, fix=False, write=False, jobs=jobs, cache=_cache(settings, no_cache))
    done = []
    bar = Progress(len(files), enabled=not quiet)
    for result in results:
        done.append(result)
        if output_format == "text" and not statistics:
            if result.diagnostics:
                bar.clear()
            for diagnostic in result.diagnostics:
                typer.echo(text.finding_line(result.path, diagnostic))
        bar.advance()
    bar.close()
    if output_format != "text":
        _render_findings(output_format, done, settings, {r.path: r.diagnostics for r in done})
    if statistics:
        for line in text.statistics_lines([d for r in done for d in r.diagnostics], settings.unsafe_fixes):
            typer.echo(line)
    had_errors = _report_problems(done, missing)
    if output_format == "text" and not quiet:
        typer.echo(text.check_summary(done, settings.unsafe_fixes))
    if had_errors:
        raise typer.Exit(EXIT_ERROR)
    raise typer.Exit(EXIT_FINDINGS if any(r.diagnostics for r in done) and not exit_zero else EXIT_CLEAN)


def _add_noqa(paths, files, missing, settings: Settings, jobs) -> None:
    """`check --add-noqa`: a `# noqa` comment for every finding, so that a codebase can adopt jaxfix today."""
    from jaxfix import noqa

    if [str(p) for p in paths] == [STDIN]:
        raise _fail("--add-noqa rewrites files: it does not read stdin")
    results = list(process_files(files, settings, fix=False, write=False, jobs=jobs))
    added = changed = 0
    for result in results:
        if result.error or not result.diagnostics:
            continue
        outcome = noqa.add_noqa(Path(result.path), result.diagnostics)
        for line in outcome.skipped:
            typer.echo(f"{result.path}:{line}: cannot take a comment (inside a string or after a backslash)", err=True)
        if outcome.added:
            added += outcome.added
            changed += 1
            typer.echo(f"{result.path}: added {text.plural(outcome.added, 'noqa comment')}")
    had_errors = _report_problems(results, missing)
    typer.echo(f"Added {text.plural(added, 'noqa comment')} in {text.plural(changed, 'file')}.")
    raise typer.Exit(EXIT_ERROR if had_errors else EXIT_CLEAN)


@command(short_help="Rewrite files with the fixes (--diff: show them).")
def apply(
    paths: List[Path] = PathsArg,
    diff_only: bool = typer.Option(False, "--diff", help="Print unified diffs and write nothing."),
    unsafe_fixes: bool = typer.Option(False, "--unsafe-fixes", help="Also apply fixes that can change behaviour in corner cases."),
    select: Optional[List[str]] = SelectOpt,
    extend_select: Optional[List[str]] = ExtendSelectOpt,
    ignore: Optional[List[str]] = IgnoreOpt,
    exclude: Optional[List[str]] = ExcludeOpt,
    jobs: Optional[int] = JobsOpt,
    verify_fixes: bool = typer.Option(
        False, "--verify", help="Keep a rewrite only where its function verifies against the original (unsafe fixes included)."
    ),
    seed: Optional[int] = SeedOpt,
    max_examples: Optional[int] = MaxExamplesOpt,
    timeout: Optional[float] = TimeoutOpt,
    deadline: Optional[float] = DeadlineOpt,
    python: Optional[str] = PythonOpt,
    output_format: str = typer.Option(
        "text", "--output-format", metavar="FORMAT",
        help="How the findings left without a fix are written: text, json, sarif or github.",
    ),
    statistics: bool = typer.Option(
        False, "--statistics", help="One line per rule (fixes made, findings left) instead of the diffs and findings."
    ),
    exit_zero: bool = ExitZeroOpt,
    exit_non_zero_on_fix: bool = typer.Option(False, "--exit-non-zero-on-fix", help="Exit with 1 when a fix was made, even if no finding is left."),
    stdin_filename: Optional[Path] = StdinNameOpt,
    no_cache: bool = NoCacheOpt,
    quiet: bool = QuietOpt,
) -> None:
    """Rewrite files in place with the safe fixes (and the unsafe ones with --unsafe-fixes). PATH `-` reads the
    source from stdin and writes the rewritten source to stdout. Exits with 1 while findings are left that it
    could not fix (with --diff: also when there is a diff to show), 0 when none is left, 2 on errors."""
    output_format = _check_format(output_format)
    if output_format != "text" and (diff_only or verify_fixes or statistics):
        raise _fail("--output-format applies to findings; --diff, --statistics and --verify print their own report")
    if python is not None and not verify_fixes:
        raise _fail("--python names the interpreter that runs your code for --verify: add --verify")
    if verify_fixes:
        if [str(p) for p in paths] == [STDIN]:
            raise _fail("--verify runs the rewritten functions from their files: it does not read stdin")
        _apply_verified(
            paths, diff_only, select, ignore, exclude, jobs,
            _verify_options(seed, max_examples, timeout, None, None, deadline, start=_first_path(paths), python=python), extend_select,
        )
        return
    settings, files, missing = _prepare(
        paths, select, ignore, exclude, unsafe_fixes, stdin_filename=stdin_filename, extend_select=extend_select
    )
    if [str(p) for p in paths] == [STDIN]:
        _apply_stdin(settings, stdin_filename, diff_only, output_format, exit_zero, exit_non_zero_on_fix)
        return
    colour = sys.stdout.isatty()
    results = []
    say = (lambda line: typer.echo(line)) if output_format == "text" else (lambda line: typer.echo(line, err=True))
    remaining: dict[str, list] = {}
    bar = Progress(len(files), enabled=not quiet)
    for result in process_files(files, settings, fix=True, write=not diff_only, jobs=jobs, cache=_cache(settings, no_cache)):
        results.append(result)
        bar.clear()
        remaining[result.path] = _left(result, settings)
        if not statistics:
            if diff_only and result.changed:
                typer.echo(diff.result_diff(result, colour=colour), nl=False)
            elif result.written:
                say(f"fixed {result.path} ({text.plural(result.fixes_applied, 'fix')})")
            if output_format == "text":
                for diagnostic in remaining[result.path]:
                    typer.echo(text.finding_line(result.path, diagnostic))
        bar.advance()
    bar.close()
    if output_format != "text":
        _render_findings(output_format, results, settings, remaining)
    left = [d for found in remaining.values() for d in found]
    if statistics:
        for line in text.apply_statistics_lines(results, left, diff_only=diff_only):
            typer.echo(line)
    had_errors = _report_problems(results, missing)
    if not quiet:
        say(text.apply_summary(results, left, diff_only=diff_only))
    if had_errors:
        raise typer.Exit(EXIT_ERROR)
    raise typer.Exit(_apply_exit(any(r.changed for r in results), bool(left), diff_only, exit_zero, exit_non_zero_on_fix))


def _apply_exit(fixed: bool, left_some: bool, diff_only: bool, exit_zero: bool, exit_non_zero_on_fix: bool) -> int:
    """Ruff's exit code for a fixing run without errors: 1 while findings are left (unless --exit-zero), with
    --diff also when there is a diff to show, and with --exit-non-zero-on-fix when something was (or would be)
    fixed; 0 otherwise."""
    if fixed and (diff_only or exit_non_zero_on_fix):
        return EXIT_FINDINGS
    return EXIT_FINDINGS if left_some and not exit_zero else EXIT_CLEAN


def _left(result: FileResult, settings: Settings) -> list:
    """The findings `apply` leaves: those without a fix it may make."""
    return [d for d in result.diagnostics if not (d.fix and settings.allows(d.fix))]


def _apply_stdin(
    settings: Settings, stdin_filename: Optional[Path], diff_only: bool, output_format: str, exit_zero: bool,
    exit_non_zero_on_fix: bool,
) -> None:
    """`apply -`: the rewritten source on stdout (or its diff); findings and problems on stderr. On bad input
    stdout stays empty, so that a format-on-save integration never receives half a file."""
    if stdin_filename is not None and notebook.is_notebook(str(stdin_filename)):
        name, raw = str(stdin_filename), sys.stdin.buffer.read()
        facts = _notebook_facts(name, raw)
        result = process_notebook(name, raw, settings, fix=True, project=facts)
        if result.error:
            raise _fail(f"{name}: {result.error}")
        output = notebook.rewritten(raw, result.fixed)[0] if result.cell_changes else raw
        shown = diff.cell_diffs(name, result.cell_changes)
    else:
        name, source = _read_stdin(stdin_filename)
        result = process_text(name, source.text, settings, fix=True, project=_stdin_facts(name, source.text))
        if result.error:
            raise _fail(f"{name}: {result.error}")
        fixed = result.fixed if result.fixed is not None else source.text
        output = source.encode(fixed)
        shown = diff.unified_diff(name, source.text, fixed) if result.changed else ""
    left = _left(result, settings)
    if diff_only:
        typer.echo(shown, nl=False)
    else:
        sys.stdout.buffer.write(output)
        sys.stdout.buffer.flush()
    if output_format == "text":
        for diagnostic in left:
            typer.echo(text.finding_line(name, diagnostic), err=True)
    else:
        _render_findings(output_format, [result], settings, {name: left}, err=True)
    for line in text.problem_lines([result]):
        typer.echo(line, err=True)
    if result.internal_errors:
        raise typer.Exit(EXIT_ERROR)
    raise typer.Exit(_apply_exit(result.changed, bool(left), diff_only, exit_zero, exit_non_zero_on_fix))


def _first_path(paths) -> Optional[Path]:
    return Path(paths[0]) if paths and str(paths[0]) != STDIN else None


def _verify_options(seed, max_examples, timeout, grad, nan, deadline=None, *, start: Optional[Path] = None, python: Optional[str] = None):
    """[tool.jaxfix.verify] of the checked files' pyproject.toml (the nearest with [tool.jaxfix] above the first
    path, as `check` finds it), then the command line; and the interpreter that runs the user's code, checked
    before anything else is done (a run it cannot serve ends here, with what it lacks)."""
    from dataclasses import replace

    from jaxfix.config import ConfigError
    from jaxfix.verify import interpreter
    from jaxfix.verify import settings as verify_settings

    try:
        loaded = verify_settings.load(start)
        project = config.load(start)
    except ConfigError as error:
        raise _fail(str(error))
    given = {"seed": seed, "max_examples": max_examples, "timeout": timeout, "grad": grad, "nan": nan, "deadline": deadline}
    loaded.options = replace(loaded.options, **{k: v for k, v in given.items() if v is not None})
    loaded.python = interpreter.choose(python, project.python, project.source)
    try:
        interpreter.python_path(loaded.python)
    except interpreter.InterpreterError as error:
        raise _fail(str(error))
    return loaded


def _echo_report(report) -> None:
    from jaxfix.verify import report as verify_report

    for line in verify_report.lines(report):
        typer.echo(line)


@command(short_help="Check that rewrites compute what the originals do.")
def verify(
    paths: List[Path] = typer.Argument(..., metavar="PATH", help="BEFORE.py AFTER.py, or files and folders whose pending rewrites to verify.", show_default=False),
    function: Optional[List[str]] = typer.Option(None, "--function", metavar="NAME", help="Only these functions (repeat the option)."),
    pending: bool = typer.Option(False, "--pending", help="Verify the pending rewrites of PATHs even when two files are given."),
    seed: Optional[int] = SeedOpt,
    max_examples: Optional[int] = MaxExamplesOpt,
    timeout: Optional[float] = TimeoutOpt,
    deadline: Optional[float] = DeadlineOpt,
    grad: Optional[bool] = typer.Option(None, "--grad/--no-grad", help="Compare jax.grad of the outputs' weighted sum too, where there are float inputs (the default; --no-grad skips it).", show_default=False),
    nan: Optional[bool] = typer.Option(None, "--nan/--no-nan", help="Mix NaN and infinities into some float inputs (the default; --no-nan draws finite floats only).", show_default=False),
    python: Optional[str] = PythonOpt,
    select: Optional[List[str]] = SelectOpt,
    extend_select: Optional[List[str]] = ExtendSelectOpt,
    ignore: Optional[List[str]] = IgnoreOpt,
    exclude: Optional[List[str]] = ExcludeOpt,
) -> None:
    """Check that rewritten functions compute what the originals compute, on generated inputs and every device.

    With two files, compares the functions both define (BEFORE.py is the original). Otherwise computes the
    rewrites `apply --unsafe-fixes` would make, in memory, and verifies each rewritten function. Exit codes:
    0 every function verified, 1 some differ, 2 bad arguments or some function could not be verified."""
    from jaxfix.verify import collect, runner
    from jaxfix.verify import report as verify_report
    from jaxfix.verify.targets import DIFFERS, VERIFIED

    loaded = _verify_options(seed, max_examples, timeout, grad, nan, deadline, start=_first_path(paths), python=python)
    names = _split(function)
    targets, had_errors, of_pending = _targets(paths, names, pending, loaded, select, ignore, exclude, extend_select)
    if of_pending and not targets:
        typer.echo("No pending rewrite changes a function" + (" of those named." if names else "."))
        raise typer.Exit(EXIT_ERROR if names or had_errors else EXIT_CLEAN)
    reports = []
    for report in runner.run(targets, loaded.options, python=loaded.python):
        reports.append(report)
        collect.credit_callers(targets, reports)
        _echo_report(report)
    typer.echo(verify_report.summary(reports))
    if any(r.status == DIFFERS for r in reports):
        raise typer.Exit(EXIT_FINDINGS)
    # every function whose own code changed verified (a caller only reaches them: its own state does not count)
    changed = {t.id for t in targets if t.changed}
    everything = bool(reports) and all(r.status == VERIFIED for r in reports if r.target in changed)
    raise typer.Exit(EXIT_CLEAN if not had_errors and everything else EXIT_ERROR)


def _apply_verified(paths, diff_only, select, ignore, exclude, jobs, loaded, extend_select=None) -> None:
    """`apply --verify`: the rewrites of every file in memory, then kept only where their functions verify."""
    from jaxfix.verify import keep
    from jaxfix.verify import report as verify_report

    settings, files, missing = _prepare(paths, select, ignore, exclude, True, extend_select=extend_select)
    results = list(process_files(files, settings, fix=True, write=False, jobs=jobs))
    had_errors = _report_problems(results, missing)
    verdicts = keep.apply_verified(results, settings, loaded, loaded.options, write=not diff_only)
    colour = sys.stdout.isatty()
    differs = False
    for verdict in verdicts:
        if diff_only and verdict.changed:
            typer.echo(diff.text_diff(verdict.path, verdict.original, verdict.text, colour=colour), nl=False)
        elif verdict.written:
            names = ", ".join(r.name for r in verdict.verified) or "module-level code only"
            typer.echo(f"fixed {verdict.path} ({text.plural(verdict.fixes_applied, 'fix')}; verified: {names})")
        for report in verdict.kept_unverified:
            why = report.reason or next((d.reason for d in report.devices if d.reason), "nothing was run")
            typer.echo(f"kept {verdict.kinds.get(report.name, 'function')} {report.target}: its fixes are safe ones; not verified: {why}")
        for report in verdict.reverted:
            caller = verdict.because.get(report.name)
            differs = differs or report.status == "differs" or caller is not None
            what = f"reverted {verdict.kinds.get(report.name, 'function')} "
            if caller is not None:
                typer.echo(f"{what}{report.target}: its caller {caller.name} differs")
                report = caller
            for index, line in enumerate(verify_report.lines(report)):
                typer.echo(("    " if caller is not None else what) + line if index == 0 else line)
        if verdict.whole_file_reverted:
            typer.echo(f"{verdict.path}: every rewrite reverted: {verdict.whole_file_reverted}")
    kept = sum(1 for v in verdicts if v.changed)
    reverted = _counted_kinds([v.kinds.get(r.name, "function") for v in verdicts for r in v.reverted])
    verb = "Would keep" if diff_only else "Kept"
    unchecked = _counted_kinds([v.kinds.get(r.name, "function") for v in verdicts if v.changed for r in v.kept_unverified])
    typer.echo(
        f"{verb} the rewrites of {text.plural(kept, 'file')}; {reverted} reverted (differ, or could not be checked "
        f"and have an unsafe fix); {unchecked} kept unverified (safe fixes only)."
    )
    if had_errors:
        raise typer.Exit(EXIT_ERROR)
    raise typer.Exit(EXIT_FINDINGS if differs or (diff_only and kept) else EXIT_CLEAN)


def _counted_kinds(kinds: list[str]) -> str:
    """"2 functions, 1 test method" (a notebook's cell numbers left out); "0 functions" for none."""
    counts: dict[str, int] = {}
    for kind in kinds:
        base = kind.split(" (cell ")[0]
        counts[base] = counts.get(base, 0) + 1
    return ", ".join(text.plural(n, kind) for kind, n in counts.items()) or text.plural(0, "function")


@command(short_help="Measure compile time, run time and memory of rewrites.")
def bench(
    paths: List[Path] = typer.Argument(..., metavar="PATH", help="BEFORE.py AFTER.py, or files and folders whose pending rewrites to measure.", show_default=False),
    function: Optional[List[str]] = typer.Option(None, "--function", metavar="NAME", help="Only these functions (repeat the option)."),
    output_format: str = typer.Option("text", "--format", metavar="FORMAT", help="text (a table with ratios) or json (a list of rows)."),
    pending: bool = typer.Option(False, "--pending", help="Measure the pending rewrites of PATHs even when two files are given."),
    repeats: int = typer.Option(10, "--repeats", metavar="N", min=1, help="Timed calls per function, side and device; run time is their median."),
    warmup: int = typer.Option(1, "--warmup", metavar="N", min=0, help="Untimed calls between the first call and the timed ones."),
    timeout: float = typer.Option(600.0, "--timeout", metavar="SECONDS", min=1.0, help="Seconds per function (both sides, all devices) before it is given up."),
    size: Optional[int] = typer.Option(None, "--size", metavar="N", min=1, help="Corpus cases: set the trip count case.toml's size_arg names."),
    batch: Optional[int] = typer.Option(None, "--batch", metavar="N", min=1, help="Corpus cases: tile case.toml's batch_args to this many rows."),
    seed: Optional[int] = SeedOpt,
    python: Optional[str] = PythonOpt,
    jit_rewrite: bool = typer.Option(
        False,
        "--jit-rewrite",
        help="Also measure a rewrite that is not jit-wrapped under jax.jit (plain Python int, bool, str and None arguments static), "
        "as a user who accepts it would run it hot: a second line per function (JSON: \"after_jit\", \"ratios_jit\"). "
        "Where JAX cannot trace the rewrite, it says so.",
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar (there is none either when stdout or stderr is not a terminal)."),
    select: Optional[List[str]] = SelectOpt,
    extend_select: Optional[List[str]] = ExtendSelectOpt,
    ignore: Optional[List[str]] = IgnoreOpt,
    exclude: Optional[List[str]] = ExcludeOpt,
) -> None:
    """Measure what a rewrite buys: compile time, run time, compilations and memory, original against rewrite,
    per function and device, with the inputs `jaxfix verify` uses.

    Each side is called as its module defines it: a jit-wrapped function is measured jitted (compile time is
    `f.lower(*args).compile()` of a fresh copy, memory its `memory_analysis()`); any other function is called
    eagerly, as its user runs it (compile time is then its first call minus its run time). An original that JAX
    rejects under jit (a Python `while` on a traced value) is run with jit disabled. Every measurement executes
    the module again, so fresh function objects pay their compiles; run time is the median of --repeats calls
    waited for with block_until_ready. Ratios are original / rewrite: above 1 the rewrite is better. With
    --jit-rewrite, an eager rewrite is also measured under jax.jit (the original stays as it is): the payoff of
    accepting the rewrite and jitting it. Exit codes: 0 when a function was measured, 2 for bad arguments or
    when nothing could be measured."""
    import json

    from jaxfix.bench import report as bench_report
    from jaxfix.bench import run as bench_run
    from jaxfix.bench import sizes
    from jaxfix.bench.options import BenchOptions

    if output_format not in ("text", "json"):
        raise _fail(f"--format must be text or json, not '{output_format}'")
    loaded = _verify_options(seed, None, None, None, None, start=_first_path(paths), python=python)
    names = _split(function)
    targets, had_errors, of_pending = _targets(paths, names, pending, loaded, select, ignore, exclude, extend_select)
    if of_pending and not targets:
        if had_errors:  # already said, one line per path
            raise typer.Exit(EXIT_ERROR)
        typer.echo("No pending rewrite changes a function" + (" of those named." if names else "."))
        raise typer.Exit(EXIT_ERROR if names else EXIT_CLEAN)
    targets = [sizes.resize(t, size, batch)[0] for t in targets]
    options = BenchOptions(repeats=repeats, warmup=warmup, timeout=timeout, seed=loaded.options.seed, jit_rewrite=jit_rewrite)
    progress = Progress(len(targets), enabled=not quiet and sys.stdout.isatty(), label="functions", items=True, delay=0)  # and stderr: Progress checks
    results = []
    try:
        for result in bench_run.run(targets, options, on_start=lambda t: progress.start(t.id), python=loaded.python):
            results.append(result)
            progress.finish_one()
    finally:
        progress.close()
    found = bench_report.rows(results)
    if output_format == "json":
        typer.echo(json.dumps(found, indent=2))
    else:
        for line in bench_report.table(found):
            typer.echo(line)
        typer.echo(bench_report.summary(found, repeats))
    measured = any(bench_report.measured(row) for row in found)
    raise typer.Exit(EXIT_CLEAN if measured and not had_errors else EXIT_ERROR)


@command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True}, short_help="Record the shapes your tests call functions with.")
def record(
    command: List[str] = typer.Argument(..., metavar="COMMAND", help="The command to run, after `--`: `jaxfix record -- pytest tests/`.", show_default=False),
) -> None:
    """Run your tests (or any Python command) and record the shapes and dtypes your functions are called with,
    into .jaxfix/signatures.json, for `jaxfix verify` to draw inputs from. Exits with the command's exit code."""
    from jaxfix.verify import callsites
    from jaxfix.verify import record as recorder

    root = callsites.project_root(Path.cwd() / "pyproject.toml")
    try:
        recording = recorder.record(command, root)
    except FileNotFoundError as error:
        raise _fail(str(error))
    where = os.path.relpath(recording.path)
    typer.echo(
        f"Recorded {text.plural(recording.signatures, 'signature')} of {text.plural(recording.functions, 'function')} into {where}."
    )
    raise typer.Exit(recording.returncode)


@command(short_help="Remove the result cache.")
def clean(
    paths: List[Path] = typer.Argument(None, metavar="PATH", help="Folders to clean (default: the current one)."),
) -> None:
    """Remove the result cache (.jaxfix_cache/) under PATHS.

    Removes every .jaxfix_cache/ folder under PATHS and the one their runs use (the project root's; in a
    JAXFIX_CACHE_DIR folder, only what jaxfix put there). Runs prune the cache themselves (entries of other
    jaxfix versions and settings unused for 7 days or beyond the 8 most recent); clean empties it."""
    from jaxfix import cache

    targets = paths or [Path(".")]
    missing = [str(p) for p in targets if not p.exists()]
    if missing:
        raise _fail(f"no such file or folder: {missing[0]}")
    try:
        removed = cache.clean(targets)
    except OSError as error:
        raise _fail(f"cannot remove the cache {getattr(error, 'filename', '') or ''}: {error.strerror or error}")
    for folder in removed:
        typer.echo(f"Removed {folder}")
    if not removed:
        typer.echo("No cache to remove.")


def _explain_facts(path: str):
    """The project facts of the file `explain` reads: its project (pyproject.toml or .git above it), else the
    Python files of its folder, as `jaxfix check .` run there would see them."""
    from jaxfix.project_io import project_root
    from jaxfix.engine import _project_facts, project_of

    scope = [path] if project_root([path]) is not None else [str(Path(path).resolve().parent)]
    try:
        project = project_of(scope)
    except Exception:  # noqa: BLE001 - the index is evidence, never a reason to fail
        return None
    return _project_facts([path], None, project)[path] or None


@command(short_help="Say, rule by rule, what decided the findings at one line.")
def explain(
    location: str = typer.Argument(
        ..., metavar="FILE:LINE", help="A line of a Python file, or NOTEBOOK.ipynb:'cell N:LINE'.", show_default=False
    ),
    select: Optional[List[str]] = SelectOpt,
    extend_select: Optional[List[str]] = ExtendSelectOpt,
    ignore: Optional[List[str]] = IgnoreOpt,
) -> None:
    """For each selected rule: whether it matched at the line and whether it offers a fix, or what made it leave
    the code alone (not traced code, a traced trip count, a carry it cannot type, ...). Rules that look at nothing
    on the line are counted on one line. Reads the project around FILE, as `check` does. Exits with 2 on bad input."""
    from jaxfix import explain as explaining

    try:
        target = explaining.parse_target(location)
    except explaining.ExplainError as error:
        raise _fail(str(error))
    settings, _, _ = _prepare(
        [Path(target.path)] if Path(target.path).exists() else [], select, ignore, [], False, extend_select=extend_select
    )
    project = _explain_facts(target.path) if target.cell is None and Path(target.path).is_file() else None
    try:
        explanation = explaining.explain(target, settings.codemods_for(target.path), project)
    except explaining.ExplainError as error:
        raise _fail(str(error))
    for line in explanation.lines():
        typer.echo(line)


@command(short_help="List every rule.")
def rules(
    markdown: bool = typer.Option(False, "--markdown", help="As a Markdown table."),
) -> None:
    """List every codemod: code, name, fix safety and summary."""
    rows = [(c.code, c.name, c.fix_label(), c.summary) for c in registry.all_codemods()]
    if markdown:
        typer.echo("| Code | Name | Fix | What it finds |\n|---|---|---|---|")
        for row in rows:
            typer.echo("| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |")
        return
    widths = [max(len(row[i]) for row in rows) for i in range(3)] if rows else [0, 0, 0]
    for row in rows:
        typer.echo("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:3])) + "  " + row[3])


@command(short_help="Print a rule's documentation.")
def rule(code: str = typer.Argument(..., metavar="CODE", help="A code (JF901) or name.")) -> None:
    """Print a codemod's documentation."""
    codemod = registry.by_code(code)
    if codemod is None:
        raise _fail(f"no codemod is called '{code}' (see `jaxfix rules`)")
    from jaxfix import ruledocs

    typer.echo(ruledocs.page(codemod), nl=False)


@command(short_help="Run the language server, for editors.")
def lsp() -> None:
    """Run the language server on stdin and stdout, for editors: diagnostics and quick fixes."""
    try:
        import pygls.lsp.server  # noqa: F401  (pygls 2; 1.x had pygls.server.LanguageServer)
    except ImportError:
        raise _fail("the language server needs pygls 2 or later: pip install 'jaxfix[lsp]'")
    from jaxfix.server.server import serve

    untune_gc()
    serve()


def _version(value: bool) -> None:
    if value:
        typer.echo(f"jaxfix {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Show the version."),
) -> None:
    """jaxfix: find and fix JAX performance anti-patterns."""


def main() -> None:
    tune_gc()
    try:
        app()
    except KeyboardInterrupt:
        typer.echo("jaxfix: interrupted", err=True)
        sys.exit(130)
    except Exception as error:  # a bug in jaxfix itself: one line, unless asked for the traceback
        if os.environ.get("JAXFIX_DEBUG"):
            raise
        typer.echo(f"jaxfix: internal error: {type(error).__name__}: {error} (JAXFIX_DEBUG=1 shows where)", err=True)
        sys.exit(EXIT_ERROR)
    finally:
        leave_garbage()
