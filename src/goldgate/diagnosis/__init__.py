"""The regression diagnosis: failure-mode detectors run on each example's current and blessed
outputs, their transitions, clusters of what regressed examples newly share, and the headline
that says why quality fell."""
