#!/bin/bash
# Stand-in for the reference system's install_external_lb.sh (vnfm's drivers bring their own steps).
exit 0
