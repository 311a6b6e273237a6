"""SOL003 VNF fault management: alarms (alarms.py), node-health detection (watcher.py, one per
process over the fleet) and opt-in automatic heal (autoheal.py)."""
