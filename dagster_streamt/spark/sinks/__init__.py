"""Publishing a model outside the warehouse: Delta, file exports, JDBC transactions."""
