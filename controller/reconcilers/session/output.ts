/** Reading pane output is an observer's job (observers/output.ts; `orchctl logs` uses it too); re-exported here. */
export { outputTail } from '../../observers/output.js';
