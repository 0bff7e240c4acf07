# SPDX-License-Identifier: MIT
"""What the drop-ins share: which array library an input belongs to, and
scikit-image's conversions of inputs it does not take as they are."""

from __future__ import annotations

import functools
import importlib
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
    module = importlib.import_module(type(array).__module__.partition(".")[0])
    if all(hasattr(module, name) for name in _NUMPY_NAMES):
        return module
    if hasattr(array, "__array_namespace__"):
        return array.__array_namespace__()
    raise TypeError(f"{type(array).__module__}.{type(array).__name__} arrays are not taken: give NumPy or CuPy arrays")


def small_host_array(value):
    """A footprint (a few cells) on the host, from NumPy, a sequence, or a
    CuPy array (cuCIM makes its footprints on the device)."""
    if hasattr(value, "get") and not isinstance(value, np.ndarray):
        value = value.get()
    return np.asarray(value)


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


def renamed_keyword(old, new, removed_version="1.0"):
    """scikit-image 0.19's ``deprecate_kwarg``: the old name still works,
    with the FutureWarning that scikit-image gives for it."""

    def decorate(function):
        @functools.wraps(function)
        def call(*args, **kwargs):
            if old in kwargs:
                warnings.warn(f"`{old}` is a deprecated argument name for `{function.__name__}`. It will be removed "
                              f"in version {removed_version}. Please use `{new}` instead.", FutureWarning,
                              stacklevel=2)
                kwargs[new] = kwargs.pop(old)
            return function(*args, **kwargs)

        return call

    return decorate
