"""REST API (SOL003 VNF LCM, SOL005 VNF package management) built on FastAPI."""
