"""judge layer."""
