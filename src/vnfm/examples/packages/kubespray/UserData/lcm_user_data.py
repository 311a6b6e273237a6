"""Placeholder for "lcm-operation-user-data": vnfm never imports Python from a package."""
