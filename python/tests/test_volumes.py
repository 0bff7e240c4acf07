# SPDX-License-Identifier: MIT
"""Volumes: 3-D arrays (planes, rows, columns) as scikit-image reads them.
Every 3-D window (box, ball, 3-D footprint) against scikit-image's 3-D
rank.entropy and against MATLAB's documented entropyfilt on N-D arrays; the
other operations on volumes; masks; the colour convention (channel_axis)."""

import subprocess
import warnings

import numpy as np
import pytest

import entroscope
import reference
from conftest import pinned_backends

rank = pytest.importorskip("skimage.filters.rank")
morphology = pytest.importorskip("skimage.morphology")

TOLERANCE = 1e-6

# 1×1×1, a single column of rows (1×N×1), a single row, a single plane,
# odd sizes, and sizes that a radius-3 ball or a 7-cube overfills.
AWKWARD_VOLUMES = [(1, 1, 1), (1, 9, 1), (1, 1, 13), (6, 1, 1), (1, 11, 7), (2, 3, 5), (5, 7, 9), (9, 13, 6),
                   (4, 17, 11)]
DTYPES = [(np.uint8, 255), (np.uint16, 1000)]


def skimage_entropy(volume, footprint, mask=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Bad rank filter performance" for many bins
        return rank.entropy(volume, footprint, mask=mask)


def volume_of(rng, shape, dtype, top):
    volume = rng.integers(0, top + 1, shape, dtype=dtype)
    if volume.shape[2] > 3:
        volume[:, :, :3] = volume.flat[0]  # flat runs: exact zeros must agree too
    return volume


def cube(side):
    # morphology.cube, or footprint_rectangle where scikit-image has replaced it.
    make = getattr(morphology, "cube", None)
    return make(side) if make is not None else morphology.footprint_rectangle((side,) * 3)


def footprint_3d(rng, shape):
    cells = rng.integers(0, 3, shape) > 0
    cells[tuple(s // 2 for s in shape)] = True
    return cells


# ---- scikit-image ---------------------------------------------------------------


@pytest.mark.parametrize("shape", AWKWARD_VOLUMES)
@pytest.mark.parametrize("radius", [0, 1, 2, 3])
@pytest.mark.parametrize("dtype,top", DTYPES)
def test_balls_match_skimage(rng, shape, radius, dtype, top):
    volume = volume_of(rng, shape, dtype, top)
    got = entroscope.entropy(volume, ball=radius, like="skimage")
    assert got.shape == shape and got.dtype == np.float32
    assert np.abs(got - skimage_entropy(volume, morphology.ball(radius))).max() <= TOLERANCE


@pytest.mark.parametrize("shape", AWKWARD_VOLUMES)
@pytest.mark.parametrize("side", [1, 3, 5, 7])
@pytest.mark.parametrize("dtype,top", DTYPES)
def test_cubes_match_skimage(rng, shape, side, dtype, top):
    volume = volume_of(rng, shape, dtype, top)
    got = entroscope.entropy(volume, box=(side, side, side), like="skimage")
    assert np.abs(got - skimage_entropy(volume, cube(side))).max() <= TOLERANCE


@pytest.mark.parametrize("box", [(1, 5, 1), (3, 1, 7), (5, 3, 3), (1, 1, 9), (9, 1, 1)])
@pytest.mark.parametrize("dtype,top", DTYPES)
def test_boxes_match_skimage(rng, box, dtype, top):
    volume = volume_of(rng, (7, 12, 10), dtype, top)
    got = entroscope.entropy(volume, box=box, like="skimage")
    assert np.abs(got - skimage_entropy(volume, np.ones(box, np.uint8))).max() <= TOLERANCE


@pytest.mark.parametrize("footprint_shape", [(3, 5, 3), (5, 3, 7), (1, 5, 5), (3, 1, 1)])
@pytest.mark.parametrize("shape", [(1, 1, 1), (1, 9, 1), (6, 11, 8)])
@pytest.mark.parametrize("dtype,top", DTYPES)
def test_3d_footprints_match_skimage(rng, footprint_shape, shape, dtype, top):
    volume = volume_of(rng, shape, dtype, top)
    footprint = footprint_3d(rng, footprint_shape)
    got = entroscope.entropy(volume, footprint=footprint, like="skimage")
    assert np.abs(got - skimage_entropy(volume, footprint.astype(np.uint8))).max() <= TOLERANCE


@pytest.mark.parametrize("radius", [1, 2])
def test_2d_window_on_a_volume_is_per_plane(rng, radius):
    """A 2-D window counts its own plane only: scikit-image's flat 3-D footprint."""
    volume = volume_of(rng, (5, 14, 9), np.uint8, 255)
    got = entroscope.entropy(volume, disk=radius, like="skimage")
    assert np.array_equal(got, np.stack([entroscope.entropy(plane, disk=radius, like="skimage") for plane in volume]))
    flat = morphology.disk(radius)[np.newaxis]
    assert np.abs(got - skimage_entropy(volume, flat)).max() <= TOLERANCE


@pytest.mark.parametrize("window", [{"ball": 1}, {"box": (3, 5, 3)}])
def test_3d_masks_match_skimage_inside(rng, window):
    """As in 2-D: masked-out voxels are not counted and get no value (NaN);
    scikit-image gives them a value, so only in-mask voxels are compared."""
    volume = volume_of(rng, (6, 15, 12), np.uint8, 255)
    mask = rng.integers(0, 4, volume.shape) > 0
    mask[2] = False
    got = entroscope.entropy(volume, like="skimage", mask=mask, **window)
    footprint = morphology.ball(1) if "ball" in window else np.ones(window["box"], np.uint8)
    want = skimage_entropy(volume, footprint, mask=mask.astype(np.uint8))
    assert np.isnan(got[~mask]).all()
    assert np.abs(got[mask] - want[mask]).max() <= TOLERANCE


def test_mask_must_match_the_volume(rng):
    volume = volume_of(rng, (3, 8, 9), np.uint8, 255)
    with pytest.raises(ValueError, match=r"the mask is 9×8×2, the volume 9×8×3: they must match"):
        entroscope.entropy(volume, ball=1, mask=np.ones((2, 8, 9), bool))
    with pytest.raises(ValueError, match=r"mask must be 2-D \(rows, columns\) or 3-D"):
        entroscope.entropy(volume, ball=1, mask=np.ones((1, 3, 8, 9), bool))


# ---- MATLAB -----------------------------------------------------------------------


def matlab_entropyfilt_nd(image, nhood):
    """entropyfilt(I, nhood) on an N-D array, transcribed from MATLAB's
    documentation (https://www.mathworks.com/help/images/ref/entropyfilt.html):
    "entropyfilt converts any class other than logical to uint8 for the
    histogram count calculation" (im2uint8: round(v / 257) for uint16), "uses
    the symmetric method" to pad the array, counts the nhood's cells in 256
    bins and returns -sum(p .* log2(p)); nhood is "a multidimensional array
    of zeros and ones" with odd sides, centred on each element. MATLAB is
    not available here, so this is that documentation in NumPy, not its output."""
    if image.dtype == np.uint16:
        u8 = ((image.astype(np.int64) * 255 + 32767) // 65535).astype(np.uint8)
    else:
        u8 = image
    nhood = np.asarray(nhood, bool)
    halves = [side // 2 for side in nhood.shape]
    padded = np.pad(u8, [(h, h) for h in halves], mode="symmetric")
    counts = np.zeros((256,) + image.shape, np.int64)
    index = np.indices(image.shape)
    for offset in np.argwhere(nhood):
        window = padded[tuple(slice(o, o + n) for o, n in zip(offset, image.shape))]
        np.add.at(counts, (window,) + tuple(index), 1)
    p = counts / counts.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return -np.where(counts > 0, p * np.log2(np.where(counts > 0, p, 1.0)), 0.0).sum(axis=0)


MATLAB_WINDOWS = [
    ({"box": (3, 3, 3)}, np.ones((3, 3, 3))),
    ({"box": (1, 5, 3)}, np.ones((1, 5, 3))),
    ({"box": (7, 7, 7)}, np.ones((7, 7, 7))),
    ({"ball": 2}, morphology.ball(2)),
]


@pytest.mark.parametrize("window,nhood", MATLAB_WINDOWS, ids=["box3", "box1x5x3", "box7", "ball2"])
@pytest.mark.parametrize("shape", [(1, 1, 1), (1, 9, 1), (2, 3, 5), (5, 8, 7)])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_matlab_preset_is_nd_entropyfilt(rng, window, nhood, shape, dtype):
    volume = rng.integers(0, np.iinfo(dtype).max + 1, shape, dtype=dtype)
    got = entroscope.entropy(volume, like="matlab", **window)
    assert np.abs(got - matlab_entropyfilt_nd(volume, nhood)).max() <= TOLERANCE


def test_matlab_preset_with_a_3d_footprint(rng):
    volume = rng.integers(0, 256, (4, 9, 10), dtype=np.uint8)
    nhood = footprint_3d(rng, (3, 5, 3))
    got = entroscope.entropy(volume, like="matlab", footprint=nhood)
    assert np.abs(got - matlab_entropyfilt_nd(volume, nhood)).max() <= TOLERANCE


# ---- the other operations -----------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_equalize_takes_one_histogram_of_the_volume(rng, dtype):
    volume = rng.integers(0, np.iinfo(dtype).max + 1, (4, 19, 23), dtype=dtype)
    volume[0] //= 4  # planes with different histograms: per-plane equalization would differ
    got = entroscope.equalize(volume)
    want = reference.equalize(volume.reshape(-1, volume.shape[2])).reshape(volume.shape)
    assert got.shape == volume.shape and np.array_equal(got, want)


@pytest.mark.parametrize("op,args", [("sharpen", (0.7,)), ("quantize", (8,)), ("entropy", (7,))])
def test_plane_by_plane_operations(rng, op, args):
    volume = rng.integers(0, 256, (5, 17, 12), dtype=np.uint8)
    got = entroscope.run(op, volume, *args)
    assert got.shape == volume.shape
    assert np.array_equal(got, np.stack([entroscope.run(op, plane, *args) for plane in volume]))


def test_strided_volumes_and_out(rng):
    base = rng.integers(0, 256, (10, 30, 40), dtype=np.uint8)
    strided = base[::2, 3:25:3, ::-2]
    want = entroscope.entropy(np.ascontiguousarray(strided), ball=2)
    _, timing = entroscope.entropy(strided, ball=2, return_timing=True)
    assert timing.input_copied
    assert np.array_equal(entroscope.entropy(strided, ball=2), want)
    out = np.full(want.shape, -1, np.float32)
    assert entroscope.entropy(strided, ball=2, out=out) is out and np.array_equal(out, want)
    fortran = np.zeros(want.shape[::-1], np.float32).T
    entroscope.entropy(strided, ball=2, out=fortran)
    assert np.array_equal(fortran, want)
    with pytest.raises(ValueError, match=r"out= has shape \(5, 8\); the result needs \(5, 8, 20\)"):
        entroscope.entropy(strided, ball=2, out=np.zeros((5, 8), np.float32))


def test_one_plane_volume_stays_3d(rng):
    plane = rng.integers(0, 256, (13, 11), dtype=np.uint8)
    got = entroscope.entropy(plane[np.newaxis], ball=2)
    assert got.shape == (1, 13, 11)
    # A ball over one plane counts that plane's disk.
    assert np.array_equal(got[0], entroscope.entropy(plane, disk=2))


def test_extent_3d():
    assert entroscope.extent_3d("entropy", ball=3) == (3, 3, 3)
    assert entroscope.extent_3d("entropy", box=(5, 3, 7)) == (2, 1, 3)
    assert entroscope.extent_3d("entropy", footprint=np.ones((3, 1, 5))) == (1, 0, 2)
    assert entroscope.extent_3d("entropy", window=9) == (0, 4, 4)
    assert entroscope.extent_3d("sharpen") == (0, 1, 1)
    assert entroscope.extent("entropy", box=(5, 3, 7)) == (1, 3)


@pytest.mark.parametrize("keywords,error,message", [
    ({"box": (4, 3, 3)}, ValueError, r"^box \(4, 3, 3\) is out of range: odd sides 1\.\.63$"),
    ({"box": (3, 3)}, TypeError, r"^box must be a tuple \(depth, height, width\)$"),
    ({"ball": 32}, ValueError, r"^ball radius 32 is out of range: 0\.\.31$"),
    ({"ball": 1, "disk": 1}, TypeError, r"^give one of rect, disk, footprint, box and ball$"),
    ({"footprint": np.ones((65, 3, 3))}, ValueError, r"^a 3-D footprint has odd sides up to 63$"),
    ({"footprint": np.ones((2, 3, 3))}, ValueError, r"footprint depth"),
    ({"footprint": np.ones((1, 1, 3, 3))}, ValueError, r"^footprint must be 2-D \(rows, columns\) or 3-D"),
])
def test_bad_3d_windows_raise(keywords, error, message):
    with pytest.raises(error, match=message):
        entroscope.entropy(np.zeros((3, 4, 5), np.uint8), **keywords)


# ---- colour: channel_axis, as in scikit-image ---------------------------------------


@pytest.mark.parametrize("channels", [3, 4])
def test_h_w_3_without_channel_axis_is_refused(rng, channels):
    rgb = rng.integers(0, 256, (10, 12, channels), dtype=np.uint8)
    message = (rf"an array of shape \(10, 12, {channels}\) is ambiguous: a 3-D array is a volume \(planes, rows, "
               r"columns\); pass channel_axis=-1 for a colour image \(reduced to gray with BT\.709\), or "
               r"channel_axis=None for a volume of 10 planes")
    for call in (entroscope.entropy, entroscope.equalize, entroscope.sharpen, entroscope.quantize, entroscope.gray):
        with pytest.raises(ValueError, match=message):
            call(rgb)


def test_channel_axis_reads_colour_on_any_axis(rng):
    rgb = rng.integers(0, 256, (10, 12, 3), dtype=np.uint8)
    gray = reference.luma(rgb)
    assert np.array_equal(entroscope.gray(rgb, channel_axis=-1), gray)
    assert np.array_equal(entroscope.gray(np.moveaxis(rgb, 2, 0), channel_axis=0), gray)
    assert np.array_equal(entroscope.entropy(rgb, channel_axis=2), entroscope.entropy(gray))
    assert np.array_equal(entroscope.quantize(rgb, 256, channel_axis=-1), gray)


def test_channel_axis_none_is_a_volume(rng):
    narrow = rng.integers(0, 256, (10, 12, 3), dtype=np.uint8)
    got = entroscope.entropy(narrow, ball=1, channel_axis=None)
    assert got.shape == (10, 12, 3)
    assert np.array_equal(got, entroscope.entropy(np.ascontiguousarray(narrow), ball=1, channel_axis=None))


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_colour_volumes(rng, dtype):
    rgb = rng.integers(0, np.iinfo(dtype).max + 1, (4, 9, 11, 3), dtype=dtype)
    gray = reference.luma(rgb)
    assert np.array_equal(entroscope.gray(rgb, channel_axis=-1), gray)
    assert np.array_equal(entroscope.entropy(rgb, ball=2, channel_axis=-1), entroscope.entropy(gray, ball=2))


@pytest.mark.parametrize("image,keywords,error,message", [
    ((10, 12, 5), {"channel_axis": -1}, ValueError,
     r"channel_axis=2 of an array of shape \(10, 12, 5\) has 5 channels; 3 \(RGB\) or 4 \(RGBA\) are reduced to gray"),
    ((10, 12, 3), {"channel_axis": 3}, ValueError, r"channel_axis=3 is out of range for an array of 3 dimensions"),
    ((10, 3), {"channel_axis": -1}, ValueError, r"with channel_axis, expected a colour image \(rows, columns, "
                                                r"channels\) or a colour volume"),
    ((10, 12, 3), {"channel_axis": "last"}, TypeError, r"channel_axis must be an integer or None, not str"),
    ((2, 3, 4, 5, 3), {"channel_axis": -1}, ValueError, r"with channel_axis, expected"),
    ((2, 3, 4, 5), {}, ValueError, r"expected a 2-D image \(rows, columns\) or a 3-D volume \(planes, rows, columns\)"),
])
def test_channel_axis_errors(image, keywords, error, message):
    with pytest.raises(error, match=message):
        entroscope.entropy(np.zeros(image, np.uint8), **keywords)


# ---- dask: the halo in z ------------------------------------------------------------------


da = pytest.importorskip("dask.array")
edask = pytest.importorskip("entroscope.dask")

# Chunks that do not divide the volume, thinner than the window's depth, one plane thick, one chunk.
VOLUME_CHUNKS = [(4, 8, 7), (1, 13, 19), (2, 21, 5), (13, 21, 19)]


def check_dask(volume, chunks, **keywords):
    for backend in pinned_backends():
        want = entroscope.entropy(volume, backend=backend, **keywords)
        got = edask.entropy(da.from_array(volume, chunks=chunks), backend=backend, **keywords).compute(
            scheduler="threads")
        assert got.dtype == np.float32 and got.shape == volume.shape
        bad = ~((got == want) | (np.isnan(got) & np.isnan(want)))
        assert not bad.any(), f"{backend}: {bad.sum()} voxels differ, first at {np.argwhere(bad)[0]}"


@pytest.mark.parametrize("chunks", VOLUME_CHUNKS)
@pytest.mark.parametrize("keywords", [{"ball": 2}, {"box": (5, 1, 3), "border": "symmetric"},
                                      {"box": (15, 3, 1), "border": "mirror"}, {"window": 5},
                                      {"ball": 3, "like": "skimage"}, {"ball": 1, "binning": "minmax", "levels": 8},
                                      {"box": (3, 3, 3), "border": "constant:40"}, {"ball": 2, "like": "matlab"}],
                         ids=["ball", "box-symmetric", "deep-box", "2d", "skimage", "minmax", "constant", "matlab"])
def test_dask_volumes_equal_one_call(rng, chunks, keywords):
    check_dask(volume_of(rng, (13, 21, 19), np.uint8, 255), chunks, **keywords)


def test_dask_3d_footprints_and_masks(rng):
    volume = volume_of(rng, (13, 21, 19), np.uint16, 1000)
    mask = rng.random(volume.shape) > 0.3
    check_dask(volume, (4, 8, 7), footprint=footprint_3d(rng, (5, 3, 3)))
    check_dask(volume, (4, 8, 7), ball=1, mask=mask)


def test_dask_other_operations_on_volumes(rng):
    volume = volume_of(rng, (9, 20, 17), np.uint8, 255)
    volume[0] //= 4
    dask_volume = da.from_array(volume, chunks=(2, 7, 6))
    assert np.array_equal(edask.equalize(dask_volume).compute(), entroscope.equalize(volume))
    assert np.array_equal(edask.sharpen(dask_volume, 0.5).compute(), entroscope.sharpen(volume, 0.5))
    assert np.array_equal(edask.quantize(dask_volume, 4).compute(), entroscope.quantize(volume, 4))


def test_dask_colour_needs_channel_axis(rng):
    rgb = rng.integers(0, 256, (5, 20, 17, 3), dtype=np.uint8)
    chunks = da.from_array(rgb, chunks=(2, 7, 7, 1))
    assert np.array_equal(edask.entropy(chunks, ball=1, channel_axis=-1).compute(),
                          entroscope.entropy(rgb, ball=1, channel_axis=-1))
    with pytest.raises(ValueError, match="is ambiguous"):
        edask.entropy(da.from_array(rgb[0], chunks=(7, 7, 3)))


# ---- save: a volume's result as the CLI writes it ----


@pytest.mark.parametrize("keywords,options", [({"ball": 2}, ["--ball", "2"]),
                                              ({"box": (3, 5, 3), "border": "symmetric"},
                                               ["--box", "3x5x3", "--border", "symmetric"])])
def test_save_of_a_volume_is_the_clis_multipage_tiff(rng, tmp_path, cli, keywords, options):
    tifffile = pytest.importorskip("tifffile")
    volume = volume_of(rng, (5, 12, 10), np.uint8, 255)
    tifffile.imwrite(tmp_path / "volume.tif", volume)
    done = subprocess.run([cli, "entropy", "--backend=cpu", *options, tmp_path / "volume.tif", "-o",
                           tmp_path / "cli.tif"], capture_output=True, text=True)
    if "TIFF is not supported" in done.stderr:
        pytest.skip("built without libtiff")
    assert done.returncode == 0, done.stderr
    values = entroscope.entropy(volume, backend="cpu", **keywords)
    entroscope.save(tmp_path / "module.tif", values, **keywords)
    assert (tmp_path / "module.tif").read_bytes() == (tmp_path / "cli.tif").read_bytes()
    # Any name takes the TIFF; an array of other strides writes the same bytes.
    entroscope.save(tmp_path / "module", np.asfortranarray(values), **keywords)
    assert (tmp_path / "module").read_bytes() == (tmp_path / "cli.tif").read_bytes()
    assert np.array_equal(tifffile.imread(tmp_path / "module.tif"), values)


def test_save_of_a_volume_is_a_tiff_only(rng, tmp_path):
    values = entroscope.entropy(volume_of(rng, (3, 6, 5), np.uint8, 255), ball=1)
    for name, format in (("v.png", None), ("v.txt", None), ("v.tif", "png")):
        with pytest.raises(ValueError, match="a volume of 3 planes is saved as a multi-page TIFF"):
            entroscope.save(tmp_path / name, values, format=format, ball=1)
    with pytest.raises(ValueError, match="2-D array or a 3-D one"):
        entroscope.save(tmp_path / "v.tif", values[None], ball=1)
    assert list(tmp_path.iterdir()) == []
