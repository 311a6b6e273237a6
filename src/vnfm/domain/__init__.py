"""The domain core: packages, VNF instances, operation occurrences, the LCM state machine.

Nothing in this package imports HTTP, SQL, SSH or cloud SDKs.
"""
