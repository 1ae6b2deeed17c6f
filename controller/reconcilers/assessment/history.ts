/** The checkpoint history file lives in store/checkpoints.ts (the CLI reads it too); re-exported here. */
export type { CheckpointRecord } from '../../api/assessment.js';
export { appendCheckpoint, checkpointsPath, readCheckpoints } from '../../store/checkpoints.js';
