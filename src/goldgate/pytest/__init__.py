"""The pytest face: the plugin, its session, and the guard."""
