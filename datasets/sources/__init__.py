"""Source adapters: one module per input format, each turning recordings into canonical cases."""
