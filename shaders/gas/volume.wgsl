// gas/volume.wgsl  --  pass `<entity>:gas:volume` (render: one fullscreen triangle, in a render
// pass whose depth attachment is read-only, after the opaque geometry and before the
// transparent particles)
//
// The gas ray marched as a participating medium. Along each pixel's ray through the box, up to
// the opaque depth of this frame (a mesh inside the smoke hides what lies behind it), in steps
// of `look.steps.x`, the exact length of each step inside the box:
//   extinction  sigma = (absorption + scattering) x density per world unit; the transmittance
//               falls by exp(-sigma ds) per step (Beer-Lambert)
//   scattering  the scene's light, single-scattered (isotropic) by scattering x density x the
//               smoke colour, dimmed by the transmittance toward the light (a short march of
//               `look.steps.z` steps of `look.steps.y` through the density: self-shadowing) and
//               by the scene's shadow map and particle opacity at the sample (common/shadow.wgsl:
//               a wall or a smoke of particles between it and the light shades it), plus the
//               ambient term lit from everywhere
//   emission    blackbody light of the temperature: `fire_intensity` x the chromaticity of a
//               Planck spectrum at kelvin = 300 + temperature x kelvin_per_unit (the table
//               `blackbody`, 100 K apart from 500 K, max channel 1) x (kelvin / 1500)^4 (the
//               Stefan-Boltzmann growth), faded in between 700 and 900 K (the Draper point, below
//               which nothing glows visibly)
// Each pixel's samples start at its own fraction of a step (interleaved gradient noise, Jimenez
// 2014: fixed per pixel, so a still frame stays still), which turns the banding of a fixed
// step into a fine, even grain. It writes premultiplied (light, 1 - transmittance): what is
// behind is kept by the transmittance (blend "alpha").
// Bindings (group 0): 0 frame (uniform Frame), 1 params (read GasParams), 2 look (read
//   GasLook), 3 scalars (read), 4 blackbody (read), 5 scene_depth (texture_depth_2d),
//   6 shadow_map (texture_depth_2d), 7 shadow_opacity (texture_2d<f32>)

//! include common/frame.wgsl
//! include common/fullscreen.wgsl
//! include common/shadow.wgsl
//! include gas/trilinear.wgsl
//! include gas/glow.wgsl

const MAX_STEPS: u32 = 1024u;

@group(0) @binding(0) var<uniform> frame: Frame;
@group(0) @binding(1) var<storage, read> params: GasParams;
@group(0) @binding(2) var<storage, read> look: GasLook;
@group(0) @binding(3) var<storage, read> scalars: array<vec4f>;
@group(0) @binding(4) var<storage, read> blackbody: array<vec4f>;
@group(0) @binding(5) var scene_depth: texture_depth_2d;
@group(0) @binding(6) var shadow_map: texture_depth_2d;
@group(0) @binding(7) var shadow_opacity: texture_2d<f32>;

struct Varyings {
    @builtin(position) clip: vec4f,
};

@vertex
fn vs_main(@builtin(vertex_index) v: u32) -> Varyings {
    return Varyings(fullscreen_position(v));
}

// Trilinear density and temperature at world point x (clamped into the box).
fn gas_at(x: vec3f) -> vec2f {
    let n = params.cells.xyz;
    let s = trilinear((x - params.lower.xyz) / params.lower.w - vec3f(0.5), vec3i(n), false, n, 0u);
    let t = s.t;
    return mix(mix(mix(scalars[s.rows.x + s.x.x].xy, scalars[s.rows.x + s.x.y].xy, t.x),
                   mix(scalars[s.rows.y + s.x.x].xy, scalars[s.rows.y + s.x.y].xy, t.x), t.y),
               mix(mix(scalars[s.rows.z + s.x.x].xy, scalars[s.rows.z + s.x.y].xy, t.x),
                   mix(scalars[s.rows.w + s.x.x].xy, scalars[s.rows.w + s.x.y].xy, t.x), t.y),
               t.z);
}

// Where the ray o + t d enters and leaves the box (t0 > t1: it misses).
fn box_span(o: vec3f, d: vec3f) -> vec2f {
    let lo = params.lower.xyz;
    let hi = lo + vec3f(params.cells.xyz) * params.lower.w;
    let inv = 1.0 / d;
    let a = (lo - o) * inv;
    let b = (hi - o) * inv;
    let near = min(a, b);
    let far = max(a, b);
    return vec2f(max(max(near.x, near.y), near.z), min(min(far.x, far.y), far.z));
}

// The transmittance from x toward the light through the density.
fn toward_light(x: vec3f, sigma_per_density: f32) -> f32 {
    let steps = u32(look.steps.z);
    var depth = 0.0;
    for (var k = 1u; k <= steps; k++) {
        depth += gas_at(x + frame.light_direction.xyz * (f32(k) * look.steps.y)).x;
    }
    return exp(-sigma_per_density * depth * look.steps.y);
}

@fragment
fn fs_main(in: Varyings) -> @location(0) vec4f {
    let size = vec2f(textureDimensions(scene_depth));
    let ndc = vec2f(in.clip.x / size.x * 2.0 - 1.0, 1.0 - in.clip.y / size.y * 2.0);
    let near4 = frame.inverse_view_proj * vec4f(ndc, 0.0, 1.0);
    let far4 = frame.inverse_view_proj * vec4f(ndc, 1.0, 1.0);
    let origin = near4.xyz / near4.w;
    let span_vector = far4.xyz / far4.w - origin;
    let d = normalize(span_vector);
    let depth = textureLoad(scene_depth, vec2i(in.clip.xy), 0);
    let opaque4 = frame.inverse_view_proj * vec4f(ndc, depth, 1.0);
    let stop = dot(opaque4.xyz / opaque4.w - origin, d);
    let span = box_span(origin, d);
    let t0 = max(span.x, 0.0);
    let t1 = min(span.y, stop);
    if (t1 <= t0) { discard; }
    let absorption = look.smoke.w;
    let scattering = look.light.x;
    let sigma_per_density = absorption + scattering;
    let step = look.steps.x;
    let count = min(u32(ceil((t1 - t0) / step)), MAX_STEPS);
    let ds = (t1 - t0) / f32(count);
    let jitter = fract(52.9829189 * fract(dot(floor(in.clip.xy),
                                              vec2f(0.06711056, 0.00583715))));
    let sun = frame.light_color.rgb;
    let ambient = frame.light_color.w;
    var transmittance = 1.0;
    var light = vec3f(0.0);
    for (var k = 0u; k < count; k++) {
        let x = origin + d * (t0 + (f32(k) + jitter) * ds);
        let g = gas_at(x);
        let density = max(g.x, 0.0);
        var source = look.light.y * glow(g.y);
        if (density > 0.0 && scattering > 0.0) {
            let shaded = shadow_visibility_at(frame, shadow_map, shadow_opacity, x);
            let lit = sun * toward_light(x, sigma_per_density) * shaded + vec3f(ambient);
            source += scattering * density * look.smoke.rgb * lit;
        }
        let fall = exp(-sigma_per_density * density * ds);
        // the source integrated over the step with the extinction inside it
        let sigma = sigma_per_density * density;
        let weight = select(ds, (1.0 - fall) / max(sigma, 1e-20), sigma > 1e-6);
        light += transmittance * source * weight;
        transmittance *= fall;
        if (transmittance < 1e-4) { break; }
    }
    return vec4f(light, 1.0 - transmittance);
}
