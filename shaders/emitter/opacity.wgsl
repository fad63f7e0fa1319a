// emitter/opacity.wgsl  --  pass `<entity>:emitter:opacity` (render, drawIndexedIndirect; additive)
//
// An emitter with cast_shadows = true into the light's opacity layers (runtime/core/shadows.py):
// each alive particle as a square of its size facing the light, adding its opacity -- alpha x the
// alpha over life (the looks' colour alpha) x the sprite's coverage (the dot's round falloff, or
// the texture's alpha) -- to the layer of its depth in the light's box. The opacity map's four
// channels are SHADOW_LAYERS slabs of that depth range (common/shadow.wgsl), nearest the light
// first; the sum of a texel's opacities over the particles drawn there is their optical depth
// tau, and the light through them is exp(-tau). A square under MIN_TEXELS texels wide is drawn
// MIN_TEXELS wide with its opacity scaled by the areas' ratio, so a small particle still adds its
// whole share. Sizes come from `size` and the size over life (a `size` expression is not
// evaluated here).
// Draw: 6 indices (the sprite index buffer) x alive-count instances, indirect (<entity>/draw_args,
// an emitter alone: its first instance is 0), target "shadow_opacity".
// Bindings (group 0): 0 frame (uniform Frame), 1 emitters (read: its EmitterParams), 2 particles
// (read), 3 alive_list (read), 4 looks (read Looks), 5 sprite_texture (texture_2d<f32>),
// 6 sprite_sampler

//! include common/frame.wgsl
//! include common/shadow.wgsl
//! include common/random.wgsl
//! include emitter/types.wgsl
//! include common/sprite.wgsl
//! include emitter/looks_over_life.wgsl

override TEXTURED: bool = false;   // coverage: the sprite texture's alpha, else the dot's falloff

@group(0) @binding(0) var<uniform> frame: Frame;
@group(0) @binding(1) var<storage, read> emitters: array<EmitterParams>;
@group(0) @binding(2) var<storage, read> particles: array<Particle>;
@group(0) @binding(3) var<storage, read> alive_list: array<u32>;
@group(0) @binding(5) var sprite_texture: texture_2d<f32>;
@group(0) @binding(6) var sprite_sampler: sampler;

const MIN_TEXELS: f32 = 1.5;

struct OpacityVertex {
    @builtin(position) clip: vec4f,
    @location(0) corner: vec2f,                       // -1..1 across the particle's square
    @location(1) @interpolate(flat) opacity: vec4f,   // its opacity in its layer's channel
};

@vertex
fn vs_main(@builtin(vertex_index) vertex: u32, @builtin(instance_index) instance: u32)
        -> OpacityVertex {
    let params = emitters[0];
    let slot = alive_list[instance];
    let p = particles[params.first_block * BLOCK + slot];
    let t = p.position_age.w / max(p.velocity_lifetime.w, 1e-6);
    // the sprite draw's per-particle size variation (emitter/billboard.wgsl)
    let key = pcg_hash(slot ^ bitcast<u32>(p.velocity_lifetime.w));
    let size_factor = 1.0 + params.shape.z * (2.0 * random01(key, 0u) - 1.0);
    let edge = params.size * look_size(t) * size_factor;
    let centre = frame.light_view_proj * vec4f(p.position_age.xyz, 1.0);
    // the box is square: clip units per world unit along x
    let m = frame.light_view_proj;
    let per_world = length(vec3f(m[0].x, m[1].x, m[2].x));
    let texel = 2.0 * f32(SHADOW_OPACITY_SCALE) * frame.shadow.z;   // an opacity texel, clip units
    let drawn = max(edge * per_world, MIN_TEXELS * texel);
    let share = (edge * per_world / drawn) * (edge * per_world / drawn);
    let c = sprite_corner(vertex);
    var out: OpacityVertex;
    out.clip = vec4f(centre.xy + 0.5 * drawn * c, 0.5, 1.0);
    out.corner = c;
    let layer = clamp(floor(centre.z * SHADOW_LAYERS), 0.0, SHADOW_LAYERS - 1.0);
    let channel = vec4f(f32(layer == 0.0), f32(layer == 1.0), f32(layer == 2.0),
                        f32(layer == 3.0));
    out.opacity = channel * look_color(t).a * share;
    return out;
}

@fragment
fn fs_main(in: OpacityVertex) -> @location(0) vec4f {
    var coverage: f32;
    if (TEXTURED) {
        let uv = vec2f(0.5 + 0.5 * in.corner.x, 0.5 - 0.5 * in.corner.y);
        coverage = textureSampleLevel(sprite_texture, sprite_sampler, uv, 0.0).a;
    } else {
        let r2 = dot(in.corner, in.corner);
        coverage = select(0.0, (1.0 - r2) * (1.0 - r2), r2 < 1.0);
    }
    return in.opacity * coverage;
}
