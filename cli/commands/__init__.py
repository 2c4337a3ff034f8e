"""The rooms: one module per command (or per tight family), each owning its parser
arguments and its handler — ``add_parser(sub)`` and ``run(args) -> int`` (``options``
says how; docs/adr/0044-cli-rooms.md). ``main.COMMANDS`` names each command's room; a
command line imports its own room alone (docs/adr/0058-a-command-pays-for-its-own-room.md)."""
