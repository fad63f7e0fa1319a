"""The GPU context: which adapter, the device with the adapter's own limits, and shader modules.

Adapter preference: a discrete or integrated GPU, then lavapipe (Vulkan on the CPU), then OpenGL
(llvmpipe: compute works, but it cannot present to a window). ``EMBERFX_ADAPTER`` picks by a
substring of the adapter's name, backend or type instead, and ``SUBSTRING:INDEX`` picks one of
several matches (``nvidia:1``: the second NVIDIA GPU; see choose_adapter).
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from emberfx.core.errors import DeviceLimitError, NoAdapterError

if TYPE_CHECKING:
    import wgpu  # imported where used at run time, after the adapter checks

INSTALL_HINT = (
    "install a Vulkan driver; with no GPU, the software one: "
    "`apt-get install mesa-vulkan-drivers` (Debian/Ubuntu)"
)

_TYPE_RANK = {"DiscreteGPU": 0, "IntegratedGPU": 1, "VirtualGPU": 2, "CPU": 3, "Unknown": 4}
_BACKEND_RANK = {"Vulkan": 0, "Metal": 0, "D3D12": 0, "OpenGL": 2}


def _adapter_label(info) -> str:
    return f"{info['device']} ({info['backend_type']}, {info['adapter_type']})"


def _rank(adapter) -> tuple[int, int]:
    info = adapter.info
    return (_TYPE_RANK.get(info["adapter_type"], 4), _BACKEND_RANK.get(info["backend_type"], 1))


def _quiet_wsi() -> None:
    # Mesa's window-system code complains on stderr when XDG_RUNTIME_DIR is unset (headless
    # machines, CI); a private runtime dir keeps `emberfx` output clean.
    if not os.environ.get("XDG_RUNTIME_DIR"):
        import tempfile

        path = os.path.join(tempfile.gettempdir(), f"emberfx-runtime-{os.getuid()}")
        os.makedirs(path, mode=0o700, exist_ok=True)
        os.environ["XDG_RUNTIME_DIR"] = path


def _enumerate():
    _quiet_wsi()
    import wgpu

    try:
        return list(wgpu.gpu.enumerate_adapters_sync())
    except Exception as exc:  # a broken or missing loader shows up here, not as "no adapters"
        raise NoAdapterError(f"no GPU adapter could be enumerated ({exc}); "
                             f"{INSTALL_HINT}") from None


def _adapter_request(text: str) -> tuple[str, int | None]:
    """``EMBERFX_ADAPTER``: 'SUBSTRING' or 'SUBSTRING:INDEX' (an empty substring matches all)."""
    wanted = text.strip().lower()
    head, colon, tail = wanted.rpartition(":")
    if colon and tail.strip().isdigit():
        return head.strip(), int(tail)
    if colon and not tail.strip():
        raise NoAdapterError(f"EMBERFX_ADAPTER={text!r}: expected SUBSTRING or SUBSTRING:INDEX "
                             f"(e.g. nvidia:1), found nothing after ':'")
    return wanted, None


def choose_adapter(adapters=None):
    """The best adapter, or the one ``EMBERFX_ADAPTER`` names: by a substring of its name,
    description, backend or type, and with ``:INDEX`` the INDEX-th (from 0) of the matches in
    preference order (GPUs before CPU adapters, native backends before OpenGL; equals keep the
    enumeration order), so ``nvidia:1`` is the second NVIDIA GPU."""
    adapters = _enumerate() if adapters is None else adapters
    if not adapters:
        raise NoAdapterError(f"no GPU adapter found; {INSTALL_HINT}")
    text = os.environ.get("EMBERFX_ADAPTER", "")
    wanted, index = _adapter_request(text)
    if not wanted and index is None:
        return min(adapters, key=_rank)
    matches = sorted((a for a in adapters if wanted in _adapter_label(a.info).lower()
                      or wanted in a.info.get("description", "").lower()), key=_rank)
    found = "; ".join(_adapter_label(a.info) for a in adapters)
    if not matches:
        raise NoAdapterError(f"EMBERFX_ADAPTER={text.strip()!r} matches no adapter; "
                             f"found: {found}")
    if index is None:
        return matches[0]
    if index >= len(matches):
        raise NoAdapterError(f"EMBERFX_ADAPTER={text.strip()!r}: expected an index below "
                             f"{len(matches)} (the adapters matching {wanted!r}), found {index}; "
                             f"found: {found}")
    return matches[index]


def gpu_adapter_pins(adapters=None) -> list[str]:
    """One ``EMBERFX_ADAPTER`` value per hardware GPU (not a CPU adapter, not the OpenGL
    duplicate of a GPU), in enumeration order: what a pool of workers sets to use GPU i.
    Identical GPUs have identical names, so each value is the exact label plus an index."""
    adapters = _enumerate() if adapters is None else adapters
    gpus = [a for a in adapters if a.info["adapter_type"] != "CPU"
            and a.info["backend_type"] != "OpenGL" and "llvmpipe" not in _adapter_label(a.info)]
    pins: list[str] = []
    seen: dict[str, int] = {}
    for adapter in gpus:
        label = _adapter_label(adapter.info).lower()
        pins.append(f"{label}:{seen.get(label, 0)}")
        seen[label] = seen.get(label, 0) + 1
    return pins


NVIDIA_VENDOR_ID = 0x10DE   # PCI vendor id, as adapter.info["vendor_id"] reports it


@dataclass
class GpuContext:
    """One adapter and device, shared by every Engine in the process."""

    adapter: wgpu.GPUAdapter
    device: wgpu.GPUDevice
    limits: dict = field(default_factory=dict)
    settled_readbacks: bool = False
    """each step's readback waits for the ones before it to land, so the calls a step makes
    (which ring slot it copies into, whether it copies) do not depend on the GPU's timing: a
    recording (web/record.py) then gives the same trace every time"""

    @property
    def label(self) -> str:
        return _adapter_label(self.adapter.info)

    @property
    def is_software(self) -> bool:
        return self.adapter.info["adapter_type"] == "CPU" or "llvmpipe" in self.label

    @property
    def loop_iteration_limit(self) -> int | None:
        """The most loop iterations one shader invocation runs, all its loops together, on
        this adapter; None where no limit is known. llvmpipe (lavapipe) silently leaves a loop
        after LLVMPIPE_LOOP_ITERATIONS, so a longer one gives other results there."""
        return LLVMPIPE_LOOP_ITERATIONS if "llvmpipe" in self.label else None

    @property
    def keeps_resident_workgroups_running(self) -> bool:
        """Whether a workgroup that has begun keeps running while others spin-wait for it, so a
        pass may wait on workgroups that began before it (a decoupled look-back). WebGPU promises
        no such progress; NVIDIA's hardware schedulers give it (a resident workgroup stays on its
        SM until it ends, its warps scheduled with the spinning ones), and CUDA's own single-pass
        scans rely on it. Elsewhere: not assumed."""
        return self.adapter.info.get("vendor_id") == NVIDIA_VENDOR_ID and not self.is_software

    @property
    def storage_limit(self) -> tuple[int, str]:
        """(bytes, what they are): the largest storage buffer binding of this device."""
        limit = min(self.limits["max-buffer-size"], self.limits["max-storage-buffer-binding-size"])
        return limit, f"this device's ({self.label}) storage binding size"

    def check_buffer_size(self, nbytes: int, what: str, *, storage: bool = True) -> None:
        """Refuse a buffer the device cannot hold, with the numbers, before wgpu panics on it."""
        limit = self.storage_limit[0] if storage else self.limits["max-buffer-size"]
        if nbytes > limit:
            raise DeviceLimitError(
                f"{what} needs {nbytes:,} bytes but this device ({self.label}) allows "
                f"{limit:,} bytes per storage buffer")

    @functools.cached_property
    def subgroup_size(self) -> int | None:
        """Invocations per subgroup in a compute pipeline, or None without the "subgroup" feature.

        Measured once with a one-workgroup dispatch: wgpu-py 0.32 reports no real subgroup sizes.
        On Vulkan, a pipeline created without a required or varying subgroup size (as wgpu
        creates them) runs with the device's one default size, so every pipeline sees this
        value (32 on the H200, 8 on lavapipe with AVX2)."""
        import wgpu

        if "subgroup" not in self.device.features:
            return None
        from emberfx.core.bindings import bind
        from emberfx.core.resources import Resources

        shader = "common/subgroup_probe.wgsl"
        scratch = Resources(self)   # the probe's own, outside any Engine
        out = scratch.buffer("subgroup-probe", "lanes", 4,
                             wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC)
        groups = bind(self, scratch, "emberfx:subgroup-probe", shader, {"lanes": out})
        self.dispatch_now("emberfx:subgroup-probe", self.compute_pipeline(shader),
                          groups.group(0), (1, 1, 1))
        lanes = int.from_bytes(self.device.queue.read_buffer(out.buffer), "little")
        scratch.release_all()
        return lanes

    def dispatch_now(self, label: str, pipeline, group, grid: tuple[int, int, int]) -> None:
        """One dispatch in its own submission, outside the frame graph (on-demand work)."""
        encoder = self.device.create_command_encoder(label=label)
        compute = encoder.begin_compute_pass(label=label)
        compute.set_pipeline(pipeline)
        compute.set_bind_group(0, group)
        compute.dispatch_workgroups(*grid)
        compute.end()
        self.device.queue.submit([encoder.finish()])

    def check_dispatch(self, groups: int, what: str) -> None:
        limit = self.limits["max-compute-workgroups-per-dimension"]
        if groups > limit:
            raise DeviceLimitError(f"{what} needs {groups:,} workgroups in one dimension but this "
                                   f"device ({self.label}) allows {limit:,}")


    # building blocks shared by systems and runtime passes -----------------------------------
    def grid(self, groups: int) -> tuple[int, int, int]:
        """A 1-D workgroup count as (x, y, 1), folded when it exceeds the per-dimension limit.
        Shaders recover the linear index as workgroup_id.y * num_workgroups.x + workgroup_id.x."""
        limit = self.limits["max-compute-workgroups-per-dimension"]
        if groups <= limit:
            return (max(groups, 1), 1, 1)
        y = -(-groups // limit)
        if y > limit:
            raise DeviceLimitError(f"{groups:,} workgroups exceed {limit:,} x {limit:,} on this "
                                   f"device ({self.label})")
        return (-(-groups // y), y, 1)

    def compute_pipeline(self, shader: str, constants: dict | None = None):
        """A compute pipeline for shaders/``shader`` (entry point ``main``) whose layout is made
        from the shader's declarations, cached (core/pipelines.py)."""
        from emberfx.core.pipelines import compute_pipeline

        return compute_pipeline(self.device, shader, constants)

    def buffer(self, label: str, size: int, usage: int, *, what: str | None = None):
        """A buffer of at least 16 bytes; storage buffers are checked against the device limits."""
        import wgpu

        if usage & wgpu.BufferUsage.STORAGE:
            self.check_buffer_size(size, what or label)
        return self.device.create_buffer(label=label, size=max(16, (size + 3) // 4 * 4),
                                         usage=usage)


_CONTEXT: GpuContext | None = None
_SOFTWARE_NOTICE_GIVEN = False

# On a CPU adapter frames take from tens of milliseconds to seconds, by scene, size, output and
# cores, so the notice gives no figure: the progress lines report the measured time a frame.
# The first frame of a scene waits for LLVM to compile its shaders: ~1 s for the showcase with
# an empty Mesa shader cache, ~7 s with the cache disabled. Life steps run ~1000x slower than on
# a GPU (WGPU_NOTES).
# gallivm's LP_MAX_TGSI_LOOP_ITERATIONS: every loop back-edge of an invocation counts against it
LLVMPIPE_LOOP_ITERATIONS = 65535
SOFTWARE_NOTICE = ("{label} renders on the CPU: expect frames 50x or more slower than on a GPU "
                   "and a slow first frame while the shaders compile (the progress gives the "
                   "measured time a frame)")


def software_notice(ctx: GpuContext) -> str | None:
    """The line to print, once per process, when ``ctx`` renders on the CPU (lavapipe,
    llvmpipe); None on a GPU and after the first call that returned it."""
    global _SOFTWARE_NOTICE_GIVEN
    if not ctx.is_software or _SOFTWARE_NOTICE_GIVEN:
        return None
    _SOFTWARE_NOTICE_GIVEN = True
    return SOFTWARE_NOTICE.format(label=ctx.label)


_CONTEXT_LOCK = threading.Lock()
_OVERRIDE = threading.local()   # .context: a context get_context gives this thread instead


def get_context() -> GpuContext:
    """The process-wide context (created on first use; Engines built at once in several
    threads share one device rather than each requesting its own), or the one
    ``using_context`` set for this thread."""
    global _CONTEXT
    override = getattr(_OVERRIDE, "context", None)
    if override is not None:
        return override
    with _CONTEXT_LOCK:
        if _CONTEXT is None:
            adapter = choose_adapter()
            limits = dict(adapter.limits)
            wanted = [f for f in ("timestamp-query", "indirect-first-instance", "subgroup")
                      if f in adapter.features]
            device = adapter.request_device_sync(label="emberfx", required_limits=limits,
                                                 required_features=wanted)
            _CONTEXT = GpuContext(adapter, device, limits)
        return _CONTEXT


WEBGPU_DEFAULT_LIMITS = {
    "max-texture-dimension-1d": 8192, "max-texture-dimension-2d": 8192,
    "max-texture-dimension-3d": 2048, "max-texture-array-layers": 256, "max-bind-groups": 4,
    "max-bind-groups-plus-vertex-buffers": 24, "max-bindings-per-bind-group": 1000,
    "max-dynamic-uniform-buffers-per-pipeline-layout": 8,
    "max-dynamic-storage-buffers-per-pipeline-layout": 4,
    "max-sampled-textures-per-shader-stage": 16, "max-samplers-per-shader-stage": 16,
    "max-storage-buffers-per-shader-stage": 8, "max-storage-textures-per-shader-stage": 4,
    "max-uniform-buffers-per-shader-stage": 12, "max-uniform-buffer-binding-size": 65536,
    "max-storage-buffer-binding-size": 134217728, "min-uniform-buffer-offset-alignment": 256,
    "min-storage-buffer-offset-alignment": 256, "max-vertex-buffers": 8,
    "max-buffer-size": 268435456, "max-vertex-attributes": 16,
    "max-vertex-buffer-array-stride": 2048, "max-inter-stage-shader-variables": 16,
    "max-color-attachments": 8, "max-color-attachment-bytes-per-sample": 32,
    "max-compute-workgroup-storage-size": 16384, "max-compute-invocations-per-workgroup": 256,
    "max-compute-workgroup-size-x": 256, "max-compute-workgroup-size-y": 256,
    "max-compute-workgroup-size-z": 64, "max-compute-workgroups-per-dimension": 65535,
}
"""WebGPU's default limits (the spec's table): what a page's device has unless it asks for more"""


def limited_context(limits: dict[str, int]) -> GpuContext:
    """A context of its own on the chosen adapter whose device has WebGPU's default limits
    except ``limits`` and no optional features: what a browser's page gets when it asks for
    exactly these (web/record.py). wgpu-py gives the adapter's value for any limit not asked
    for, so every default is asked for. Raises DeviceLimitError when the adapter has less."""
    adapter = choose_adapter()
    known = {k for k, v in adapter.limits.items() if v}   # 0: a limit wgpu-native lacks
    limits = {k: v for k, v in {**WEBGPU_DEFAULT_LIMITS, **limits}.items() if k in known}
    short = {k: (v, adapter.limits[k]) for k, v in limits.items()
             if k.startswith("max-") and adapter.limits[k] < v}
    if short:
        raise DeviceLimitError("; ".join(f"{k}: expected at least {v}, this adapter has {h}"
                                         for k, (v, h) in short.items()))
    device = adapter.request_device_sync(label="emberfx-portable", required_limits=limits,
                                         required_features=[])
    return GpuContext(adapter, device, dict(device.limits))


@contextlib.contextmanager
def using_context(ctx: GpuContext) -> Iterator[GpuContext]:
    """Within the block, get_context() in this thread gives ``ctx`` (an Engine made there
    runs on its device)."""
    before = getattr(_OVERRIDE, "context", None)
    _OVERRIDE.context = ctx
    try:
        yield ctx
    finally:
        _OVERRIDE.context = before


def describe_adapters() -> dict:
    """For ``emberfx info``: the chosen adapter, its limits, and every adapter found."""
    adapters = _enumerate()
    chosen = choose_adapter(adapters)
    return {
        "adapter": dict(chosen.info),
        "features": sorted(chosen.features),
        "limits": dict(chosen.limits),
        "adapters": [dict(a.info) for a in adapters],
    }
