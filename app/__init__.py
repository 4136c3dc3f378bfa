"""clipbridge: translate the Clip/Clamp operator between ten ML dialects, and report where the meaning drifts."""

__version__ = "0.1.0"
