/** The resume notes are pure rules on api types, shared with the session reconciler: they live in api/resume.ts. */
export { formatAssessment, latestOwnEvaluation, MAX_RESUME_CHARS, resumeNotes } from '../../api/resume.js';
