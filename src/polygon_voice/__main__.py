"""`python -m polygon_voice` is the `polygon` command."""

from polygon_voice.cli import main

main()
