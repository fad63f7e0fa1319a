"""emberfx: a game-engine-style GPU particle and simulation runtime for Python.

    import emberfx
    scene = emberfx.load_scene("scenes/fountain.toml")
    engine = emberfx.Engine(scene, size=(640, 360))
    engine.step(60)
    image = engine.render()
"""

from emberfx.core.errors import EmberError, SceneError
from emberfx.engine import app_hooks

__version__ = "0.1.0"
__all__ = ["Camera", "Engine", "EmberError", "Scene", "SceneError", "SceneSettings", "load_scene",
           "run", "show", "sweep", "__version__"]


def __dir__():
    # The public API only, lazy names included, so tab completion offers what there is to use.
    return sorted(__all__)


def __getattr__(name):
    # Imported lazily so `emberfx validate` and `import emberfx` never start wgpu.
    if name == "Engine":
        from emberfx.engine.engine import Engine
        return Engine
    if name in ("load_scene", "Scene", "SceneSettings"):
        from emberfx.model import scene
        return getattr(scene, name)
    if name == "Camera":
        from emberfx.model.camera import Camera
        return Camera
    if name == "run":
        from emberfx.app.window import run
        return run
    if name == "sweep":
        from emberfx.sweeps import sweep
        return sweep
    if name == "show":   # Jupyter only; importing it loads no notebook package
        from emberfx.app.notebook import show
        return show
    raise AttributeError(f"module 'emberfx' has no attribute {name!r}")


# The Engine's app-layer methods (engine/app_hooks.py): the engine imports no app module, so
# the package, which sits above both, hands it these. Each imports its module when first
# called, so that `import emberfx` loads neither PIL nor the export code.
def _export_frame(engine, folder, format):
    from emberfx.app.export import export_frame
    return export_frame(engine, folder, format)


def _png_bytes(engine):
    from emberfx.app.notebook import png_bytes
    return png_bytes(engine)


def _video(engine, frames, fps):
    from emberfx.app.notebook import video
    return video(engine, frames, fps)


def _web(engine, path, frames, size):
    from emberfx.web import DEFAULT_FRAMES, notebook_player, write_web
    if path is None:
        return notebook_player(engine.scene, frames, size, scripts=engine.script_policy)
    return write_web(engine.scene, path, DEFAULT_FRAMES if frames is None else frames, size,
                     scripts=engine.script_policy)


app_hooks.provide(app_hooks.EXPORT, _export_frame)
app_hooks.provide(app_hooks.WEB, _web)
app_hooks.provide(app_hooks.PNG, _png_bytes)
app_hooks.provide(app_hooks.VIDEO, _video)
