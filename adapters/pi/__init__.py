"""Pi (``@mariozechner/pi-coding-agent``): its extension spool and its session files."""
