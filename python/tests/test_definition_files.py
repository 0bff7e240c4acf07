# SPDX-License-Identifier: MIT
"""save() of a result computed with an entropy definition (DESIGN.md §1): the
same keywords as entropy(), and the same bytes as entroscope-cli for the same
job: the heatmap's absolute range ln(min(B, n)), palette or RGB (pixels that
may have no value), raw16's ValueOffset/ValueScale, the "Definition" line."""

import subprocess

import numpy as np
import pytest

import entroscope


def write_pgm(path, cells):
    """A binary PGM of 8-bit samples: the CLI's input, mask and footprint files."""
    cells = np.asarray(cells, np.uint8)
    path.write_bytes(b"P5\n%d %d\n255\n" % (cells.shape[1], cells.shape[0]) + cells.tobytes())
    return path


@pytest.fixture
def job_files(tmp_path, rng):
    image = rng.integers(0, 256, (37, 53), dtype=np.uint8)
    image[:, :6] = 200  # a flat stripe: zeros and exact minima
    mask = rng.integers(0, 4, image.shape) > 0
    footprint = rng.integers(0, 3, (5, 7)) > 0
    footprint[2, 3] = True
    return {
        "image": image, "mask": mask, "footprint": footprint,
        "image_path": write_pgm(tmp_path / "in.pgm", image),
        "mask_path": write_pgm(tmp_path / "mask.pgm", mask * 255),
        "footprint_path": write_pgm(tmp_path / "footprint.pgm", footprint * 255),
    }


# (CLI options, the same job as keywords); footprint and mask files are filled in.
JOBS = [
    (["--disk=3", "--border=symmetric", "--units=normalized"], {"disk": 3, "border": "symmetric",
                                                                 "units": "normalized"}),
    (["--rect=3x9", "--binning=exact", "--border=constant:7"], {"rect": (3, 9), "binning": "exact",
                                                                 "border": "constant:7"}),
    (["--footprint=FOOTPRINT", "--border=mirror"], {"footprint": "FOOTPRINT", "border": "mirror"}),
    (["--mask=MASK", "--disk=2", "--border=replicate"], {"mask": "MASK", "disk": 2, "border": "replicate"}),
    (["--like=matlab", "--units=nats"], {"like": "matlab", "units": "nats"}),
    (["--like=fiji", "--levels=64", "--units=normalized"], {"like": "fiji", "levels": 64, "units": "normalized"}),
    (["--binning=minmax", "--window=7", "--levels=5"], {"binning": "minmax", "window": 7, "levels": 5}),
]

# (CLI options, save keywords) of each export.
EXPORTS = [
    (["--format=png"], {"format": "png"}),
    (["--format=png", "--colorbar"], {"format": "png", "colorbar": True}),
    (["--format=png", "--range=auto", "--colormap=magma"], {"format": "png", "range": "auto", "colormap": "magma"}),
    (["--raw16"], {"format": "raw16"}),
    (["--format=tif"], {"format": "tif"}),
    (["--format=txt"], {"format": "txt"}),
]


def resolve(options, keywords, files):
    names = {"FOOTPRINT": "footprint", "MASK": "mask"}
    options = [o.replace("FOOTPRINT", str(files["footprint_path"])).replace("MASK", str(files["mask_path"]))
               for o in options]
    keywords = {k: files[names[v]] if isinstance(v, str) and v in names else v for k, v in keywords.items()}
    return options, keywords


def cli_bytes(cli, path, options, image_path):
    done = subprocess.run([cli, "entropy", *options, "-q", str(image_path), "-o", str(path)], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    return path.read_bytes()


@pytest.mark.parametrize("job", range(len(JOBS)), ids=[" ".join(o) for o, _ in JOBS])
@pytest.mark.parametrize("export", range(len(EXPORTS)), ids=[" ".join(o) for o, _ in EXPORTS])
def test_save_with_a_definition_is_the_cli_file(tmp_path, cli, job_files, job, export):
    options, keywords = resolve(*JOBS[job], job_files)
    export_options, export_keywords = EXPORTS[export]
    suffix = {"tif": ".tif", "txt": ".txt"}.get(export_keywords["format"], ".png")
    want = cli_bytes(cli, tmp_path / ("cli" + suffix), options + export_options, job_files["image_path"])
    values = entroscope.entropy(job_files["image"], **keywords)
    entroscope.save(tmp_path / ("module" + suffix), values, **keywords, **export_keywords)
    assert (tmp_path / ("module" + suffix)).read_bytes() == want


@pytest.mark.parametrize("like", ["matlab", "fiji", "skimage"])
def test_presets_in_bits_to_tiff(tmp_path, cli, job_files, like):
    """A preset's own units are bits: the TIFF holds the very float32 values
    entropy() returns, and records the preset's definition."""
    want = cli_bytes(cli, tmp_path / "cli.tif", [f"--like={like}"], job_files["image_path"])
    values = entroscope.entropy(job_files["image"], like=like)
    entroscope.save(tmp_path / "module.tif", values, like=like)
    assert (tmp_path / "module.tif").read_bytes() == want


def test_definition_is_recorded(tmp_path, job_files):
    values = entroscope.entropy(job_files["image"], disk=3, border="symmetric", units="normalized")
    entroscope.save(tmp_path / "raw.png", values, format="raw16", disk=3, border="symmetric", units="normalized")
    data = (tmp_path / "raw.png").read_bytes()
    assert "Definition\0disk r=3 · symmetric · 16 bins · normalized".encode() in data
    assert b"Units\0normalized" in data
    # Normalized values lie in 0..1: the absolute range's maximum is 1.
    assert b"ValueScale\0" + b"%.9g" % (1 / 65535) in data


def test_save_refuses_what_entropy_refuses(tmp_path, job_files):
    values = entroscope.entropy(job_files["image"])
    with pytest.raises(ValueError, match="border='wrap'"):
        entroscope.save(tmp_path / "x.png", values, border="wrap")
    with pytest.raises(TypeError, match="give one of rect, disk, footprint, box and ball"):
        entroscope.save(tmp_path / "x.png", values, disk=2, rect=(3, 3))
    with pytest.raises(ValueError, match="mask size"):
        entroscope.save(tmp_path / "x.png", values, mask=np.ones((3, 4), bool))
    with pytest.raises(TypeError, match="equalize has no disk"):
        entroscope.save(tmp_path / "x.png", np.zeros((4, 4), np.uint8), op="equalize", disk=2)
    with pytest.raises(ValueError, match="units='normalized'"):
        entroscope.save(tmp_path / "x.png", np.zeros((4, 4), np.uint8), op="equalize", units="normalized")
    assert not list(tmp_path.glob("x.*"))


def test_extent_of_each_shape():
    footprint = np.zeros((5, 9), bool)
    footprint[2, 4] = True
    assert entroscope.extent("entropy", rect=(3, 9)) == (1, 4)
    assert entroscope.extent("entropy", disk=6) == (6, 6)
    assert entroscope.extent("entropy", footprint=footprint) == (2, 4)
    assert entroscope.extent("entropy", like="matlab") == (4, 4)
    assert entroscope.extent("entropy", window=11, like="fiji") == (5, 5)
    assert entroscope.extent("sharpen") == (1, 1) and entroscope.extent("quantize") == (0, 0)
    assert entroscope.halo("entropy", rect=(11, 3)) == 5


def test_masks_are_in_where_nonzero_and_not_nan(job_files):
    """A float mask is in where nonzero and not NaN, as a mask file is read
    (NumPy's cast to bool would count NaN in); ones and halves are in
    everywhere, as the CLI reads them from a float TIFF."""
    image = job_files["image"]
    floats = np.where(job_files["mask"], 0.5, np.nan)
    floats[::3] = 0.0
    want = entroscope.entropy(image, mask=(floats != 0) & ~np.isnan(floats))
    got = entroscope.entropy(image, mask=floats)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    assert np.isnan(got[np.isnan(floats)]).all()
    halves = np.where(job_files["mask"], 0.5, 1.0).astype(np.float32)
    assert not np.isnan(entroscope.entropy(image, mask=halves)).any()
