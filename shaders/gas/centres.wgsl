// gas/centres.wgsl  --  pass `<entity>:gas:centres`
//
// Each cell's velocity at its centre (gas/centred.wgsl: the mean of its two faces per axis),
// after the projection, written as three floats per cell, x fastest: the layout of a vector
// volume (systems/forces/volumes.py), which emitters' gas-sourced vector fields copy into their
// packed volumes each step (systems/emitter/gas_fields.py). Only present while a force field
// names the gas as its `source`.
// One invocation per cell; workgroup size 64, dispatch ceil(cells / 64) workgroups, folded.
// Bindings (group 0): 0 params (read GasParams), 1 velocity (read: the projected faces),
//   2 centres (rw: 3 floats per cell)

//! include common/dispatch.wgsl
//! include gas/centred.wgsl

@group(0) @binding(0) var<storage, read> params: GasParams;
@group(0) @binding(1) var<storage, read> velocity: array<f32>;
@group(0) @binding(2) var<storage, read_write> centres: array<f32>;

const WORKGROUP_SIZE: u32 = 64u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let i = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    if (i >= params.counts.y) { return; }
    let v = centred(cell_coords(i, params.cells.xyz));
    centres[3u * i] = v.x;
    centres[3u * i + 1u] = v.y;
    centres[3u * i + 2u] = v.z;
}
