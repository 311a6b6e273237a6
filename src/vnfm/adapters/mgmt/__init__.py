"""Management-driver plug-ins (bound to Vnflcm hooks by the implementation names packages declare)."""
