"""symbolic layer: the SymPy vocabulary and the paper-formula parser, below compiler and analysis."""
