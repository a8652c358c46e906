"""A pytest plugin (`-p outcomes_plugin`) that writes one JSON line per test phase and per collection error to
the file named by REAL_SUITES_OUTCOMES: the node id, the phase, pytest's outcome, the duration and the failure's
text. benchmarks/real_suites.py folds the lines into one outcome per test; node ids, unlike JUnit's class names,
can be passed back to pytest to rerun exactly the tests that turned red."""

import json
import os


def _write(record):
    with open(os.environ["REAL_SUITES_OUTCOMES"], "a", encoding="utf-8") as out:
        out.write(json.dumps(record) + "\n")


def _text(report):
    return str(report.longrepr) if report.longrepr is not None else ""


def pytest_runtest_logreport(report):
    _write({"nodeid": report.nodeid, "when": report.when, "outcome": report.outcome,
            "xfail": hasattr(report, "wasxfail"), "duration": report.duration,
            "text": _text(report) if report.failed else ""})


def pytest_collectreport(report):
    if report.failed:
        _write({"nodeid": report.nodeid, "when": "collect", "outcome": "failed", "xfail": False, "duration": 0.0,
                "text": _text(report)})
