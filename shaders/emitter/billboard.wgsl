// emitter/billboard.wgsl: the emitter's billboard vertex stage, shared by emitter/draw.wgsl and
// emitter/draw_soft.wgsl (no pass of its own).
//
// Instance k draws particle alive_list[k] as a quad of `size` world units (or pixels), coloured,
// faded and scaled by the looks baked over life (linear light), with a per-particle random
// variation of size and brightness. The quad faces the camera, optionally rotated about the view
// axis, or lies along the particle's velocity (stretched by stretch x |v|) or a fixed axis while
// facing the camera across it, or lies flat in the plane whose normal is the axis, turned about
// it (SpriteLook.align). Textured sprites sample the sprite texture (sRGB,
// so the shader sees linear values; straight alpha, premultiplied here for each blend mode) at one
// or two flipbook frames. Random rotation and spin derive from the particle's birth key (seed,
// entity, slot, birth step), the birth step recovered from its age, so nothing per particle is
// stored for them.
//
// One draw call serves each emitter of a batch (systems/emitter/batches.py) with the batch's
// arenas bound: its drawIndirect arguments start the instances at the emitter's first alive-list
// entry (first_instance = EmitterParams.alive_base), so instance_index is an entry of the batch's
// alive list, list_owner names the emitter of each 256 entries, and the particle is slot
// alive_list[entry] of that emitter (from its first block). WGSL has no draw index: this is how a
// draw knows its emitter. An emitter alone is a batch of one (first_instance 0, owner 0).
// A batch that culls (systems/emitter/culling.py) binds its drawn list as alive_list: each
// emitter's entries that cover a pixel centre, packed from the same alive_base, in order.
//
// Bindings (group 0) of every pass including it: 0 frame (uniform Frame), 1 emitters (read:
// EmitterParams per emitter), 2 particles (read), 3 alive_list (read), 4 looks (read: Looks per
// emitter), 5 sprite_looks (read: SpriteLook per emitter), 6 sprite_texture (texture_2d<f32>),
// 7 sprite_sampler, 9 list_owner (read: the emitter of each 256 alive-list entries); group 1:
// 0 attributes (read, only with custom attributes), 1 particle_colors (read, only for an
// emitter carrying colour). A `color` modifier or a `size` expression replaces the colour over
// life or `size`; a carried colour multiplies the colour over life (emitter/modifiers.wgsl).
// emitter/receive.wgsl scales the colour by the light the sprite receives (1, or with
// receive_shadows: the scene light at its centre, shadowed; its draws bind 10 shadow_map and
// 11 shadow_opacity then).

//! include common/frame.wgsl
//! include common/random.wgsl
//! include emitter/types.wgsl
//! include common/sprite.wgsl
//! include emitter/looks_over_life.wgsl
//! include emitter/modifiers.wgsl
//! include emitter/receive.wgsl

@group(0) @binding(0) var<uniform> frame: Frame;
@group(0) @binding(1) var<storage, read> emitters: array<EmitterParams>;
@group(0) @binding(2) var<storage, read> particles: array<Particle>;
@group(0) @binding(3) var<storage, read> alive_list: array<u32>;
// storage, not uniform: SpriteLook.frame changes every step, and lavapipe recompiles a draw
// whose uniforms change
@group(0) @binding(5) var<storage, read> sprite_looks: array<SpriteLook>;
@group(0) @binding(6) var sprite_texture: texture_2d<f32>;
@group(0) @binding(7) var sprite_sampler: sampler;
@group(0) @binding(9) var<storage, read> list_owner: array<u32>;

// this vertex's emitter (private, so that the code below and modifier code read them as before)
var<private> params: EmitterParams;
var<private> sprite_look: SpriteLook;

// SpriteLook.align
const ALIGN_CAMERA: u32 = 0u;
const ALIGN_VELOCITY: u32 = 1u;
const ALIGN_AXIS: u32 = 2u;
const ALIGN_PLANE: u32 = 3u;
// SpriteLook.flipbook
const FLIPBOOK_NONE: u32 = 0u;
const FLIPBOOK_OVER_LIFE: u32 = 1u;
const FLIPBOOK_FPS: u32 = 2u;
// draws of the birth key used here, apart from the ones births use (emitter/types.wgsl)
const DRAW_ROTATION: u32 = 64u;
const DRAW_SPIN: u32 = 65u;
const DRAW_START: u32 = 66u;

// Packed by systems/emitter/looks.py.
struct SpriteLook {
    axis: vec4f,          // xyz: unit world axis for ALIGN_AXIS, the plane's normal for ALIGN_PLANE
    rotation: vec4f,      // x, y: initial angle range, radians; z, w: angular velocity range, rad/s
    columns: u32,         // flipbook grid (1 x 1 without a flipbook)
    rows: u32,
    flipbook: u32,        // FLIPBOOK_*
    interpolate: u32,     // 1: blend frame floor(f) into the next by fract(f)
    fps: f32,             // frames per second (FLIPBOOK_FPS)
    random_start: u32,    // 1: FLIPBOOK_FPS starts at a random frame position per particle
    align: u32,           // ALIGN_*
    stretch: f32,         // seconds: ALIGN_VELOCITY lengthens the sprite by stretch x |v|
    soft: f32,            // world units: emitter/draw_soft.wgsl fades alpha over this depth gap
    reserved: array<vec4u, 11>,   // pads the record to RECORD_WORDS words (a batch's array)
};

// SpriteVertex (locations 0 and 1, read by common/sprite.wgsl's fragments) plus the texture's.
struct EmitterVertex {
    @builtin(position) clip: vec4f,
    @location(0) corner: vec2f,   // -1..1 across the sprite
    @location(1) color: vec4f,    // linear rgb, straight alpha
    @location(2) uv: vec4f,       // xy: texture coordinates in frame a; zw: in frame b
    @location(3) blend: f32,      // weight of frame b
    @location(4) world: vec3f,    // the fragment's world position (the centre for pixel sizes)
    @location(5) @interpolate(flat) owner: u32,   // the emitter's index in its batch
};

// Texture coordinates of corner c (-1..1, y up) in flipbook frame k (row by row from the top left).
fn frame_uv(c: vec2f, k: u32) -> vec2f {
    let cell = vec2f(f32(k % sprite_look.columns), f32(k / sprite_look.columns));
    let uv = vec2f(0.5 + 0.5 * c.x, 0.5 - 0.5 * c.y);
    return (cell + uv) / vec2f(f32(sprite_look.columns), f32(sprite_look.rows));
}

// (frame a, frame b, weight of b) at this age: f = age / lifetime x N held at N - 1 (over life),
// or f = age x fps + start wrapped mod N (fps).
fn flipbook_frames(age: f32, lifetime: f32, key: u32) -> vec3f {
    let n = sprite_look.columns * sprite_look.rows;
    var f = 0.0;
    if (sprite_look.flipbook == FLIPBOOK_OVER_LIFE) {
        f = clamp(age / max(lifetime, 1e-6), 0.0, 1.0) * f32(n);
    } else if (sprite_look.flipbook == FLIPBOOK_FPS) {
        f = age * sprite_look.fps;
        if (sprite_look.random_start == 1u) { f += random01(key, DRAW_START) * f32(n); }
    }
    let whole = floor(f);
    var a = 0u;
    var b = 0u;
    var weight = 0.0;
    if (sprite_look.flipbook == FLIPBOOK_FPS) {
        a = u32(whole - floor(whole / f32(n)) * f32(n)) % n;
        b = (a + 1u) % n;
    } else {
        a = min(u32(whole), n - 1u);
        b = min(a + 1u, n - 1u);
    }
    if (sprite_look.interpolate == 1u && a != b) { weight = f - whole; }
    return vec3f(f32(a), f32(b), weight);
}

fn rotate(c: vec2f, angle: f32) -> vec2f {
    let s = sin(angle);
    let k = cos(angle);
    return vec2f(k * c.x - s * c.y, s * c.x + k * c.y);
}

@vertex
fn vs_main(@builtin(vertex_index) vertex: u32, @builtin(instance_index) instance: u32) -> EmitterVertex {
    return billboard(list_owner[instance / BLOCK], alive_list[instance], vertex);
}

// A corner `c` of a sprite lying flat in the plane of unit normal `n`, in world units per half
// size: its x along cross(+y, n) normalised (+x for a floor, n = +y: then cross(-z, n)), its y
// along cross(n, x), so a sprite facing +z (n = +z) shows its texture as a camera-facing one.
fn plane_corner(n: vec3f, c: vec2f) -> vec3f {
    var reference = vec3f(0.0, 1.0, 0.0);
    if (abs(n.y) > 0.999) { reference = vec3f(0.0, 0.0, -1.0); }
    let x = normalize(cross(reference, n));
    return x * c.x + cross(n, x) * c.y;
}

// Corner `vertex` of the sprite of particle `slot` of emitter `owner` (its index in the batch).
// emitter/cull.wgsl calls it too, for the four corners' clip positions.
fn billboard(owner: u32, slot: u32, vertex: u32) -> EmitterVertex {
    params = emitters[owner];
    sprite_look = sprite_looks[owner];
    look_owner = owner;
    let p = particles[params.first_block * BLOCK + slot];
    let c = sprite_corner(vertex);
    let age = p.position_age.w;
    let t = age / max(p.velocity_lifetime.w, 1e-6);
    // per-particle variation, stable over its life: keyed by slot and its (random) lifetime
    let key = pcg_hash(slot ^ bitcast<u32>(p.velocity_lifetime.w));
    let size_factor = 1.0 + params.shape.z * (2.0 * random01(key, 0u) - 1.0);
    let shade = 1.0 + params.shape.w * (2.0 * random01(key, 1u) - 1.0);
    let born = params.frame - u32(round(age / max(params.h, 1e-9)));
    let birth = birth_key(params.seed, params.entity, slot, born);
    var size = params.size;
    if (HAS_SIZE) { size = particle_size(slot, p, birth, size); }
    let half = 0.5 * size * look_size(t) * size_factor;
    let look = sprite_look.rotation;
    let angle = mix(look.x, look.y, random01(birth, DRAW_ROTATION))
                + age * mix(look.z, look.w, random01(birth, DRAW_SPIN));
    let spun = rotate(c, angle);
    var out: EmitterVertex;
    let centre = p.position_age.xyz;
    if (params.size_in_pixels == 1u) {
        let clip = frame.view_proj * vec4f(centre, 1.0);
        out.clip = clip + vec4f(spun * half * 2.0 / frame.viewport * clip.w, 0.0, 0.0);
        out.world = centre;
    } else if (sprite_look.align == ALIGN_CAMERA) {
        let world = centre + (frame.camera_right.xyz * spun.x + frame.camera_up.xyz * spun.y) * half;
        out.clip = frame.view_proj * vec4f(world, 1.0);
        out.world = world;
    } else if (sprite_look.align == ALIGN_PLANE) {
        let world = centre + plane_corner(sprite_look.axis.xyz, spun) * half;
        out.clip = frame.view_proj * vec4f(world, 1.0);
        out.world = world;
    } else {
        // along the velocity or axis, facing the camera across it
        var along = sprite_look.axis.xyz;
        var half_length = half;
        if (sprite_look.align == ALIGN_VELOCITY) {
            let speed = length(p.velocity_lifetime.xyz);
            along = p.velocity_lifetime.xyz / max(speed, 1e-12);
            half_length = half + 0.5 * sprite_look.stretch * speed;
        }
        // camera_position.w is 1 for a perspective camera, 0 for orthographic: a blend rather
        // than a branch on a uniform, which lavapipe would specialise (and cache) per value
        let perspective = frame.camera_position.w;
        let view = mix(cross(frame.camera_up.xyz, frame.camera_right.xyz),
                       centre - frame.camera_position.xyz, perspective);
        // (along, across) turn like (camera right, camera up): a texture's top stays on the
        // left of its motion as seen
        var across = cross(along, view);
        if (dot(across, across) < 1e-12 * dot(view, view)) {   // seen end on: face the camera
            along = frame.camera_right.xyz;
            across = frame.camera_up.xyz;
        } else {
            across = normalize(across);
            along = normalize(cross(view, across));
        }
        let world = centre + along * (c.x * half_length) + across * (c.y * half);
        out.clip = frame.view_proj * vec4f(world, 1.0);
        out.world = world;
    }
    out.corner = c;
    out.owner = owner;
    var color = look_color(t);
    if (HAS_COLOR) { color = particle_color(slot, p, birth, color); }
    out.color = vec4f(color.rgb * shade * received_light(p.position_age.xyz), color.a);
    let frames = flipbook_frames(age, p.velocity_lifetime.w, birth);
    out.uv = vec4f(frame_uv(c, u32(frames.x)), frame_uv(c, u32(frames.y)));
    out.blend = frames.z;
    return out;
}

// The texel at the vertex's frames, premultiplied (rgb x a, a), frames blended.
fn sprite_texel(in: EmitterVertex) -> vec4f {
    let a = textureSample(sprite_texture, sprite_sampler, in.uv.xy);
    let b = textureSample(sprite_texture, sprite_sampler, in.uv.zw);
    return mix(vec4f(a.rgb * a.a, a.a), vec4f(b.rgb * b.a, b.a), in.blend);
}

