"""Infrastructure drivers (VIM types): the simulated cloud and OpenStack."""
