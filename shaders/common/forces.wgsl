// common/forces.wgsl: forces acting on particles (no pass of its own; systems/forces/forces.py packs
// the records, Python reads this struct through emberfx.layout).
//
//! include common/random.wgsl

// kind  a                                   b
// 0 attractor   position xyz, G             softening^2, radius (0: everywhere), kill radius
// 1 gravity     acceleration xyz
// 2 drag        coefficient (1/s)
// 3 vortex      centre xyz, strength        unit axis xyz, pull (towards the axis)
// 4 turbulence  frequency, strength, octaves
// 5 kill sphere centre xyz, radius
// 6 kill box    centre xyz                  half size xyz
// 7 wind        velocity xyz (gusts applied by the host), coefficient (1/s): particles are
//               dragged towards the wind's velocity; cloth takes it through its normals
// 8 vector field strength, tightness (1/s), mode (0 force, 1 velocity), volume index (emitters
//               only: emitter/fields.wgsl samples it; force_acceleration ignores it)

// Force.kind; the host (systems/forces/forces.py) maps each force's kind by these names.
const FORCE_ATTRACTOR: u32 = 0u;
const FORCE_GRAVITY: u32 = 1u;
const FORCE_DRAG: u32 = 2u;
const FORCE_VORTEX: u32 = 3u;
const FORCE_TURBULENCE: u32 = 4u;
const FORCE_KILL_SPHERE: u32 = 5u;
const FORCE_KILL_BOX: u32 = 6u;
const FORCE_WIND: u32 = 7u;
const FORCE_VECTOR_FIELD: u32 = 8u;

// The kinds an including pass may meet, one bit per kind (1 << kind): the host passes the kinds
// present so that the code of the others compiles out: with four attractors, the emitter update
// alone ran an H200 at 0.86 of the copy roofline with only the attractor's code, 0.74 with all.
override FORCE_KINDS: u32 = 0xffffffffu;

fn force_kind_present(kind: u32) -> bool {
    return (FORCE_KINDS & (1u << kind)) != 0u;
}

struct Force {
    a: vec4f,
    b: vec4f,
    kind: u32,
};

// Force records one emitter's update takes at most (its forces buffer holds this many; the host
// reads it: systems/forces/forces.py).
const MAX_FORCES: u32 = 64u;

// The softened inverse-square pull: G r / (|r|^2 + eps^2)^(3/2), r = attractor - x, as one
// inverse square root and products (the one-pass step of 16M particles under four attractors
// ran an H200 at 0.80 of the copy roofline so, at 0.77 with a square root and three divisions).
fn attractor_acceleration(f: Force, x: vec3f) -> vec3f {
    let r = f.a.xyz - x;
    let d2 = dot(r, r);
    if (f.b.y > 0.0 && d2 > f.b.y * f.b.y) { return vec3f(0.0); }
    let inverse = inverseSqrt(d2 + f.b.x);
    return (f.a.w * inverse * inverse * inverse) * r;
}

// Curl noise: the curl of a vector potential made of sine waves, sum_k d_k sin(w_k . x + phi_k),
// is sum_k cos(w_k . x + phi_k) (w_k x d_k): divergence-free by construction, so particles swirl
// without bunching. Three waves per octave with hashed directions; each octave doubles the
// frequency and halves the strength.
fn hashed_unit(key: u32) -> vec3f {
    let u = f32(pcg_hash(key) >> 8u) * (1.0 / 16777216.0);
    let v = f32(pcg_hash(key ^ 0x9e3779b9u) >> 8u) * (1.0 / 16777216.0);
    let z = 1.0 - 2.0 * u;
    let r = sqrt(max(0.0, 1.0 - z * z));
    let phi = 6.2831853 * v;
    return vec3f(r * cos(phi), r * sin(phi), z);
}

fn turbulence_acceleration(f: Force, x: vec3f) -> vec3f {
    var acc = vec3f(0.0);
    var frequency = f.a.x;
    var amplitude = f.a.y;
    let octaves = u32(f.a.z);
    for (var o = 0u; o < octaves; o++) {
        for (var k = 0u; k < 3u; k++) {
            let key = o * 3u + k;
            let w = hashed_unit(key * 2u + 1u) * frequency;
            let d = hashed_unit(key * 2u + 2u);
            let phase = 6.2831853 * f32(pcg_hash(key + 77u) >> 8u) * (1.0 / 16777216.0);
            acc += amplitude * cos(dot(w, x) + phase) * cross(w, d) / frequency;
        }
        frequency *= 2.0;
        amplitude *= 0.5;
    }
    return acc;
}

fn force_acceleration(f: Force, x: vec3f, v: vec3f) -> vec3f {
    // attractors alone: every record is one (the host compiles FORCE_KINDS from the records'
    // kinds), so the kind is neither loaded nor tested
    if (FORCE_KINDS == (1u << FORCE_ATTRACTOR)) { return attractor_acceleration(f, x); }
    switch f.kind {
        case FORCE_ATTRACTOR: {
            if (force_kind_present(FORCE_ATTRACTOR)) { return attractor_acceleration(f, x); }
        }
        case FORCE_GRAVITY: { if (force_kind_present(FORCE_GRAVITY)) { return f.a.xyz; } }
        case FORCE_DRAG: { if (force_kind_present(FORCE_DRAG)) { return -f.a.x * v; } }
        case FORCE_VORTEX: {
            if (force_kind_present(FORCE_VORTEX)) { return vortex_acceleration(f, x); }
        }
        case FORCE_TURBULENCE: {
            if (force_kind_present(FORCE_TURBULENCE)) { return turbulence_acceleration(f, x); }
        }
        case FORCE_WIND: { if (force_kind_present(FORCE_WIND)) { return f.a.w * (f.a.xyz - v); } }
        default: {}
    }
    return vec3f(0.0);
}

// Swirl about the axis, strength x axis x r, and a pull towards it, -pull x r_perp (r_perp: the
// offset from the axis).
fn vortex_acceleration(f: Force, x: vec3f) -> vec3f {
    let r = x - f.a.xyz;
    let radial = r - f.b.xyz * dot(f.b.xyz, r);
    return f.a.w * cross(f.b.xyz, r) - f.b.w * radial;
}

// Whether a particle at x is inside the attractor's kill radius (0: none).
fn attractor_kills(f: Force, x: vec3f) -> bool {
    let r = f.a.xyz - x;
    return f.b.z > 0.0 && dot(r, r) < f.b.z * f.b.z;
}

// Whether a particle at x dies: inside a kill zone or an attractor's kill radius.
fn force_kills(f: Force, x: vec3f) -> bool {
    if (FORCE_KINDS == (1u << FORCE_ATTRACTOR)) { return attractor_kills(f, x); }
    switch f.kind {
        case FORCE_ATTRACTOR: {
            if (force_kind_present(FORCE_ATTRACTOR)) { return attractor_kills(f, x); }
        }
        case FORCE_KILL_SPHERE: {
            if (force_kind_present(FORCE_KILL_SPHERE)) {
                let r = x - f.a.xyz;
                return dot(r, r) < f.a.w * f.a.w;
            }
        }
        case FORCE_KILL_BOX: {
            if (force_kind_present(FORCE_KILL_BOX)) { return all(abs(x - f.a.xyz) < f.b.xyz); }
        }
        default: {}
    }
    return false;
}
