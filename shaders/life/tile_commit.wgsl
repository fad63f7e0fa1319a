// life/tile_commit.wgsl  --  pass `<entity>:life:commit<k>` (memory = "inplace")
//
// Copies each tile's border words from the staging buffer into the state buffer, finishing the
// generation that life/step_inplace.wgsl started (WebGPU orders the two dispatches).
// Workgroup size 256 = TILE_W x TILE_H words; dispatch one workgroup per tile, folded like the
// step. Bindings (group 0): 0 params (uniform LifeParams), 1 state (rw), 2 staging (read)

//! include common/dispatch.wgsl
//! include life/swar.wgsl
//! include life/tile.wgsl

@group(0) @binding(0) var<uniform> params: LifeParams;
@group(0) @binding(1) var<storage, read_write> state: array<u32>;
@group(0) @binding(2) var<storage, read> staging: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
    let tile = folded_workgroup(wid, groups);
    let tiles = params.tiles_x * ((params.height + TILE_H - 1u) / TILE_H);
    if (tile >= tiles) { return; }
    let cell = tile_cell(tile, lid, params);
    if (cell.inside && cell.slot != 0xffffffffu) {
        state[cell.y * params.stride + cell.word] = staging[cell.slot];
    }
}
