/**
 * A planner on an LLM backend (command, OpenAI-compatible, Anthropic), on the judge's fail-safe
 * path: one structured call (llm/structured.ts: the answer validated against PLAN_SCHEMA, one
 * repair, bounded retries of transient failures), a prompt that fences every free text as data
 * (prompt.ts), and the whole think bounded by the configured timeout, retries included, even if a
 * backend ignores its signal. Anything that goes wrong is an LlmError with a clear message, never a
 * made-up plan: the caller records it as the think's error and acts on nothing.
 *
 * Proposals come only from the model's JSON answer, one per decision, as given: a project this
 * autopilot does not select is passed on, and the reconciler rejects it (UnknownTarget) where a
 * person can see it. The API key is read by the backend alone, at request time.
 */
import type { PlannerSpec } from '../../../api/autopilot.js';
import { redact } from '../../../api/redact.js';
import { LlmError, type LlmBackend } from '../../../llm/backend.js';
import { type ResolvedJudgeConfig, resolveJudgeConfig } from '../../../llm/config.js';
import { type BackendFactoryOptions, createBackend } from '../../../llm/index.js';
import { completeStructured, type StructuredOptions } from '../../../llm/structured.js';
import type { PlannerInput, PlanResult, Planner, Proposal } from '../types.js';
import { buildPlannerPrompt, PLAN_PURPOSE, PLAN_SCHEMA, PLAN_SCHEMA_NAME } from './prompt.js';

/** Room for up to 20 decisions with their prompts. */
const MAX_TOKENS = 4096;

export interface PlannerOptions extends BackendFactoryOptions {
  /** Backend for the resolved configuration (tests inject one; default createBackend). */
  backendFor?: (c: ResolvedJudgeConfig) => LlmBackend;
  /** First backoff between retries (default 500 ms, as the judge). */
  backoffMs?: number;
  /** Called after every request, for metrics. */
  onRequest?: StructuredOptions['onRequest'];
  /** For tests: the fence nonce. */
  nonce?: () => string;
}

/** The answer, as PLAN_SCHEMA describes it. */
interface PlanAnswer {
  decisions: {
    action: Proposal['action'];
    project: string;
    session: string | null;
    reason: string;
    priority: number;
    prompt: string | null;
    message: string | null;
  }[];
  summary: string;
  nextThinkIn: string | null;
}

export class LlmPlanner implements Planner {
  readonly name: string;
  readonly model?: string;
  readonly config: ResolvedJudgeConfig;
  private readonly backend?: LlmBackend;
  /** A configuration that cannot work (no model, no command) fails each think, not the constructor. */
  private readonly configError?: LlmError;

  constructor(
    spec: PlannerSpec | undefined,
    private readonly opts: PlannerOptions = {},
  ) {
    this.config = resolveJudgeConfig(spec);
    this.name = this.config.backend;
    this.model = this.config.model;
    try {
      const problem = configProblem(this.config);
      if (problem) throw new LlmError('config', problem);
      this.backend = (opts.backendFor ?? ((c) => createBackend(c, opts)))(this.config);
    } catch (e) {
      this.configError = e instanceof LlmError ? e : new LlmError('config', (e as Error)?.message ?? String(e));
    }
  }

  private get label(): string {
    return `the ${this.name} planner${this.model ? ` (model ${this.model})` : ''}`;
  }

  private error(e: unknown): LlmError {
    const err = e instanceof LlmError ? e : new LlmError('network', (e as Error)?.message ?? String(e));
    // The planner's own wording carries the label already; a backend's message gets it in front.
    const message = err.message.startsWith(this.label) ? err.message : `${this.label}: ${err.message}`;
    return new LlmError(err.kind, redact(message), err.retryAfterMs, err.raw);
  }

  async plan(input: PlannerInput, signal?: AbortSignal): Promise<PlanResult> {
    const backend = this.backend;
    if (!backend) throw this.error(this.configError ?? new LlmError('config', 'no backend'));
    let p: ReturnType<typeof buildPlannerPrompt>;
    try {
      p = buildPlannerPrompt(input, this.opts.nonce);
    } catch (e) {
      // No fence nonce could be drawn: a request we must not make.
      throw this.error(new LlmError('client', (e as Error).message));
    }
    const timeoutMs = this.config.timeoutMs;
    const ac = new AbortController();
    const timer = setTimeout(
      () => ac.abort(new LlmError('timeout', `${this.label} did not answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const both = signal ? AbortSignal.any([signal, ac.signal]) : ac.signal;
    // Settles when the think is cut short, whatever the backend does with its signal.
    const stopped = new Promise<never>((_, reject) => {
      const onAbort = () =>
        reject(
          ac.signal.aborted ? ac.signal.reason : new LlmError('timeout', `${this.label}: the think was cancelled`),
        );
      if (both.aborted) onAbort();
      else both.addEventListener('abort', onAbort, { once: true });
    });
    stopped.catch(() => undefined);
    const call = completeStructured<PlanAnswer>(
      backend,
      {
        purpose: PLAN_PURPOSE,
        system: p.system,
        prompt: p.prompt,
        schema: PLAN_SCHEMA,
        schemaName: PLAN_SCHEMA_NAME,
        timeoutMs,
        maxTokens: MAX_TOKENS,
        signal: both,
      },
      {
        maxRetries: this.config.maxRetries,
        backoffMs: this.opts.backoffMs,
        onRequest: this.opts.onRequest,
        absentAsNull: ['nextThinkIn'], // added after planners were written: one that omits it keeps the interval
      },
    );
    call.catch(() => undefined); // when the deadline wins the race, this rejection has no one to go to
    let answer: PlanAnswer;
    try {
      answer = (await Promise.race([call, stopped])).value;
    } catch (e) {
      throw this.error(both.aborted ? await stopped.catch((r: unknown) => r) : e);
    } finally {
      clearTimeout(timer);
      if (!ac.signal.aborted) ac.abort(); // a retry still waiting for its backoff stops here
    }
    return {
      proposals: answer.decisions.map(toProposal),
      summary: answer.summary,
      ...(answer.nextThinkIn ? { nextThinkIn: answer.nextThinkIn } : {}),
    };
  }
}

/** What createBackend would refuse, in the Autopilot's own field names. */
function configProblem(c: ResolvedJudgeConfig): string | undefined {
  if ((c.backend === 'openai' || c.backend === 'anthropic') && !c.model)
    return `spec.planner.backend is ${c.backend} but spec.planner.model is not set`;
  if (c.backend === 'command' && !c.command?.length)
    return 'spec.planner.backend is command but spec.planner.command is not set';
  return undefined;
}

function toProposal(d: PlanAnswer['decisions'][number]): Proposal {
  return {
    action: d.action,
    project: d.project,
    ...(d.session ? { session: d.session } : {}),
    reason: d.reason,
    priority: d.priority,
    ...(d.prompt ? { prompt: d.prompt } : {}),
    ...(d.message ? { message: d.message } : {}),
  };
}
