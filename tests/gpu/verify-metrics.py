#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The memory models against Nsight Compute, on the GPU machine.

For every CUDA variant of entropy, equalize, sharpen and CLAHE on a random
8-bit SIDE² image (default 8192²), and of the 3-D entropy variants on a
random VOLUME³ volume (default 512³, ball r=3), this runs the CLI once with
--metrics for the modelled DRAM bytes (the "model MB" column) and once under
ncu for the DRAM bytes, summed over every kernel of the run, and prints one
table: variant, modelled MB, measured MB, their ratio and PASS or FAIL at
10 %. The measured bytes are ncu's dram__bytes_read.sum plus the bytes that
the SMs' stores wrote into L2 (lts__t_sectors_srcunit_tex_op_write.sum ×
32; the total lts__t_sectors_op_write.sum also counts the stores that one
L2 partition forwards to the other across the fabric, half of them on an
H200, so it comes out at 1.5× the bytes stored). The L2 is write-back: a kernel's last dirty lines are still in L2 when it ends
and reach DRAM afterwards, outside ncu's count, so that
dram__bytes_write.sum comes in short of a large output by up to the L2's
size (and at 0 for a band that never leaves L2). Every byte these kernels
store is stored once, so the L2's store bytes are the bytes DRAM receives;
atomics stay in L2 and are not counted. dram__bytes_write.sum is shown
beside them. With --kernels each kernel's bytes are printed under its
variant's row. One failure never stops the table; the exit status is 1
when any variant failed or could not run.

The input is a PGM, which the CLI decodes whole, so that each run is one job
on the whole image (a PNG may be computed band by band while it is read,
whose small bands' outputs would stay in L2). The run under ncu has no
--metrics: the copy floor that --metrics measures
for its shares is a kernel of its own, which ncu would count. ncu flushes the
caches before each kernel (--cache-control all, its default), which is what
the models assume for a buffer that one kernel writes and the next reads.

  usage (GPU machine, repository root):
    tests/gpu/verify-metrics.py [--side 8192] [--volume 512] [--ops entropy,...]
  environment: NCU (default ncu), BUILD (default build-gpu); libraries carried
  to the machine (gpu-carry/tiff/lib, gpu-carry/lib) go on LD_LIBRARY_PATH.
"""

import argparse
import csv
import io
import os
import random
import re
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("BUILD", os.path.join(ROOT, "build-gpu"))
CLI = os.path.join(BUILD, "app", "entroscope-cli")
NCU = os.environ.get("NCU", "ncu")
TOLERANCE = 0.10
UNIT_BYTES = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "Tbyte": 1e12,
              "KB": 1e3, "MB": 1e6, "GB": 1e9}


def environment():
    env = dict(os.environ)
    carried = [os.path.join(ROOT, "gpu-carry", d) for d in ("tiff/lib", "tiff", "lib")]
    paths = [p for p in carried if os.path.isdir(p)]
    if env.get("LD_LIBRARY_PATH"):
        paths.append(env["LD_LIBRARY_PATH"])
    env["LD_LIBRARY_PATH"] = ":".join(paths)
    return env


def build(env):
    if not os.path.exists(os.path.join(BUILD, "build.ninja")):
        subprocess.run(["meson", "setup", BUILD, "-Dgui=disabled", "-Dpython=disabled", "-Dcuda=enabled",
                        "-Dgpu_archs=90"], cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["ninja", "-C", BUILD, "app/entroscope-cli"], cwd=ROOT, env=env, check=True,
                   stdout=subprocess.DEVNULL)


def samples(rng, count):
    # Samples 1..255: never time on zeros.
    return rng.randbytes(count).translate(bytes([1]) + bytes(range(1, 256)))


def write_pgm(path, side, rng):
    with open(path, "wb") as f:
        f.write(b"P5 %d %d 255\n" % (side, side))
        for _ in range(side):
            f.write(samples(rng, side))


def write_volume_tiff(path, side, rng):
    """A classic little-endian TIFF of `side` pages of side² 8-bit samples,
    uncompressed, one strip a page: what the CLI reads as a volume."""
    page = side * side
    header = 8
    ifd_size = 2 + 9 * 12 + 4
    with open(path, "wb") as f:
        f.write(b"II*\0" + struct.pack("<I", header))
        data_start = header + side * ifd_size
        for z in range(side):
            strip = data_start + z * page
            following = header + (z + 1) * ifd_size if z + 1 < side else 0
            tags = [(256, 4, side), (257, 4, side), (258, 3, 8), (259, 3, 1), (262, 3, 1),
                    (273, 4, strip), (277, 3, 1), (278, 4, side), (279, 4, page)]
            f.write(struct.pack("<H", len(tags)))
            for tag, kind, value in tags:
                f.write(struct.pack("<HHII", tag, kind, 1, value))
            f.write(struct.pack("<I", following))
        for _ in range(side):
            f.write(samples(rng, page))


def variants(env):
    """(op, variant id) of every CUDA variant, from `entroscope-cli info`."""
    text = subprocess.run([CLI, "info"], env=env, capture_output=True, text=True).stdout
    found, op = [], None
    for line in text.splitlines():
        header = re.match(r"^  ([a-z]+):$", line)
        if header:
            op = header.group(1)
            continue
        row = re.match(r"^  [* ] ([a-z0-9-]+) ", line)
        if row and op:
            found.append((op, row.group(1)))
    return found


def model_bytes(args, env):
    """(read, write) bytes of the model from the --metrics row, or an error."""
    run = subprocess.run([CLI] + args + ["--metrics", "-q"], env=env, capture_output=True, text=True)
    if run.returncode != 0:
        return None, "exit %d: %s" % (run.returncode, " ".join(run.stderr.strip().splitlines()[-1:]))
    lines = run.stderr.splitlines()
    for i, line in enumerate(lines[:-1]):
        if line.startswith("metrics "):
            # The row: label, rd B/px, wr B/px, model MB, ...; the total
            # from its MB, split as the bytes a pixel are.
            fields = lines[i + 1].split()
            read_px, write_px, total = float(fields[1]), float(fields[2]), float(fields[3]) * 1e6
            if read_px + write_px <= 0:
                break
            return (total * read_px / (read_px + write_px), total * write_px / (read_px + write_px)), None
    return None, "no --metrics row in: %s" % run.stderr.strip()[:200]


def ncu_bytes(args, env):
    """(DRAM read, DRAM write, kernels, L2 write, per kernel) bytes that ncu
    counts over every kernel of the run; per kernel: [name, read, DRAM write,
    L2 write] in launch order."""
    command = [NCU, "--csv", "--print-units", "base", "--metrics",
               "dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_write.sum", CLI] + args + ["-q"]
    try:
        run = subprocess.run(command, env=env, capture_output=True, text=True)
    except OSError as error:
        return None, "cannot run %s: %s" % (NCU, error.strerror)
    if run.returncode != 0:
        tail = (run.stderr.strip() or run.stdout.strip()).splitlines()[-2:]
        return None, "ncu exit %d: %s" % (run.returncode, " ".join(tail))
    body = "\n".join(l for l in run.stdout.splitlines() if l.startswith('"'))
    read = write = l2_write = 0.0
    kernels = {}
    for row in csv.DictReader(io.StringIO(body)):
        name, unit = row.get("Metric Name"), row.get("Metric Unit", "byte")
        try:
            value = float(row.get("Metric Value", "").replace(",", "")) * UNIT_BYTES.get(unit, 1)
        except ValueError:
            continue
        kernel = kernels.setdefault(row.get("ID"), [row.get("Kernel Name", "?").split("(")[0], 0.0, 0.0, 0.0])
        if name == "dram__bytes_read.sum":
            read += value
            kernel[1] += value
        elif name == "dram__bytes_write.sum":
            write += value
            kernel[2] += value
        elif name == "lts__t_sectors_srcunit_tex_op_write.sum":
            l2_write += 32 * value
            kernel[3] += 32 * value
    if not kernels:
        return None, "ncu profiled no kernel (counters not permitted?): %s" % run.stdout.strip()[-200:]
    return (read, write, len(kernels), l2_write, list(kernels.values())), None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--side", type=int, default=8192)
    parser.add_argument("--volume", type=int, default=512, help="side of the 3-D volume (0: none)")
    parser.add_argument("--radius", type=int, default=3, help="the 3-D variants' ball")
    parser.add_argument("--ops", default="entropy,equalize,sharpen,clahe")
    parser.add_argument("--kernels", action="store_true", help="each kernel's bytes under its variant")
    options = parser.parse_args()
    env = environment()
    build(env)
    rng = random.Random(2024)
    ops = options.ops.split(",")
    failed = 0
    with tempfile.TemporaryDirectory() as d:
        image = os.path.join(d, "in.pgm")
        write_pgm(image, options.side, rng)
        volume = os.path.join(d, "volume.tif")
        if options.volume > 0 and "entropy" in ops:
            write_volume_tiff(volume, options.volume, rng)
        print("%-9s %-22s %10s %10s %7s  %-7s %9s %9s %9s %9s %9s %4s" % (
            "op", "variant", "model MB", "meas. MB", "ratio", "verdict", "mdl rd", "ncu rd", "mdl wr", "L2 wr",
            "DRAM wr", "krn"))
        for op, variant in variants(env):
            if op not in ops:
                continue
            three_d = variant.startswith("volume")
            if three_d and options.volume <= 0:
                continue
            source, output = (volume, "out.tif") if three_d else (image, "out.tif")
            args = [op, "--backend", "cuda", "--variant", variant, source, "-o", os.path.join(d, output)]
            if three_d:
                args[1:1] = ["--ball", str(options.radius)]
            label = variant + (" (%d³)" % options.volume if three_d else "")
            model, error = model_bytes(args, env)
            measured, ncu_error = (None, None) if error else ncu_bytes(args, env)
            if error or ncu_error:
                failed += 1
                print("%-9s %-22s %s" % (op, label, "ERROR " + (error or ncu_error)))
                continue
            total_model, total_ncu = (model[0] + model[1]) / 1e6, (measured[0] + measured[3]) / 1e6
            ratio = total_model / total_ncu if total_ncu > 0 else float("inf")
            ok = abs(ratio - 1) <= TOLERANCE
            failed += 0 if ok else 1
            print("%-9s %-22s %10.1f %10.1f %7.3f  %-7s %9.1f %9.1f %9.1f %9.1f %9.1f %4d" % (
                op, label, total_model, total_ncu, ratio, "PASS" if ok else "FAIL", model[0] / 1e6,
                measured[0] / 1e6, model[1] / 1e6, measured[3] / 1e6, measured[1] / 1e6, measured[2]))
            if options.kernels:
                for name, read, write, l2 in measured[4]:
                    print("%-9s   %-51s %9.1f %19.1f %9.1f" % ("", name[:51], read / 1e6, l2 / 1e6, write / 1e6))
            sys.stdout.flush()
    print("%s: %d variant%s off by more than %d %% or not run" % (
        "FAIL" if failed else "PASS", failed, "" if failed == 1 else "s", round(TOLERANCE * 100)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
