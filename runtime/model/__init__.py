"""The scene model: TOML loading and validation, components and their change classes,
the family registry, the camera, colours. No GPU code."""
