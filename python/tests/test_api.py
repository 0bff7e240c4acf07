# SPDX-License-Identifier: MIT
"""The module's surface: signatures, names, and arguments that used to be
dropped or misreported (window= beside a shape, numpy.ma masks, negative
histogram counts, integers past long long)."""

import inspect

import numpy as np
import pytest

import entroscope


def _public_functions():
    for name in entroscope.__all__:
        value = getattr(entroscope, name)
        # Exceptions and the struct-sequence rows (Timing, Variant) are types, not calls.
        if callable(value) and not (isinstance(value, type) and value is not entroscope.Engine):
            yield name, value


@pytest.mark.parametrize("name,function", list(_public_functions()), ids=lambda v: v if isinstance(v, str) else "")
def test_signature_of_every_public_function(name, function):
    assert inspect.signature(function) is not None


ENGINE_METHODS = [name for name, value in vars(entroscope.Engine).items()
                  if callable(value) and (not name.startswith("_") or name in ("__enter__", "__exit__"))]


@pytest.mark.parametrize("name", ENGINE_METHODS)
def test_signature_of_every_engine_method(name):
    signature = inspect.signature(getattr(entroscope.Engine, name))
    assert next(iter(signature.parameters)) == "self"


def test_signatures_say_what_the_calls_take():
    assert list(inspect.signature(entroscope.Engine).parameters) == ["backend", "devices"]
    entropy = inspect.signature(entroscope.Engine.entropy).parameters
    assert entropy["image"].kind is inspect.Parameter.POSITIONAL_ONLY
    assert {"window", "levels", "rect", "disk", "footprint", "box", "ball", "mask", "like"} <= entropy.keys()
    assert list(inspect.signature(entroscope.halo).parameters) == ["op", "job"]
    # A signature's defaults work as given.
    with entroscope.Engine("cpu") as engine:
        assert engine.zeros((2, 3), **{"dtype": inspect.signature(engine.zeros).parameters["dtype"].default}).dtype \
            == np.uint8
        image = np.arange(30, dtype=np.uint8).reshape(5, 6)
        defaults = {name: p.default for name, p in inspect.signature(engine.entropy).parameters.items()
                    if p.default is not inspect.Parameter.empty and p.default is not Ellipsis}
        np.testing.assert_array_equal(engine.entropy(image, **defaults), engine.entropy(image))


@pytest.mark.parametrize("shape", [{"disk": 2}, {"rect": (3, 5)}, {"footprint": np.ones((3, 3))}, {"box": (1, 3, 3)},
                                   {"ball": 1}])
def test_window_beside_a_shape_is_a_type_error(shape):
    image = np.zeros((9, 9), np.uint8)
    with pytest.raises(TypeError, match="give one of them"):
        entroscope.entropy(image, window=7, **shape)
    with pytest.raises(TypeError, match="give one of them"):
        entroscope.extent("entropy", window=7, **shape)


def test_masked_image_is_honoured_by_entropy(rng):
    image = rng.integers(0, 256, (31, 17), dtype=np.uint8)
    hidden = rng.random(image.shape) < 0.3
    got = entroscope.entropy(np.ma.array(image, mask=hidden), disk=2)
    np.testing.assert_array_equal(got, entroscope.entropy(image, disk=2, mask=~hidden))
    assert np.isnan(got[hidden]).all() and not np.isnan(got[~hidden]).any()
    with pytest.raises(TypeError, match="give one of them"):
        entroscope.entropy(np.ma.array(image, mask=hidden), mask=~hidden)


def test_masked_arrays_are_refused_where_not_honoured(rng, tmp_path):
    image = np.ma.array(rng.integers(0, 256, (8, 9), dtype=np.uint8), mask=np.eye(8, 9, dtype=bool))
    for call in [lambda: entroscope.equalize(image), lambda: entroscope.sharpen(image),
                 lambda: entroscope.quantize(image), lambda: entroscope.clahe(image),
                 lambda: entroscope.default_engine().entropy(image), lambda: entroscope.gray(image),
                 lambda: entroscope.entropy(image.data, mask=np.ma.array(np.ones(image.shape), mask=image.mask)),
                 lambda: entroscope.entropy(image.data, footprint=np.ma.array(np.ones((3, 3)))),
                 lambda: entroscope.save(tmp_path / "h.tif", np.ma.array(np.zeros((3, 3), np.float32)))]:
        with pytest.raises(TypeError, match="MaskedArray"):
            call()


@pytest.mark.parametrize("counts", [np.r_[-1, np.ones(255, np.int64)], np.r_[np.ones(255), -0.5],
                                    np.r_[np.nan, np.ones(255)]])
def test_equalize_lut_refuses_negative_counts(counts):
    with pytest.raises(ValueError, match="counts are 0 or more"):
        entroscope.equalize_lut(counts)


def test_equalize_lut_takes_counts_of_any_integer_or_float_dtype():
    counts = np.arange(256)
    expected = entroscope.equalize_lut(counts.astype(np.uint64))
    for dtype in (np.int64, np.int32, np.float64, np.uint16):
        np.testing.assert_array_equal(entroscope.equalize_lut(counts.astype(dtype)), expected)


@pytest.mark.parametrize("value", [2**70, -2**70, 2**63])
def test_huge_numbers_are_named_as_given(value):
    image = np.zeros((9, 9), np.uint8)
    with pytest.raises(ValueError, match=f"window {value} is out of range: odd, 3..255"):
        entroscope.entropy(image, window=value)
    with pytest.raises(ValueError, match=f"levels {value} is out of range: 2..65536"):
        entroscope.quantize(image, levels=value)


def test_dir_shows_the_api_only():
    names = {name for name in dir(entroscope) if not name.startswith("_")}
    assert not names & {"np", "os", "threading", "annotations"}
    assert set(entroscope.__all__) <= names


def test_readme_states_the_real_ranges():
    from conftest import ROOT

    readme = (ROOT / "python" / "README.md").read_text()
    params = entroscope.params()
    window, levels = params["window"], params["levels"]
    assert f"**window** (odd, {window['min']:g}..{window['max']:g})" in readme
    assert f"**levels** ({levels['min']:g}..{levels['max']:g})" in readme
