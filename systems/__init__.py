"""GPU systems: one subpackage per component family (component dataclasses, the system that
turns them into passes, and the family's script actions, pointer tools and CLI commands).
runtime/ finds them only through emberfx.model.registry."""
