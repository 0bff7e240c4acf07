# SPDX-License-Identifier: MIT
# SIGINT and SIGTERM stop entroscope-cli in the page pass of a big multi-page
# TIFF (a stack and a volume): the exit comes soon, with 128 + the signal,
# and no output or temporary file is left. The 2 s bound only guards
# against a hang (the pass ran to its end before); speed is PERFORMANCE.md's.
#   usage: python3 tests/test-cli-signals.py PATH-TO-entroscope-cli
import os
import signal
import struct
import subprocess
import sys
import tempfile
import time

PAGES = 65535


def many_pages(path):
    """A classic little-endian TIFF of PAGES one-pixel 8-bit pages."""
    entries = [(256, 3, 1, 1), (257, 3, 1, 1), (258, 3, 1, 8), (259, 3, 1, 1),
               (262, 3, 1, 1), (273, 4, 1, 0), (278, 3, 1, 1), (279, 4, 1, 1)]
    ifd_size = 2 + 12 * len(entries) + 4
    out = bytearray(struct.pack('<2sHI', b'II', 42, 8))
    for p in range(PAGES):
        here = 8 + p * (ifd_size + 2)
        pixel = here + ifd_size
        out += struct.pack('<H', len(entries))
        for tag, kind, count, value in entries:
            out += struct.pack('<HHII', tag, kind, count, pixel if tag == 273 else value)
        out += struct.pack('<I', 0 if p == PAGES - 1 else pixel + 2)
        out += bytes([p & 255, 0])
    with open(path, 'wb') as f:
        f.write(out)


def main():
    cli = os.path.abspath(sys.argv[1])
    if os.environ.get('ES_HAVE_TIFF') == '0':
        print("1..0 # SKIP built without libtiff: a multi-page TIFF is refused before its page pass")
        print("# 0 passed, 0 failed")
        return 0
    count = failed = 0
    with tempfile.TemporaryDirectory() as folder:
        source = os.path.join(folder, 'pages.tif')
        many_pages(source)
        outputs = os.path.join(folder, 'out')
        os.mkdir(outputs)
        for mode in ([], ['--volume']):
            for sig in (signal.SIGINT, signal.SIGTERM):
                target = os.path.join(outputs, 'result.tif')
                child = subprocess.Popen([cli, 'entropy', *mode, source, '-o', target, '-q'],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                time.sleep(0.3)
                sent = time.monotonic()
                child.send_signal(sig)
                try:
                    rc = child.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    child.kill()
                    rc = child.wait()
                took = time.monotonic() - sent
                left = os.listdir(outputs)
                ok = rc == 128 + sig and took < 2.0 and not left
                count += 1
                failed |= not ok
                print(f"{'ok' if ok else 'not ok'} {count} - {sig.name} {' '.join(mode) or 'stack'}: exit {rc} "
                      f"after {took:.3f} s, left {left}")
                for name in left:
                    os.unlink(os.path.join(outputs, name))
    print(f"1..{count}")
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
