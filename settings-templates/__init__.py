"""Package data: the settings templates ``setup`` renders. No code lives here."""
