#!/bin/sh
# SPDX-License-Identifier: MIT
# Compares the sm_90 machine code of two versions of one CUDA source, kernel
# by kernel, on a machine without a GPU: "same" where the SASS is equal but
# for labels and the file's internal names. A kernel whose SASS equals a
# version already run on the GPU machine needs no new run to be trusted.
#   usage: tests/gpu/sass-compare.sh OLD.cu NEW.cu  (both compiled as compute/cuda/*.cu)
# A kernel whose template gained a parameter is matched by renaming the new
# side's names with Python regular expressions, PATTERN=>REPLACEMENT, one a
# line, e.g. a bool that is false:
#   SASS_RENAME='(vol_entropy_kernelI\w+?Li(?:n1|\d+))ELb0EEv=>\1EEv' tests/gpu/sass-compare.sh OLD.cu NEW.cu
# CUDA 13's toolkit here has nvcc but no disassembler; Debian's non-free
# nvidia-cuda-toolkit (CUDA 11.8) has nvdisasm, which reads an sm_90 cubin
# once its ELF header is given the older ABI version and flags:
#   apt-get download nvidia-cuda-toolkit && dpkg -x nvidia-cuda-toolkit_*.deb /tmp/nvt
set -eu
cd "$(dirname "$0")/../.."
nvdisasm=${NVDISASM:-/tmp/nvt/usr/bin/nvdisasm}
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
[ -x "$nvdisasm" ] || { echo "sass-compare: no nvdisasm at $nvdisasm (see the comment above)"; exit 1; }
work=$(mktemp -d)
trap 'rm -f compute/cuda/sass-compare-*.cu; rm -rf "$work"' EXIT
for side in old new; do
  [ "$side" = old ] && src=$1 || src=$2
  cp "$src" "compute/cuda/sass-compare-$side.cu"
  "$nvcc" -O3 -std=c++17 -Icompute -I. -arch=sm_90 -cubin "compute/cuda/sass-compare-$side.cu" \
    -o "$work/$side.cubin" 2>/dev/null
  python3 - "$work/$side.cubin" <<'EOF'
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
b[8] = 7                                   # ELF ABI version of CUDA 11
struct.pack_into('<I', b, 0x30, 0x005a055a)  # EF_CUDA_SM90 | virtual SM90 | 64-bit | unified textures
open(sys.argv[1], 'wb').write(b)
EOF
  "$nvdisasm" -c "$work/$side.cubin" >"$work/$side.sass"
done
SASS_RENAME=${SASS_RENAME:-} python3 - "$work/old.sass" "$work/new.sass" <<'EOF'
import os, re, sys
def kernels(path):
    out, name = {}, None
    for line in open(path):
        m = re.match(r'^(_Z\w+):', line)
        if m:
            name = m.group(1); out[name] = []; continue
        if line.startswith('//----'):
            name = None
        if name is None:
            continue
        line = re.sub(r'/\*[0-9a-f]{4,}\*/|/\* 0x[0-9a-f]+ \*/', '', line)
        line = re.sub(r'\.L_x_\d+', 'L', line)
        line = re.sub(r'__internal_\d+_', '__internal_', line)
        line = re.sub(r'_ZN\d+_INTERNAL_\w+?_cu_', '_INTERNAL_', line)
        line = re.sub(r'MOV (R\d+), 0x[0-9a-f]+ ;', r'MOV \1, RET ;', line)
        if line.strip():
            out[name].append(line.strip())
    return out
old, new = kernels(sys.argv[1]), kernels(sys.argv[2])
rules = [rule.split('=>') for rule in os.environ['SASS_RENAME'].splitlines() if rule.strip()]
def rename(text):
    for pattern, replacement in rules:
        text = re.sub(pattern, replacement, text)
    return text
new = {rename(name): [rename(line) for line in lines] for name, lines in new.items()}
same = 0
for name in sorted(set(old) | set(new)):
    verdict = 'only old' if name not in new else 'only new' if name not in old else \
              'same' if old[name] == new[name] else 'differs'
    same += verdict == 'same'
    print(f'{verdict:8} {name}')
print(f'{same} same, {len(set(old) | set(new)) - same} not')
EOF
