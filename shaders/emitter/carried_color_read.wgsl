// emitter/carried_color_read.wgsl: the colour a source particle carries, read from the source's
// `<source>/color` (in place of emitter/carried_color.wgsl; no pass of its own).
// Bindings (group 1): 2 source_colors (read: one vec4f per slot of the source, alone).

@group(1) @binding(2) var<storage, read> source_colors: array<vec4f>;

fn carried_color(slot: u32) -> vec4f {
    return source_colors[slot];
}
