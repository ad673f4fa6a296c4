"""``python -m gasync``: the same command line as the ``gasync`` script."""

from gasync.cli.app import main

if __name__ == "__main__":
    main()
