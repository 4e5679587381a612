"""``python -m combex``: the ``combex`` command."""

import sys

from .cli import main

sys.exit(main())
