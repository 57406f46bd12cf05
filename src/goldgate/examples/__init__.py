"""The bundled example: small deterministic systems behind ``goldgate.yaml`` and ``goldens/``."""
