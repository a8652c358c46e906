"""LibCST only: where fixes are built on the editing tree (DESIGN.md); the analysis reads `ast`."""
