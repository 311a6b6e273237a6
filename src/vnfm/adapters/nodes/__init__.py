"""Node access adapters for real machines (SSH). The simulated cloud's twin lives with the simulator."""
