// emitter/event_color.wgsl: the colour an event record carries to its target (included by
// emitter/event_write.wgsl; no pass of its own).
//
// This file is the no-op default: a target that carries no colour gets none. Where the target
// of a write pass carries a colour per particle, systems/emitter/color.py derives the pass with
// emitter/event_color_write.wgsl in this file's place (same hook).
// Bindings: none.

//! include emitter/types.wgsl

// Source slot `slot` (its particle `particle` as the update left it) sent record `record` over
// link `l` of the pass.
fn write_event_color(slot: u32, particle: Particle, record: u32, l: u32) {}
