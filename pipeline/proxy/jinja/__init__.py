"""The status page's template (package data)."""
