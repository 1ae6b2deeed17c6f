/**
 * Realistic agent sessions for the assessment tests: a builder that writes Claude Code 2.1.330
 * transcript lines (the shapes of test/support/fixtures/claude-code/2.1.330/transcript.jsonl:
 * user prompts, assistant text and tool_use blocks, tool_result blocks with is_error and the
 * "Exit code N" first line, toolUseResult) plus the Stop hook payloads, and a converter from
 * those lines to the normalised events of the session event log by the controller's own
 * transcript normaliser (agents/claude-code.ts). Tool outputs come from outputs/ (recorded from the real tools by
 * record-outputs.sh, or written from the tools' documented formats where not installed).
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { newTranscriptState, transcriptEvents } from '../../controller/agents/claude-code.js';
import type { AgentEvent, NewEvent } from '../../controller/store/eventlog.js';

/** The repository root: this file also runs compiled from dist/test/support/ (the corpus benchmark). */
function repoRoot(): string {
  let d = import.meta.dirname;
  while (!fs.existsSync(path.join(d, 'package.json')) && path.dirname(d) !== d) d = path.dirname(d);
  return d;
}
const OUTPUTS = path.join(repoRoot(), 'test/fixtures/assessment/outputs');

/** A recorded tool output and its exit status. */
export function toolOutput(name: string): { output: string; exitCode: number } {
  return {
    output: fs.readFileSync(path.join(OUTPUTS, `${name}.txt`), 'utf8'),
    exitCode: Number(fs.readFileSync(path.join(OUTPUTS, `${name}.exit`), 'utf8').trim()),
  };
}

export function outputNames(): string[] {
  return fs
    .readdirSync(OUTPUTS)
    .filter((f) => f.endsWith('.txt'))
    .map((f) => f.slice(0, -4))
    .sort();
}

const SESSION_ID = 'a1fe951f-586a-4eb6-bd18-d57ba9bb9775';
const CWD = '/tmp/orchctl-assess/project';

type Line = Record<string, unknown>;

export class TranscriptBuilder {
  private t: number;
  private parent: string | null = null;
  private msg = 0;
  private tool = 0;
  readonly lines: Line[] = [];
  /** Hook payloads interleaved where Claude Code fires them (index into lines when fired). */
  readonly hooks: { after: number; payload: Line }[] = [];

  constructor(
    start = '2026-11-22T03:00:00.000Z',
    private readonly stepMs = 4000,
  ) {
    this.t = Date.parse(start);
  }

  private ts(): string {
    this.t += this.stepMs;
    return new Date(this.t).toISOString();
  }

  /** Lets time pass (for correction windows and cooldowns). */
  wait(ms: number): this {
    this.t += ms;
    return this;
  }

  private push(line: Line): this {
    const uuid = randomUUID();
    this.lines.push({
      parentUuid: this.parent,
      isSidechain: false,
      ...line,
      uuid,
      timestamp: this.ts(),
      userType: 'external',
      entrypoint: 'cli',
      cwd: CWD,
      sessionId: SESSION_ID,
      version: '2.1.330',
      gitBranch: 'main',
    });
    this.parent = uuid;
    return this;
  }

  /** A prompt typed (or pasted) by a person. */
  user(text: string): this {
    this.push({
      promptId: randomUUID(),
      type: 'user',
      message: { role: 'user', content: text },
      permissionMode: 'default',
      origin: { kind: 'human' },
      promptSource: 'typed',
    });
    this.hooks.push({
      after: this.lines.length - 1,
      payload: { session_id: SESSION_ID, cwd: CWD, hook_event_name: 'UserPromptSubmit', prompt: text },
    });
    return this;
  }

  private assistant(content: Line[], stop: string | null): this {
    const id = `msg_fake${String(++this.msg).padStart(6, '0')}`;
    return this.push({
      type: 'assistant',
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model: 'claude-opus-5-5',
        content,
        stop_reason: stop,
        stop_sequence: null,
        usage: {
          input_tokens: 13914 + this.msg * 100,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
          output_tokens: 64,
          service_tier: 'standard',
        },
      },
    });
  }

  say(text: string): this {
    return this.assistant([{ type: 'text', text }], 'tool_use');
  }

  /** A Bash call and its result: exit status from the recorded output (0 = success). */
  bash(command: string, result: { output: string; exitCode: number }): this {
    const id = `toolu_fake${String(++this.tool).padStart(4, '0')}`;
    this.assistant(
      [{ type: 'tool_use', id, name: 'Bash', input: { command, description: command.slice(0, 40) } }],
      'tool_use',
    );
    this.hooks.push({
      after: this.lines.length - 1,
      payload: { session_id: SESSION_ID, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command } },
    });
    const out = result.output.replace(/\n+$/, '');
    const failed = result.exitCode !== 0;
    const content = failed ? `Exit code ${result.exitCode}\n${out}` : out;
    this.push({
      type: 'user',
      message: { role: 'user', content: [{ tool_use_id: id, type: 'tool_result', content, is_error: failed }] },
      toolUseResult: failed
        ? `Error: ${content}`
        : { stdout: out, stderr: '', interrupted: false, isImage: false, noOutputExpected: false },
      sourceToolAssistantUUID: this.parent,
    });
    this.hooks.push({
      after: this.lines.length - 1,
      payload: {
        session_id: SESSION_ID,
        hook_event_name: failed ? 'PostToolUseFailure' : 'PostToolUse',
        tool_name: 'Bash',
      },
    });
    return this;
  }

  /** An Edit/Write call that succeeds (a file written: progress). */
  edit(file: string, tool: 'Edit' | 'Write' = 'Edit'): this {
    const id = `toolu_fake${String(++this.tool).padStart(4, '0')}`;
    this.assistant(
      [
        {
          type: 'tool_use',
          id,
          name: tool,
          input: { file_path: `${CWD}/${file}`, old_string: 'a - b', new_string: 'a + b' },
        },
      ],
      'tool_use',
    );
    return this.push({
      type: 'user',
      message: {
        role: 'user',
        content: [
          { tool_use_id: id, type: 'tool_result', content: `The file ${CWD}/${file} has been updated successfully.` },
        ],
      },
    });
  }

  /** A tool call the person refused at the permission prompt. */
  rejected(command: string): this {
    const id = `toolu_fake${String(++this.tool).padStart(4, '0')}`;
    this.assistant([{ type: 'tool_use', id, name: 'Bash', input: { command } }], 'tool_use');
    this.push({
      type: 'user',
      message: {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            content:
              "The user doesn't want to proceed with this tool use. The tool use was rejected " +
              '(eg. if it was a file edit, the new_string was NOT written to the file). ' +
              'STOP what you are doing and wait for the user to tell you how to proceed.',
            is_error: true,
            tool_use_id: id,
          },
        ],
      },
      toolUseResult: 'User rejected tool use',
    });
    return this.push({
      type: 'user',
      message: { role: 'user', content: [{ type: 'text', text: '[Request interrupted by user for tool use]' }] },
    });
  }

  /** The turn's last answer (stop_reason end_turn), then the Stop hook. */
  endTurn(text: string): this {
    this.assistant([{ type: 'text', text }], 'end_turn');
    this.hooks.push({
      after: this.lines.length - 1,
      payload: {
        session_id: SESSION_ID,
        hook_event_name: 'Stop',
        stop_hook_active: false,
        last_assistant_message: text,
      },
    });
    return this;
  }

  /** A script for fake-agent.mjs: transcript lines ("T ...") and hook records ("H ...") in firing order. */
  agentScript(): string {
    const out: string[] = [];
    const byLine = new Map<number, Line[]>();
    for (const h of this.hooks) byLine.set(h.after, [...(byLine.get(h.after) ?? []), h.payload]);
    this.lines.forEach((l, i) => {
      out.push(`T ${JSON.stringify(l)}`);
      for (const p of byLine.get(i) ?? [])
        out.push(`H ${JSON.stringify({ t: Date.parse(String(l.timestamp)), payload: p })}`);
    });
    return out.join('\n') + '\n';
  }

  jsonl(): string {
    return this.lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
  }

  /** The event log as the ingesters would write it: transcript events with the hook events interleaved. */
  events(opts: { hooks?: boolean; run?: number; startSeq?: number } = {}): AgentEvent[] {
    const out = toEvents(this.lines, opts.run ?? 1);
    const withHooks: NewEvent[] = [];
    const byLine = new Map<number, Line[]>();
    if (opts.hooks !== false)
      for (const h of this.hooks) byLine.set(h.after, [...(byLine.get(h.after) ?? []), h.payload]);
    out.forEach(({ line, events }) => {
      withHooks.push(...events);
      for (const p of byLine.get(line) ?? [])
        withHooks.push({
          type: 'hook',
          hook: String(p.hook_event_name),
          payload: p,
          ts: events.at(-1)?.ts ?? new Date().toISOString(),
          run: opts.run ?? 1,
          source: 'hook',
        } as NewEvent);
    });
    return withHooks.map((e, i) => ({ ...e, seq: (opts.startSeq ?? 1) + i }) as AgentEvent);
  }
}

/** Transcript lines → normalised events, per line, by the controller's own transcript normaliser. */
export function toEvents(lines: Line[], run = 1): { line: number; events: NewEvent[] }[] {
  const st = newTranscriptState();
  return lines.map((l, line) => ({ line, events: transcriptEvents(l, run, st) }));
}
