# SPDX-License-Identifier: MIT
"""Entropy definitions (DESIGN.md §1) against scikit-image itself and against
MATLAB's documented entropyfilt: symmetric padding, im2uint8, 256 bins, log2."""

import numpy as np
import pytest

import entroscope
from conftest import awkward_sizes

rank = pytest.importorskip("skimage.filters.rank")
morphology = pytest.importorskip("skimage.morphology")

TOLERANCE = 1e-5


def skimage_entropy(image, footprint, mask=None):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Bad rank filter performance" for many bins
        return rank.entropy(image, footprint, mask=mask)


@pytest.mark.parametrize("shape", awkward_sizes())
@pytest.mark.parametrize("radius", [0, 1, 3, 6])
def test_disks_match_skimage(rng, shape, radius):
    image = rng.integers(0, 256, shape, dtype=np.uint8)
    got = entroscope.entropy(image, disk=radius, like="skimage")
    want = skimage_entropy(image, morphology.disk(radius))
    assert np.abs(got - want).max() <= TOLERANCE


@pytest.mark.parametrize("rect", [(1, 5), (5, 1), (3, 7), (9, 5)])
def test_rectangles_match_skimage(rng, rect):
    image = rng.integers(0, 256, (41, 37), dtype=np.uint8)
    got = entroscope.entropy(image, rect=rect, binning="exact", units="bits")
    want = skimage_entropy(image, np.ones(rect, np.uint8))
    assert np.abs(got - want).max() <= TOLERANCE


def test_footprint_matches_skimage(rng):
    image = rng.integers(0, 256, (33, 47), dtype=np.uint8)
    footprint = (rng.integers(0, 3, (5, 7)) > 0).astype(np.uint8)
    footprint[2, 3] = 1
    got = entroscope.entropy(image, footprint=footprint, like="skimage")
    assert np.abs(got - skimage_entropy(image, footprint)).max() <= TOLERANCE


@pytest.mark.parametrize("top", [16, 1000, 4095])
def test_uint16_exact_bins_match_skimage(rng, top):
    image = rng.integers(0, top + 1, (29, 31), dtype=np.uint16)
    got = entroscope.entropy(image, like="skimage", disk=2)
    assert np.abs(got - skimage_entropy(image, morphology.disk(2))).max() <= TOLERANCE


def test_masks_match_skimage_inside(rng):
    """scikit-image gives masked-out pixels the entropy of their window's
    in-mask cells (and 0 where it counts none); we give them no value (NaN)."""
    image = rng.integers(0, 256, (45, 38), dtype=np.uint8)
    mask = rng.integers(0, 4, image.shape) > 0
    mask[10:14] = False
    got = entroscope.entropy(image, like="skimage", disk=1, mask=mask)
    want = skimage_entropy(image, morphology.disk(1), mask=mask.astype(np.uint8))
    assert np.isnan(got[~mask]).all()
    assert np.abs(got[mask] - want[mask]).max() <= TOLERANCE


def test_skimage_preset_is_skimage(rng):
    image = rng.integers(0, 256, (50, 61), dtype=np.uint8)
    got = entroscope.entropy(image, like="skimage")
    assert np.abs(got - skimage_entropy(image, np.ones((5, 5), np.uint8))).max() <= TOLERANCE


def matlab_entropyfilt(image, nhood=9):
    """entropyfilt as MATLAB documents it: im2uint8, symmetric padding, a
    256-bin histogram of the neighbourhood, -sum(p log2 p)."""
    if image.dtype == np.uint16:
        u8 = ((image.astype(np.int64) * 255 + 32767) // 65535).astype(np.uint8)  # im2uint8: round(v/257)
    else:
        u8 = image
    r = nhood // 2
    padded = np.pad(u8, r, mode="symmetric")
    out = np.zeros(image.shape)
    for y in range(image.shape[0]):
        for x in range(image.shape[1]):
            counts = np.bincount(padded[y:y + nhood, x:x + nhood].ravel(), minlength=256)
            p = counts[counts > 0] / counts.sum()
            out[y, x] = -(p * np.log2(p)).sum()
    return out


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_matlab_preset_is_entropyfilt(rng, dtype):
    image = rng.integers(0, np.iinfo(dtype).max + 1, (23, 17), dtype=dtype)
    image[:, :5] = image[0, 0]  # flat runs as well as noise
    got = entroscope.entropy(image, like="matlab")
    assert np.abs(got - matlab_entropyfilt(image)).max() <= TOLERANCE


def test_normalized_and_like_units(rng):
    image = rng.integers(0, 256, (20, 20), dtype=np.uint8)
    bits = entroscope.entropy(image, like="skimage")
    nats = entroscope.entropy(image, like="skimage", units="nats")
    assert np.abs(bits * np.log(2) - nats).max() <= TOLERANCE
    normalized = entroscope.entropy(image, binning="exact", units="normalized")
    # B = 256 bins, n = 25 cells inside: H / ln 25.
    assert np.abs(normalized[10, 10] - nats[10, 10] / np.log(25)) <= TOLERANCE
    assert np.nanmax(normalized) <= 1.0 + TOLERANCE


def test_bad_definitions_raise(rng):
    image = np.zeros((4, 4), np.uint8)
    with pytest.raises(ValueError):
        entroscope.entropy(image, border="wrap")
    with pytest.raises(ValueError):
        entroscope.entropy(image, binning="range:9:3")
    with pytest.raises(ValueError):
        entroscope.entropy(image, rect=(4, 3))
    with pytest.raises(ValueError):
        entroscope.entropy(image, mask=np.ones((3, 4)))
    with pytest.raises(TypeError):
        entroscope.entropy(image, disk=2, rect=(3, 3))


def test_masked_pixels_get_no_data_colour_and_nan_text(rng, tmp_path):
    """No value: magenta in a PNG heatmap (no colormap holds it), nan in a text matrix."""
    image_module = pytest.importorskip("PIL.Image")
    image = rng.integers(0, 256, (9, 12), dtype=np.uint8)
    mask = np.ones(image.shape, bool)
    mask[2, 3] = mask[7, 10] = False
    values = entroscope.entropy(image, mask=mask)
    assert np.isnan(values[~mask]).all() and not np.isnan(values[mask]).any()
    entroscope.save(tmp_path / "masked.png", values)
    rgb = np.asarray(image_module.open(tmp_path / "masked.png").convert("RGB"))
    magenta = (rgb == [255, 0, 255]).all(axis=2)
    assert np.array_equal(magenta, ~mask)
    entroscope.save(tmp_path / "masked.txt", values)
    rows = (tmp_path / "masked.txt").read_text().split("\n")[1:]
    assert rows[2].split()[3] == "nan" and rows[7].split()[10] == "nan" and rows[0].split()[0] != "nan"
