"""``python -m emberfx ...`` is the same as the ``emberfx`` console script."""

import sys

from emberfx.app.cli import main

if __name__ == "__main__":
    sys.exit(main())
