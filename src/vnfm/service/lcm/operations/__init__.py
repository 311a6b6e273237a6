"""The LCM operations, one module each: `async def <operation>(st: Stages, job: Job)` runs the
operation's stages; `rollback` undoes a failed instantiate or scale-out; `changes` records
resourceChanges."""
