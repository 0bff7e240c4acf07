# SPDX-License-Identifier: MIT
"""What the drop-ins share: which array library an input belongs to, and
scikit-image's conversions of inputs it does not take as they are."""

from __future__ import annotations

import collections
import functools
import importlib
import os
import sys
import threading
import warnings

import numpy as np


# What the drop-ins call on an array library: NumPy's names.
_NUMPY_NAMES = ("zeros", "ones", "isnan", "bincount", "cumsum", "clip", "bool_", "float32", "float64", "int64")


def namespace(array):
    """The array library of `array`, so that device arrays stay where they
    are: NumPy for NumPy arrays, else the top-level module of the array's
    type where it has NumPy's names (CuPy), else ``__array_namespace__``."""
    if isinstance(array, np.ndarray):
        return np
    module = _library_of(type(array))
    if module is not None:
        return module
    if hasattr(array, "__array_namespace__"):
        return array.__array_namespace__()
    raise TypeError(f"{type(array).__module__}.{type(array).__name__} arrays are not taken: give NumPy or CuPy arrays")


@functools.lru_cache(maxsize=None)
def _library_of(array_type):
    """The top-level module of an array type where it has NumPy's names, else None."""
    module = importlib.import_module(array_type.__module__.partition(".")[0])
    return module if all(hasattr(module, name) for name in _NUMPY_NAMES) else None


# Host copies of the CuPy footprints read lately, by where they lie.
_DEVICE_FOOTPRINTS = collections.OrderedDict()
_DEVICE_FOOTPRINTS_KEPT = 16
_DEVICE_FOOTPRINTS_LOCK = threading.Lock()


def host_footprint(value):
    """The footprint's cells on the host, and a check to call once the
    call's kernels are queued (None where there is nothing to check): it
    returns None where the call used the footprint's cells, else the cells
    it has now, to call again with.

    Reading a CuPy footprint back before the call would put the read, its
    wait and the copy's latency (10–30 µs) ahead of the kernels, about a
    tenth of a 3×3 square's whole call at 8192² on an H200. So a footprint
    read before at the same address, shape and dtype is taken as it was,
    and the check reads it again while the kernels run: on a stream of its
    own, behind the work queued on the current stream before the call (an
    event recorded here), into page-locked memory, waiting for that read
    alone, and compares the two. A guess that was wrong costs one more
    call, never a wrong result. Footprints other than CuPy's (NumPy,
    sequences) are taken as they are."""
    if isinstance(value, np.ndarray) or not hasattr(value, "get"):
        return np.asarray(value), None
    import cupy

    data = value.data
    key = (data.device_id, data.ptr, value.shape, value.strides, value.dtype.str)
    cached = _DEVICE_FOOTPRINTS.get(key)
    if cached is None or key[0] != cupy.cuda.runtime.getDevice():
        host = value.get()
        if value.flags.c_contiguous:
            _remember(key, host)
        return host, None
    called = _call_event(key[0], cupy)
    called.record(cupy.cuda.get_current_stream())

    def changed_cells():
        reader = _reading_stream(key[0], cupy)
        reader.wait_event(called)
        stage = cupy.cuda.alloc_pinned_memory(value.nbytes)
        cupy.cuda.runtime.memcpyAsync(stage.ptr, value.data.ptr, value.nbytes,
                                      cupy.cuda.runtime.memcpyDeviceToHost, reader.ptr)
        reader.synchronize()
        now = np.frombuffer(stage, value.dtype, value.size).reshape(value.shape)
        if now.tobytes() == cached.tobytes():
            return None
        now = now.copy()
        _remember(key, now)
        return now

    return cached, changed_cells


_READING_STREAMS = {}
_CALL_EVENTS = threading.local()


def _call_event(device, cupy):
    """This thread's event on `device` that marks a call's start for the
    footprint's read (recorded again at each call: creating one is a
    driver call)."""
    events = getattr(_CALL_EVENTS, "by_device", None)
    if events is None:
        events = _CALL_EVENTS.by_device = {}
    event = events.get(device)
    if event is None:
        event = events[device] = cupy.cuda.Event(disable_timing=True)
    return event


def _reading_stream(device, cupy):
    """The stream on which `device`'s footprints are read beside the kernels."""
    stream = _READING_STREAMS.get(device)
    if stream is None:
        with _DEVICE_FOOTPRINTS_LOCK:
            stream = _READING_STREAMS.setdefault(device, cupy.cuda.Stream(non_blocking=True))
    return stream


def _remember(key, host):
    with _DEVICE_FOOTPRINTS_LOCK:
        _DEVICE_FOOTPRINTS[key] = host
        _DEVICE_FOOTPRINTS.move_to_end(key)
        while len(_DEVICE_FOOTPRINTS) > _DEVICE_FOOTPRINTS_KEPT:
            _DEVICE_FOOTPRINTS.popitem(last=False)


def img_as_ubyte(array, what):
    """scikit-image's ``img_as_ubyte`` of a host array that is not uint8 or
    uint16 (floats in -1..1, signed integers, ...): its rules are its own
    (rounding, clipping, bit shifts), so its own function applies them."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"{what} of dtype {array.dtype} on a device cannot be converted as scikit-image converts it; "
                        "give uint8 or uint16")
    try:
        from skimage.util import img_as_ubyte as convert
    except ImportError:
        raise TypeError(f"{what} of dtype {array.dtype}: scikit-image (python3-skimage) converts it with "
                        "img_as_ubyte, and is not installed; give uint8 or uint16") from None
    return convert(array)


# The entroscope package's folder: its frames are not the user's.
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


@functools.lru_cache(maxsize=256)
def _inside_package(filename):
    return os.path.abspath(filename).startswith(_PACKAGE)


def user_stacklevel():
    """``warnings.warn``'s stacklevel, for a warning given by the function
    that calls this one, that names the first frame outside the entroscope
    package (the user's line), however many of the package's own frames
    (decorators such as `renamed_keyword`) lie between."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None and _inside_package(frame.f_code.co_filename):
        frame = frame.f_back
        level += 1
    return level


def renamed_keyword(old, new, removed_version="1.0"):
    """scikit-image 0.19's ``deprecate_kwarg``: the old name still works,
    with the FutureWarning that scikit-image gives for it (0.26 has dropped
    the old name: keeping it takes nothing from 0.26's calls)."""

    def decorate(function):
        @functools.wraps(function)
        def call(*args, **kwargs):
            if old in kwargs:
                warnings.warn(f"`{old}` is a deprecated argument name for `{function.__name__}`. It will be removed "
                              f"in version {removed_version}. Please use `{new}` instead.", FutureWarning,
                              stacklevel=user_stacklevel())
                kwargs[new] = kwargs.pop(old)
            return function(*args, **kwargs)

        return call

    return decorate
