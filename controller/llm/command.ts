/**
 * Any CLI as a judge: the argv from the SessionPolicy is run with execa, without a shell; the
 * prompt (instructions, then the evidence) goes to its stdin and its stdout must be the JSON
 * answer — or Claude Code's `--output-format json` wrapper
 * (`{"type":"result","is_error":false,"result":"…","structured_output":{…}}`), whose
 * `structured_output` (set with `--json-schema`) is taken first, else the JSON inside `result`.
 *
 * `{{schema}}` inside an argument becomes the answer's JSON Schema and `{{model}}` the model, so
 *   command: [claude, -p, --output-format, json, --json-schema, "{{schema}}", --model, "{{model}}"]
 * works; the values are plain arguments, never shell text. The child runs in its own process
 * group, which is killed (SIGKILL) when the time limit passes or the call is cancelled, so a
 * hung CLI and anything it started are gone.
 */
import { execa } from 'execa';
import { LlmError, type LlmBackend, type LlmRequest, type LlmResponse } from './backend.js';
import { parseJsonAnswer } from './http.js';

const MAX_OUTPUT = 1 << 20;

export interface CommandOptions {
  argv: string[];
  model?: string;
  env?: Record<string, string>;
}

interface ClaudeWrapper {
  type?: string;
  is_error?: boolean;
  subtype?: string;
  result?: unknown;
  structured_output?: unknown;
  usage?: { input_tokens?: number; output_tokens?: number };
}

/** Claude Code's `--output-format json` result object, or the answer itself. */
export function unwrapCliOutput(stdout: string): { value: unknown; raw: string; usage?: LlmResponse['usage'] } {
  const text = stdout.trim();
  if (!text) throw new LlmError('bad_output', 'the command printed nothing on stdout', undefined, stdout);
  const parsed = parseJsonAnswer(text);
  const w = parsed as ClaudeWrapper;
  if (
    w &&
    typeof w === 'object' &&
    !Array.isArray(w) &&
    w.type === 'result' &&
    ('result' in w || 'structured_output' in w)
  ) {
    const usage = w.usage ? { inputTokens: w.usage.input_tokens, outputTokens: w.usage.output_tokens } : undefined;
    if (w.is_error)
      throw new LlmError(
        'server',
        `the CLI reported an error (${w.subtype ?? 'is_error'}): ${String(w.result ?? '').slice(0, 200)}`,
        undefined,
        text,
      );
    if (w.structured_output !== undefined && w.structured_output !== null)
      return { value: w.structured_output, raw: JSON.stringify(w.structured_output), usage };
    const inner = typeof w.result === 'string' ? w.result : JSON.stringify(w.result);
    return { value: parseJsonAnswer(inner), raw: inner, usage };
  }
  return { value: parsed, raw: text };
}

export class CommandBackend implements LlmBackend {
  readonly name = 'command';
  readonly model?: string;

  constructor(private readonly opts: CommandOptions) {
    if (!opts.argv.length)
      throw new LlmError('config', 'the command backend needs judge.command (the program and its arguments)');
    this.model = opts.model;
  }

  async complete(req: LlmRequest): Promise<LlmResponse> {
    const schema = JSON.stringify(req.schema);
    const argv = this.opts.argv.map((a) =>
      a.replaceAll('{{schema}}', schema).replaceAll('{{model}}', this.model ?? ''),
    );
    const input = `${req.system}\n\n${req.prompt}\n`;
    const child = execa(argv[0], argv.slice(1), {
      input,
      reject: false,
      detached: true, // its own process group, so the kill reaches what it started
      maxBuffer: MAX_OUTPUT,
      env: { ...(this.opts.env ?? {}), ORCHCTL_LLM_PURPOSE: req.purpose, ORCHCTL_LLM_SCHEMA: schema },
      stripFinalNewline: false,
    });
    let timedOut = false;
    let cancelled = false;
    const killGroup = () => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    };
    const onTimeout = () => {
      timedOut = true;
      killGroup();
    };
    const timer = setTimeout(onTimeout, Math.max(1, req.timeoutMs));
    const onAbort = () => {
      cancelled = true;
      killGroup();
    };
    req.signal?.addEventListener('abort', onAbort, { once: true });
    let r: Awaited<typeof child>;
    try {
      r = await child;
    } finally {
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onAbort);
    }
    if (timedOut) throw new LlmError('timeout', `the command did not finish within ${req.timeoutMs} ms and was killed`);
    if (cancelled) throw new LlmError('timeout', 'the command was cancelled');
    if ((r as { code?: string }).code === 'ENOENT' || (r as { code?: string }).code === 'EACCES')
      throw new LlmError('config', `cannot run ${argv[0]}: ${(r as { code?: string }).code}`);
    if (r.isMaxBuffer) throw new LlmError('bad_output', `the command printed more than ${MAX_OUTPUT} bytes`);
    const stdout = String(r.stdout ?? '');
    if (r.exitCode !== 0) {
      const stderr = String(r.stderr ?? '')
        .trim()
        .split('\n')
        .slice(-3)
        .join(' | ')
        .slice(0, 300);
      // Claude Code prints its error wrapper on stdout and exits 1: keep its kind.
      if (stdout.trim()) {
        try {
          unwrapCliOutput(stdout);
        } catch (e) {
          if (e instanceof LlmError && e.kind === 'server') throw e;
        }
      }
      throw new LlmError(
        'server',
        `the command exited with ${r.exitCode ?? r.signal ?? 'an error'}${stderr ? `: ${stderr}` : ''}`,
      );
    }
    const { value, raw, usage } = unwrapCliOutput(stdout);
    return { value, raw, model: this.model, usage };
  }
}
