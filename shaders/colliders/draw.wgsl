// colliders/draw.wgsl  --  pass `<entity>:collider:draw` (render, indexed; opaque, depth write)
//
// A visible collider as a lit solid: its unit mesh (sphere, box or floor square) moved by the
// entity's model matrix. Linear HDR light: Lambert from the scene light (frame.light_*), its
// ambient shaded as a hemisphere (more from the sky than the ground), and a soft rim on curved
// shapes. The Lambert term is shadowed by the light's shadow map (common/shadow.wgsl); the
// ambient and the rim are not. A plane gets a box-filtered
// checker by default (it is a floor: cells give scale and perspective without aliasing far
// away); `pattern = "noise"` mottles any shape instead, like earth or stone: three octaves of
// world-space value noise, each faded out where its cells shrink below the pixel.
// Draw: indexed triangle list, 3 indices per triangle, 1 instance. Bindings (group 0):
// 0 frame (uniform Frame), 1 look (uniform ColliderLook), 2 vertices (read, array<MeshVertex>),
// 3 shadow_map (depth texture), 4 shadow_sampler (comparison sampler),
// 5 shadow_opacity (the particles' opacity layers), 6 point_lights (read), 7 light_tiles (read):
// the point lights of the pixel's tile (common/point_lights.wgsl), added to the light

//! include common/frame.wgsl
//! include common/random.wgsl
//! include common/shadow.wgsl
//! include common/point_lights.wgsl
//! include colliders/types.wgsl

@group(0) @binding(0) var<uniform> frame: Frame;
@group(0) @binding(1) var<uniform> look: ColliderLook;
@group(0) @binding(2) var<storage, read> vertices: array<MeshVertex>;
@group(0) @binding(3) var shadow_map: texture_depth_2d;
@group(0) @binding(4) var shadow_sampler: sampler_comparison;
@group(0) @binding(5) var shadow_opacity: texture_2d<f32>;
@group(0) @binding(6) var<storage, read> point_lights: array<PointLight>;
@group(0) @binding(7) var<storage, read> light_tiles: array<u32>;

struct VertexOut {
    @builtin(position) clip: vec4f,
    @location(0) world: vec3f,
    @location(1) normal: vec3f,
    @location(2) local: vec3f,
};

@vertex
fn vs_main(@builtin(vertex_index) index: u32) -> VertexOut {
    let v = vertices[index];
    let world = look.model * vec4f(v.position.xyz, 1.0);
    var out: VertexOut;
    out.clip = frame.view_proj * world;
    out.world = world.xyz;
    out.normal = (look.normal_matrix * vec4f(v.normal.xyz, 0.0)).xyz;
    out.local = v.position.xyz;
    return out;
}

// The unit direction from the surface to the eye (orthographic: the same everywhere).
fn toward_eye(world: vec3f) -> vec3f {
    if (frame.camera_position.w > 0.5) {
        return normalize(frame.camera_position.xyz - world);
    }
    return normalize(cross(frame.camera_right.xyz, frame.camera_up.xyz));
}

// 1 on odd cells, 0 on even ones, averaged over the pixel's footprint (a box filter), so
// cells smaller than a pixel fade to grey instead of shimmering.
fn filtered_checker(p: vec2f) -> f32 {
    let w = abs(dpdx(p)) + abs(dpdy(p)) + vec2f(1e-4);
    let i = 2.0 * (abs(fract((p - 0.5 * w) * 0.5) - 0.5) - abs(fract((p + 0.5 * w) * 0.5) - 0.5)) / w;
    return 0.5 - 0.5 * i.x * i.y;
}

// A lattice point's value in [0, 1): the hash of its integer coordinates.
fn lattice(c: vec3f) -> f32 {
    let h = bitcast<vec3u>(vec3i(floor(c)));
    return f32(pcg_hash(h.x ^ pcg_hash(h.y ^ pcg_hash(h.z))) >> 8u) / 16777216.0;
}

// Trilinear value noise in [0, 1] with a smooth (cubic) blend between lattice points.
fn value_noise(p: vec3f) -> f32 {
    let i = floor(p);
    let f = p - i;
    let u = f * f * (3.0 - 2.0 * f);
    let x00 = mix(lattice(i), lattice(i + vec3f(1.0, 0.0, 0.0)), u.x);
    let x10 = mix(lattice(i + vec3f(0.0, 1.0, 0.0)), lattice(i + vec3f(1.0, 1.0, 0.0)), u.x);
    let x01 = mix(lattice(i + vec3f(0.0, 0.0, 1.0)), lattice(i + vec3f(1.0, 0.0, 1.0)), u.x);
    let x11 = mix(lattice(i + vec3f(0.0, 1.0, 1.0)), lattice(i + vec3f(1.0, 1.0, 1.0)), u.x);
    return mix(mix(x00, x10, u.y), mix(x01, x11, u.y), u.z);
}

// Three octaves around 0.5 (a mottled surface); an octave whose cells are smaller than two
// pixels (``footprint``: world units per pixel) fades to its mean instead of shimmering.
fn mottle(p: vec3f, footprint: f32) -> f32 {
    var sum = 0.0;
    var frequency = 1.0;
    var amplitude = 0.5;
    for (var octave = 0; octave < 3; octave++) {
        let fade = clamp(1.0 - 2.0 * frequency * footprint, 0.0, 1.0);
        sum += amplitude * fade * (value_noise(p * frequency + f32(octave) * 17.0) - 0.5);
        frequency *= 2.7;
        amplitude *= 0.5;
    }
    return 0.5 + sum;
}

@fragment
fn fs_main(in: VertexOut, @builtin(front_facing) front: bool) -> @location(0) vec4f {
    // derivatives need uniform control flow: taken before any branch
    let checker = filtered_checker(in.local.xz * look.style.yz);
    let scaled = in.world * look.mottle.y;
    let footprint = length(fwidth(scaled));
    var n = normalize(in.normal);
    if (!front) { n = -n; }   // a floor seen from below, or the inside of a solid
    let eye = toward_eye(in.world);
    let lambert = max(dot(n, frame.light_direction.xyz), 0.0);
    // the hemisphere averages the ambient fraction: 0.4x from below, 1.6x from above
    let ambient = frame.light_color.w * mix(0.4, 1.6, 0.5 + 0.5 * n.y);
    let rim = look.style.w * pow(1.0 - max(dot(n, eye), 0.0), 3.0);
    let noise = mottle(scaled, footprint);
    let base = look.color.rgb * (1.0 - look.style.x * checker) * (1.0 + look.mottle.x * (2.0 * noise - 1.0));
    let visibility = shadow_visibility(frame, shadow_map, shadow_sampler, shadow_opacity,
                                       in.world, n);
    let points = base * point_light_sum(frame, in.world, n, in.clip.xy);
    let lit = base * (ambient + frame.light_color.rgb * lambert * visibility) + rim * (0.6 * look.color.rgb + vec3f(0.08)) + points;
    return vec4f(lit, 1.0);
}
