"""The core: GPU context, WGSL loading, struct layouts, the resource registry, named
bindings, the frame graph, readback and the profiler. It knows passes and buffers,
not emitters or cloth."""
