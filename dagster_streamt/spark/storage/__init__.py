"""Where a project's tables, checkpoints and run state live: paths, object stores, locks, the warehouse."""
