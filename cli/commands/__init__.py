"""The rooms: one module per command (or per tight family), each owning its parser
arguments and its handler — ``add_parser(sub)`` and ``run(args) -> int`` (``options``
says how; docs/adr/0044-cli-rooms.md). ``main`` lists them in ``ROOMS``."""
