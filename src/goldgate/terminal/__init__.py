"""The terminal: styled, neutralised console output and the progress line."""
