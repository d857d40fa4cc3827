"""One module per MLIR dialect; one declared class per op."""
