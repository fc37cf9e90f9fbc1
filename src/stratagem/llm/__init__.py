"""Model clients behind one async interface, and the call pipeline every call passes through."""
