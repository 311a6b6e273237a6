"""The `vnfm` command-line tool: an HTTP client of the SOL003/SOL005 wire API, plus `vnfm server`
and `vnfm demo` (which start the API server in this process).

    main.py        the root group (global options, errors as one line) and the console entry point
    commands/      one module per command group: package, vnf, op, subscription, vim, sim, server, demo
    lcm_task.py    the "LCM task with --wait" shape: request, report or follow the occurrence
    context.py     CliContext (endpoint, token, --json, --show-secrets, the client), shared options
    render.py      columns per resource, the composite views (VNF instance, occurrence, cluster)
    output.py      tables, field lists, JSON, secret masking
    files.py       JSON request files, packages to upload
    client.py      VnfmClient: the HTTP calls, errors as ApiError / ServerUnreachable
    wait.py        polling an occurrence until it ends
    demo/          the demo scenarios (basic, ha, openstack) on a shared step runner
"""
