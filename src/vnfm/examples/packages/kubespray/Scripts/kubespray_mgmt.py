"""Stand-in for the reference system's management driver kubespray_mgmt.py: vnfm never imports or runs
Python from a package (the VNFD's implementation name selects a driver shipped with vnfm)."""
