"""Pure estimation core: memory, fit and speed. No I/O, no printing, no globals."""
