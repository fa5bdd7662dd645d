"""Structured Streaming models: availableNow and continuous queries, checkpoints, Real-time Mode, Kafka topics."""
