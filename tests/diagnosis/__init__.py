"""Tests of the regression diagnosis: its detectors, their accuracy on a labelled set."""
