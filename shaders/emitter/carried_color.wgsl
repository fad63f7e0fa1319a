// emitter/carried_color.wgsl: the colour a source particle carries, as
// emitter/event_color_write.wgsl reads it (no pass of its own).
//
// This file is the default, for a source that carries no colour: white. For a source that
// does, systems/emitter/color.py swaps in emitter/carried_color_read.wgsl.
// Bindings: none.

fn carried_color(slot: u32) -> vec4f {
    return vec4f(1.0);
}
