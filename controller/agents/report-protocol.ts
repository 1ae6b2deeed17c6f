/**
 * The progress-report protocol (seed 004's persona + protocol, seed 003's status.json): the
 * paragraph orchctl puts after an Agent's persona, telling the agent how to report. Kept short:
 * it is in every prompt. The schema is api/report.ts's.
 */
export const REPORT_PROTOCOL = `## Progress reports
Keep orchctl informed by writing $ORCHCTL_WORKSPACE/status.json (write a temporary file, then rename it) whenever
your plan or its state changes:
{"status": "executing", "tasks": [{"id": "1", "subject": "Write the parser", "state": "in_progress"}], "notes": ""}
status is executing, complete (all done) or blocked (set "blocker" to what a person must do); each task's state is
pending, in_progress, done or blocked. At most 200 tasks; keep subjects short.`;
