"""Op families, one module each; every forward function sits beside its derivative node."""
