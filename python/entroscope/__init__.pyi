# SPDX-License-Identifier: MIT
# Type stubs of the entroscope package (python/entroscope/__init__.py).
from typing import Any, Literal, overload

import numpy as np
import numpy.typing as npt

from ._entroscope import (
    Backend,
    Cancelled as Cancelled,
    Engine as Engine,
    ImageLike,
    OpName,
    StrPath,
    Timing as Timing,
    EntropyUnits,
    Variant as Variant,
    cpu_threads as cpu_threads,
    cuda_compiled as cuda_compiled,
    equalize_lut as equalize_lut,
    extent as extent,
    extent_3d as extent_3d,
    gray as gray,
    get_max_pixels as get_max_pixels,
    halo as halo,
    ops as ops,
    params as params,
    set_max_pixels as set_max_pixels,
    variants as variants,
)

__version__: str

PixelSize = tuple[float, float, float | None, str]

class Image(np.ndarray[Any, Any]):
    depth: int | None
    levels: int
    pixel_size: PixelSize | None
    value_map: tuple[float, float] | None
    nan_samples: int
    def __new__(cls, array: npt.ArrayLike, depth: int | None = None, levels: int = 0,
                pixel_size: PixelSize | None = None, value_map: tuple[float, float] | None = None,
                nan_samples: int = 0) -> Image: ...
    def values(self) -> npt.NDArray[np.float64]: ...

def default_engine(backend: Backend = "auto") -> Engine: ...
@overload
def entropy(image: ImageLike, window: int | None = None, levels: int | None = None, *, backend: Backend = "auto",
            variant: str | None = None, units: EntropyUnits | None = None, depth: int | None = None,
            out: npt.NDArray[np.float32] | None = None,
            rect: tuple[int, int] | None = None, disk: int | None = None,
            box: tuple[int, int, int] | None = None, ball: int | None = None,
            footprint: npt.ArrayLike | None = None, border: str = "clip", binning: str = "depth",
            mask: npt.ArrayLike | None = None, like: Literal["matlab", "skimage", "fiji"] | None = None,
            channel_axis: int | None = ..., return_timing: Literal[False] = False) -> npt.NDArray[np.float32]: ...
@overload
def entropy(image: ImageLike, window: int | None = None, levels: int | None = None, *, backend: Backend = "auto",
            variant: str | None = None, units: EntropyUnits | None = None, depth: int | None = None,
            out: npt.NDArray[np.float32] | None = None,
            rect: tuple[int, int] | None = None, disk: int | None = None,
            box: tuple[int, int, int] | None = None, ball: int | None = None,
            footprint: npt.ArrayLike | None = None, border: str = "clip", binning: str = "depth",
            mask: npt.ArrayLike | None = None, like: Literal["matlab", "skimage", "fiji"] | None = None,
            channel_axis: int | None = ..., return_timing: Literal[True]) -> tuple[npt.NDArray[np.float32], Timing]: ...
@overload
def equalize(image: ImageLike, *, backend: Backend = "auto", variant: str | None = None, depth: int | None = None,
             out: npt.NDArray[np.uint8] | None = None,
             channel_axis: int | None = ..., return_timing: Literal[False] = False) -> npt.NDArray[np.uint8]: ...
@overload
def equalize(image: ImageLike, *, backend: Backend = "auto", variant: str | None = None, depth: int | None = None,
             out: npt.NDArray[np.uint8] | None = None,
             channel_axis: int | None = ..., return_timing: Literal[True]) -> tuple[npt.NDArray[np.uint8], Timing]: ...
@overload
def sharpen(image: ImageLike, amount: float = 1.0, *, backend: Backend = "auto", variant: str | None = None,
            depth: int | None = None, out: npt.NDArray[np.uint8] | None = None,
            channel_axis: int | None = ..., return_timing: Literal[False] = False) -> npt.NDArray[np.uint8]: ...
@overload
def sharpen(image: ImageLike, amount: float = 1.0, *, backend: Backend = "auto", variant: str | None = None,
            depth: int | None = None, out: npt.NDArray[np.uint8] | None = None,
            channel_axis: int | None = ..., return_timing: Literal[True]) -> tuple[npt.NDArray[np.uint8], Timing]: ...
@overload
def clahe(image: ImageLike, clip_limit: float = 40.0, tile_grid: tuple[int, int] = (8, 8), *,
          backend: Backend = "auto", variant: str | None = None, depth: int | None = None,
          out: npt.NDArray[Any] | None = None, channel_axis: int | None = ...,
          return_timing: Literal[False] = False) -> npt.NDArray[Any]: ...
@overload
def clahe(image: ImageLike, clip_limit: float = 40.0, tile_grid: tuple[int, int] = (8, 8), *,
          backend: Backend = "auto", variant: str | None = None, depth: int | None = None,
          out: npt.NDArray[Any] | None = None, channel_axis: int | None = ...,
          return_timing: Literal[True]) -> tuple[npt.NDArray[Any], Timing]: ...
@overload
def quantize(image: ImageLike, levels: int = 16, *, backend: Backend = "auto", variant: str | None = None,
             depth: int | None = None, out: npt.NDArray[np.uint8] | None = None,
             channel_axis: int | None = ..., return_timing: Literal[False] = False) -> npt.NDArray[np.uint8]: ...
@overload
def quantize(image: ImageLike, levels: int = 16, *, backend: Backend = "auto", variant: str | None = None,
             depth: int | None = None, out: npt.NDArray[np.uint8] | None = None,
             channel_axis: int | None = ..., return_timing: Literal[True]) -> tuple[npt.NDArray[np.uint8], Timing]: ...
def run(op: OpName, image: ImageLike, *args: Any, backend: Backend = "auto", **kwargs: Any) -> Any: ...
def load(path: StrPath, *, levels: int = 16, page: int | None = None, channel: int | None = None,
         time: int | None = None) -> Image: ...
def save(path: StrPath, array: npt.NDArray[np.float32] | npt.NDArray[np.uint8] | npt.NDArray[np.uint16], *, op: OpName | None = None,
         format: Literal["png", "raw16", "txt", "tif"] | None = None, colormap: str | None = None,
         range: Literal["absolute", "auto"] = "absolute", colorbar: bool = False, window: int | None = None,
         levels: int | None = None, amount: float | None = None,
         clip: float | None = None, tile_columns: int | None = None, tile_rows: int | None = None, units: EntropyUnits | None = None,
         rect: tuple[int, int] | None = None, disk: int | None = None, footprint: npt.ArrayLike | None = None,
         border: str | None = None, binning: str | None = None, mask: npt.ArrayLike | None = None,
         like: Literal["matlab", "skimage", "fiji"] | None = None,
         pixel_size: tuple[float, float, float | None, str] | None = None) -> None: ...
def info(backend: Backend = "auto") -> dict[str, Any]: ...
