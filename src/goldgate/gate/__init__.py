"""Compare: statistics, gate rules, golden-set change, drift, calibration."""
