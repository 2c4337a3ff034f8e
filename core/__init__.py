"""Core: run lifecycle and what sits on top of the adapter seam. Never names a provider."""
