"""The stages that runner orchestrates: plan, score, compare, record, verify (check)."""
