"""compiler layer."""
