"""The GitLab face: one goldgate note per merge request and configuration, and the report
artifacts GitLab shows (JUnit, OpenMetrics)."""
