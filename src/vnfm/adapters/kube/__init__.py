"""The Kubernetes API as vnfm's adapters use it (the CNF infrastructure driver, the NodePort
management driver, `vnfm vim kubeconfig`): a client for a Kubernetes VIM, TLS verified against the
CA the VIM carries."""
