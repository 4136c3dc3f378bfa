"""Engine plumbing."""
