"""``python -m app.cli``: the same as the ``dsx`` console script."""

from app.cli import main

main()
