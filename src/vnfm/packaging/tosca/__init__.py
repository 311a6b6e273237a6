"""SOL001 VNFD parsing: from the files of a CSAR to vnfm.domain.vnfd.Vnfd.

Two layouts are read:

(a) Tacker style: the entry file holds the VNF node template (descriptor_id, provider, ...) and
    imports a types file (the VNF node type, often with valid_values/default for each property)
    and one `*_df_<flavour>.yaml` per deployment flavour, each with
    `topology_template.substitution_mappings` and the flavour's node templates and policies;
(b) a single VNFD file with one flavour.

Node and policy types are matched through their `derived_from` chains. The standard ETSI type
files (etsi_nfv_sol001_*types.yaml) are never parsed: the standard types are known by name, so
those imports may be absent from the package.

YAML is read with the safe loader, bounded in size, nesting depth, aliases and expanded nodes.
Package Python (Scripts/, UserData/) is never imported or executed.
"""

from vnfm.packaging.tosca.summary import package_summary
from vnfm.packaging.tosca.vnfd import parse_vnfd
from vnfm.packaging.tosca.yaml_safe import YamlLimits, load_yaml_safely

__all__ = ["YamlLimits", "load_yaml_safely", "package_summary", "parse_vnfd"]
