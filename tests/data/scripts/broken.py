"""Does not import."""
import no_such_module_for_emberfx  # noqa: F401
