// trails/prepare.wgsl  --  pass `<entity>:trail:prepare`
//
// Writes the trail's drawIndirect arguments: one ribbon of params.vertices vertices per alive
// particle, the instance count copied from the source's own draw arguments (word 1 of
// <source>/draw_args: the length of its dense alive list, which the draw reads slots through).
//
// Workgroup size 1; dispatch (1, 1, 1).
// Bindings (group 0): 0 params (read TrailParams), 1 source_args (read: <source>/draw_args),
//                     2 draw_args (rw: this trail's 4 words; the draw reads them as INDIRECT)

//! include trails/types.wgsl

@group(0) @binding(0) var<storage, read> params: TrailParams;
@group(0) @binding(1) var<storage, read> source_args: array<u32, 4>;
@group(0) @binding(2) var<storage, read_write> draw_args: array<u32, 4>;

@compute @workgroup_size(1)
fn main() {
    draw_args[0] = params.vertices;
    draw_args[1] = source_args[1];
    draw_args[2] = 0u;
    draw_args[3] = 0u;
}
