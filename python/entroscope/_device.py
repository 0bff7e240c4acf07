# SPDX-License-Identifier: MIT
"""Results of device arrays, allocated by the input's own library.

A CuPy or PyTorch input gets a result of its own kind on its own device,
from that library's allocator (its memory pool, counted by its own tools).
The extension calls `empty_like_device` when no out= is given."""

_TORCH_DTYPES = {"uint8": "uint8", "uint16": "uint16", "float32": "float32"}


def empty_like_device(like, sides, dtype, ndim):
    """An empty C-contiguous array of shape sides[-ndim:] and `dtype`
    ("uint8", "uint16", "float32") of `like`'s library, on `like`'s device,
    and the address of its first sample (so that the extension need not
    read the new array's interface back: CuPy builds it at every read)."""
    shape = tuple(sides[-ndim:])
    library = type(like).__module__.partition(".")[0]
    if library == "cupy":
        import cupy
        device = like.data.device_id
        # A Device context costs microseconds a call; the current device needs none.
        if device == cupy.cuda.runtime.getDevice():
            array = cupy.empty(shape, dtype=dtype)
        else:
            with cupy.cuda.Device(device):
                array = cupy.empty(shape, dtype=dtype)
        return array, array.data.ptr
    if library == "torch":
        import torch
        kind = getattr(torch, _TORCH_DTYPES[dtype], None)
        if kind is None:
            raise TypeError(f"this PyTorch has no {dtype} tensors; pass out= a device array of {dtype}")
        tensor = torch.empty(shape, dtype=kind, device=like.device)
        return tensor, tensor.data_ptr()
    raise TypeError(f"entroscope does not know how to allocate a result like a {type(like).__name__}; "
                    f"pass out= a device array of shape {shape} and dtype {dtype}")
