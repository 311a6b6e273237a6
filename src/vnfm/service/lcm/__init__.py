"""The LCM engine: runs operation occurrences durably, one at a time per VNF instance.

Every operation is a fixed sequence of stages (`<op>_start` hook, infrastructure steps,
`<op>_end` hook). Each stage is checkpointed in the database before it starts and after it
ends (that one written with the next write, before anything else happens: `stages`), so:
- a failure leaves FAILED_TEMP with a ProblemDetails; *retry* resumes at the failed stage,
  *rollback* undoes instantiate and scale-out, *fail* ends it (FAILED);
- a process that dies mid-operation leaves an occurrence whose heartbeat goes stale; any engine
  (this process after a restart, or another process on the same database) turns it into
  FAILED_TEMP, and retry completes it.
Decisions taken once (which VNFCs a scale-in removes, which VNFCs existed before a scale-out) are
stored in the occurrence's plan, so retries and rollbacks act on exactly the same VNFCs.

Modules:
- `scheduler`: `LcmEngine`, the public face (start/stop, submit, recover orphans, heartbeats,
  cancel) and the table of running tasks;
- `job`: `Job` (one occurrence being run) and `JobStore`, the one path of every write;
- `stages`: durable stages, cancel points, management-driver hooks (`LcmContext`);
- `operations/`: one module per operation (and rollback), `changes` for resourceChanges.
"""
