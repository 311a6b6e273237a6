"""The service layer: use cases (packages, instances, LCM engine, subscriptions) over the ports."""
