# SPDX-License-Identifier: MIT
"""load() and save() against entroscope-cli: the same decoders, the same bytes out."""

import os
import subprocess
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import entroscope
import reference

# Sample images and PngSuite files that exercise the decoder: 1-, 2-, 4-, 8- and
# 16-bit gray, palette, RGB(A), gray+alpha, interlaced.
PNGSUITE = ["basn0g01.png", "basn0g02.png", "basn0g04.png", "basn0g08.png", "basn0g16.png", "basi0g04.png",
            "basn2c08.png", "basn2c16.png", "basn3p02.png", "basn3p08.png", "basn4a16.png", "basn6a08.png",
            "basi6a16.png"]


def run_cli(cli, op, *args):
    """The CLI's job on the CPU backend, as the module's calls it is compared with
    (conftest.pinned_backends says why)."""
    done = subprocess.run([cli, op, "--backend=cpu", *map(str, args)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done


def inputs(testdata, sample):
    yield sample
    for name in ("astronaut.png", "brick.png", "text.png"):
        yield testdata / "images" / name
    for name in PNGSUITE:
        yield testdata / "pngsuite" / name


def test_load(sample):
    image = entroscope.load(sample)
    assert isinstance(image, entroscope.Image) and isinstance(image, np.ndarray)
    assert image.dtype == np.uint8 and image.shape == (512, 512) and image.depth == 8 and image.levels == 0
    assert image[10:20].depth == 8
    assert image.flags.c_contiguous and image.flags.writeable
    assert not isinstance(entroscope.entropy(image), entroscope.Image)


def test_load_depths(testdata):
    import pickle

    four = entroscope.load(testdata / "pngsuite" / "basn0g04.png")
    assert four.depth == 4
    again = pickle.loads(pickle.dumps(four))
    assert isinstance(again, entroscope.Image) and again.depth == 4 and np.array_equal(again, four)
    sixteen = entroscope.load(testdata / "pngsuite" / "basn0g16.png")
    assert sixteen.dtype == np.uint16 and sixteen.depth == 16


def test_pgm_with_a_maxval(tmp_path, rng, cli):
    """A 12-bit PGM keeps its depth, so the module computes what the CLI does."""
    values = rng.integers(0, 4096, (37, 41), dtype=np.uint16)
    path = tmp_path / "twelve.pgm"
    path.write_bytes(b"P5\n41 37\n4095\n" + values.astype(">u2").tobytes())
    image = entroscope.load(path)
    assert image.dtype == np.uint16 and image.depth == 12 and np.array_equal(image, values)
    assert np.abs(entroscope.entropy(image) - reference.entropy(values, depth=12)).max() <= 1e-5
    run_cli(cli, "entropy", "--format=txt", "-q", path, "-o", tmp_path / "cli.txt")
    entroscope.save(tmp_path / "module.txt", entroscope.entropy(image, backend="cpu"))
    assert (tmp_path / "module.txt").read_bytes() == (tmp_path / "cli.txt").read_bytes()


def test_text_matrix(tmp_path, cli):
    path = tmp_path / "exercise.txt"
    path.write_text("3 4\n0 1 2 3\n3 2 1 0\n1 1 1 1\n")
    image = entroscope.load(path, levels=4)
    assert image.levels == 4 and image.tolist() == [[0, 1, 2, 3], [3, 2, 1, 0], [1, 1, 1, 1]]
    got = entroscope.entropy(image, 3, 4, units="bits", backend="cpu")
    want = reference.entropy(np.asarray(image), 3, 4, quantized=True) / np.log(2)
    assert np.abs(got - want).max() <= 1e-5
    run_cli(cli, "entropy", "--window=3", "--levels=4", "--units=bits", "-q", path, "-o", tmp_path / "cli.txt")
    entroscope.save(tmp_path / "module.txt", got, window=3, levels=4, units="bits")
    assert (tmp_path / "module.txt").read_bytes() == (tmp_path / "cli.txt").read_bytes()
    # Levels of a text matrix must agree with the job's, as in the CLI.
    with pytest.raises(ValueError, match="holds quantized levels for 4 levels, but the job asks for 16"):
        entroscope.entropy(image)
    # Changed values are checked against its levels before any kernel runs.
    image[1, 2] = 9
    with pytest.raises(ValueError, match="row 1, column 2: value 9 is not below 4 levels"):
        entroscope.entropy(image, 3, 4)


@pytest.mark.parametrize("op,options", [
    ("entropy", []), ("entropy", ["--window=9", "--levels=8"]), ("quantize", ["--levels=7"]),
    ("equalize", []), ("sharpen", ["--amount=0.35"]),
])
def test_text_output_equals_cli(tmp_path, cli, testdata, sample, op, options):
    kwargs = {o.split("=")[0][2:]: float(o.split("=")[1]) if "." in o else int(o.split("=")[1]) for o in options}
    for path in inputs(testdata, sample):
        run_cli(cli, op, "--format=txt", "-q", *options, path, "-o", tmp_path / "cli.txt")
        values = entroscope.run(op, entroscope.load(path), backend="cpu", **kwargs)
        entroscope.save(tmp_path / "module.txt", values, op=op, **kwargs)
        assert (tmp_path / "module.txt").read_bytes() == (tmp_path / "cli.txt").read_bytes(), path.name


@pytest.mark.parametrize("options,kwargs", [
    ([], {}),
    (["--colorbar", "--colormap=magma_r"], {"colorbar": True, "colormap": "magma_r"}),
    (["--range=auto", "--window=7"], {"range": "auto", "window": 7}),
    (["--raw16"], {"format": "raw16"}),
    (["--raw16", "--range=auto", "--levels=32"], {"format": "raw16", "range": "auto", "levels": 32}),
    (["--colorbar", "--units=bits"], {"colorbar": True, "units": "bits"}),
])
def test_png_output_equals_cli(tmp_path, cli, sample, testdata, options, kwargs):
    op_kwargs = {k: v for k, v in kwargs.items() if k in ("window", "levels")}
    units = kwargs.get("units", "nats")
    for path in (sample, testdata / "images" / "astronaut.png"):
        run_cli(cli, "entropy", "-q", *options, path, "-o", tmp_path / "cli.png")
        image = entroscope.load(path)
        values = entroscope.entropy(image, units=units, backend="cpu", **op_kwargs)
        entroscope.save(tmp_path / "module.png", values, pixel_size=image.pixel_size, **kwargs)
        assert (tmp_path / "module.png").read_bytes() == (tmp_path / "cli.png").read_bytes(), path.name


def test_u8_png_output_equals_cli(tmp_path, cli, sample):
    for op in ("equalize", "sharpen", "quantize"):
        run_cli(cli, op, "-q", sample, "-o", tmp_path / "cli.png")
        entroscope.save(tmp_path / "module.png", entroscope.run(op, entroscope.load(sample), backend="cpu"), op=op)
        assert (tmp_path / "module.png").read_bytes() == (tmp_path / "cli.png").read_bytes(), op


def test_entropy_values_equal_cli_text(tmp_path, cli, sample):
    run_cli(cli, "entropy", "-q", sample, "-o", tmp_path / "cli.txt")
    lines = (tmp_path / "cli.txt").read_text().splitlines()
    cli_values = np.array([[float(v) for v in line.split()] for line in lines[1:]])
    assert np.abs(entroscope.entropy(entroscope.load(sample), backend="cpu") - cli_values).max() <= 5e-6 + 1e-6


def jpeg_corpus(testdata):
    """The JPEG seed corpus, or a skip in a build without libjpeg-turbo."""
    corpus = testdata.parent / "fuzz" / "corpus" / "jpeg"
    try:
        entroscope.load(corpus / "gray.jpg")
    except ValueError as e:
        assert "JPEG is not supported" in str(e)
        pytest.skip("built without libjpeg-turbo")
    return corpus


def test_jpeg_equals_cli(tmp_path, cli, testdata):
    corpus = jpeg_corpus(testdata)
    for name in ("gray-progressive.jpg", "colour-arithmetic-progressive.jpg", "cmyk-adobe.jpg", "ycck-adobe.jpg",
                 "orientation-6.jpg"):
        image = entroscope.load(corpus / name)
        assert image.dtype == np.uint8 and image.depth == 8, name
        # The EXIF orientation turns the stored 37×75 image upright: 5..8 swap the sides.
        assert image.shape == ((37, 75) if name.startswith("orientation-6") else (29, 41)), name
        run_cli(cli, "equalize", "-q", corpus / name, "-o", tmp_path / "cli.png")
        entroscope.save(tmp_path / "module.png", entroscope.run("equalize", image, backend="cpu"), op="equalize")
        assert (tmp_path / "module.png").read_bytes() == (tmp_path / "cli.png").read_bytes(), name


def test_jpeg_refusals_name_the_cause(testdata):
    corpus = jpeg_corpus(testdata)
    for name, cause in (("refused-truncated.jpg", "JPEG: file is truncated"),
                        ("refused-corrupt.jpg", "JPEG: Corrupt JPEG data: bad Huffman code"),
                        ("refused-12-bit.jpg", "JPEG: 12-bit samples are not supported")):
        with pytest.raises(ValueError, match=f"{name}: {cause}"):
            entroscope.load(corpus / name)


# ---- errors: the CLI's messages, as Python exceptions ---------------------------


def test_load_errors(tmp_path, testdata):
    with pytest.raises(FileNotFoundError) as caught:
        entroscope.load(tmp_path / "missing.png")
    assert caught.value.filename == str(tmp_path / "missing.png")
    with pytest.raises(IsADirectoryError):
        entroscope.load(tmp_path)
    for name in sorted(os.listdir(testdata / "pngsuite")):
        if name.startswith("x") and name.endswith(".png"):
            with pytest.raises(ValueError, match=f"{name}: ."):
                entroscope.load(testdata / "pngsuite" / name)
    # A JPEG that ends after a marker of length 0: truncated, or refused by name without libjpeg-turbo.
    jpeg = tmp_path / "photo.jpg"
    jpeg.write_bytes(b"\xff\xd8\xff\xe0" + bytes(64))
    with pytest.raises(ValueError, match=r"photo\.jpg: JPEG(: file is truncated| is not supported)"):
        entroscope.load(jpeg)
    empty = tmp_path / "empty.png"
    empty.write_bytes(b"")
    with pytest.raises(ValueError, match="empty file"):
        entroscope.load(empty)
    bad = tmp_path / "bad.txt"
    bad.write_text("2 2\n0 1\n1 x\n")
    with pytest.raises(ValueError, match="bad.txt: .*line 3"):
        entroscope.load(bad)
    with pytest.raises(ValueError, match="levels 1 is out of range"):
        entroscope.load(bad, levels=1)
    with pytest.raises(TypeError):
        entroscope.load(42)


def test_save_errors(tmp_path, rng):
    values = entroscope.entropy(rng.integers(0, 256, (8, 8), dtype=np.uint8))
    with pytest.raises(FileNotFoundError):
        entroscope.save(tmp_path / "no" / "such" / "folder.png", values)
    with pytest.raises(ValueError, match="colorbar applies to PNG heatmaps only, not to text matrices"):
        entroscope.save(tmp_path / "x.txt", values, colorbar=True)
    with pytest.raises(ValueError, match="not to raw16"):
        entroscope.save(tmp_path / "x.png", values, format="raw16", colorbar=True)
    with pytest.raises(ValueError, match="op= is needed to save a uint8 array"):
        entroscope.save(tmp_path / "x.png", np.zeros((4, 4), np.uint8))
    with pytest.raises(TypeError, match="entropy results are float32 arrays, not uint8"):
        entroscope.save(tmp_path / "x.png", np.zeros((4, 4), np.uint8), op="entropy")
    with pytest.raises(ValueError, match="unknown colormap"):
        entroscope.save(tmp_path / "x.png", values, colormap="jet")
    with pytest.raises(ValueError, match=r"format='jpg': expected png, raw16, txt or tif"):
        entroscope.save(tmp_path / "x.png", values, format="jpg")
    with pytest.raises(ValueError, match="window 4 is out of range"):
        entroscope.save(tmp_path / "x.png", values, window=4)
    with pytest.raises(TypeError, match="float32 or uint8"):
        entroscope.save(tmp_path / "x.png", values.astype(np.float64))
    with pytest.raises(ValueError, match=r"compression='zip': expected fast, default or small"):
        entroscope.save(tmp_path / "x.tif", values, compression="zip")
    assert sorted(os.listdir(tmp_path)) == []


def load_tiff(path):
    """entroscope.load of a TIFF; the test is skipped in a build without libtiff."""
    try:
        return entroscope.load(path)
    except ValueError as e:
        assert "TIFF is not supported" in str(e)
        pytest.skip("built without libtiff")


def test_save_tiff(tmp_path, rng, cli, sample):
    """A .tif path writes the values as they are, as entroscope-cli does; with
    libtiff, load() reads a TIFF (gray 16-bit here) like any image."""
    values = entroscope.entropy(entroscope.load(sample), backend="cpu")
    entroscope.save(tmp_path / "x.tif", values)
    run_cli(cli, "entropy", "-q", sample, "-o", tmp_path / "cli.tif")
    assert (tmp_path / "x.tif").read_bytes() == (tmp_path / "cli.tif").read_bytes()
    tifffile = pytest.importorskip("tifffile")
    back = tifffile.imread(tmp_path / "x.tif")
    assert back.dtype == np.float32 and np.array_equal(back, values)
    gray = rng.integers(0, 65536, (13, 17), dtype=np.uint16)
    tifffile.imwrite(tmp_path / "gray.tif", gray)
    image = load_tiff(tmp_path / "gray.tif")
    assert image.depth == 16 and np.array_equal(image, gray)


def test_load_values_and_pixel_size(tmp_path):
    """A float TIFF's samples stand for its values (value_map, values()),
    and its resolution tags give pixel_size, in the file's unit."""
    tifffile = pytest.importorskip("tifffile")
    floats = np.array([[-1.0, 2.5, 0.75, 0.0]], dtype=np.float32)
    tifffile.imwrite(tmp_path / "floats.tif", floats, resolution=(1e4 / 0.65, 1e4 / 0.65), resolutionunit="CENTIMETER")
    image = load_tiff(tmp_path / "floats.tif")
    assert image.dtype == np.uint16 and image.value_map is not None
    assert np.allclose(image.values(), floats, atol=3.5 / 65535 / 2)
    width, height, depth, unit = image.pixel_size
    assert unit == "µm" and depth is None and width == pytest.approx(0.65, rel=1e-6)
    assert image[:, 1:].pixel_size == image.pixel_size
    gray = np.arange(12, dtype=np.uint16).reshape(3, 4)
    tifffile.imwrite(tmp_path / "gray.tif", gray)
    plain = entroscope.load(tmp_path / "gray.tif")
    assert plain.pixel_size is None and plain.value_map is None and np.array_equal(plain.values(), gray)


def test_load_nan(tmp_path):
    """A float TIFF's NaN is no value: values() gives NaN there, entropy
    counts those pixels in no window (as mask= would) and gives them NaN."""
    tifffile = pytest.importorskip("tifffile")
    floats = np.linspace(-1, 2, 24 * 32, dtype=np.float32).reshape(24, 32)
    floats[5, :] = np.nan
    floats[10:14, 3:9] = np.nan
    tifffile.imwrite(tmp_path / "nan.tif", floats)
    image = load_tiff(tmp_path / "nan.tif")
    nan = np.isnan(floats)
    assert image.nan_samples == nan.sum()
    assert np.array_equal(np.isnan(image.values()), nan)
    assert np.allclose(image.values()[~nan], floats[~nan], atol=3 / 65534 / 2)
    assert np.nanmean(image.values()) == pytest.approx(np.nanmean(floats), abs=1e-4)
    values = entroscope.entropy(image, window=5)
    masked = entroscope.entropy(np.asarray(image), window=5, mask=~nan)
    assert np.array_equal(np.isnan(values), nan)
    assert np.array_equal(values, masked, equal_nan=True)


def test_load_multi_page_tiff_is_a_volume(tmp_path):
    """A multi-page TIFF loads whole, as entroscope-cli reads a volume;
    page= reads one page; an OME-TIFF's channel= picks its planes."""
    tifffile = pytest.importorskip("tifffile")
    volume = (np.arange(5 * 16 * 20) * 7919 % 4093).astype(np.uint16).reshape(5, 16, 20)
    tifffile.imwrite(tmp_path / "stack.tif", volume)
    try:
        loaded = entroscope.load(tmp_path / "stack.tif")
    except ValueError as e:
        assert "TIFF is not supported" in str(e)
        pytest.skip("built without libtiff")
    assert loaded.shape == (5, 16, 20) and np.array_equal(loaded, volume) and loaded.depth == 16
    assert np.array_equal(entroscope.entropy(loaded, ball=1), entroscope.entropy(volume, ball=1))
    page = entroscope.load(tmp_path / "stack.tif", page=np.int64(3))
    assert page.shape == (16, 20) and np.array_equal(page, volume[3])
    with pytest.raises(TypeError, match="page must be an integer or None, not bool"):
        entroscope.load(tmp_path / "stack.tif", page=True)
    with pytest.raises(ValueError, match=r"page=5: the file has 5 pages \(0\.\.4\)"):
        entroscope.load(tmp_path / "stack.tif", page=5)
    with pytest.raises(ValueError, match=r"page=-1: expected 0\.\."):
        entroscope.load(tmp_path / "stack.tif", page=-1)
    with pytest.raises(TypeError, match="give one"):
        entroscope.load(tmp_path / "stack.tif", page=0, channel=0)

    # Pages of two sizes make no volume, but each still reads alone.
    with tifffile.TiffWriter(tmp_path / "mixed.tif") as writer:
        writer.write(volume[0])
        writer.write(volume[1, :8])
    with pytest.raises(ValueError, match=r"must agree in size \(page=N reads page N of the 2 alone\)"):
        entroscope.load(tmp_path / "mixed.tif")
    assert np.array_equal(entroscope.load(tmp_path / "mixed.tif", page=1), volume[1, :8])

    channels = (np.arange(2 * 3 * 8 * 10) % 251).astype(np.uint8).reshape(2, 3, 8, 10)
    tifffile.imwrite(tmp_path / "two.ome.tif", channels, ome=True, metadata={"axes": "CZYX"})
    assert np.array_equal(entroscope.load(tmp_path / "two.ome.tif"), channels[0])
    assert np.array_equal(entroscope.load(tmp_path / "two.ome.tif", channel=1), channels[1])
    with pytest.raises(ValueError, match="no channel 2"):
        entroscope.load(tmp_path / "two.ome.tif", channel=2)


def test_save_volume_spacing(tmp_path):
    """A volume's planes' spacing reaches its TIFF as ImageJ's spacing=,
    which load and tifffile read back."""
    volume = (np.arange(3 * 16 * 20) * 7919 % 251).astype(np.uint8).reshape(3, 16, 20)
    values = entroscope.entropy(volume, box=(3, 3, 3))
    try:
        entroscope.save(tmp_path / "volume.tif", values, box=(3, 3, 3), pixel_size=(0.65, 0.65, 2.5, "µm"))
    except ValueError as e:
        assert "TIFF" in str(e)
        pytest.skip("built without libtiff")
    try:
        loaded = entroscope.load(tmp_path / "volume.tif")
    except ValueError as e:
        assert "TIFF is not supported" in str(e)
        pytest.skip("built without libtiff: TIFF is written but not read")
    width, height, depth, unit = loaded.pixel_size
    assert unit == "µm" and depth == pytest.approx(2.5) and width == pytest.approx(0.65, rel=1e-6)
    tifffile = pytest.importorskip("tifffile")
    with tifffile.TiffFile(tmp_path / "volume.tif") as written:
        assert written.imagej_metadata["spacing"] == 2.5 and written.imagej_metadata["unit"] == "um"
        assert np.array_equal(written.asarray(), values)


@pytest.mark.parametrize("compression", ["fast", "default", "small"])
@pytest.mark.parametrize("suffix", [".png", ".tif"])
def test_save_compression_is_the_cli_file(tmp_path, cli, sample, compression, suffix):
    values = entroscope.entropy(entroscope.load(sample), backend="cpu")
    entroscope.save(tmp_path / ("module" + suffix), values, compression=compression)
    run_cli(cli, "entropy", "-q", f"--compression={compression}", sample, "-o", tmp_path / ("cli" + suffix))
    assert (tmp_path / ("module" + suffix)).read_bytes() == (tmp_path / ("cli" + suffix)).read_bytes()


def test_save_compression_is_the_calls_own(tmp_path, rng):
    """Threads saving at once with different compressions each get theirs,
    and a call leaves no setting behind for the next."""
    values = entroscope.entropy(rng.integers(0, 256, (384, 512), dtype=np.uint8))
    want = {}
    for compression in ("fast", "default", "small"):
        entroscope.save(tmp_path / f"{compression}.tif", values, compression=compression)
        want[compression] = (tmp_path / f"{compression}.tif").read_bytes()
    assert len(want["small"]) <= len(want["default"]) < len(want["fast"])

    def save(i):
        compression = ("fast", "small")[i % 2]
        path = tmp_path / f"thread-{i}.tif"
        entroscope.save(path, values, compression=compression)
        return path.read_bytes() == want[compression]

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(save, range(24)))
    entroscope.save(tmp_path / "plain.tif", values)
    assert (tmp_path / "plain.tif").read_bytes() == want["default"]


def test_save_non_contiguous(tmp_path, rng):
    values = entroscope.entropy(rng.integers(0, 256, (30, 40), dtype=np.uint8))
    entroscope.save(tmp_path / "a.txt", values)
    entroscope.save(tmp_path / "b.txt", np.asfortranarray(values))
    assert (tmp_path / "a.txt").read_bytes() == (tmp_path / "b.txt").read_bytes()
