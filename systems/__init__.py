"""GPU systems: one module per component family (component dataclasses + the system)."""
