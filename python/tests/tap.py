# SPDX-License-Identifier: MIT
"""Runs the Python module's pytest suite and prints one TAP line per test.

meson runs this as a TAP test (tests/meson.build), so every pytest test counts
in the `N passed, N failed` line of tests/tap-summary.py. pytest's own report
(failures with their tracebacks) goes to stderr, which meson keeps in its log.
Usage: python3 tap.py [PYTEST ARGS...]
"""

import os
import sys


def main(argv):
    # The TAP stream keeps the real stdout; everything else is sent to stderr.
    tap = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    try:
        import pytest
    except ImportError:
        tap.write("1..0 # SKIP pytest is not installed (python3-pytest)\n")
        return 0

    class Tap:
        def __init__(self):
            self.count = 0
            self.outcomes = {}

        def point(self, ok, name, directive=""):
            self.count += 1
            name = name.replace("#", "\\#")
            tap.write(f"{'ok' if ok else 'not ok'} {self.count} - {name}{directive}\n")

        def pytest_collectreport(self, report):
            if report.failed:
                self.point(False, f"collect {report.nodeid or 'tests'}")

        def pytest_runtest_logreport(self, report):
            state = self.outcomes.setdefault(report.nodeid, {"failed": False, "skipped": None, "xfail": None})
            if report.failed:
                state["failed"] = True
            elif report.skipped:
                if hasattr(report, "wasxfail"):
                    state["xfail"] = report.wasxfail or "expected failure"
                else:
                    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
                    state["skipped"] = reason.removeprefix("Skipped: ")
            if report.when == "teardown":
                if state["failed"]:
                    self.point(False, report.nodeid)
                elif state["xfail"]:
                    # TAP's known failure: "not ok # TODO" (meson: EXPECTEDFAIL); an
                    # "ok # TODO" would read as a TODO that passed (UNEXPECTEDPASS).
                    self.point(False, report.nodeid, f" # TODO {state['xfail']}")
                elif state["skipped"]:
                    self.point(True, report.nodeid, f" # SKIP {state['skipped']}")
                else:
                    self.point(True, report.nodeid)

        def pytest_sessionfinish(self, session, exitstatus):
            if self.count == 0:
                tap.write("1..0 # SKIP no test was collected\n")
            else:
                tap.write(f"1..{self.count}\n")

    here = os.path.dirname(os.path.abspath(__file__))
    args = ["-p", "no:cacheprovider", "-rs", "--rootdir", here, here] + argv[1:]
    status = pytest.main(args, plugins=[Tap()])
    return 0 if status in (0, 5) else int(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
