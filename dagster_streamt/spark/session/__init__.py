"""Starting and reaching a Spark engine: settings, jars, Java, the embedded JVM, Spark Connect, the project's server."""
