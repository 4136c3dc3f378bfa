"""`python -m clipbridge`: the clipbridge command without the console script."""

import sys

from clipbridge.cli.main import main

sys.exit(main())
