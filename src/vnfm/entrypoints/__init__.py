"""Entry points: the REST API server and the command-line tool."""
