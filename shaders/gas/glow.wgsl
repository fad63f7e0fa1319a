// gas/glow.wgsl: the blackbody glow of a gas's temperature (no pass of its own). The including
// pass binds `look` (GasLook, gas/look.wgsl) and `blackbody` (array<vec4f>: the Planck
// chromaticities of systems/gas/blackbody.py, TABLE_STEP kelvin apart from TABLE_START, largest
// channel 1). systems/gas/records.py reads the table's constants here.

//! include gas/look.wgsl

const KELVIN_AMBIENT: f32 = 300.0;
const TABLE_START: f32 = 500.0;   // kelvin of the blackbody table's first entry
const TABLE_STEP: f32 = 100.0;    // kelvin between entries

// The glow of a unit of gas at `temperature` (before fire_intensity): the chromaticity of a
// Planck spectrum at kelvin = 300 + temperature x kelvin_per_unit x (kelvin / 1500)^4 (the
// Stefan-Boltzmann growth), faded in between 700 and 900 K (the Draper point).
fn glow(temperature: f32) -> vec3f {
    let kelvin = KELVIN_AMBIENT + max(temperature, 0.0) * look.light.z;
    let entries = u32(look.light.w);
    let at = clamp((kelvin - TABLE_START) / TABLE_STEP, 0.0, f32(entries - 1u));
    let k = min(u32(at), entries - 2u);
    let chroma = mix(blackbody[k].rgb, blackbody[k + 1u].rgb, at - f32(k));
    let ratio = kelvin / 1500.0;
    return chroma * (ratio * ratio * ratio * ratio) * smoothstep(700.0, 900.0, kelvin);
}
