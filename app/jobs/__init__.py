"""Jobs: the request an engineer submits and its lifecycle."""
