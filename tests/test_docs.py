"""The docs stay honest in cheap ways: links lead somewhere, the commands and options they name exist (as each
command's --help shows them), every command and option is documented, the TOML examples are settings jaxfix
accepts, and the rule codes they name are rules."""

from __future__ import annotations

import functools
import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jaxfix import config, registry
from jaxfix.cli import app
from jaxfix.engine import settings_from_config
from jaxfix.verify import settings as verify_settings

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))  # the pages written for users (docs/rules/ is generated from the rules)
LINKED = [*sorted(DOCS.rglob("*.md")), ROOT / "README.md"]
CLI_PAGE = DOCS / "cli.md"


# Pages about one command: the options in their option tables are that command's.
PAGE_COMMANDS = {"verification.md": ("verify",), "bench.md": ("bench",)}

FENCED = re.compile(r"^```([^\n]*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
INLINE = re.compile(r"`((?:[^`\n]|\n(?!\s*\n))+)`")  # a code span may wrap, not cross a paragraph
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
OPTION = re.compile(r"^--?[a-z][a-z0-9-]*$")
SHELL_STOPS = {"|", "||", "&&", ";", "<", ">", "--"}


def text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def prose(markdown: str) -> str:
    """The text outside fenced code blocks and code spans."""
    return INLINE.sub("", FENCED.sub("", markdown))


def code(markdown: str) -> list[str]:
    """Every fenced block's lines, without shell or YAML comments, and every code span."""
    blocks = [re.sub(r"(^|\s)# .*", "", line) for _, block in FENCED.findall(markdown) for line in block.splitlines()]
    return blocks + [span.replace("\n", " ") for span in INLINE.findall(FENCED.sub("", markdown))]


@functools.cache
def help_options(command: str) -> frozenset[str]:
    """The options `jaxfix COMMAND --help` lists in its Options section (`  -j, --jobs N  Worker ...`)."""
    result = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "200", "TERMINAL_WIDTH": "200"})
    assert result.exit_code == 0, result.output
    found = set()
    options = result.output.split("\nOptions:\n", 1)[1]
    for line in options.splitlines():
        names = re.match(r"^  ((?:-{1,2}[a-z][\w-]*(?:, |/| |$))+)", line)
        if names:
            found.update(n for n in re.split(r"[, /]+", names[1]) if n.startswith("-"))
    assert "--help" in found, result.output  # the panel was read
    return frozenset(found - {"--help"})


@functools.cache
def commands() -> frozenset[str]:
    result = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "200", "TERMINAL_WIDTH": "200"})
    panel = result.output.split("Commands:", 1)[1]
    return frozenset(re.findall(r"^  ([a-z][a-z-]*)\s", panel, re.MULTILINE))


def command_lines(markdown: str):
    """(command, options) for each `jaxfix COMMAND ...` in code, the options up to a pipe, redirection or `--`."""
    for line in code(markdown):
        for match in re.finditer(r"(?:^|(?<=[\s`$(]))jaxfix\s+([a-z][a-z-]*)([^\n]*)", line):
            try:
                tokens = shlex.split(match[2], comments=True)
            except ValueError:
                tokens = match[2].split()
            options = []
            for token in tokens:
                if token in SHELL_STOPS or token[0] in "<>|":
                    break
                if token.endswith(";"):  # `jaxfix check x/; jaxfix apply ...`: the next command starts
                    break
                name = token.split("=", 1)[0]
                if OPTION.match(name):
                    options.append(name)
            yield match[1], options


def sections(markdown: str):
    """(heading, body) for each `##` or `###` section."""
    parts = re.split(r"^(#{2,3} .*)$", FENCED.sub("", markdown), flags=re.MULTILINE)
    return list(zip(parts[1::2], parts[2::2]))


def slugs(markdown: str) -> set[str]:
    """GitHub's anchors for a page's headings."""
    seen: dict[str, int] = {}
    out = set()
    for heading in re.findall(r"^#{1,6} +(.+?)\s*$", FENCED.sub("", markdown), re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        out.add(slug if count == 0 else f"{slug}-{count}")
    return out


@pytest.mark.parametrize("page", LINKED, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_lead_somewhere(page: Path) -> None:
    broken = []
    for target in LINK.findall(prose(text(page))):
        if re.match(r"^[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if not resolved.exists():
            broken.append(f"{target}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in slugs(text(resolved)):
            broken.append(f"{target}: no heading with that anchor")
    assert not broken, broken


def test_the_commands_the_docs_name_exist() -> None:
    named = {(page.name, command) for page in [*PAGES, ROOT / "README.md"] for command, _ in command_lines(text(page))}
    assert {command for _, command in named} >= {"check", "apply"}, "the parser found the commands"
    unknown = sorted(f"{page}: jaxfix {command}" for page, command in named if command not in commands())
    assert not unknown, unknown


def test_the_options_of_command_lines_exist() -> None:
    """`jaxfix apply --diff ...` anywhere in the docs or README: --diff is an option of `apply`."""
    wrong = []
    for page in [*PAGES, ROOT / "README.md"]:
        for command, options in command_lines(text(page)):
            if command in commands():
                wrong += [f"{page.name}: jaxfix {command} {o}" for o in options if o not in help_options(command)]
    assert not wrong, wrong


def test_the_option_tables_name_real_options() -> None:
    """Tables whose first column is `Option`: each option exists for each command of its row (the `Commands`
    column) or of its page (verification.md: verify, bench.md: bench)."""
    checked, wrong = 0, []
    for page in PAGES:
        for table in re.findall(r"^\| Option \|.*?(?=^[^|]|\Z)", FENCED.sub("", text(page)), re.MULTILINE | re.DOTALL):
            header, _, *rows = table.strip().splitlines()
            columns = [c.strip() for c in header.strip("|").split("|")]
            for row in rows:
                cells = [c.strip() for c in re.split(r"(?<!\\)\|", row.strip().strip("|"))]
                if "Commands" in columns:
                    targets = [c.strip() for c in cells[columns.index("Commands")].split(",")]
                else:
                    targets = list(PAGE_COMMANDS[page.name])
                for span in INLINE.findall(cells[0]):
                    option = span.split()[0]
                    for command in targets:
                        checked += 1
                        if option not in help_options(command):
                            wrong.append(f"{page.name}: {option} of {command}")
    assert checked > 40, "the option tables were read"
    assert not wrong, wrong


def test_each_command_section_of_cli_md_names_its_own_options() -> None:
    """In docs/cli.md, an option written alone (`--diff`) under a heading naming commands is one of theirs;
    under any other heading, one of some command."""
    wrong = []
    for heading, body in sections(text(CLI_PAGE)):
        named = [c for c in re.findall(r"`jaxfix ([a-z]+)`", heading) if c in commands()] or sorted(commands())
        for span in INLINE.findall(body):
            option = span.split()[0]
            if not OPTION.match(option) or span.startswith("jaxfix"):
                continue
            if not any(option in help_options(c) for c in named):
                wrong.append(f"{heading}: {option}")
    assert not wrong, wrong


def test_every_command_has_a_section_in_cli_md() -> None:
    headings = " ".join(heading for heading, _ in sections(text(CLI_PAGE)))
    missing = sorted(c for c in commands() if f"`jaxfix {c}`" not in headings)
    assert not missing, missing


def test_every_option_is_documented() -> None:
    spans = {token for page in PAGES for line in code(text(page)) for token in re.findall(r"--?[a-z][\w-]*", line)}
    missing = sorted(f"jaxfix {c} {o}" for c in commands() for o in help_options(c) if o not in spans and not o.startswith("--no-"))
    assert not missing, missing


def toml_examples():
    for page in PAGES:
        for language, block in FENCED.findall(text(page)):
            if language.strip() == "toml" and "[tool.jaxfix" in block:
                yield pytest.param(block, id=f"{page.name}:{block.splitlines()[0]}")


@pytest.mark.parametrize("block", list(toml_examples()))
def test_toml_examples_are_accepted(block: str, tmp_path: Path) -> None:
    keys = set(re.findall(r"^([a-z][a-z-]*)\s*=", block, re.MULTILINE))
    (tmp_path / "pyproject.toml").write_text(block, encoding="utf-8")
    loaded = config.load(tmp_path)
    assert loaded.source == tmp_path / "pyproject.toml"
    settings_from_config(loaded)  # raises ConfigError for an unknown code, rule or option
    verify_settings.load(tmp_path)  # raises ConfigError for a bad [tool.jaxfix.verify]


def test_the_rule_codes_the_docs_name_exist() -> None:
    named = {code for page in PAGES for code in re.findall(r"\bJF\d{3}\b", text(page))}
    unknown = sorted(code for code in named if registry.by_code(code) is None)
    assert not unknown, unknown


def test_verify_page_keeps_the_timing_placeholder_or_a_number() -> None:
    """The measured time of `jaxfix verify corpus/` goes where the placeholder is."""
    page = text(DOCS / "verification.md")
    assert "<!-- verify-corpus-timing -->" in page or "jaxfix verify corpus/" in page
