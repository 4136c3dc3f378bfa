"""The dialect kit."""
