"""Reusable GPU building blocks: prefix scan, key sort, sprite and quad pipelines."""
