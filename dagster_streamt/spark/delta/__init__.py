"""Delta Lake mechanics: versions and their refresh records, merges, table state, history, maintenance."""
