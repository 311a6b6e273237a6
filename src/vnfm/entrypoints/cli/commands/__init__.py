"""One module per command group (`vnfm package ...` in package.py, ...) and per top-level command
(`vnfm server`, `vnfm demo`); main.py puts them under the root group."""
