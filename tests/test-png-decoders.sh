#!/bin/sh
# SPDX-License-Identifier: MIT
# Other decoders read what the parallel PNG encoder writes: OpenCV and Pillow (through /usr/bin/python3)
# decode test-png-write's samples to exactly their rows. Usage: test-png-decoders.sh PATH-TO-test-png-write
. "$(dirname "$0")/tap.sh"

WRITER=$1
PYTHON=${ES_PYTHON:-/usr/bin/python3}
T=$(mktemp -d /tmp/es-test-png-decoders-XXXXXX)
trap 'rm -rf "$T"' EXIT

if [ -z "$WRITER" ] || [ ! -x "$WRITER" ]; then
  echo "Bail out! usage: $0 PATH-TO-test-png-write"
  exit 1
fi
"$WRITER" --samples "$T"
ok $? "test-png-write --samples wrote $(wc -l <"$T/manifest.txt" 2>/dev/null || echo 0) PNGs"

for decoder in cv2 PIL; do
  if [ ! -x "$PYTHON" ] || ! "$PYTHON" -c "import numpy, $decoder" 2>/dev/null; then
    skip "$PYTHON cannot import numpy and $decoder" "$decoder reads every sample bit for bit"
    continue
  fi
  # One line per sample that differs; nothing when all match.
  "$PYTHON" - "$decoder" "$T" >"$T/$decoder.log" 2>&1 <<'PY'
import sys
import numpy as np

decoder, folder = sys.argv[1], sys.argv[2]
if decoder == "cv2":
    import cv2

    def read(path, channels):
        image = cv2.imread(path, cv2.IMREAD_UNCHANGED)
        if image is not None and channels == 3:
            image = image[..., ::-1]  # OpenCV gives BGR
        return image
else:
    from PIL import Image

    def read(path, channels):
        with Image.open(path) as image:
            image.load()
            if image.mode == "P":  # a heatmap's palette: its colours, as RGB
                return np.asarray(image.convert("RGB"))
            if image.mode in ("I;16", "I;16B", "I"):
                return np.asarray(image).astype(np.uint16)
            return np.asarray(image)

failures = 0
for line in open(f"{folder}/manifest.txt"):
    name, width, height, depth, channels = line.split()
    width, height, depth, channels = int(width), int(height), int(depth), int(channels)
    dtype = np.dtype(">u2") if depth == 16 else np.uint8
    expected = np.fromfile(f"{folder}/{name}.raw", dtype=dtype).astype(np.uint16 if depth == 16 else np.uint8)
    expected = expected.reshape((height, width, channels) if channels == 3 else (height, width))
    got = read(f"{folder}/{name}.png", channels)
    # Pillow has no 16-bit RGB mode: it keeps the high byte of each sample.
    if decoder == "PIL" and depth == 16 and channels == 3 and got is not None and got.dtype == np.uint8:
        expected = (expected >> 8).astype(np.uint8)
    if got is None or got.shape != expected.shape or not np.array_equal(got.astype(expected.dtype), expected):
        failures += 1
        print(f"{name}: {None if got is None else (got.shape, got.dtype)} differs from {expected.shape}")
sys.exit(1 if failures else 0)
PY
  status=$?
  sed 's/^/# /' "$T/$decoder.log"
  ok $status "$decoder reads every sample bit for bit"
done

tap_finish
