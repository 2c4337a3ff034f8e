"""What the provider adapters share: JSONL following, timestamps, cut-payload salvage,
question dialogs, settings templates, and the spool-backed read path (``spooled``).
Provider-neutral; each provider's interpretation stays in its own subpackage."""
