"""Edit-distance metrics: TER and its shift search."""
