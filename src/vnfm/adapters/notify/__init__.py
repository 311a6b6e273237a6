"""Notification delivery to subscribers (SOL003 / SOL005 subscriptions) over HTTP."""
