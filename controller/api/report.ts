/**
 * The agent's progress report, $ORCHCTL_WORKSPACE/status.json (seed 003's status file,
 * generalised): its JSON Schema, the one source for the validator and for
 * schemas/agent-report.schema.json (written by `orchctl schema`), and its type.
 */

export const REPORT_STATES = ['executing', 'complete', 'blocked'] as const;
export const TASK_STATES = ['pending', 'in_progress', 'done', 'blocked'] as const;
export type ReportState = (typeof REPORT_STATES)[number];
export type TaskState = (typeof TASK_STATES)[number];

/** Bounds: the file is agent-written, so everything in it is limited before it reaches status. */
export const REPORT_LIMITS = { tasks: 200, id: 100, subject: 500, blocker: 2000, notes: 4000 } as const;

export interface AgentReport {
  status: ReportState;
  tasks?: { id: string; subject: string; state: TaskState }[];
  blocker?: string;
  notes?: string;
}

export const REPORT_SCHEMA_FILE = 'agent-report.schema.json';

export const REPORT_SCHEMA = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  $id: REPORT_SCHEMA_FILE,
  title: 'orchctl agent progress report ($ORCHCTL_WORKSPACE/status.json)',
  description:
    'What an agent says about its progress; orchctl mirrors it into the AgentSession status.report. ' +
    'Write it whole (write a temporary file, then rename it over status.json). Other fields are ignored.',
  type: 'object',
  required: ['status'],
  properties: {
    status: {
      enum: [...REPORT_STATES],
      description: 'executing while working; complete when done; blocked when a person must act (say why in blocker).',
    },
    tasks: {
      type: 'array',
      maxItems: REPORT_LIMITS.tasks,
      description: 'The plan, in order.',
      items: {
        type: 'object',
        required: ['id', 'subject', 'state'],
        properties: {
          id: { type: 'string', minLength: 1, maxLength: REPORT_LIMITS.id },
          subject: { type: 'string', maxLength: REPORT_LIMITS.subject },
          state: { enum: [...TASK_STATES] },
        },
      },
    },
    blocker: { type: 'string', maxLength: REPORT_LIMITS.blocker, description: 'What blocks the work.' },
    notes: { type: 'string', maxLength: REPORT_LIMITS.notes, description: 'Free text for a person.' },
  },
} as const;
