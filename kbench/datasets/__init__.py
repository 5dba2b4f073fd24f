"""Dataset providers (synthetic generators, scikit-learn, OpenML, files)."""
