"""What one run carries through its models: session and paths, views naming models' tables, partitions, progress."""
