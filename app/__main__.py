"""`python -m app`: the clipbridge command without the console script."""

import sys

from app.cli.main import main

sys.exit(main())
