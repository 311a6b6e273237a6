"""Placeholder LCM-operation user data of the example package.

In the reference system this module would compute Heat parameters. vnfm never imports or
executes Python from a VNF package: it builds the infrastructure parameters itself.
"""
