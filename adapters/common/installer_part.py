"""The ``installer`` part an adapter declares (core/seam.py), its provider's module
imported at the first call: the commands that arm nothing (``usage``, ``ls``, ``watch``)
do not pay for the settings machinery (the module, ``common.install``, ``json``: ~3.5 ms
of a first ``usage``'s ~75 before its workers start; ADR 0064)."""

from __future__ import annotations

from agentspool.core.seam import InstalledHook, Installer, InstallReport, InstallScope


class HookInstallerOf:
    """The installer part made of the hook functions of ``module``
    (``common.install.HookInstaller.of``) at the first call. ``attribute``: the object in
    the module that names the functions, where it is not the module itself."""

    def __init__(self, module: str, attribute: str = "") -> None:
        self._module, self._attribute = module, attribute
        self._made: Installer | None = None

    def _installer(self) -> Installer:
        if self._made is None:
            from importlib import import_module

            from agentspool.adapters.common.install import HookInstaller

            functions = import_module(self._module)
            self._made = HookInstaller.of(
                getattr(functions, self._attribute) if self._attribute else functions
            )
        return self._made

    def install(self, scope: InstallScope, *, directory: str | None = None) -> InstallReport:
        return self._installer().install(scope, directory=directory)

    def uninstall(self, scope: InstallScope, *, directory: str | None = None) -> InstallReport:
        return self._installer().uninstall(scope, directory=directory)

    def installed_hooks(self, directory: str | None = None) -> list[InstalledHook]:
        return self._installer().installed_hooks(directory)
