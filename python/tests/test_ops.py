# SPDX-License-Identifier: MIT
"""The four operations against the slow references of DESIGN.md §1, scikit-image and OpenCV."""

import math

import numpy as np
import pytest

import entroscope
import reference
from conftest import awkward_sizes


def random_image(rng, shape, dtype=np.uint8):
    top = np.iinfo(dtype).max
    return rng.integers(0, top + 1, shape, dtype=dtype)


@pytest.mark.parametrize("shape", awkward_sizes())
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_entropy_matches_reference(rng, shape, dtype):
    image = random_image(rng, shape, dtype)
    for window, levels in [(3, 2), (5, 16), (7, 256), (31, 16)]:
        got = entroscope.entropy(image, window, levels)
        assert got.dtype == np.float32 and got.shape == shape
        want = reference.entropy(image, window, levels)
        assert np.abs(got - want).max() <= 1e-5, (window, levels)


@pytest.mark.parametrize("shape", awkward_sizes())
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_u8_ops_match_reference(rng, shape, dtype):
    image = random_image(rng, shape, dtype)
    assert np.array_equal(entroscope.quantize(image), reference.quantize(image))
    assert np.array_equal(entroscope.quantize(image, 7), reference.quantize(image, 7))
    assert np.array_equal(entroscope.equalize(image), reference.equalize(image))
    for amount in (0.0, 0.35, 1.0, 2.5, 10.0):
        assert np.array_equal(entroscope.sharpen(image, amount), reference.sharpen(image, amount)), amount


def test_equalize_constant_and_low_contrast(rng):
    flat = np.full((40, 50), 77, np.uint8)
    assert np.array_equal(entroscope.equalize(flat), flat)
    low = rng.integers(100, 116, (64, 64), dtype=np.uint8)
    assert np.array_equal(entroscope.equalize(low), reference.equalize(low))


def test_entropy_bits(rng):
    image = random_image(rng, (50, 60))
    nats = entroscope.entropy(image)
    bits = entroscope.entropy(image, units="bits")
    assert np.array_equal(bits, (nats.astype(np.float64) * (1 / math.log(2))).astype(np.float32))
    assert np.abs(bits * math.log(2) - nats).max() < 1e-6


def test_entropy_range(rng):
    image = random_image(rng, (200, 200))
    for window, levels in [(3, 256), (5, 16), (9, 4)]:
        values = entroscope.entropy(image, window, levels)
        assert values.min() >= 0
        assert values.max() <= math.log(min(levels, window * window)) + 1e-6


def test_depth(rng):
    twelve = rng.integers(0, 4096, (30, 40), dtype=np.uint16)
    got = entroscope.entropy(twelve, depth=12)
    assert np.abs(got - reference.entropy(twelve, depth=12)).max() <= 1e-5
    assert np.array_equal(entroscope.quantize(twelve, depth=12), reference.quantize(twelve, depth=12))
    assert np.array_equal(entroscope.equalize(twelve, depth=12), reference.equalize(twelve, depth=12))
    four = rng.integers(0, 16, (30, 40), dtype=np.uint8)
    assert np.array_equal(entroscope.sharpen(four, depth=4), reference.sharpen(four, depth=4))


def test_run_by_name(rng):
    image = random_image(rng, (20, 30))
    assert np.array_equal(entroscope.run("entropy", image, window=7), entroscope.entropy(image, 7))
    assert np.array_equal(entroscope.run("sharpen", image, 0.5), entroscope.sharpen(image, 0.5))
    with pytest.raises(ValueError, match="unknown operation 'blur'"):
        entroscope.run("blur", image)


def test_backends_agree(rng):
    image = random_image(rng, (70, 90))
    cpu = entroscope.Engine("cpu")
    auto = entroscope.default_engine()
    assert np.abs(cpu.entropy(image) - auto.entropy(image)).max() <= 1e-5
    for op in ("quantize", "equalize", "sharpen"):
        assert np.array_equal(cpu.run(op, image), auto.run(op, image)), op


# ---- scikit-image and OpenCV --------------------------------------------------


@pytest.mark.parametrize("window", [3, 5, 9])
def test_entropy_equals_scikit_image(rng, sample, window):
    rank = pytest.importorskip("skimage.filters.rank")
    for image in (entroscope.load(sample), random_image(rng, (97, 131))):
        image = np.asarray(image)
        levels = image >> 4
        want = rank.entropy(levels, np.ones((window, window), bool)) * math.log(2)
        got = entroscope.entropy(image, window)
        assert np.abs(got - want).max() <= 1e-5


def test_equalize_equals_opencv(rng, sample):
    cv2 = pytest.importorskip("cv2")
    images = [np.asarray(entroscope.load(sample)), random_image(rng, (97, 131)),
              rng.integers(40, 60, (64, 65), dtype=np.uint8), np.full((5, 5), 9, np.uint8)]
    for image in images:
        assert np.array_equal(entroscope.equalize(image), cv2.equalizeHist(image))


def test_sharpen_equals_opencv(rng, sample):
    cv2 = pytest.importorskip("cv2")
    kernel = np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]], np.float32)
    for image in (np.asarray(entroscope.load(sample)), random_image(rng, (97, 131)), random_image(rng, (1, 7))):
        want = cv2.filter2D(image, -1, kernel, borderType=cv2.BORDER_REPLICATE)
        assert np.array_equal(entroscope.sharpen(image), want)


def test_colour_equals_opencv_gray_of_rgb_png(testdata):
    """An RGB array and the same PNG loaded by entroscope give the same gray."""
    cv2 = pytest.importorskip("cv2")
    path = testdata / "images" / "astronaut.png"
    rgb = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)[..., ::-1]
    assert np.array_equal(entroscope.quantize(rgb, 256, channel_axis=-1), np.asarray(entroscope.load(path)))
    assert np.abs(entroscope.entropy(rgb, channel_axis=-1) - entroscope.entropy(entroscope.load(path))).max() == 0
