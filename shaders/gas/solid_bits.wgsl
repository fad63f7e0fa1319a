// gas/solid_bits.wgsl  --  pass `<entity>:gas:solids:bits`
//
// The solid cells (gas/solids.wgsl) as bits in the pressure multigrid's colour-split order
// (gas/types.wgsl's level_slot): bit (slot mod 32) of word slot / 32 is set when the cell in that
// slot of level 0 is solid; unused slots are clear. The smoothing and restriction passes read
// these 32 times smaller words (gas/poisson.wgsl) in place of a word per cell.
// One invocation per word; workgroup size 64, dispatch ceil(words / 64) workgroups, folded.
// Bindings (group 0): 0 params (read GasParams), 1 solid (read: 1 + collider index, else 0),
//   2 solid_bits (rw)

//! include common/dispatch.wgsl
//! include gas/types.wgsl

@group(0) @binding(0) var<storage, read> params: GasParams;
@group(0) @binding(1) var<storage, read> solid: array<u32>;
@group(0) @binding(2) var<storage, read_write> solid_bits: array<u32>;

const WORKGROUP_SIZE: u32 = 64u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let w = folded_invocation(wid, groups, WORKGROUP_SIZE, lid);
    let n = params.cells.xyz;
    let hx = half_row(n);
    let half = hx * n.y * n.z;
    if (w >= (2u * half + 31u) / 32u) { return; }
    var bits = 0u;
    for (var b = 0u; b < 32u; b++) {
        let slot = 32u * w + b;
        let colour = slot / half;
        let r = slot % half;
        let row = r / hx;
        let y = row % n.y;
        let z = row / n.y;
        let x = 2u * (r % hx) + ((y + z + colour) & 1u);
        if (colour < 2u && x < n.x && solid[cell_at(vec3i(vec3u(x, y, z)), n)] != 0u) {
            bits |= 1u << b;
        }
    }
    solid_bits[w] = bits;
}
