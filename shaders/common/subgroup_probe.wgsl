// common/subgroup_probe.wgsl  --  pass `emberfx:subgroup-probe` (once per GPU context, on demand)
//
// Writes the subgroup size a compute pipeline runs with (GpuContext.subgroup_size), which
// wgpu-py does not report. Needs the "subgroup" feature.
// Workgroup size 64; dispatch (1, 1, 1).
// Bindings (group 0): 0 lanes (rw, one u32)

@group(0) @binding(0) var<storage, read_write> lanes: u32;

@compute @workgroup_size(64)
fn main(@builtin(subgroup_size) size: u32) {
    lanes = size;
}
