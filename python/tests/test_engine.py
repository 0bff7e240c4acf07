# SPDX-License-Identifier: MIT
"""Engines, threads, the GIL, cancellation, Ctrl+C and memory over many calls."""

import gc
import os
import subprocess
import sys
import textwrap
import threading
import time
import tracemalloc
import warnings

import numpy as np
import pytest

import entroscope


def test_engine_backends():
    cpu = entroscope.Engine("cpu")
    assert cpu.backend == "cpu" and cpu.requested == "cpu" and cpu.devices is None
    assert cpu.description.startswith("CPU: OpenMP")
    assert cpu.cuda_reason == "the CPU backend was chosen"
    assert "CPU: OpenMP" in repr(cpu)
    auto = entroscope.Engine()
    assert auto.backend in ("cpu", "cuda") and auto.requested == "auto"
    assert (auto.cuda_reason == "") == (auto.backend == "cuda")
    with pytest.raises(ValueError, match=r"backend='gpu': expected auto, cpu or cuda"):
        entroscope.Engine("gpu")
    with pytest.raises(ValueError, match="backend='cpu' uses none"):
        entroscope.Engine("cpu", devices=[0])
    with pytest.raises(ValueError, match="listed twice"):
        entroscope.Engine("auto", devices=[0, 0])
    with pytest.raises(ValueError, match="not a CUDA device number"):
        entroscope.Engine("auto", devices=[-1])
    with pytest.raises(TypeError, match="devices="):
        entroscope.Engine("auto", devices=1.5)


def test_cuda_unavailable_is_an_error():
    # In a process that sees no CUDA device (CUDA_VISIBLE_DEVICES empty), so
    # that it runs on a GPU machine too, where this process's CUDA works.
    child = textwrap.dedent("""
        import numpy as np
        import entroscope
        assert entroscope.Engine().backend == "cpu"
        for call in (lambda: entroscope.Engine("cuda"),
                     lambda: entroscope.entropy(np.zeros((4, 4), np.uint8), backend="cuda")):
            try:
                call()
            except RuntimeError as error:
                print(error)
            else:
                print("no error")
        """)
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    env.pop("ES_TEST_REQUIRE_CUDA", None)
    run = subprocess.run([sys.executable, "-c", child], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert len(lines) == 2 and all(line.startswith("CUDA cannot be used: ") for line in lines), run.stdout


def test_close_and_context_manager():
    image = np.zeros((4, 4), np.uint8)
    with entroscope.Engine("cpu") as engine:
        engine.entropy(image)
    assert engine.closed
    with pytest.raises(ValueError, match="the engine is closed"):
        engine.entropy(image)
    with pytest.raises(ValueError, match="the engine is closed"):
        engine.description
    engine.close()
    assert repr(engine) == "<entroscope.Engine (closed)>"


def test_info_and_variants():
    about = entroscope.info()
    assert about["version"] == entroscope.__version__
    assert about["backend"] in about["backends_compiled"]
    assert about["cpu_threads"] == entroscope.cpu_threads() >= 1
    assert set(about["variants"]) == {"quantize", "entropy", "equalize", "sharpen", "clahe"}
    assert entroscope.info("cpu")["why"] == "requested with backend='cpu'"
    for op in entroscope.ops():
        rows = entroscope.variants(op)
        assert (len(rows) > 0) == entroscope.cuda_compiled()
        if rows:
            assert sum(v.is_default for v in rows) == 1
            assert all(v.id and v.lesson for v in rows)
    with pytest.raises(ValueError, match="unknown operation 'blur'"):
        entroscope.variants("blur")


def test_info_command():
    done = subprocess.run([sys.executable, "-m", "entroscope", "cpu"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "Backend in use:    cpu (requested with backend='cpu')" in done.stdout


def test_timing(rng):
    image = rng.integers(0, 256, (64, 64), dtype=np.uint8)
    values, timing = entroscope.entropy(image, return_timing=True, backend="cpu")
    assert isinstance(timing, entroscope.Timing)
    assert timing.backend == "cpu" and timing.variant == "openmp" and not timing.fell_back
    assert 0 <= timing.kernel_ms <= timing.wall_ms <= timing.call_ms
    assert timing.upload_ms == timing.download_ms == 0


def test_timing_metrics(rng):
    """The run's memory model and bandwidth, by name beside the ten fields of the tuple."""
    image = rng.integers(0, 256, (64, 48), dtype=np.uint8)
    _, timing = entroscope.entropy(image, return_timing=True, backend="cpu")
    metrics = timing.metrics
    assert len(timing) == 10
    assert metrics["pixels"] == 64 * 48
    assert metrics["read_bytes"] == 64 * 48 and metrics["write_bytes"] == 4 * 64 * 48
    assert np.isfinite(metrics["achieved_gbs"]) and metrics["achieved_gbs"] > 0
    assert metrics["kernels"] == [] and metrics["host_memory"] == "none" and metrics["datasheet_gbs"] == 0
    assert metrics["counters"] is None and metrics["counters_note"] == ""


def test_counters_where_unavailable(rng):
    """Engine.counters asks for hardware counters; a CPU run has none and says why in one line."""
    image = rng.integers(0, 256, (64, 48), dtype=np.uint8)
    with entroscope.Engine("cpu") as engine:
        assert engine.counters is False
        engine.counters = True
        assert engine.counters is True
        values, timing = engine.sharpen(image, return_timing=True)
        assert values.shape == image.shape
        assert timing.metrics["counters"] is None
        assert "CPU" in timing.metrics["counters_note"] and "\n" not in timing.metrics["counters_note"]
        engine.counters = False
        assert engine.sharpen(image, return_timing=True)[1].metrics["counters_note"] == ""
    with pytest.raises(ValueError, match="closed"):
        engine.counters = True


# ---- threads ------------------------------------------------------------------


def test_threads_calling_at_once(rng):
    """Many threads on the shared engine and on their own: the same results as one at a time."""
    images = [rng.integers(0, 256, (int(rng.integers(1, 120)), int(rng.integers(1, 120))), dtype=np.uint8)
              for _ in range(16)]
    want = [(entroscope.entropy(im, 7), entroscope.equalize(im), entroscope.sharpen(im, 0.7)) for im in images]
    errors = []

    def work(index, engine):
        try:
            for _ in range(20):
                for im, (e, q, s) in zip(images, want):
                    call = engine if engine is not None else entroscope
                    # Backends agree within 1e-5 on entropy (the shared engine may be CUDA).
                    assert np.abs(call.entropy(im, 7) - e).max() <= 1e-5
                    assert np.array_equal(call.equalize(im), q)
                    assert np.array_equal(call.sharpen(im, 0.7), s)
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append((index, error))

    threads = [threading.Thread(target=work, args=(i, entroscope.Engine("cpu") if i % 2 else None))
               for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def long_job():
    """An image whose entropy takes a while (~0.3-3 s depending on the machine)."""
    rng = np.random.default_rng(7)
    return rng.integers(0, 256, (4096, 4096), dtype=np.uint8)


def test_gil_is_released_while_computing():
    image = long_job()
    engine = entroscope.Engine("cpu")
    span = {}

    def job():
        span["start"] = time.perf_counter()
        engine.entropy(image, 31, 256)
        span["end"] = time.perf_counter()

    worker = threading.Thread(target=job)
    ticks = []
    worker.start()
    while worker.is_alive():
        ticks.append(time.perf_counter())  # pure Python: needs the GIL
    worker.join()
    start, end = span["start"], span["end"]
    middle = [t for t in ticks if start + (end - start) * 0.25 < t < end - (end - start) * 0.25]
    # With the GIL held by the job, this thread would be stopped for its whole
    # middle half; released, it spins all along.
    assert end - start > 0.02
    assert len(middle) > 1000, (len(middle), end - start)


def test_cancel_from_another_thread():
    image = long_job()
    engine = entroscope.Engine("cpu")
    outcome = {}

    def job():
        try:
            outcome["value"] = engine.entropy(np.concatenate([image, image]), 31, 256)
        except entroscope.Cancelled as error:
            outcome["cancelled"] = error

    worker = threading.Thread(target=job)
    worker.start()
    start = time.perf_counter()
    while worker.is_alive():
        engine.cancel()  # reaches the job once it runs; the next call starts afresh
        worker.join(0.005)
    assert "cancelled" in outcome, f"the job finished before a cancel reached it ({time.perf_counter() - start:.3f} s)"
    assert engine.entropy(np.zeros((3, 3), np.uint8)).shape == (3, 3)


def test_ctrl_c_stops_a_long_job():
    script = textwrap.dedent("""
        import os, signal, threading, time
        import numpy as np
        import entroscope
        image = np.random.default_rng(7).integers(0, 256, (8192, 4096), dtype=np.uint8)
        engine = entroscope.Engine("cpu")
        done = threading.Event()
        def interrupt():
            while not done.wait(0.1):
                os.kill(os.getpid(), signal.SIGINT)
        start = time.perf_counter()
        engine.entropy(image, 31, 256)
        full = time.perf_counter() - start
        try:
            # Signals arrive every 0.1 s; most land inside a job.
            start = time.perf_counter()
            threading.Thread(target=interrupt, daemon=True).start()
            for _ in range(100):
                engine.entropy(image, 31, 256)
            print("finished")
        except KeyboardInterrupt:
            print("interrupted")
            # Stopped within the first job, not after it (when it is long enough to tell).
            assert full < 0.4 or time.perf_counter() - start < 0.8 * full, (full, time.perf_counter() - start)
        done.set()
        # The previous handler is back: Python's own raises KeyboardInterrupt.
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "interrupted"


# ---- memory -----------------------------------------------------------------------


def rss_bytes():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_no_leak_over_10000_calls(rng, tmp_path):
    image = rng.integers(0, 256, (16, 24), dtype=np.uint8)
    colour = rng.integers(0, 65536, (16, 24, 3), dtype=np.uint16)
    out = np.empty(image.shape, np.float32)
    engine = entroscope.Engine("cpu")

    def calls(n):
        for i in range(n):
            k = i % 8
            if k == 0:
                entroscope.entropy(image)
            elif k == 1:
                engine.equalize(image, return_timing=True)
            elif k == 2:
                engine.entropy(np.asfortranarray(image), out=out, units="bits")
            elif k == 3:
                engine.sharpen(colour, 0.5, channel_axis=-1)
            elif k == 4:
                try:
                    engine.entropy(image, 4)
                except ValueError:
                    pass
            elif k == 5:
                try:
                    engine.entropy(image.astype(np.float32))
                except TypeError:
                    pass
            elif k == 6:
                engine.quantize(image[::2], out=np.empty((8, 24), np.uint8)[:, ::-1])
            else:
                entroscope.variants("entropy")

    calls(2000)  # warm up: caches, the default engine, first allocations
    gc.collect()
    refs = sys.getrefcount(image), sys.getrefcount(out), sys.getrefcount(engine)
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    rss = rss_bytes()
    calls(10_000)
    gc.collect()
    grown = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    rss_grown = rss_bytes() - rss
    assert (sys.getrefcount(image), sys.getrefcount(out), sys.getrefcount(engine)) == refs
    assert grown < 64 * 1024, grown
    assert rss_grown < 4 * 1024 * 1024, rss_grown


def test_no_leak_in_files(rng, tmp_path, sample):
    values = entroscope.entropy(rng.integers(0, 256, (16, 16), dtype=np.uint8))
    for _ in range(200):
        entroscope.load(sample)
    rss = rss_bytes()
    for i in range(1000):
        entroscope.load(sample)
        entroscope.save(tmp_path / "v.txt", values)
        try:
            entroscope.load(tmp_path / "missing.png")
        except FileNotFoundError:
            pass
    assert rss_bytes() - rss < 4 * 1024 * 1024


def test_fallback_warns(tmp_path):
    """A CUDA fault during a job finishes it on the CPU with a RuntimeWarning."""
    if entroscope.Engine().backend != "cuda":
        pytest.skip("needs a usable CUDA device")
    script = textwrap.dedent("""
        import warnings
        import numpy as np
        import entroscope
        image = np.random.default_rng(3).integers(0, 256, (300, 200), dtype=np.uint8)
        want = entroscope.Engine("cpu").entropy(image)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got, timing = entroscope.entropy(image, return_timing=True)
        assert timing.fell_back, timing
        assert any(issubclass(w.category, RuntimeWarning) and "CUDA failed" in str(w.message) for w in caught), caught
        assert np.abs(got - want).max() <= 1e-5
        print("ok")
    """)
    env = dict(os.environ, ES_CUDA_FAULT="launch")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_warnings_can_be_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        entroscope.entropy(np.zeros((4, 4), np.uint8))


def test_zeros(rng):
    engine = entroscope.Engine("cpu")
    buffer = engine.zeros((30, 40), np.uint16)
    assert buffer.dtype == np.uint16 and buffer.shape == (30, 40) and not buffer.any()
    buffer[...] = rng.integers(0, 65536, (30, 40))
    out = engine.zeros((30, 40), np.float32)
    assert engine.entropy(buffer, out=out) is out
    assert np.array_equal(out, engine.entropy(np.array(buffer)))
    with pytest.raises(TypeError, match="dtype must be uint8, uint16 or float32"):
        engine.zeros((2, 2), np.int8)
    with pytest.raises(ValueError, match="shape must be a tuple"):
        engine.zeros(5)
