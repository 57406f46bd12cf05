"""The built-in failure-mode detectors, one module per mode."""
