#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The memory models against Nsight Compute, on the GPU machine.

For every CUDA variant of entropy, equalize, sharpen and CLAHE on a random
8-bit SIDE² image (default 8192²), and of the 3-D entropy variants on a
random VOLUME³ volume (default 512³, ball r=3), this runs the CLI once with
--metrics for the modelled DRAM bytes (the "model MB" column) and once under
ncu for the DRAM bytes, summed over every kernel of the run, and prints one
table: variant, modelled MB, ncu's dram__bytes_read.sum +
dram__bytes_write.sum, their ratio, and PASS or FAIL.

The L2 is write-back: the lines a kernel leaves dirty in it reach DRAM
after the kernel ends, outside ncu's count (its flush before the next
kernel is not counted), so dram__bytes_write.sum comes in short of a large
output by up to the L2's size for each launch, and at 0 for a band that
never leaves L2. So a variant PASSES when its modelled reads are within
10 % of ncu's and its modelled writes lie between ncu's (less 10 %) and
ncu's plus one L2 a launch (plus 10 %): what DRAM receives is at least what
ncu saw and at most that and every line still dirty at each kernel's end.
The bytes the SMs' stores wrote into L2 (lts__t_sectors_srcunit_tex_op_write
× 32) are shown beside them: they equal the writes of every kernel that
stores each byte once, and are far more where a kernel rewrites its lines
in L2 (local memory, per-thread-histogram). With --kernels each kernel's
bytes are printed under its variant's row. One failure never stops the
table; the exit status is 1 when any variant failed or could not run.

With --counters it checks the hardware counters too: the same CLI run with
--metrics=hw gives the counters that CUPTI's range profiler read (the
"measured by the hardware" line, over every kernel of the run), and the ncu
run reads the same metrics; a second table compares the six figures (DRAM
read and written, L2 hit rate, shared-memory bank conflicts, achieved
occupancy, local-memory bytes), each within 5 % of ncu's (bytes and
conflicts summed over the kernels, the L2 hit rate weighed by each
kernel's L2 sectors and the occupancy by its active cycles, as the CLI adds
them), or within a floor where both are near zero (64 KB, 1000 conflicts,
one percentage point). The DRAM writes differ by what they cover: CUPTI's
range ends with the kernel's dirty lines written back and counts them,
ncu's kernel ends with them still in the L2 (its flush comes before the
next kernel, uncounted), so CUPTI's writes must lie between ncu's and ncu's
plus the L2's size for each kernel launch. Each run is on GPU 0 alone
(--devices 0): a run spread in bands over several GPUs has no counters.

The input is a PGM, which the CLI decodes whole, so that each run is one job
on the whole image (a PNG may be computed band by band while it is read,
whose small bands' outputs would stay in L2). The run under ncu has no
--metrics: the copy floor that --metrics measures
for its shares is a kernel of its own, which ncu would count. ncu flushes the
caches before each kernel (--cache-control all, its default), which is what
the models assume for a buffer that one kernel writes and the next reads.
ncu runs with --clock-control none, at the clocks the CLI's own run had:
locked to base clocks (ncu's default) the short kernels' achieved
occupancy and bank conflicts, which depend on timing, moved 4 to 12 points
and 6 % from CUPTI's on an H200 (equalize block-shared and warp-private,
sharpen fast and shared-tile), and within 2.5 % with the clocks left alone.

  usage (GPU machine, repository root):
    tests/gpu/verify-metrics.py [--side 8192] [--volume 512] [--ops entropy,...] [--counters]
        [--clock-control none|base]
  environment: NCU (default ncu), BUILD (default build-gpu); libraries carried
  to the machine (gpu-carry/tiff/lib, gpu-carry/lib) go on LD_LIBRARY_PATH,
  and gpu-carry/tiff's pkg-config files on PKG_CONFIG_PATH: the 3-D rows read
  a TIFF, which needs tests/gpu/make-tiff-carry.sh's libtiff there.
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
# ncu's --clock-control for its runs (set from the command line).
CLOCK_CONTROL = ["none"]
TOLERANCE = 0.10
COUNTER_TOLERANCE = 0.05
# The counters as the CLI prints them and as ncu names them: how ncu's
# metrics add up over a run's kernels (summed, or a rate weighed by the
# metric it is a share of, as es_counters_add weighs them), the floor under
# which two figures near zero agree, and the CLI's scale to ncu's unit.
COUNTERS = [
    ("DRAM rd MB", ["dram__bytes_read.sum"], None, 0.064, 1e6),
    ("DRAM wr MB", ["dram__bytes_write.sum"], None, 0.064, 1e6),
    ("L2 hit %", ["lts__t_sector_hit_rate.pct"], "lts__t_sectors.sum", 1.0, 1),
    ("conflicts", ["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
                   "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"], None, 1000, 1),
    ("occupancy %", ["sm__warps_active.avg.pct_of_peak_sustained_active"], "sm__cycles_active.sum", 1.0, 1),
    ("local MB", ["l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum",
                  "l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum"], None, 0.064, 1e6),
]
MEASURED = re.compile(r"measured by the hardware: DRAM ([0-9.]+) MB read, ([0-9.]+) MB written .*?"
                      r"L2 hit rate ([0-9.]+) %, ([0-9.]+) shared-memory bank conflicts, "
                      r"achieved occupancy ([0-9.]+) %, local memory ([0-9.]+) MB")
UNIT_BYTES = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "Tbyte": 1e12,
              "KB": 1e3, "MB": 1e6, "GB": 1e9}


def environment():
    env = dict(os.environ)
    carried = [os.path.join(ROOT, "gpu-carry", d) for d in ("tiff/lib", "tiff", "lib")]
    paths = [p for p in carried if os.path.isdir(p)]
    if env.get("LD_LIBRARY_PATH"):
        paths.append(env["LD_LIBRARY_PATH"])
    env["LD_LIBRARY_PATH"] = ":".join(paths)
    # tests/gpu/make-tiff-carry.sh's libtiff, for the build's TIFF input.
    pkgconfig = os.path.join(ROOT, "gpu-carry", "tiff", "lib", "pkgconfig")
    if os.path.isdir(pkgconfig):
        env["PKG_CONFIG_PATH"] = ":".join(filter(None, [pkgconfig, env.get("PKG_CONFIG_PATH")]))
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


def model_bytes(args, env, counters=False):
    """(read, write) bytes of the model from the --metrics row, or an error;
    with `counters`, also the CLI's counters (--metrics=hw) as COUNTERS
    lists them, else None."""
    run = subprocess.run([CLI] + args + ["--metrics=hw" if counters else "--metrics", "-q"], env=env,
                         capture_output=True, text=True, check=False)
    if run.returncode != 0:
        return None, "exit %d: %s" % (run.returncode, " ".join(run.stderr.strip().splitlines()[-1:]))
    if counters:
        found = MEASURED.search(run.stderr)
        if not found:
            lines = [l.strip() for l in run.stderr.splitlines() if "hardware counters" in l]
            return None, "no counters: %s" % (lines[0] if lines else run.stderr.strip()[-200:])
        model_bytes.counters = [float(v) for v in found.groups()]
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


def ncu_bytes(args, env, counters=False):
    """(DRAM read, DRAM write, kernels, L2 write, per kernel) bytes that ncu
    counts over every kernel of the run; per kernel: [name, read, DRAM write,
    L2 write] in launch order. With `counters`, ncu's figures of COUNTERS
    too (in ncu_bytes.counters)."""
    metrics = ["dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_sectors_srcunit_tex_op_write.sum"]
    if counters:
        metrics += [m for c in COUNTERS for m in c[1] + ([c[2]] if c[2] else []) if m not in metrics]
    command = [NCU, "--csv", "--print-units", "base", "--clock-control", CLOCK_CONTROL[0],
               "--metrics", ",".join(metrics), CLI] + args + ["-q"]
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
    per_kernel = {}
    for row in csv.DictReader(io.StringIO(body)):
        name, unit = row.get("Metric Name"), row.get("Metric Unit", "byte")
        try:
            value = float(row.get("Metric Value", "").replace(",", "")) * UNIT_BYTES.get(unit, 1)
        except ValueError:
            continue
        kernel = kernels.setdefault(row.get("ID"), [row.get("Kernel Name", "?").split("(")[0], 0.0, 0.0, 0.0])
        per_kernel.setdefault(row.get("ID"), {})[name] = value
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
    if counters:
        ncu_bytes.counters = []
        for _label, names, weight, _floor, scale in COUNTERS:
            if weight is None:
                value = sum(k.get(n, 0) for k in per_kernel.values() for n in names)
            else:
                total = sum(k.get(weight, 0) for k in per_kernel.values())
                value = sum(k.get(names[0], 0) * k.get(weight, 0) for k in per_kernel.values()) / max(total, 1)
            ncu_bytes.counters.append(value / scale)
    return (read, write, len(kernels), l2_write, list(kernels.values())), None


def model_agrees(model, measured, l2_mb):
    """The rule above: reads within TOLERANCE of ncu's, writes between
    ncu's and ncu's plus one L2 of dirty lines a launch (TOLERANCE either side)."""
    read, write, launches = measured[0] / 1e6, measured[1] / 1e6, measured[2]
    reads_ok = abs(model[0] / 1e6 - read) <= TOLERANCE * read
    writes_ok = write * (1 - TOLERANCE) <= model[1] / 1e6 <= (write + launches * l2_mb) * (1 + TOLERANCE)
    return reads_ok and writes_ok


def l2_megabytes(env):
    """The L2's size of GPU 0 in MB (10^6 bytes), as the GPU machine's torch
    reads it, else 60 (an H200's)."""
    probe = subprocess.run([sys.executable, "-c", "import torch; print(torch.cuda.get_device_properties(0).L2_cache_size)"],
                           env=env, capture_output=True, text=True, check=False)
    try:
        return int(probe.stdout.strip()) / 1e6
    except ValueError:
        return 60.0


def counters_agree(cli, ncu, launches, l2_mb):
    """Per counter: whether the CLI's figure is within COUNTER_TOLERANCE of
    ncu's, or both under the counter's floor apart; the DRAM writes between
    ncu's and ncu's plus an L2 of dirty lines a launch."""
    agree = [abs(a - b) <= max(COUNTER_TOLERANCE * max(abs(a), abs(b)), c[3]) for a, b, c in zip(cli, ncu, COUNTERS)]
    write = [c[0] for c in COUNTERS].index("DRAM wr MB")
    agree[write] = ncu[write] * (1 - COUNTER_TOLERANCE) <= cli[write] <= ncu[write] + launches * l2_mb
    return agree


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--side", type=int, default=8192)
    parser.add_argument("--volume", type=int, default=512, help="side of the 3-D volume (0: none)")
    parser.add_argument("--radius", type=int, default=3, help="the 3-D variants' ball")
    parser.add_argument("--ops", default="entropy,equalize,sharpen,clahe")
    parser.add_argument("--variants", default="", help="only these variants (comma-separated; default all)")
    parser.add_argument("--kernels", action="store_true", help="each kernel's bytes under its variant")
    parser.add_argument("--counters", action="store_true",
                        help="also compare the CLI's hardware counters (--metrics=hw) with ncu's, within 5 %%")
    parser.add_argument("--clock-control", choices=["base", "none"], default="none",
                        help="ncu's clocks: left as the CLI runs them (the default here), or locked to base")
    options = parser.parse_args()
    CLOCK_CONTROL[0] = options.clock_control
    counter_rows = []
    l2_mb = l2_megabytes(environment())
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
            "op", "variant", "model MB", "ncu MB", "ratio", "verdict", "mdl rd", "ncu rd", "mdl wr", "L2 wr",
            "DRAM wr", "krn"))
        for op, variant in variants(env):
            if op not in ops or (options.variants and variant not in options.variants.split(",")):
                continue
            three_d = variant.startswith("volume")
            if three_d and options.volume <= 0:
                continue
            source, output = (volume, "out.tif") if three_d else (image, "out.tif")
            args = [op, "--backend", "cuda", "--devices", "0", "--variant", variant, source, "-o",
                    os.path.join(d, output)]
            if three_d:
                args[1:1] = ["--ball", str(options.radius)]
            label = variant + (" (%d³)" % options.volume if three_d else "")
            counters = options.counters
            model, error = model_bytes(args, env, counters)
            measured, ncu_error = (None, None) if error else ncu_bytes(args, env, counters)
            if error or ncu_error:
                failed += 1
                print("%-9s %-22s %s" % (op, label, "ERROR " + (error or ncu_error)))
                continue
            total_model, total_ncu = (model[0] + model[1]) / 1e6, (measured[0] + measured[1]) / 1e6
            ratio = total_model / total_ncu if total_ncu > 0 else float("inf")
            ok = model_agrees(model, measured, l2_mb)
            failed += 0 if ok else 1
            print("%-9s %-22s %10.1f %10.1f %7.3f  %-7s %9.1f %9.1f %9.1f %9.1f %9.1f %4d" % (
                op, label, total_model, total_ncu, ratio, "PASS" if ok else "FAIL", model[0] / 1e6,
                measured[0] / 1e6, model[1] / 1e6, measured[3] / 1e6, measured[1] / 1e6, measured[2]))
            if options.kernels:
                for name, read, write, l2 in measured[4]:
                    print("%-9s   %-51s %9.1f %19.1f %9.1f" % ("", name[:51], read / 1e6, l2 / 1e6, write / 1e6))
            sys.stdout.flush()
            if counters:
                agree = counters_agree(model_bytes.counters, ncu_bytes.counters, measured[2], l2_mb)
                failed += 0 if all(agree) else 1
                counter_rows.append((op, label, model_bytes.counters, ncu_bytes.counters, agree))
    if counter_rows:
        print()
        print("Hardware counters: CUPTI through the CLI (--metrics=hw) / ncu, per run "
              "(DRAM writes: ncu's plus at most %.0f MB of L2 a launch)" % l2_mb)
        print("%-9s %-22s " % ("op", "variant") + " ".join("%21s" % c[0] for c in COUNTERS) + "  verdict")
        for op, label, cli, ncu, agree in counter_rows:
            cells = ["%9.2f/%-9.2f%s" % (a, b, " " if ok else "!") for a, b, ok in zip(cli, ncu, agree)]
            print("%-9s %-22s " % (op, label) + " ".join(cells) + "  " + ("PASS" if all(agree) else "FAIL"))
    print("%s: %d variant%s outside the bounds or not run (L2 %.0f MB a launch)" % (
        "FAIL" if failed else "PASS", failed, "" if failed == 1 else "s", l2_mb))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
