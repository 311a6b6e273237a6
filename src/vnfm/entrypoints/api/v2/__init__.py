"""SOL003 v3.3.1 VNF LCM (API version 2.0.0) at /vnflcm/v2, on the same services as /vnflcm/v1."""
