// gas/light.wgsl  --  pass `<entity>:gas:light` (compute, RENDER phase; a gas whose look has
// fire_light > 0)
//
// The gas's fire as one point light (common/point_light_types.wgsl): the partials of
// gas/light_sum.wgsl added up; the light sits at the glow's luminance-weighted centre, with the
// colour of all the glow summed x fire_light, and range fire_light.y. It reserves its entry after
// the scene's lights with an atomic on lights/count (as emitters with emit_light do); a gas with
// no glow this frame reserves nothing.
// One workgroup of 256 invocations, each adding every 256th partial.
// Bindings (group 0): 0 look (read GasLook), 1 partials (read), 2 light_counts (rw),
//   3 point_lights (rw)

//! include common/point_light_types.wgsl
//! include gas/look.wgsl
//! include gas/reduce.wgsl

@group(0) @binding(0) var<storage, read> look: GasLook;
@group(0) @binding(1) var<storage, read> partials: array<vec4f>;
@group(0) @binding(2) var<storage, read_write> light_counts: AppendCounts;
@group(0) @binding(3) var<storage, read_write> point_lights: array<PointLight>;

const WORKGROUP_SIZE: u32 = REDUCE_SIZE;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32) {
    var own = vec4f(0.0);
    var at = vec4f(0.0);
    for (var k = lid; 2u * k + 1u < arrayLength(&partials); k += WORKGROUP_SIZE) {
        own += partials[2u * k];
        at += partials[2u * k + 1u];
    }
    reduce_a[lid] = own;
    reduce_b[lid] = at;
    reduce_workgroup(lid);
    let power = reduce_a[0];
    let centre = reduce_b[0];
    if (lid != 0u || power.w <= 0.0) { return; }
    let index = light_counts.scene + atomicAdd(&light_counts.appended, 1u);
    if (index >= LIGHT_CAPACITY) { return; }
    var light: PointLight;
    light.position_range = vec4f(centre.xyz / power.w, look.fire_light.y);
    light.color = vec4f(power.rgb * look.fire_light.x, 0.0);
    point_lights[index] = light;
}
