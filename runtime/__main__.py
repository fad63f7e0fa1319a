"""``python -m emberfx ...`` and the ``emberfx`` console script.

Ctrl-C and SIGTERM are handled from here on, before the CLI's modules are imported, so a signal
in the command's first moments also exits 130 or 143 without a traceback (engine/interrupts.py).
"""

import sys

from emberfx.engine import interrupts  # the standard library only: quick to import


def _cli() -> int:
    from emberfx.app.cli import main as cli_main

    return cli_main()


def main() -> int:
    return interrupts.run_command(_cli, "emberfx")


if __name__ == "__main__":
    sys.exit(main())
