"""Adapters: the seam (``seam``), canonical events and the reducer, the registry, the
shipped conformance suite (``testing``), a scripted fake (``fake``), one subpackage per
provider."""
