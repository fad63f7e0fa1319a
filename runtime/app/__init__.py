"""The application: CLI, window, inspector, headless output and video."""
