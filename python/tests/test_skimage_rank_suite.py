# SPDX-License-Identifier: MIT
"""scikit-image's own rank-filter tests, unmodified, on entroscope.skimage.

The source of scikit-image's test_rank.py is compiled as it is; its
module-level name `rank`, through which every one of its calls reaches a
filter (``rank.entropy(...)``, ``getattr(rank, filter)``), is then bound to
scikit-image's rank module with `entropy` replaced by entroscope.skimage's.
Each test of that file that calls entropy runs here, with only its entropy
parameters where it is parametrized over the filters (by name, or by
function: scikit-image's entropy there is replaced by entroscope's), and must
call entroscope at least once: a test that passed without reaching
entroscope would prove nothing. The calls are counted without a frame
between the test and the drop-in where Python allows it (3.12 on:
sys.monitoring's PY_START events on the drop-in's code), since scikit-image
0.26's tests check which line a warning names; on 3.11, a counting wrapper.

Which test_rank.py: by default the installed scikit-image's
(skimage/filters/rank/tests/test_rank.py, Debian 12's python3-skimage 0.19).
ES_SKIMAGE_RANK_TESTS=DIR takes DIR/test_rank.py instead, for a
scikit-image whose wheel ships no tests (0.26 on the GPU machine:
tests/gpu/make-skimage-tests-carry.sh writes DIR from scikit-image's git).
DIR also holds the data files that file fetches: while it is compiled,
``skimage._shared.testing.fetch("data/NAME")`` gives DIR/NAME where it
exists, its sha256 checked against scikit-image's data registry where that
knows the name (a mismatch fails). rank_filters_tests_3d.npz, which
scikit-image's git does not hold (0.26 downloads it), is made by the
installed scikit-image's own entropy of test_rank.py's volume where
scikit-image's own fetch cannot give it; any other file is fetch's.
"""

import atexit
import hashlib
import inspect
import itertools
import os
import sys
import tempfile
import threading
import types
import warnings
from pathlib import Path

import numpy as np
import pytest

skimage_rank = pytest.importorskip("skimage.filters.rank")

from entroscope.skimage.filters import rank as entroscope_rank  # noqa: E402

TESTS_DIR = Path(os.environ["ES_SKIMAGE_RANK_TESTS"]) if os.environ.get("ES_SKIMAGE_RANK_TESTS") else None
SOURCE = (TESTS_DIR / "test_rank.py" if TESTS_DIR is not None
          else Path(skimage_rank.__file__).parent / "tests" / "test_rank.py")
# The parameters through which test_rank.py's tests name a filter: by its
# name (0.19, 0.26) or by the function itself (0.26's test_1d_input_raises_error).
FILTER_ARGUMENTS = ("filter", "method", "func")
# scikit-image's own entropy, as test_rank.py's parameters hold it.
SKIMAGE_ENTROPY = skimage_rank.entropy
# The drop-in, and the code object each of its calls runs.
DROP_IN = entroscope_rank.entropy
DROP_IN_CODE = inspect.unwrap(DROP_IN).__code__


class _Calls:
    """Calls of the drop-in, from any thread (test_parallel and
    run_in_parallel run a check in two)."""

    def __init__(self):
        self.count = 0
        self.lock = threading.Lock()

    def add(self):
        with self.lock:
            self.count += 1


CALLS = _Calls()


def _count_without_a_frame():
    """Counts the drop-in's calls through sys.monitoring (Python 3.12 on):
    True where it does, False where it cannot (3.11, or no free tool id)."""
    monitoring = getattr(sys, "monitoring", None)
    if monitoring is None:
        return False
    tool = next((t for t in (3, 4, monitoring.PROFILER_ID, monitoring.OPTIMIZER_ID, monitoring.DEBUGGER_ID)
                 if monitoring.get_tool(t) is None), None)
    if tool is None:
        return False
    monitoring.use_tool_id(tool, "entroscope: scikit-image's rank tests")

    def started(code, offset):
        if code is DROP_IN_CODE:
            CALLS.add()

    monitoring.register_callback(tool, monitoring.events.PY_START, started)
    monitoring.set_local_events(tool, DROP_IN_CODE, monitoring.events.PY_START)

    def release():
        monitoring.set_local_events(tool, DROP_IN_CODE, monitoring.events.NO_EVENTS)
        monitoring.register_callback(tool, monitoring.events.PY_START, None)
        monitoring.free_tool_id(tool)

    atexit.register(release)
    return True


def _counting_wrapper():
    def entropy(*args, **kwargs):
        CALLS.add()
        return DROP_IN(*args, **kwargs)

    return entropy


FRAME_FREE = _count_without_a_frame()
# What test_rank.py calls as rank.entropy.
ENTROPY = DROP_IN if FRAME_FREE else _counting_wrapper()


def _entropy_3d_reference():
    """rank_filters_tests_3d.npz's entropy, which scikit-image's git does not
    hold (0.26 downloads it): the installed scikit-image's own entropy of the
    volume and footprint that test_rank.py's setup_method makes."""
    from skimage.morphology import ball

    np.random.seed(0)
    volume = np.random.rand(10, 10, 10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the float volume's precision-loss warning
        return {"entropy": skimage_rank.entropy(volume, ball(1))}


# Reference files test_rank.py fetches that the installed scikit-image can make.
MADE_BY_SCIKIT_IMAGE = {"data/rank_filters_tests_3d.npz": _entropy_3d_reference}


def _fetch_from(directory, fetch):
    """skimage._shared.testing.fetch, giving data/NAME from `directory`."""
    try:
        from skimage.data._registry import registry
    except ImportError:
        registry = {}

    def fetch_here(data_filename, prefix=None, *args, **kwargs):
        name = data_filename[len("data/"):] if data_filename.startswith("data/") and prefix is None else None
        if name is not None and (directory / name).is_file():
            path = directory / name
            expected = registry.get(data_filename)
            if expected is not None:
                got = hashlib.sha256(path.read_bytes()).hexdigest()
                if got != expected:
                    raise AssertionError(f"{path}: sha256 {got}, but scikit-image's data registry has {expected} "
                                         f"for {data_filename}")
            return str(path)
        try:
            return fetch(data_filename, prefix, *args, **kwargs)
        except (Exception, pytest.skip.Exception):
            if data_filename not in MADE_BY_SCIKIT_IMAGE:
                raise
        made = Path(tempfile.mkdtemp(prefix="es-skimage-rank-")) / Path(data_filename).name
        atexit.register(lambda: (made.unlink(), made.parent.rmdir()))
        np.savez(made, **MADE_BY_SCIKIT_IMAGE[data_filename]())
        return str(made)

    return fetch_here


def _load_suite():
    if not SOURCE.exists():
        if TESTS_DIR is not None:
            raise FileNotFoundError(f"ES_SKIMAGE_RANK_TESTS={TESTS_DIR}: there is no {SOURCE}")
        return None
    suite = types.ModuleType("skimage_test_rank_on_entroscope")
    suite.__file__ = str(SOURCE)
    code = compile(SOURCE.read_text(), str(SOURCE), "exec")
    if TESTS_DIR is None:
        exec(code, suite.__dict__)
    else:
        import skimage
        import skimage._shared.testing as testing
        fetch = getattr(testing, "fetch", None)
        testing.fetch = _fetch_from(TESTS_DIR, fetch)
        try:
            exec(code, suite.__dict__)
        except Exception as error:
            raise ImportError(f"ES_SKIMAGE_RANK_TESTS: {SOURCE} does not load against the installed scikit-image "
                              f"{skimage.__version__} ({skimage.__file__}): {type(error).__name__}: {error}") from error
        finally:
            testing.fetch = fetch
    routed = types.ModuleType("skimage.filters.rank (entropy from entroscope.skimage)")
    routed.__dict__.update({k: v for k, v in vars(skimage_rank).items() if not k.startswith("__")})
    routed.entropy = ENTROPY
    suite.rank = routed
    return suite


SUITE = _load_suite()


def _filter_name(value):
    """'entropy' for scikit-image's entropy, as a name or as its function."""
    return "entropy" if value is SKIMAGE_ENTROPY else value


def _cases():
    """(id, test class or None, function, keyword arguments, skip reason) of
    every test in test_rank.py that calls entropy."""
    if SUITE is None:
        return
    owners = [(None, SUITE.__dict__)] + [(value, vars(value)) for value in vars(SUITE).values()
                                         if inspect.isclass(value) and value.__name__.startswith("Test")]
    for owner, names in owners:
        for name, function in names.items():
            if not name.startswith("test_") or not callable(function):
                continue
            marks = getattr(function, "pytestmark", [])
            skip = next((m.kwargs.get("reason", "skipped") for m in marks if m.name == "skip"), None)
            grids = [m for m in reversed(marks) if m.name == "parametrize"]
            argnames = [[a.strip() for a in m.args[0].split(",")] if isinstance(m.args[0], str) else list(m.args[0])
                        for m in grids]
            named = [n for names_ in argnames for n in names_]
            calls_entropy_by_name = "entropy" in inspect.getsource(function)
            for combination in itertools.product(*(m.args[1] for m in grids)):
                kwargs = {}
                for names_, values in zip(argnames, combination):
                    values = values if len(names_) > 1 else (values,)
                    kwargs.update(zip(names_, values))
                chosen = [_filter_name(kwargs[n]) for n in FILTER_ARGUMENTS if n in named]
                if chosen and chosen != ["entropy"] * len(chosen):
                    continue
                if not chosen and not calls_entropy_by_name:
                    continue
                # scikit-image's entropy, passed as a function, is the drop-in's here.
                kwargs = {k: ENTROPY if v is SKIMAGE_ENTROPY else v for k, v in kwargs.items()}
                label = "-".join(getattr(v, "__name__", str(v)) for v in combination)
                prefix = f"{owner.__name__}." if owner is not None else ""
                yield (f"{prefix}{name}" + (f"[{label}]" if label else ""), owner, function, kwargs, skip)


CASES = list(_cases())
# Reached only by comparing float64 results with rtol=1e-15 (about 4 ulps) against a
# file of scikit-image's own float64 sums: Entroscope computes in float32 (DESIGN.md §1).
FLOAT32_LIMITED = {
    "TestRank.test_rank_filter[None-entropy]",
    "TestRank.test_rank_filter[float32-entropy]",
    "TestRank.test_rank_filter[float64-entropy]",
}


def _parameters():
    for case in CASES:
        marks = []
        if case[0] in FLOAT32_LIMITED:
            marks.append(pytest.mark.xfail(strict=True, reason="rtol=1e-15 against scikit-image's float64 sums; "
                                           "entroscope's kernels give float32 (within 1.2e-7)"))
        yield pytest.param(case, id=case[0], marks=marks)


@pytest.mark.skipif(SUITE is None, reason=f"{SOURCE} is not installed")
def test_the_suite_has_entropy_tests():
    # test_rank.py of scikit-image 0.19 and 0.26 has these; a rename there
    # must not quietly shrink what runs here.
    names = {case[0].partition("[")[0] for case in CASES}
    assert {"TestRank.test_rank_filter", "TestRank.test_entropy", "TestRank.test_compare_ubyte_vs_float_3d",
            "TestRank.test_compare_8bit_unsigned_vs_signed_3d"} <= names
    if "run_in_parallel" in vars(SUITE):
        # 0.26's (run_in_parallel replaced test_parallel): its refusals and
        # boolean-shift warnings, the entropy function as a parameter.
        assert {"test_1d_input_raises_error", "TestRank.test_rank_filter_footprint_sequence_unsupported",
                "TestRank.test_rank_filters_3D", "TestRank.test_rank_filters_boolean_shift",
                "TestRank.test_rank_filters_3D_boolean_shift"} <= names
        assert "test_1d_input_raises_error[entropy]" in {case[0] for case in CASES}
    assert not (FLOAT32_LIMITED - {case[0] for case in CASES}), "the expected failures' ids are not the suite's"


def _hide_modules_that_break_expected_warnings(monkeypatch):
    """scikit-image's `expected_warnings`, which test_rank.py's checks use,
    calls every imported module's ``__warningregistry__.clear()`` and
    catches only AttributeError; PyTorch's `torch.classes` answers any name
    with a namespace whose attributes raise RuntimeError. Where such a
    module was imported before (the device-array tests import torch), it is
    out of sys.modules for the test."""
    for name, module in list(sys.modules.items()):
        try:
            module.__warningregistry__.clear  # noqa: B018 (the lookups expected_warnings makes)
        except AttributeError:
            pass
        except Exception:
            monkeypatch.delitem(sys.modules, name)


def _scikit_image_entropy_ran(*args, **kwargs):
    raise AssertionError("scikit-image's own entropy kernel ran: a call escaped entroscope.skimage")


@pytest.mark.parametrize("case", list(_parameters()))
def test_skimage_rank_test(case, monkeypatch, drop_in_backend):
    name, owner, function, kwargs, skip = case
    if skip is not None:
        pytest.skip(f"{name}: {skip} (skipped in scikit-image's own run too)")
    # Every 2-D and 3-D entropy of scikit-image ends in these two kernels.
    generic_cy = skimage_rank.generic.generic_cy
    monkeypatch.setattr(generic_cy, "_entropy", _scikit_image_entropy_ran)
    monkeypatch.setattr(generic_cy, "_entropy_3D", _scikit_image_entropy_ran)
    _hide_modules_that_break_expected_warnings(monkeypatch)
    before = CALLS.count
    if owner is None:
        function(**kwargs)
    else:
        instance = owner()
        # setup_method in scikit-image 0.26, setup in 0.19.
        setup = getattr(instance, "setup_method", None) or getattr(instance, "setup", None)
        if setup is not None:
            setup()
        function(instance, **kwargs)
    calls = CALLS.count - before
    print(f"{name}: {calls} calls of entroscope.skimage.filters.rank.entropy")
    assert calls > 0, f"{name} ran without calling entroscope.skimage's entropy"
