"""GPU resources by name: one registry owns every buffer and texture of an Engine.

Each resource has a name ``owner/key`` (``fountain/particles``, ``fountain/alive_list``), an owner
(the entity, or ``engine`` for the frame uniform and the render targets) and a lifetime: it is
created when its entity's component is added, destroyed when the entity is deleted, and made
again when a rebuild-class field changes (the system's ``rebuild`` removes and adds). The same
names label the GPU objects, name the frame graph's reads and writes, and let one family bind
another's published resource: a trail binds ``fountain/particles`` without knowing how the
emitter made it.

A buffer resource is a view (buffer, offset, size). Most views cover a whole buffer; ``view``
carves named views out of a larger allocation at 256-byte aligned offsets (the device's
storage-offset alignment is at most 256), so many entities may later share one arena and every
name stays valid.

``persistent`` resources hold state across frames (zeroed at creation, or written by the queue
before each step): the frame graph accepts a read of one that no earlier pass writes. Frame
resources (scratch, sort keys) must be written in the frame before they are read.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from emberfx.core.errors import EmberError
from emberfx.core.submission import HeldSubmission

if TYPE_CHECKING:
    import wgpu

    from emberfx.core.gpu import GpuContext

VIEW_ALIGNMENT = 256   # bytes: WebGPU's largest min-storage/uniform-buffer-offset-alignment
ENGINE = "engine"      # the owner of the frame uniform and the render targets


class ResourceError(EmberError):
    """A resource name that does not exist, is taken, or a view that does not fit."""


@dataclass(frozen=True)
class BufferView:
    """A named range of a GPU buffer; what a pass binds."""
    name: str
    buffer: wgpu.GPUBuffer
    offset: int
    size: int
    owner: str
    persistent: bool = True
    family: str = ""   # the system that made it (one entity may hold several families)

    def entry(self) -> dict:
        """The resource part of a bind group entry."""
        return {"buffer": self.buffer, "offset": self.offset, "size": self.size}


@dataclass(frozen=True)
class TextureResource:
    """A named texture and the view passes bind."""
    name: str
    texture: wgpu.GPUTexture
    view: wgpu.GPUTextureView
    owner: str
    persistent: bool = True
    family: str = ""

    def entry(self) -> wgpu.GPUTextureView:
        return self.view


Resource = BufferView | TextureResource


class Resources:
    """Every GPU buffer and texture of one Engine under its ``owner/key`` name."""

    def __init__(self, gpu: GpuContext):
        self.gpu = gpu
        self._items: dict[str, Resource] = {}
        self._owned: dict[str, dict[str, None]] = {}   # owner -> its names (a spawn or delete
                                                       # looks at its own, whatever the world)
        # (owner, family) -> the GPU objects it made, destroyed when it is released
        self._allocations: dict[tuple[str, str], list[object]] = {}
        self.held: HeldSubmission | None = None   # a step's open encoder (submission.py)

    # creating ------------------------------------------------------------------------------------
    def buffer(self, owner: str, key: str, size: int, usage: int, *, what: str | None = None,
               persistent: bool = True, family: str = "") -> BufferView:
        """A new zeroed buffer of at least ``size`` bytes named ``owner/key``, made by system
        ``family``. Storage buffers are checked against the device's limits first (``what``
        names it in the error)."""
        name = self._free_name(owner, key)
        buffer = self.gpu.buffer(name, size, usage, what=what)
        self._allocations.setdefault((owner, family), []).append(buffer)
        view = BufferView(name, buffer, 0, buffer.size, owner, persistent, family)
        self._put(name, view)
        return view

    def regrow(self, view: BufferView, size: int, *, what: str | None = None) -> BufferView:
        """``view``'s buffer, which its owner made, replaced by a zeroed one of at least ``size``
        bytes under the same name and usage (passes binding the old one must be rebuilt)."""
        self.submit_held()
        old = view.buffer
        allocations = self._allocations.get((view.owner, view.family), [])
        if self._items.get(view.name) is not view or old not in allocations:
            raise ResourceError(f"resource '{view.name}' is not a whole buffer made here")
        buffer = self.gpu.buffer(view.name, size, old.usage, what=what)
        allocations[allocations.index(old)] = buffer
        old.destroy()
        new = BufferView(view.name, buffer, 0, buffer.size, view.owner, view.persistent,
                         view.family)
        self._put(view.name, new)
        return new

    def texture(self, owner: str, key: str, *, size: tuple[int, int], format: str, usage: int,
                persistent: bool = True, family: str = "") -> TextureResource:
        """A new 2-D texture named ``owner/key``, made by system ``family``."""
        name = self._free_name(owner, key)
        texture = self.gpu.device.create_texture(label=name, size=(size[0], size[1], 1),
                                                 format=format, usage=usage)
        self._allocations.setdefault((owner, family), []).append(texture)
        item = TextureResource(name, texture, texture.create_view(), owner, persistent, family)
        self._put(name, item)
        return item

    def view(self, source: str, key: str, offset: int, size: int, *,
             persistent: bool = True, owner: str | None = None) -> BufferView:
        """A named view of ``size`` bytes at ``offset`` into the buffer resource ``source``
        (an arena); the offset must be a multiple of VIEW_ALIGNMENT. ``owner``: whose name it
        carries (``owner/key``; default the arena's owner): an entity's views into a shared
        arena are forgotten when the entity is released, and the arena stays."""
        parent = self[source]
        if not isinstance(parent, BufferView):
            raise ResourceError(f"resource '{source}' is a texture; views are of buffers")
        if offset % VIEW_ALIGNMENT:
            raise ResourceError(f"view '{key}' of '{source}': expected an offset that is a "
                                f"multiple of {VIEW_ALIGNMENT}, found {offset}")
        if offset < 0 or size <= 0 or offset + size > parent.size:
            raise ResourceError(f"view '{key}' of '{source}': bytes {offset}..{offset + size} "
                                f"do not fit in its {parent.size} bytes")
        owner = parent.owner if owner is None else owner
        name = self._free_name(owner, key)
        view = BufferView(name, parent.buffer, parent.offset + offset, size, owner,
                          persistent, parent.family)
        self._put(name, view)
        return view

    def adopt(self, name: str, resource, *, persistent: bool = True,
              view: wgpu.GPUTextureView | None = None) -> Resource:
        """Register a buffer or texture made elsewhere (the frame uniform, a render target)
        under ``name``, replacing what had that name. The Engine owns it (an entity's release
        never drops it) and destroys it itself."""
        owner = ENGINE
        if hasattr(resource, "create_view"):
            item: Resource = TextureResource(name, resource, view or resource.create_view(),
                                             owner, persistent)
        else:
            item = BufferView(name, resource, 0, resource.size, owner, persistent)
        self._put(name, item)
        return item

    def _put(self, name: str, item: Resource) -> None:
        old = self._items.get(name)
        if old is not None and old.owner != item.owner:
            self._drop(name)
        self._items[name] = item
        self._owned.setdefault(item.owner, {})[name] = None

    def _drop(self, name: str) -> Resource | None:
        item = self._items.pop(name, None)
        if item is not None:
            names = self._owned.get(item.owner)
            if names is not None:
                names.pop(name, None)
                if not names:
                    del self._owned[item.owner]
        return item

    def _free_name(self, owner: str, key: str) -> str:
        if "/" in owner or not owner or not key:
            raise ResourceError(f"resource names are 'owner/key' with a non-empty owner without "
                                f"'/'; found owner {owner!r}, key {key!r}")
        name = f"{owner}/{key}"
        if name in self._items:
            raise ResourceError(f"resource '{name}' exists already; release its owner first")
        return name

    # finding -------------------------------------------------------------------------------------
    def __getitem__(self, name: str) -> Resource:
        item = self._items.get(name)
        if item is None:
            close = difflib.get_close_matches(name, self._items, n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise ResourceError(f"no GPU resource named '{name}'{hint}")
        return item

    def __contains__(self, name: str) -> bool:
        return name in self._items

    def get(self, name: str) -> Resource | None:
        return self._items.get(name)

    def buffer_view(self, name: str) -> BufferView:
        item = self[name]
        if not isinstance(item, BufferView):
            raise ResourceError(f"resource '{name}' is a texture, not a buffer")
        return item

    def names(self, owner: str | None = None) -> list[str]:
        if owner is not None:
            return list(self._owned.get(owner, ()))
        return list(self._items)

    def persistent(self) -> set[str]:
        """Names whose contents exist before any pass of a frame runs."""
        return {n for n, item in self._items.items() if item.persistent}

    # contents ------------------------------------------------------------------------------------
    def write(self, resource: BufferView | str, data, offset: int = 0) -> None:
        """queue.write_buffer into a buffer resource (``offset`` is within the view)."""
        view = self.buffer_view(resource) if isinstance(resource, str) else resource
        self.before_write(view.buffer)
        self.gpu.device.queue.write_buffer(view.buffer, view.offset + offset, data)

    # a held step (submission.py) -----------------------------------------------------------------
    def hold(self, held: HeldSubmission) -> None:
        """Keep a step's encoder open for the draw that follows (what was held goes first)."""
        self.submit_held()
        self.held = held

    def take_held(self) -> HeldSubmission | None:
        """The held step (its encoder, and its compute pass if one is open), for the draw to
        record into and submit; None when none is held."""
        held, self.held = self.held, None
        return held

    def submit_held(self) -> None:
        """Submit the held encoder now, if there is one."""
        held, self.held = self.held, None
        if held is not None:
            held.submit()

    def before_write(self, buffer) -> None:
        """A queue write into ``buffer`` follows: submit the held step first if it binds it."""
        held = self.held
        if held is not None and id(buffer) in held.buffers:
            self.submit_held()

    # releasing -----------------------------------------------------------------------------------
    def take(self, name: str):
        """Forget the resource ``name``; return its GPU buffer when the name covered a whole
        buffer made here (the caller destroys it once nothing reads it), else None. The
        BufferView objects already handed out stay usable until then."""
        self.submit_held()
        item = self._drop(name)
        if not isinstance(item, BufferView):
            return None
        allocations = self._allocations.get((item.owner, item.family), [])
        if item.buffer in allocations and item.offset == 0 and item.size == item.buffer.size:
            allocations.remove(item.buffer)
            return item.buffer
        return None

    def release(self, owner: str, family: str | None = None) -> None:
        """Destroy what ``owner`` made (only through system ``family``, when given) and forget
        those names, views included. Releasing what is already gone does nothing."""
        self.submit_held()
        for name in [n for n in self._owned.get(owner, ())
                     if family is None or self._items[n].family == family]:
            self._drop(name)
        for key in [k for k in self._allocations if k[0] == owner
                    and (family is None or k[1] == family)]:
            for obj in self._allocations.pop(key):
                obj.destroy()   # type: ignore[attr-defined]

    def release_all(self) -> None:
        """Every entity's resources (the Engine's own adopted ones are destroyed by it)."""
        self.submit_held()
        for owner, _ in list(self._allocations):
            self.release(owner)
        self._items = {n: item for n, item in self._items.items() if item.owner == ENGINE}
        self._owned = {ENGINE: dict.fromkeys(self._items)} if self._items else {}
