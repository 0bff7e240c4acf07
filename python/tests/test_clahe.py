# SPDX-License-Identifier: MIT
"""CLAHE against OpenCV's createCLAHE().apply, bit for bit: the test images, then
random sizes, grids and clip limits (DESIGN.md §1)."""

import numpy as np
import pytest

import entroscope

cv2 = pytest.importorskip("cv2")


def opencv(image, clip, grid):
    return cv2.createCLAHE(clip, grid).apply(image)


def test_images_bit_identical(testdata):
    """Every test image, as entroscope reads it (8- or 16-bit gray), at a few
    grids and clip limits."""
    paths = sorted((testdata / "images").glob("*.png")) + sorted((testdata / "pngsuite").glob("*.png"))
    if not paths:
        pytest.skip(f"no test images under {testdata} (ES_TESTDATA)")
    checked = 0
    for path in paths:
        try:
            image = np.asarray(entroscope.load(str(path)))
        except (ValueError, OSError):
            continue  # PngSuite's broken files are refused by design
        # A 16-bit grid of 64×64 holds 512 MiB of LUTs in OpenCV: one such test below.
        large = (64, 64) if image.dtype == np.uint8 else (16, 16)
        for clip, grid in ((40.0, (8, 8)), (2.0, (8, 8)), (0.0, (3, 5)), (0.01, large)):
            got = entroscope.clahe(image, clip, grid)
            assert got.dtype == image.dtype, path.name
            np.testing.assert_array_equal(got, opencv(image, clip, grid), err_msg=f"{path.name} {clip} {grid}")
        checked += 1
    assert checked > 0


def test_random_sizes_grids_and_clips(rng):
    """Sizes 1×1 to 4099×2053, grids 1×1 to 64×64 (16-bit ones fewer: their
    65536-bin LUTs are slow in OpenCV too), several clip limits."""
    sizes = [(1, 1), (1, 37), (29, 1), (2, 3), (7, 64), (64, 7), (4099, 2053)]
    sizes += [tuple(int(v) for v in rng.integers(1, 700, 2)) for _ in range(20)]
    for i, (h, w) in enumerate(sizes):
        dtype = np.uint16 if i % 3 == 2 else np.uint8
        top = 65536 if dtype == np.uint16 else 256
        image = rng.integers(0, top, (h, w)).astype(dtype)
        if i % 2:
            image = (image // 97 * 97).astype(dtype)  # few distinct values: clipping matters
        most = 16 if dtype == np.uint16 or h * w > 10**6 else 64
        grid = (int(rng.integers(1, most + 1)), int(rng.integers(1, most + 1)))
        if i == 0:
            grid = (64, 64)
        clip = [0.0, 2.0, 40.0, 0.01, float(rng.uniform(0, 300))][i % 5]
        got = entroscope.clahe(image, clip, grid)
        np.testing.assert_array_equal(got, opencv(image, clip, grid), err_msg=f"{h}x{w} {dtype} {clip} {grid}")


def test_sixteen_bit_large_grid(rng):
    image = rng.integers(0, 65536, (130, 67)).astype(np.uint16)
    np.testing.assert_array_equal(entroscope.clahe(image, 3.5, (64, 64)), opencv(image, 3.5, (64, 64)))


def test_keywords_and_limits(rng):
    image = rng.integers(0, 256, (40, 50)).astype(np.uint8)
    expected = opencv(image, 2.0, (4, 6))
    np.testing.assert_array_equal(entroscope.run("clahe", image, clip=2.0, tile_columns=4, tile_rows=6), expected)
    np.testing.assert_array_equal(entroscope.Engine("cpu").clahe(image, 2.0, 4, 6), expected)
    with pytest.raises(ValueError, match="tile-columns"):
        entroscope.clahe(image, 2.0, (65, 8))
    with pytest.raises(ValueError, match="clip"):
        entroscope.clahe(image, -1.0)


@pytest.mark.parametrize("shape,chunks,grid,dtype", [
    ((301, 257), (64, 100), (5, 3), np.uint16),                  # tiles no chunk edge meets, 16 bits
    ((100, 90), (1, 90), (4, 4), np.uint8),                      # bands of one row
    ((97, 131), ((10, 50, 37), (60, 71)), (64, 64), np.uint8),   # uneven chunks, more tiles than rows
    ((40, 33), (7, 5), (3, 8), np.uint8),                        # reflect-101 rows mirrored across chunks
    ((3, 61, 47), ((1, 2), (20, 41), 47), (4, 5), np.uint16),    # a volume, plane by plane
    ((50, 60), (50, 20), (4, 4), np.uint8),                      # columns split only: each plane whole
])
def test_dask_any_chunking(rng, shape, chunks, grid, dtype):
    """entroscope.dask's CLAHE is the in-memory call bit for bit for any
    chunking: planes split into bands of rows go through the tile passes
    (histograms of every band summed, then each band blended), planes in one
    band of rows whole; the result keeps the input's chunks."""
    da = pytest.importorskip("dask.array")
    edask = pytest.importorskip("entroscope.dask")
    image = rng.integers(0, np.iinfo(dtype).max + 1, shape).astype(dtype)
    array = da.from_array(image, chunks=chunks)
    lazy = edask.clahe(array, 2.0, grid)
    assert lazy.dtype == dtype and lazy.chunks == array.chunks
    banded = any(str(name).startswith("clahe-tile-counts") for name in lazy.dask.layers)
    assert banded == (array.numblocks[-2] > 1)
    expected = entroscope.clahe(image, 2.0, grid)
    np.testing.assert_array_equal(lazy.compute(scheduler="threads"), expected)
    if image.ndim == 2:
        np.testing.assert_array_equal(expected, opencv(image, 2.0, grid))


def test_tile_passes_by_hand(rng):
    """The module's tile passes: counts of disjoint bands add up, and any
    band blended from the sum is that band of the whole result; CLAHE's
    presets have none."""
    image = rng.integers(0, 256, (70, 45)).astype(np.uint8)
    job = {"clip": 3.0, "tile_columns": 6, "tile_rows": 7}
    assert entroscope._entroscope.tile_passes("clahe", **job)
    assert not entroscope._entroscope.tile_passes("clahe", like="skimage")
    assert not entroscope._entroscope.tile_passes("entropy")
    counts = sum(entroscope._entroscope.tile_counts("clahe", image[y0:y1], y0, 70, **job).astype(np.int64)
                 for y0, y1 in ((0, 9), (9, 10), (10, 70)))
    expected = entroscope.run("clahe", image, **job)
    np.testing.assert_array_equal(entroscope._entroscope.tile_apply("clahe", image[20:33], 20, 70, counts, **job),
                                  expected[20:33])
    with pytest.raises(ValueError, match="counts"):
        entroscope._entroscope.tile_apply("clahe", image[:5], 0, 70, counts[1:], **job)
    with pytest.raises(ValueError, match="rows"):
        entroscope._entroscope.tile_counts("clahe", image[60:], 60, 65, **job)
    with pytest.raises(ValueError, match="tile passes"):
        entroscope._entroscope.tile_counts("clahe", image, 0, 70, like="skimage")


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_save_holds_the_result(tmp_path, rng, cli, dtype):
    """save() writes a CLAHE result with its own values, as entroscope-cli
    does: a PNG, a TIFF and --raw16 read back with IMREAD_UNCHANGED equal
    cv2's result (16-bit for 16-bit), byte for byte the CLI's PNG."""
    import subprocess

    top = 256 if dtype == np.uint8 else 65536
    image = rng.integers(0, top, (53, 71)).astype(dtype)
    expected = opencv(image, 2.0, (4, 3))
    result = entroscope.clahe(image, 2.0, (4, 3))
    job = {"op": "clahe", "clip": 2.0, "tile_columns": 4, "tile_rows": 3}
    for name, format in (("png", None), ("tif", None), ("raw.png", "raw16")):
        path = tmp_path / f"out.{name}"
        entroscope.save(str(path), result, format=format, **job)
        got = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
        scale = 257 if format == "raw16" and dtype == np.uint8 else 1  # 0..255 spread over 0..65535
        assert got.dtype == (np.uint16 if scale != 1 else dtype), name
        np.testing.assert_array_equal(got, expected.astype(got.dtype) * scale, err_msg=name)
    cv2.imwrite(str(tmp_path / "in.png"), image)
    subprocess.run([cli, "clahe", "--clip", "2", "--tiles", "4x3", "-q", str(tmp_path / "in.png"), "-o",
                    str(tmp_path / "cli.png")], check=True)
    assert (tmp_path / "cli.png").read_bytes() == (tmp_path / "out.png").read_bytes()


def test_helpers_take_every_parameter_of_the_table():
    """halo(), extent(), extent_3d() and save() take each operation's
    parameters by the table's names, so CLAHE's clip and tiles too."""
    params = entroscope.params()
    for op, row in entroscope.ops().items():
        job = {name.replace("-", "_"): (int if params[name]["integer"] else float)(params[name]["default"])
               for name in row["params"]}
        assert entroscope.halo(op, **job) == row["halo"], op
        assert entroscope.extent(op, **job) == (row["halo"], row["halo"]), op
        assert entroscope.extent_3d(op, **job)[1:] == (row["halo"], row["halo"]), op
    assert entroscope.halo("clahe", clip=2.0, tile_columns=8, tile_rows=4) == 0
    with pytest.raises(ValueError, match="tile-rows"):
        entroscope.halo("clahe", tile_rows=65)
    with pytest.raises(TypeError, match="tiles"):
        entroscope.halo("clahe", tiles=8)
    with pytest.raises(TypeError, match="tiles"):
        entroscope.save("never.png", np.zeros((4, 4), np.uint8), op="clahe", tiles=8)
