"""One module (or package) per service. Each operation is a transaction under the locks of rule 4."""
