/**
 * Issue #5 end to end: the real Claude Code CLI (pinned, installed from the npm registry into
 * test/.cache) run by the real controller in tmux, talking to a scripted fake Messages API on
 * 127.0.0.1. One session walks through the scenarios in order: prompt delivered and verified,
 * a permission prompt raising WaitingForInput, `orchctl send --approve` clearing it, the Bash
 * commit showing in status.git, the Stop hook ending the turn, `orchctl send` text, a failing tool
 * call arriving as an event with its exit status, and a kill giving a terminal phase.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { condition, git } from '../support/controller-harness.js';
import { agentOf, startClaudeScenario, type ClaudeScenario } from '../support/claude-session.js';
import { bashTurn, textTurn, toolResults, userText } from '../support/fake-anthropic.js';
import { readSessionRecords } from '../support/claude-code.js';

let sc: ClaudeScenario;
const NAME = 'cc';
const PROMPT = 'Please commit hello.txt.\nUse one git command line.';

beforeAll(async () => {
  // No periodic look at the session: what this file sees must come through the watches on the
  // hook file and the transcript (whose directory Claude Code creates only with its first line).
  sc = await startClaudeScenario({ controllerArgs: ['--observe-interval', '1h', '--resync', '1h'] });
  fs.writeFileSync(path.join(sc.h.repo, 'hello.txt'), 'hello\n');
  sc.fake.script(
    bashTurn('git add hello.txt && git commit -q -m "agent: add hello"', { text: 'I will commit hello.txt.' }),
    textTurn('Committed hello.txt.', {
      usage: { input_tokens: 90_000, cache_read_input_tokens: 2_000, output_tokens: 100 },
    }),
    bashTurn('ls ./does-not-exist', { text: 'Listing it.' }),
    textTurn('That directory does not exist.'),
  );
  await sc.startSession(NAME, PROMPT);
}, 15 * 60_000);

afterAll(async () => {
  await sc?.cleanup();
});

const session = () => sc.h.session(NAME);

describe('Claude Code under orchctl', () => {
  it('delivers the prompt and confirms it through the UserPromptSubmit hook', async () => {
    const s = await sc.h.waitFor(
      'PromptDelivered=True',
      async () => {
        const s = await session();
        return condition(s, 'PromptDelivered')?.status === 'True' && s;
      },
      60_000,
    );
    expect(condition(s, 'PromptDelivered')?.reason).toBe('Confirmed');
    expect(s.status?.promptDelivery).toMatchObject({
      delivered: true,
      confirmedBy: expect.stringMatching(/hook|transcript/),
    });
    const first = await sc.fake.waitForMain(1, 20_000);
    expect(userText(first.body)).toBe(PROMPT);
    // The report protocol reached Claude Code's own system prompt (--append-system-prompt), not the task.
    const system = first.body?.system;
    const systemText = typeof system === 'string' ? system : (system ?? []).map((b) => b.text ?? '').join('\n');
    expect(systemText).toContain('$ORCHCTL_WORKSPACE/status.json');
    const submit = sc.events(NAME).find((e) => e.type === 'hook' && e.hook === 'UserPromptSubmit');
    expect(submit && submit.type === 'hook' && submit.payload.prompt).toBe(PROMPT);
  });

  it('raises WaitingForInput with the command when Claude asks permission for the Bash call', async () => {
    const s = await sc.h.waitFor(
      'WaitingForInput=True',
      async () => {
        const s = await session();
        return condition(s, 'WaitingForInput')?.status === 'True' && s;
      },
      30_000,
    );
    const w = condition(s, 'WaitingForInput')!;
    expect(w.reason).toBe('PermissionPrompt');
    expect(w.message).toContain('git add hello.txt && git commit');
    expect(agentOf(s).state).toBe('waiting');
    // How long after Claude asked (its PermissionRequest hook) the condition was set; the goal
    // is ≤ 2 s. Logged, not asserted: timing belongs in benchmarks (docs/benchmarks.md).
    const req = sc.events(NAME).find((e) => e.type === 'hook' && e.hook === 'PermissionRequest');
    if (req)
      console.log(
        `WaitingForInput latency after PermissionRequest: ${Date.parse(w.lastTransitionTime) - Date.parse(req.ts)} ms`,
      );
  });

  it('orchctl send --approve answers the prompt; the commit shows up in status.git', async () => {
    const r = await sc.h.orchctl(['send', NAME, '--approve']);
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    const s = await sc.h.waitFor(
      'the commit in status.git',
      async () => {
        const s = await session();
        return s?.status?.git?.commits === 1 && condition(s, 'WaitingForInput')?.status === 'False' && s;
      },
      30_000,
    );
    expect(s.status?.git?.lastCommit?.subject).toBe('agent: add hello');
    const head = (await git(sc.h.repo, ['rev-parse', 'HEAD'])).stdout.trim();
    expect(s.status?.git?.head).toBe(head);
    const second = await sc.fake.waitForMain(2, 20_000);
    expect(toolResults(second.body)[0]).toMatchObject({ isError: false });
  });

  it('the Stop hook marks the turn done with the last assistant message', async () => {
    const s = await sc.h.waitFor(
      'turn 1 done',
      async () => {
        const s = await session();
        return (agentOf(s).turns ?? 0) >= 1 && condition(s, 'AgentBusy')?.status === 'False' && s;
      },
      30_000,
    );
    expect(agentOf(s).lastAssistantMessage).toBe('Committed hello.txt.');
    expect(agentOf(s).state).toBe('idle');
    expect(s.status?.phase).toBe('Running');
    // Context-window use from the statusline orchctl installs (exact, and preferred to the
    // transcript's estimate): 92 000 tokens of input in the 1 000 000 window Claude Code reports for
    // its model. It may come a pass after the Stop hook.
    const context = { source: 'statusline', usedTokens: 92_000, windowTokens: 1_000_000, percent: 9, lastStep: 0 };
    await sc.h.waitFor(
      'the context figure of the last assistant message',
      async () => {
        expect((await session())?.status?.context).toMatchObject(context);
        return true;
      },
      30_000,
    );
    const ctxEvents = (await sc.h.events(NAME)).filter((e) => e.reason === 'ContextWindow');
    expect(ctxEvents.map((e) => e.message)).toEqual([]); // under the first 10 % step
  });

  it('orchctl send delivers by the same verified path; a failing tool call arrives with its exit status', async () => {
    const r = await sc.h.orchctl(['send', NAME, 'Now list ./does-not-exist please.']);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/^delivered: submitted and confirmed/);
    const third = await sc.fake.waitForMain(3, 20_000);
    expect(userText(third.body)).toBe('Now list ./does-not-exist please.');
    const failed = await sc.h.waitFor(
      'the failed tool_result event',
      async () => sc.events(NAME).find((e) => e.type === 'tool_result' && e.isError),
      30_000,
    );
    expect(failed).toMatchObject({
      type: 'tool_result',
      tool: 'Bash',
      command: 'ls ./does-not-exist',
      exitCode: 2,
      isError: true,
    });
    expect(failed.type === 'tool_result' && failed.output).toMatch(/No such file or directory/);
    const hookFailure = sc.events(NAME).find((e) => e.type === 'hook' && e.hook === 'PostToolUseFailure');
    expect(hookFailure && hookFailure.type === 'hook' && String(hookFailure.payload.error)).toMatch(/^Exit code 2/);
    await sc.h.waitFor('turn 2 done', async () => (agentOf(await session()).turns ?? 0) >= 2, 30_000);
    const events = await sc.h.events(NAME);
    expect(events.some((e) => e.reason === 'MessageSent')).toBe(true);
  });

  it('killing the agent process gives a terminal phase with its exit status', async () => {
    const s0 = await session();
    const sessionId = agentOf(s0).sessionId;
    expect(sessionId).toBeTruthy();
    const rec = readSessionRecords(sc.home.configDir).find((r) => r.sessionId === sessionId);
    expect(rec?.pid).toBeGreaterThan(0);
    process.kill(rec!.pid, 'SIGTERM');
    const s = await sc.h.waitFor(
      'a terminal phase',
      async () => {
        const s = await session();
        return s?.status?.phase === 'Failed' && s;
      },
      30_000,
    );
    expect(s.status?.exitCode).toBe(143);
    expect(condition(s, 'Ready')?.status).toBe('False');
    expect(condition(s, 'AgentBusy')?.status).toBe('False');
    // The process is gone for real.
    expect(() => process.kill(rec!.pid, 0)).toThrow();
  });
});
