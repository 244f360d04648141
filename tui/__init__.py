"""Textual control room over the headless core; imports core, never the reverse."""
