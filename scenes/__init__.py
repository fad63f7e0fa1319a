"""Example scenes shipped with emberfx (each runs in CI)."""
