"""What every Kubernetes-cluster management driver shares (kubeadm, Kubespray): the parameters of
`k8s_cluster_installation_param`, the topology (which VNFC is which node, how it is reached), the
control-plane endpoint and its VIP, etcd quorum rules, VIM registration, the storage server with NFS
PersistentVolumes, and private-registry connections."""
