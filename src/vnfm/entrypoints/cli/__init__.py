"""The `vnfm` command-line tool: an HTTP client of the SOL003/SOL005 wire API, plus `vnfm server`
and `vnfm demo` (which start the API server in this process)."""
