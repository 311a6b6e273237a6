"""VNF packages: CSAR reading (hostile-input safe) and the SOL001 VNFD parser."""
