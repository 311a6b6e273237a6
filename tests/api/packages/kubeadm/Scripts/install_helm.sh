#!/bin/bash
# Stand-in for the reference system's install_helm.sh (vnfm's drivers bring their own steps).
exit 0
