/**
 * Pane-text classification of an agent CLI (idle / busy / waiting / startup dialog), driven by
 * DATA: the Agent manifest's `spec.detection` (format: manifests/agents/README.md). The data is a
 * list of profiles, each verified on named CLI versions, because every UI release moves the
 * strings; a version no profile lists is refused loudly (DetectionVersionError) rather than
 * misread quietly.
 *
 * How a capture is read (all of it from the profile):
 *  - escape sequences are stripped, trailing ASCII blanks trimmed (never U+00A0: Claude Code draws
 *    its live input line as `❯\u00a0`), `ignore` lines dropped (rotating tips, animated art);
 *  - a `header` at the top of the screen (logo, version, cwd — it animates and can hold any
 *    path) is cut off, and only the last `tailLines` non-empty lines are looked at;
 *  - the live input line (`input.line`, searched in the last `input.within` lines) splits the
 *    screen into regions: `above` (content above the box, minus its `input.border` rules),
 *    `input` (what is typed), `footer` (below the box). Busy markers count only `above` the box,
 *    since the box is drawn (and may hold any text) while the agent works;
 *  - categories are tried in order dialogs → waiting → busy → idle → `otherwise`; `quota` and
 *    `interrupted` are flags next to the state.
 * Regexes are compiled once per profile (detectionFor caches per Agent spec object), so a
 * classification is a few regex tests over a few KB.
 */
export * from './detection/types.js';
export * from './detection/validate.js';
export * from './detection/compile.js';
export * from './detection/classify.js';
