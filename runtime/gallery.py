"""``python -m emberfx.gallery DIR [SCENE ...]``: the same as ``emberfx gallery DIR [SCENE ...]``
(app/gallery_media.py), which renders the gallery's pictures and clips, its contact sheet and
page, and the README's showcase picture and video under DIR."""

import sys

from emberfx.app.cli import main

if __name__ == "__main__":
    sys.exit(main(["gallery", *sys.argv[1:]]))
