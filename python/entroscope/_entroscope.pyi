# SPDX-License-Identifier: MIT
# Type stubs of the C extension entroscope._entroscope (python/src/).
from os import PathLike
from typing import Any, Literal, NamedTuple, Sequence, TypedDict, overload

import numpy as np
import numpy.typing as npt

__version__: str
MAX_SIDE: int
DEFAULT_MAX_PIXELS: int

Backend = Literal["auto", "cpu", "cuda"]
EntropyUnits = Literal["nats", "bits", "normalized"]
OpName = Literal["quantize", "entropy", "equalize", "sharpen"]
StrPath = str | bytes | PathLike[str] | PathLike[bytes]
# Anything exposing a 2-D uint8/uint16 buffer, or (H, W, 3|4) colour.
ImageLike = npt.NDArray[np.uint8] | npt.NDArray[np.uint16] | memoryview | Any

class Cancelled(RuntimeError): ...

class Counters(TypedDict):
    """What the GPU's hardware counted (Engine.counters): measured, not modelled."""
    launches: int
    dram_read_bytes: float
    dram_write_bytes: float
    l2_hit_rate: float
    shared_bank_conflicts: float
    achieved_occupancy: float
    local_bytes: float
    l2_sectors: float
    active_cycles: float

class KernelMetrics(TypedDict):
    name: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    registers: int
    static_shared: int
    dynamic_shared: int
    local_bytes: int
    blocks_per_sm: int
    occupancy: float
    main: bool
    counters: Counters | None

class Metrics(TypedDict):
    pixels: float
    read_bytes: float
    write_bytes: float
    shared_bytes: float
    achieved_gbs: float
    copy_gbs: float
    datasheet_gbs: float
    copy_share: float
    datasheet_share: float
    kernels: list[KernelMetrics]
    host_memory: Literal["none", "pinned", "staged", "pageable", "mixed"]
    upload_bytes: float
    download_bytes: float
    upload_gbs: float
    download_gbs: float
    counters: Counters | None
    counters_note: str

class Timing(NamedTuple):
    upload_ms: float
    kernel_ms: float
    download_ms: float
    wall_ms: float
    backend: Literal["cpu", "cuda"]
    variant: str
    fell_back: bool
    call_ms: float
    input_copied: bool
    output_copied: bool
    # By name only: the tuple keeps its ten fields.
    @property
    def metrics(self) -> Metrics: ...

class Variant(NamedTuple):
    id: str
    label: str
    lesson: str
    source: str
    is_default: bool
    transfer: Literal["default", "pageable", "per-call", "streams"]

class Engine:
    def __init__(self, backend: Backend = "auto", devices: int | Sequence[int] | None = None) -> None: ...
    @property
    def backend(self) -> Literal["cpu", "cuda"]: ...
    @property
    def requested(self) -> Backend: ...
    @property
    def description(self) -> str: ...
    @property
    def cuda_reason(self) -> str: ...
    @property
    def devices(self) -> tuple[int, ...] | None: ...
    @property
    def closed(self) -> bool: ...
    @property
    def counters(self) -> bool: ...
    @counters.setter
    def counters(self, on: bool) -> None: ...
    @overload
    def entropy(self, image: ImageLike, window: int = 5, levels: int = 16, *, variant: str | None = None,
                units: EntropyUnits | None = None, depth: int | None = None, out: npt.NDArray[np.float32] | None = None,
                rect: tuple[int, int] | None = None, disk: int | None = None,
            box: tuple[int, int, int] | None = None, ball: int | None = None,
                footprint: npt.ArrayLike | None = None, border: str = "clip", binning: str = "depth",
                mask: npt.ArrayLike | None = None, like: Literal["matlab", "skimage", "fiji"] | None = None,
                channel_axis: int | None = ..., return_timing: Literal[False] = False) -> npt.NDArray[np.float32]: ...
    @overload
    def entropy(self, image: ImageLike, window: int = 5, levels: int = 16, *, variant: str | None = None,
                units: EntropyUnits | None = None, depth: int | None = None, out: npt.NDArray[np.float32] | None = None,
                rect: tuple[int, int] | None = None, disk: int | None = None,
            box: tuple[int, int, int] | None = None, ball: int | None = None,
                footprint: npt.ArrayLike | None = None, border: str = "clip", binning: str = "depth",
                mask: npt.ArrayLike | None = None, like: Literal["matlab", "skimage", "fiji"] | None = None,
                channel_axis: int | None = ...,
                return_timing: Literal[True]) -> tuple[npt.NDArray[np.float32], Timing]: ...
    @overload
    def equalize(self, image: ImageLike, *, variant: str | None = None, depth: int | None = None,
                 out: npt.NDArray[np.uint8] | None = None,
                 channel_axis: int | None = ..., return_timing: Literal[False] = False) -> npt.NDArray[np.uint8]: ...
    @overload
    def equalize(self, image: ImageLike, *, variant: str | None = None, depth: int | None = None,
                 out: npt.NDArray[np.uint8] | None = None,
                 channel_axis: int | None = ...,
                 return_timing: Literal[True]) -> tuple[npt.NDArray[np.uint8], Timing]: ...
    @overload
    def sharpen(self, image: ImageLike, amount: float = 1.0, *, variant: str | None = None,
                depth: int | None = None, out: npt.NDArray[np.uint8] | None = None,
                channel_axis: int | None = ..., return_timing: Literal[False] = False) -> npt.NDArray[np.uint8]: ...
    @overload
    def sharpen(self, image: ImageLike, amount: float = 1.0, *, variant: str | None = None,
                depth: int | None = None, out: npt.NDArray[np.uint8] | None = None,
                channel_axis: int | None = ...,
                return_timing: Literal[True]) -> tuple[npt.NDArray[np.uint8], Timing]: ...
    @overload
    def quantize(self, image: ImageLike, levels: int = 16, *, variant: str | None = None,
                 depth: int | None = None, out: npt.NDArray[np.uint8] | None = None,
                 channel_axis: int | None = ..., return_timing: Literal[False] = False) -> npt.NDArray[np.uint8]: ...
    @overload
    def quantize(self, image: ImageLike, levels: int = 16, *, variant: str | None = None,
                 depth: int | None = None, out: npt.NDArray[np.uint8] | None = None,
                 channel_axis: int | None = ...,
                 return_timing: Literal[True]) -> tuple[npt.NDArray[np.uint8], Timing]: ...
    def run(self, op: OpName, image: ImageLike, *args: Any, **kwargs: Any) -> Any: ...
    def zeros(self, shape: tuple[int, int], dtype: npt.DTypeLike = np.uint8) -> npt.NDArray[Any]: ...
    def cancel(self) -> None: ...
    def close(self) -> None: ...
    def __enter__(self) -> Engine: ...
    def __exit__(self, *exc: object) -> Literal[False]: ...

def variants(op: OpName) -> list[Variant]: ...
def ops() -> dict[str, dict[str, Any]]: ...
def params() -> dict[str, dict[str, Any]]: ...
def halo(op: OpName, *, window: int | None = None, levels: int | None = None, amount: float | None = None,
         clip: float | None = None, tile_columns: int | None = None, tile_rows: int | None = None,
         units: EntropyUnits | None = None, rect: tuple[int, int] | None = None, disk: int | None = None,
            box: tuple[int, int, int] | None = None, ball: int | None = None,
         footprint: npt.ArrayLike | None = None, border: str | None = None, binning: str | None = None,
         mask: npt.ArrayLike | None = None, like: Literal["matlab", "skimage", "fiji"] | None = None) -> int: ...
def extent(op: OpName, *, window: int | None = None, levels: int | None = None, amount: float | None = None,
         clip: float | None = None, tile_columns: int | None = None, tile_rows: int | None = None,
           units: EntropyUnits | None = None, rect: tuple[int, int] | None = None, disk: int | None = None,
            box: tuple[int, int, int] | None = None, ball: int | None = None,
           footprint: npt.ArrayLike | None = None, border: str | None = None, binning: str | None = None,
           mask: npt.ArrayLike | None = None,
           like: Literal["matlab", "skimage", "fiji"] | None = None) -> tuple[int, int]: ...
def extent_3d(op: OpName, *, window: int | None = None, levels: int | None = None, amount: float | None = None,
         clip: float | None = None, tile_columns: int | None = None, tile_rows: int | None = None,
           units: EntropyUnits | None = None, rect: tuple[int, int] | None = None, disk: int | None = None,
            box: tuple[int, int, int] | None = None, ball: int | None = None,
           footprint: npt.ArrayLike | None = None, border: str | None = None, binning: str | None = None,
           mask: npt.ArrayLike | None = None,
           like: Literal["matlab", "skimage", "fiji"] | None = None) -> tuple[int, int, int]: ...
def load(path: StrPath, *, levels: int = 16, page: int | None = None, channel: int | None = None,
         time: int | None = None) -> tuple[npt.NDArray[np.uint8] | npt.NDArray[np.uint16], int, int,
                                           tuple[float, float, float | None, str] | None,
                                           tuple[float, float] | None, int]: ...
def save(path: StrPath, array: npt.NDArray[np.float32] | npt.NDArray[np.uint8] | npt.NDArray[np.uint16], *, op: OpName | None = None,
         format: Literal["png", "raw16", "txt", "tif"] | None = None, colormap: str | None = None,
         range: Literal["absolute", "auto"] = "absolute", colorbar: bool = False, window: int | None = None,
         levels: int | None = None, amount: float | None = None,
         clip: float | None = None, tile_columns: int | None = None, tile_rows: int | None = None, units: EntropyUnits | None = None,
         rect: tuple[int, int] | None = None, disk: int | None = None, footprint: npt.ArrayLike | None = None,
         border: str | None = None, binning: str | None = None, mask: npt.ArrayLike | None = None,
         like: Literal["matlab", "skimage", "fiji"] | None = None,
         pixel_size: tuple[float, float, float | None, str] | None = None) -> None: ...
def gray(image: ImageLike, *, depth: int | None = None,
         channel_axis: int | None = ...) -> npt.NDArray[np.uint8] | npt.NDArray[np.uint16]: ...
def equalize_lut(hist: npt.ArrayLike) -> npt.NDArray[np.uint8]: ...
def tile_passes(op: OpName, **job: Any) -> bool: ...
def tile_counts(op: OpName, rows: npt.ArrayLike, y0: int, height: int, **job: Any) -> npt.NDArray[np.int32]: ...
def tile_apply(op: OpName, rows: npt.ArrayLike, y0: int, height: int, counts: npt.ArrayLike,
               **job: Any) -> npt.NDArray[Any]: ...
def set_max_pixels(n: int) -> None: ...
def get_max_pixels() -> int: ...
def cpu_threads() -> int: ...
def cuda_compiled() -> bool: ...
def _register_image_type(cls: type) -> None: ...
