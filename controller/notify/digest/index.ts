/**
 * The digest (issue 14 item 5, seed 002 §2.6): collect what happened since the last one (pure),
 * render it as a template, or compose it with an LLM's narrative on top (never throws), and the
 * schedule and per-channel limits. The notifier records and sends it through the outbox;
 * `orchctl digest` and the console's digest page preview it through preview.ts.
 */
export {
  AUTOPILOT_REASON,
  collectDigest,
  type DigestBudget,
  type DigestChannel,
  type DigestCost,
  type DigestData,
  type DigestDecision,
  type DigestDeferred,
  type DigestEvaluation,
  type DigestEvent,
  type DigestInput,
  type DigestOpen,
  type DigestProject,
  type DigestWaiting,
  ESCALATION_REASON,
  RUN_FAILED_REASONS,
  RUN_STARTED_REASONS,
  RUN_SUCCEEDED_REASONS,
} from './collect.js';
export {
  buildDigestPrompt,
  type ComposedDigest,
  type ComposeOptions,
  composeDigest,
  DIGEST_PURPOSE,
  DIGEST_SCHEMA_NAME,
  narrativeLength,
  narrativeSchema,
} from './compose.js';
export {
  DIGEST_MAX_CHARS,
  type DigestSettings,
  digestWindowStart,
  FIRST_DIGEST_WINDOW_MS,
  digestBackend,
  digestChannelLimit,
  digestDueAt,
  type DigestTarget,
  digestTargets,
  digestMaxChars,
  digestSettings,
  nextDigestAt,
} from './settings.js';
export {
  type DigestText,
  digestTitle,
  localTime,
  needsYouLines,
  renderDigest,
  renderDigestTemplate,
} from './template.js';
