"""Building the cluster (instantiate, heal entire): the inventory on the Ansible server, cluster.yml,
the external load balancer, the Kubernetes VIM reached through it."""

from __future__ import annotations

from vnfm.adapters.mgmt.cluster import vim
from vnfm.adapters.mgmt.cluster.topology import pin
from vnfm.adapters.mgmt.kubespray import lb
from vnfm.adapters.mgmt.kubespray.site import Site


async def install(s: Site) -> None:
    c = s.c
    lb_node = s.lb_node
    # contact every host first: host keys pinned (or checked) before anything is changed anywhere
    await pin(c, [*c.nodes, lb_node])
    await c.ex.verify_host_keys([s.ansible])
    c.ctx.progress(f"kubespray: {len(c.masters)} master(s), {len(c.workers)} worker(s); external LB "
                   f"{lb_node.ssh}; Ansible server {s.ansible} ({s.kp.ansible.kubespray_root_path})")
    # refuses an inventory directory that holds another cluster's inventory before writing anything
    await s.write_inventory(c.nodes)
    async with s.authorized(c.nodes):
        await s.playbook("cluster.yml", hosts=[n.name for n in c.nodes])
    await lb.configure(s)
    await vim.register(c, c.admin(), s.api_url, extra=lb.vim_extra(s))
