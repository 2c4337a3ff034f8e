"""Hook entry points. Importing one hook must not import the others: keep this empty."""
