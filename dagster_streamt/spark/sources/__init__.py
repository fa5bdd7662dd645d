"""Reading a model's inputs: files, Kafka and JDBC sources, their schemas and quarantine, bound into the model's SQL."""
