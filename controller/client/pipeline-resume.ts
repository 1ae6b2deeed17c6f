/**
 * Answering a blocked pipeline (`orchctl pipeline resume`, the console's Resume box): a change of
 * desired state like a restart — its orchctl.io/resume-requested annotation set to now and its
 * message beside it (compare-and-swap). The pipeline reconciler takes each new value up once.
 */
import {
  HANDOFF_LIMITS,
  type Pipeline,
  RESUME_MESSAGE_ANNOTATION,
  RESUME_REQUESTED_ANNOTATION,
} from '../api/pipeline.js';
import type { Store } from '../store/store.js';
import { type Change, type Outcome, updateWithRetry } from './update.js';

/** Stamps the request (pure: the read pipeline in, the change out). */
export function stampResume(p: Pipeline, at: string, message: string | undefined): Change<Pipeline> {
  if (p.metadata.deletionTimestamp) return { refuse: `pipeline "${p.metadata.name}" is being deleted` };
  const annotations: Record<string, string> = { ...(p.metadata.annotations ?? {}), [RESUME_REQUESTED_ANNOTATION]: at };
  if (message?.trim()) annotations[RESUME_MESSAGE_ANNOTATION] = message.trim();
  else delete annotations[RESUME_MESSAGE_ANNOTATION];
  return { write: { ...p, metadata: { ...p.metadata, annotations } } };
}

/**
 * Requests a resume now (`at`, to the millisecond: a second resume within the same second is still
 * a new request). A message past the handoff bound is refused before anything is written.
 */
export function resumePipeline(
  store: Store,
  key: { namespace: string; name: string },
  message: string | undefined,
  at = new Date().toISOString(),
): Promise<Outcome<Pipeline>> {
  if (message && message.length > HANDOFF_LIMITS.message)
    throw new Error(`the message is ${message.length} characters, over ${HANDOFF_LIMITS.message}`);
  return updateWithRetry<Pipeline>(store, { kind: 'Pipeline', ...key }, (p) => stampResume(p, at, message));
}
