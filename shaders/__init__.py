"""WGSL sources, one file per pass (loaded by emberfx.shaders_loader)."""
