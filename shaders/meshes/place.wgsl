// meshes/place.wgsl: where a mesh particle's vertex lies (no pass of its own): the bindings,
// orientation and placement that the mesh draw (meshes/draw.wgsl) and its shadow draw
// (meshes/shadow.wgsl) share. Instance k is the emitter's particle alive_list[k]; `size` x the
// size over life world units across, turned by MeshLook.align: local +y along the velocity
// (identity while the particle is at rest) or along a fixed axis, or about a per-particle
// random axis by an initial angle plus spin x age. The random axis and angles derive from the
// birth key (seed, entity, slot, birth step), the birth step recovered from the age, so nothing
// is stored per particle.
// Bindings (group 0): 0 frame (uniform Frame), 1 params (uniform EmitterParams), 2 particles
// (read), 3 alive_list (read), 4 looks (read Looks), 5 look (uniform MeshLook), 6 vertices (read)

//! include common/frame.wgsl
//! include common/random.wgsl
//! include emitter/types.wgsl
//! include meshes/types.wgsl
//! include emitter/looks_over_life.wgsl

// draws of the birth key used here, apart from the ones births and sprites use
const DRAW_MESH_ANGLE: u32 = 80u;
const DRAW_MESH_SPIN: u32 = 81u;
const DRAW_MESH_AXIS_Z: u32 = 82u;
const DRAW_MESH_AXIS_PHI: u32 = 83u;

@group(0) @binding(0) var<uniform> frame: Frame;
@group(0) @binding(1) var<uniform> params: EmitterParams;
@group(0) @binding(2) var<storage, read> particles: array<Particle>;
@group(0) @binding(3) var<storage, read> alive_list: array<u32>;
@group(0) @binding(5) var<storage, read> look: MeshLook;   // storage: lavapipe recompiles on uniform branches
@group(0) @binding(6) var<storage, read> vertices: array<MeshVertex>;

// The rotation whose columns take local x, y, z to world: y to the unit vector `up`.
fn basis_with_y(up: vec3f) -> mat3x3f {
    var reference = vec3f(0.0, 0.0, 1.0);
    if (abs(up.z) > 0.9) { reference = vec3f(1.0, 0.0, 0.0); }
    let x = normalize(cross(up, reference));
    return mat3x3f(x, up, cross(x, up));
}

// Rodrigues: the rotation by `angle` radians about the unit `axis`.
fn axis_angle(axis: vec3f, angle: f32) -> mat3x3f {
    let s = sin(angle);
    let c = cos(angle);
    let k = mat3x3f(vec3f(0.0, axis.z, -axis.y), vec3f(-axis.z, 0.0, axis.x),
                    vec3f(axis.y, -axis.x, 0.0));
    return mat3x3f(vec3f(1.0, 0.0, 0.0), vec3f(0.0, 1.0, 0.0), vec3f(0.0, 0.0, 1.0))
           + s * k + (1.0 - c) * (k * k);
}

fn orientation(p: Particle, slot: u32) -> mat3x3f {
    if (look.align == MESH_ALIGN_VELOCITY) {
        let v = p.velocity_lifetime.xyz;
        let speed = length(v);
        if (speed > 1e-6) { return basis_with_y(v / speed); }
        return mat3x3f(vec3f(1.0, 0.0, 0.0), vec3f(0.0, 1.0, 0.0), vec3f(0.0, 0.0, 1.0));
    }
    if (look.align == MESH_ALIGN_AXIS) {
        return basis_with_y(look.axis.xyz);
    }
    let age = p.position_age.w;
    let born = look.frame - u32(round(age / max(look.h, 1e-9)));
    let birth = birth_key(look.seed, look.entity, slot, born);
    let angle = mix(look.rotation.x, look.rotation.y, random01(birth, DRAW_MESH_ANGLE))
                + age * mix(look.rotation.z, look.rotation.w, random01(birth, DRAW_MESH_SPIN));
    let z = 2.0 * random01(birth, DRAW_MESH_AXIS_Z) - 1.0;   // uniform on the sphere
    let phi = 6.283185307 * random01(birth, DRAW_MESH_AXIS_PHI);
    let r = sqrt(max(1.0 - z * z, 0.0));
    return axis_angle(vec3f(r * cos(phi), r * sin(phi), z), angle);
}

struct Placed {
    world: vec3f,    // the vertex's world position
    normal: vec3f,   // its world normal (unit when the mesh's is)
    color: vec3f,    // the particle's linear colour with its per-particle shade
};

fn place(vertex: u32, instance: u32) -> Placed {
    let slot = alive_list[instance];
    let p = particles[slot];
    let t = p.position_age.w / max(p.velocity_lifetime.w, 1e-6);
    // per-particle variation, stable over its life, as the emitter's sprites have it
    let key = pcg_hash(slot ^ bitcast<u32>(p.velocity_lifetime.w));
    let size_factor = 1.0 + params.shape.z * (2.0 * random01(key, 0u) - 1.0);
    let shade = 1.0 + params.shape.w * (2.0 * random01(key, 1u) - 1.0);
    let turn = orientation(p, slot);
    let v = vertices[vertex];
    let scale = params.size * look_size(t) * size_factor;
    var out: Placed;
    out.world = p.position_age.xyz + turn * (v.position.xyz * scale);
    out.normal = turn * v.normal.xyz;
    out.color = look_color(t).rgb * shade;
    return out;
}
