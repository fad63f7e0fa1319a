"""The mesh family: emitter particles drawn as lit meshes (``mesh = "cube" | "sphere" |
"tetra" | "file.obj"`` on the emitter table). It has no component of its own: the emitter
system asks it for the draw of an emitter with a mesh (systems/meshes/draw.py)."""
