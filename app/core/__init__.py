"""The foundation."""
