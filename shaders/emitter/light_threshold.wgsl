// emitter/light_threshold.wgsl  --  pass `<entity>:emitter:light_threshold` (compute, RENDER
// phase; emitters with emit_light, alone)
//
// From the brightest bin down, adds up the histogram until max_lights particles are reached: that
// bin is the threshold, and `room` is how many of its particles still fit after the brighter
// ones; fewer particles than max_lights: NO_BIN (every particle with a bin is taken). Then
// reserves the lights it makes (`used`) in the scene's lights: `base` is where they start after
// the scene's own and the emitters' before it in the frame.
// Workgroup size 1; dispatch (1, 1, 1).
// Bindings (group 0): 0 light_params (uniform EmitLightParams), 1 light_select (read_write),
// 2 light_counts (read_write: `appended` counts the lights reserved).

//! include common/point_light_types.wgsl
//! include emitter/light_types.wgsl

@group(0) @binding(0) var<uniform> light_params: EmitLightParams;
@group(0) @binding(1) var<storage, read_write> light_select: LightSelect;
@group(0) @binding(2) var<storage, read_write> light_counts: AppendCounts;

@compute @workgroup_size(1)
fn main() {
    var above = 0u;
    var threshold = NO_BIN;
    var room = 0u;
    for (var i = 0u; i < LIGHT_BINS; i++) {
        let bin = LIGHT_BINS - 1u - i;
        let n = atomicLoad(&light_select.histogram[bin]);
        if (above + n >= light_params.max_lights) {
            threshold = bin;
            room = light_params.max_lights - above;
            break;
        }
        above += n;
    }
    let used = select(light_params.max_lights, above, threshold == NO_BIN);
    light_select.threshold = threshold;
    light_select.room = room;
    light_select.used = used;
    light_select.base = light_counts.scene + atomicAdd(&light_counts.appended, used);
}
