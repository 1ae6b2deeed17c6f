/**
 * Classifying a failed run from its evidence (seed 002 §2.4), deterministically: Transient and
 * Dependency and Logic failures are worth a recovery restart, a TimeBox run (stopped at its time
 * box) is continued from where it stopped, Auth and Unknown need a person.
 *
 * Evidence, all but the status fields written by the agent or its tools (untrusted: it only picks
 * a class here, and is fenced wherever it reaches an LLM):
 *  - the last TAIL_LINES lines of status.lastOutput (the pane tail; observers/output.ts already
 *    strips escape sequences, stripped again for tails written before it did), newest line first —
 *    so a retry that scrolled away early on does not speak for how the run ended;
 *  - status.message (the controller's: exit code, command not found, time box, tmux gone);
 *  - the error-like fields of result.json (error, message, reason, failure(s), detail; not the
 *    summary, whose prose about the work — "handle 401s" — would read as an error);
 *  - status.agent.quota.message (the agent reported a rate or usage limit);
 *  - the judge's failures for this run, when the caller has the Evaluation;
 *  - facts: status.reason, phase, exit code, the detector's last test/build/lint signal.
 *
 * The classes are tried in this order, and the first with any match decides; within a class the
 * newest output line is the evidence. Text rules match one line (its first LINE_MAX characters),
 * case-insensitively unless marked (cs):
 *
 * | class      | rule              | matches                                                                      |
 * |------------|-------------------|------------------------------------------------------------------------------|
 * | Auth       | billing           | credit balance too low, insufficient_quota, "plan and billing details", 402  |
 * |            | http-401-403      | 401/403 after HTTP, status, error, code, returned; 401 Unauthorized; E401    |
 * |            | unauthorized      | unauthorized, authentication_error/failed/required, bad credentials, access  |
 * |            |                   | denied                                                                       |
 * |            | api-key           | invalid/incorrect/expired/missing/revoked/no + API key, auth token,          |
 * |            |                   | credentials (either order); FOO_API_KEY not set                              |
 * |            | login             | not logged in, " /login", please log in, `… auth login`                      |
 * |            | ssh-key           | Permission denied (publickey)                                                |
 * |            | git-credentials   | could not read Username/Password for, terminal prompts disabled              |
 * |            | certificate       | certificate has expired / verify failed, self-signed, unable to get local    |
 * |            |                   | issuer certificate, SSL certificate problem                                  |
 * | Dependency | module-not-found  | Cannot find module/package 'name' (a package, not a ./path), can't resolve  |
 * |            |                   | 'name'                                                                       |
 * |            | command-not-found | command not found, `sh: 1: tsc: not found`, spawn X ENOENT                   |
 * |            | python-module     | No module named                                                              |
 * |            | npm-resolve       | ERESOLVE, could not resolve dependency, missing script, E404, ETARGET,       |
 * |            |                   | no matching version                                                          |
 * |            | package-manager   | pip's "could not find a version", no matching distribution, go's "no        |
 * |            |                   | required module provides package", cargo's "no matching package named"       |
 * |            | (fact) exit-127   | status.reason CommandNotFound, or exit code 127 (the shell's not found)      |
 * | Transient  | network-error     | ETIMEDOUT ECONNRESET ECONNREFUSED ECONNABORTED EAI_AGAIN ENOTFOUND           |
 * |            |                   | ENETUNREACH EHOSTUNREACH, socket hang up, fetch failed, connection error/    |
 * |            |                   | reset/refused/closed, could not resolve host, failed to connect, remote end  |
 * |            |                   | hung up, network error, temporary failure in name resolution                 |
 * |            | timeout           | network/request/connection/read/socket/gateway/operation timeout or timed    |
 * |            |                   | out (not "Test timed out": that is the code's)                               |
 * |            | rate-limit        | 429 (as above), too many requests, rate limit, usage limit, quota exceeded,  |
 * |            |                   | throttling                                                                   |
 * |            | server-error      | 5xx (as above), 502/503/504 by name, internal server error, overloaded,      |
 * |            |                   | service unavailable                                                          |
 * |            | (fact) tmux-lost  | status.reason TmuxSessionLost: killed outside orchctl or tmux died           |
 * |            | (fact) quota      | status.agent.quota is set                                                    |
 * | Logic      | tests-failed      | tests failed/failing, "Tests 1 failed", "3 failing", "2 failed,", FAILED     |
 * |            | fail-marker (cs)  | a line starting FAIL or --- FAIL:                                            |
 * |            | assertion         | AssertionError, assertion … failed                                           |
 * |            | compile-error (cs)| error TS2322, error[E0308]                                                   |
 * |            | runtime-error (cs)| SyntaxError TypeError ReferenceError RangeError, Python's Name/Attribute/    |
 * |            |                   | Indentation/Key/Index/Value/ImportError                                      |
 * |            | build-failed      | build/compilation failed, failed to compile, make: ***, ELIFECYCLE,          |
 * |            |                   | lifecycle script … failed, "Found 3 errors", eslint's "✖ 3 problems (3 err"  |
 * |            | missing-file      | Cannot find module './relative' or '/absolute' (the code's import is wrong)  |
 * |            | (fact) test-signal| the detector's newest test/build/lint signal of the run is a failure         |
 * |            | (fact) judge-retry| the judge recommended retry and named a test/build/type/lint failure         |
 * | TimeBox    | (fact) time-box   | phase TimedOut: the run was stopped at its time box                          |
 * | Unknown    | none              | nothing above; the evidence is the last output line or the status message   |
 *
 * Why this order: Auth first, because a run that hit an auth wall is never worth retrying
 * (OpenAI's insufficient_quota is a 429 but needs a person, so billing sits here too). Dependency
 * before Transient and Logic: a missing package also makes tests and the build fail, and the fix
 * ("install it first") differs. Transient before Logic: a network error also breaks tests that
 * need the network, and "TypeError: fetch failed" is the network's.
 * A run stopped at its time box is TimeBox, right after Auth: it was working (often committing),
 * so a failing test or a network hiccup in its tail is work in progress, not why it ended; the next
 * run continues from where it stopped (recovery counts it apart). Only an auth wall outranks it.
 */
import type { ErrorClass } from '../../api/autopilot.js';
import type { EvaluationStatus } from '../../api/evaluation.js';
import type { AgentSessionStatus } from '../../api/session.js';
import { outputTail } from '../../observers/output.js';

/** Output lines looked at: the end of the run, not an old hiccup early on. */
export const TAIL_LINES = 40;
/** Evidence is clipped to this (it goes into Decisions and prompts). */
export const EVIDENCE_MAX = 300;
/** A line is matched on its first LINE_MAX characters (bounds the regex work on a pathological line). */
const LINE_MAX = 1000;
/** result.json lines looked at. */
const RESULT_LINES = 20;

export type EvidenceSource = 'output' | 'message' | 'result' | 'quota' | 'judge' | 'status' | 'detector';

export interface Classification {
  class: ErrorClass;
  /** The rule that decided (the table above). */
  rule: string;
  /** The line it was read from, trimmed and clipped to EVIDENCE_MAX; empty when there is none. */
  evidence: string;
  source?: EvidenceSource;
}

/** The judge's verdict on the run, from its Evaluation (status.lastEvaluation has no failures). */
export type JudgeFailures = Pick<EvaluationStatus, 'recommendation' | 'failures'>;

type TextRule = { class: ErrorClass; rule: string; re: RegExp };

/** After one of these words an HTTP status is an HTTP status (not "line 401" of a stack trace). */
const STATUS = String.raw`\b(?:HTTP(?:/[\d.]+)?|status(?: code)?|error|API Error|code|returned)\W{0,3}`;

/** A case-insensitive (unless flags say otherwise) regex matching any of the alternatives. */
const anyOf = (alts: readonly string[], flags = 'i') => new RegExp(alts.join('|'), flags);
const rule = (cls: ErrorClass, name: string, alts: readonly string[], flags?: string): TextRule => ({
  class: cls,
  rule: name,
  re: anyOf(alts, flags),
});

/** The text rules of the table, in order. Exported for the regex-safety test. */
export const TEXT_RULES: readonly TextRule[] = [
  // ---- Auth
  rule('Auth', 'billing', [
    String.raw`credit balance is too low`,
    String.raw`insufficient[_ ]quota`,
    String.raw`plan and billing details`,
    String.raw`\b402 Payment Required\b`,
  ]),
  rule('Auth', 'http-401-403', [
    String.raw`${STATUS}40[13]\b`,
    String.raw`\b40[13] (?:Unauthori[sz]ed|Forbidden)\b`,
    String.raw`\bE40[13]\b`,
  ]),
  rule('Auth', 'unauthorized', [
    String.raw`\bunauthori[sz]ed\b`,
    String.raw`\bauthentication(?:[_ ]error| failed| required)\b`,
    String.raw`\bbad credentials\b`,
    String.raw`\baccess denied\b`,
  ]),
  rule('Auth', 'api-key', [
    String.raw`\b(?:invalid|incorrect|expired|missing|revoked|no|bad|unable to locate)\b[^\n]{0,20}` +
      String.raw`\b(?:x-)?(?:api[ _-]?key|(?:access|auth|oauth|bearer|refresh|session)[ _-]?token|credentials?)` +
      String.raw`\b(?!\.\w)`,
    String.raw`\b(?:api[ _-]?key|(?:access|auth|oauth|bearer|refresh)[ _-]?token|credentials)\b(?!\.\w)` +
      String.raw`[^\n]{0,30}\b(?:invalid|expired|revoked|not (?:set|found|provided|valid))\b`,
    String.raw`(?:API_KEY|_TOKEN)\b[^\n]{0,30}\b(?:not set|missing|is empty|required)\b`,
  ]),
  rule('Auth', 'login', [
    String.raw`\bnot logged in\b`,
    String.raw`(?:^|\s)/login\b`,
    String.raw`\bplease (?:run )?(?:log|sign) ?in\b`,
    String.raw`\bauth login\b`,
  ]),
  rule('Auth', 'ssh-key', [String.raw`permission denied \(publickey`]),
  rule('Auth', 'git-credentials', [String.raw`could not read (?:username|password) for`, 'terminal prompts disabled']),
  rule('Auth', 'certificate', [
    String.raw`\bcertificate (?:has expired|verify failed)`,
    String.raw`\bunable to get local issuer certificate`,
    String.raw`\bself[- ]signed certificate`,
    String.raw`\bSSL certificate problem\b`,
    String.raw`\bCERT_HAS_EXPIRED\b`,
  ]),
  // ---- Dependency
  rule('Dependency', 'module-not-found', [
    String.raw`\bcannot find (?:module|package) ['"${'`'}](?![./])`,
    String.raw`\bcan't resolve ['"${'`'}](?![./])`,
  ]),
  rule('Dependency', 'command-not-found', [
    String.raw`\bcommand not found\b`,
    String.raw`\bsh: (?:\d+: )?[^\s:]+: not found\b`,
    String.raw`\bspawn \S+ ENOENT\b`,
  ]),
  rule('Dependency', 'python-module', [String.raw`\bno module named\b`]),
  rule('Dependency', 'npm-resolve', [
    String.raw`\bERESOLVE\b`,
    String.raw`\bcould not resolve dependenc`,
    String.raw`\bunable to resolve dependency tree\b`,
    String.raw`\bnpm (?:ERR!|error) missing script\b`,
    String.raw`\bnpm (?:ERR!|error) (?:code E404|404 Not Found)\b`,
    String.raw`\bETARGET\b`,
    String.raw`\bno matching version found for\b`,
  ]),
  rule('Dependency', 'package-manager', [
    'could not find a version that satisfies the requirement',
    'no matching distribution found',
    'no required module provides package',
    'no matching package named',
  ]),
  // ---- Transient
  rule('Transient', 'network-error', [
    String.raw`\b(?:ETIMEDOUT|ECONNRESET|ECONNREFUSED|ECONNABORTED|EAI_AGAIN|ENOTFOUND|ENETUNREACH|EHOSTUNREACH)\b`,
    String.raw`\bsocket hang up\b`,
    String.raw`\bfetch failed\b`,
    String.raw`\bconnection (?:error|reset|refused|closed)\b`,
    String.raw`\bcould not resolve host\b`,
    String.raw`\bfailed to connect to\b`,
    String.raw`\bremote end hung up\b`,
    String.raw`\bnetwork (?:error|is unreachable)\b`,
    String.raw`\btemporary failure in name resolution\b`,
  ]),
  rule('Transient', 'timeout', [
    String.raw`\b(?:network|request|connection|connect|read|socket|gateway|handshake|operation) ` +
      String.raw`(?:timeout|timed out)\b`,
  ]),
  rule('Transient', 'rate-limit', [
    String.raw`${STATUS}429\b`,
    String.raw`\btoo many requests\b`,
    String.raw`\brate[ _-]?limit`,
    String.raw`\busage limit\b`,
    String.raw`\bquota exceeded\b`,
    String.raw`\bthrottl`,
  ]),
  rule('Transient', 'server-error', [
    String.raw`${STATUS}5\d\d\b`,
    String.raw`\b50[234] (?:Bad Gateway|Service Unavailable|Gateway Time-?out)\b`,
    String.raw`\binternal server error\b`,
    String.raw`\boverloaded(?:_error)?\b`,
    String.raw`\bservice (?:is )?(?:temporarily )?unavailable\b`,
  ]),
  // ---- Logic
  rule('Logic', 'tests-failed', [
    String.raw`\btests? (?:failed|failing)\b`,
    String.raw`\btests?(?: files)?:?\s+\d+ failed\b`,
    String.raw`\b\d+ failing\b`,
    String.raw`\b\d+ failed(?:, \d+ passed| in \d)`,
    String.raw`\btest result: FAILED\b`,
  ]),
  rule('Logic', 'fail-marker', [String.raw`^\s*(?:FAIL|--- FAIL:)\s`], ''),
  rule('Logic', 'assertion', [String.raw`\bAssertionError\b`, String.raw`\bassertion\b[^\n]{0,80}\bfailed\b`]),
  rule('Logic', 'compile-error', [String.raw`\berror TS\d{4}\b`, String.raw`\berror\[E\d{4}\]`], ''),
  rule(
    'Logic',
    'runtime-error',
    [String.raw`\b(?:Syntax|Type|Reference|Range|Name|Attribute|Indentation|Key|Index|Value|Import)Error\b`],
    '',
  ),
  rule('Logic', 'build-failed', [
    String.raw`\bbuild failed\b`,
    String.raw`\bcompilation failed\b`,
    String.raw`\bfailed to compile\b`,
    String.raw`\bcould not compile\b`,
    String.raw`\bmake(?:\[\d+\])?: \*\*\* `,
    String.raw`\bELIFECYCLE\b`,
    String.raw`\blifecycle script\b[^\n]{0,60}\bfailed\b`,
    String.raw`\bfound [1-9]\d* errors?\b`,
    String.raw`✖ \d+ problems? \(\d+ errors?`,
  ]),
  rule('Logic', 'missing-file', [String.raw`\bcannot find module ['"${'`'}][./]`]),
];

type Facts = { st: AgentSessionStatus; judge?: JudgeFailures };
type FactRule = { class: ErrorClass; rule: string; source: EvidenceSource; pick: (f: Facts) => string | undefined };

const OUTCOME_SIGNALS = new Set([
  'TestFailure',
  'TestSuccess',
  'BuildFailure',
  'BuildSuccess',
  'LintError',
  'LintSuccess',
]);
const FAILURE_SIGNALS = new Set(['TestFailure', 'BuildFailure', 'LintError']);
const JUDGED_LOGIC = /\b(?:tests?|build|compil|type ?error|lint|assert)/i;

const statusLine = (st: AgentSessionStatus) => st.message || st.reason || `phase ${st.phase ?? 'unknown'}`;

/** The fact rules, tried after a class's text rules found nothing. */
const FACT_RULES: readonly FactRule[] = [
  {
    class: 'Dependency',
    rule: 'exit-127',
    source: 'status',
    pick: ({ st }) => (st.reason === 'CommandNotFound' || st.exitCode === 127 ? statusLine(st) : undefined),
  },
  {
    class: 'Transient',
    rule: 'tmux-lost',
    source: 'status',
    pick: ({ st }) => (st.reason === 'TmuxSessionLost' ? statusLine(st) : undefined),
  },
  { class: 'Transient', rule: 'quota', source: 'quota', pick: ({ st }) => st.agent?.quota?.message },
  {
    class: 'Logic',
    rule: 'test-signal',
    source: 'detector',
    pick: ({ st }) => {
      const d = st.detector;
      if (!d || (st.run !== undefined && d.run !== st.run)) return undefined;
      const last = d.lastSignals.filter((s) => OUTCOME_SIGNALS.has(s.signal)).pop();
      return last && FAILURE_SIGNALS.has(last.signal)
        ? `${last.signal}${last.detail ? `: ${last.detail}` : ''}`
        : undefined;
    },
  },
  {
    class: 'Logic',
    rule: 'judge-retry',
    source: 'judge',
    pick: ({ judge }) =>
      judge?.recommendation === 'retry' ? judge.failures?.find((f) => JUDGED_LOGIC.test(f)) : undefined,
  },
  {
    class: 'TimeBox',
    rule: 'time-box',
    source: 'status',
    pick: ({ st }) => (st.phase === 'TimedOut' ? statusLine(st) : undefined),
  },
];

const ORDER: readonly ErrorClass[] = ['Auth', 'TimeBox', 'Dependency', 'Transient', 'Logic'];

const RESULT_KEYS = /^(?:errors?|message|reason|failures?|detail)$/i;

/** The error-like strings of result.json (agent-written, any shape): top level, or one level into them. */
function resultLines(result: AgentSessionStatus['result']): string[] {
  const out: string[] = [];
  const visit = (v: unknown, depth: number): void => {
    if (out.length >= RESULT_LINES) return;
    if (typeof v === 'string') out.push(...v.split('\n').slice(-RESULT_LINES));
    else if (depth > 2 || !v || typeof v !== 'object') return;
    else if (Array.isArray(v)) for (const x of v.slice(0, RESULT_LINES)) visit(x, depth + 1);
    else for (const [k, x] of Object.entries(v)) if (RESULT_KEYS.test(k)) visit(x, depth + 1);
  };
  if (result && typeof result === 'object') visit(result, 0);
  return out.slice(0, RESULT_LINES);
}

type Line = { text: string; source: EvidenceSource };

function evidenceLines(st: AgentSessionStatus, judge?: JudgeFailures): Line[] {
  const lines: Line[] = [];
  const add = (texts: readonly (string | undefined)[], source: EvidenceSource) => {
    for (const t of texts) if (t?.trim()) lines.push({ text: t.slice(0, LINE_MAX), source });
  };
  add(
    outputTail(st.lastOutput ?? '', TAIL_LINES, Number.MAX_SAFE_INTEGER)
      .split('\n')
      .reverse(),
    'output',
  );
  add([st.message], 'message');
  add(resultLines(st.result), 'result');
  add([st.agent?.quota?.message], 'quota');
  add(judge?.failures ?? [], 'judge');
  return lines;
}

function clipEvidence(s: string): string {
  const t = s.trim().replace(/\s+/g, ' ');
  return t.length > EVIDENCE_MAX ? `${t.slice(0, EVIDENCE_MAX - 1)}…` : t;
}

/**
 * The class of a failed run, the rule that decided it and the evidence line. Pure and total: any
 * status gives an answer (Unknown when nothing matches). `judge` is the run's Evaluation verdict,
 * when the caller has it.
 */
export function classifyFailure(st: AgentSessionStatus, judge?: JudgeFailures): Classification {
  const lines = evidenceLines(st, judge);
  for (const cls of ORDER) {
    for (const line of lines)
      for (const r of TEXT_RULES)
        if (r.class === cls && r.re.test(line.text))
          return { class: cls, rule: r.rule, evidence: clipEvidence(line.text), source: line.source };
    for (const r of FACT_RULES) {
      if (r.class !== cls) continue;
      const ev = r.pick({ st, judge });
      if (ev) return { class: cls, rule: r.rule, evidence: clipEvidence(ev), source: r.source };
    }
  }
  const last = lines.find((l) => l.source === 'output') ?? lines.find((l) => l.source === 'message');
  return {
    class: 'Unknown',
    rule: 'none',
    evidence: last ? clipEvidence(last.text) : '',
    ...(last ? { source: last.source } : {}),
  };
}
