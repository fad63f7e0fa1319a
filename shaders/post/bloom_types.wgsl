// post/bloom_types.wgsl: the bloom passes' shared settings (no pass of its own; systems/post/system.py
// packs it through emberfx.layout).

struct BloomSettings {
    threshold: f32,    // linear brightness that starts to bloom
    intensity: f32,    // how much of the blurred light is added back
    radius: u32,       // blur taps each side, half-resolution pixels
    horizontal: u32,   // bloom_blur: 1 = along x, 0 = along y
};
