/**
 * Context policy end to end (issue 15): the real Claude Code CLI under the real controller, the
 * fake Messages API reporting a context window past half full. Through the statusline orchctl
 * installs: crossing checkpointAt 50 % at an idle agent → the handoff asked for and written (the
 * fake model answers with a Write tool call) → `/compact <focus>` typed → PreCompact,
 * SessionStart(compact), PostCompact → the figure drops → Compacted, the Events in that order.
 * Then a compaction the API refuses → `/clear` → SessionStart(clear) → the rehydrate prompt, with
 * the handoff, arrives at the model.
 */
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentSession } from '../../controller/api/kinds.js';
import { HANDOFF_HEADING } from '../../controller/reconcilers/session/rehydrate.js';
import { startClaudeScenario, type ClaudeScenario } from '../support/claude-session.js';
import {
  type RecordedRequest,
  type ScriptedAnswer,
  errorAnswer,
  isCompactionRequest,
  textTurn,
  toolResults,
  toolTurn,
  allUserText,
  userText,
} from '../support/fake-anthropic.js';

const WINDOW = 1_000_000; // the window Claude Code 2.1.330 reports for its default model
let sc: ClaudeScenario;
/** Whether the fake refuses compaction requests (the second test). */
let refuseCompaction = false;

/**
 * The fake model: the task answered at 56 % of the window; the handoff request answered by writing
 * the file it names; compaction answered with a summary (or refused); anything else briefly.
 */
function model(r: RecordedRequest): ScriptedAnswer {
  const text = userText(r.body);
  const usage = (n: number) => ({ usage: { input_tokens: n, output_tokens: 40 } });
  if (isCompactionRequest(r.body))
    return refuseCompaction
      ? errorAnswer(500, 'api_error', 'compaction refused by the fake')
      : textTurn('Summary: the task is half done; next, the rest.', usage(30_000));
  if (toolResults(r.body).length) return textTurn('Handoff written.', usage(570_000));
  const file = /(\/\S+\/handoff\.md)/.exec(text)?.[1];
  if (file && text.startsWith('orchctl:'))
    return toolTurn('Write', { file_path: file, content: '# State\nhalf done\n\n# Next\nthe rest\n' }, usage(565_000));
  if (text.includes(HANDOFF_HEADING)) return textTurn('Continuing from the handoff.', usage(40_000));
  return textTurn('Working on it.', usage(560_000));
}

beforeAll(async () => {
  sc = await startClaudeScenario({
    // The handoff goes to the run's workspace, outside the repository: Claude Code asks before
    // writing there, and this Agent lets orchctl answer such prompts (autoAnswer).
    agents: { 'claude-ctx': { autoAnswer: ['permission'] } },
  });
  sc.fake.answerUnscripted(model);
  await sc.h.apply([
    {
      apiVersion: 'orchctl.io/v1alpha1',
      kind: 'SessionPolicy',
      metadata: { name: 'ctx' },
      spec: { context: { checkpointAt: 50, compactFocus: 'keep the plan', handoffTimeout: '2m' } },
    },
  ]);
}, 15 * 60_000);

afterAll(async () => {
  await sc?.cleanup();
});

const session = (name: string) => sc.h.session(name) as Promise<AgentSession | undefined>;
const actions = (s: AgentSession | undefined) => (s?.status?.context?.actions ?? []).map((a) => a.type);

const start = (name: string) => sc.startSession(name, 'Do the task.', { agentRef: 'claude-ctx', policyRef: 'ctx' });

describe('context policy with the real Claude Code', () => {
  it('crossing 50 %: handoff asked for and written, /compact at idle, confirmed, the figure drops', async () => {
    await start('ctx-a');
    const s = await sc.h.waitFor(
      'Compacted',
      async () => {
        const s = await session('ctx-a');
        return actions(s).includes('Compacted') && s;
      },
      180_000,
    );
    expect(actions(s)).toEqual(['HandoffRequested', 'HandoffWritten', 'CompactSent', 'Compacted']);
    const ws = s.status!.workspace!;
    expect(fs.readFileSync(`${ws}/handoff.md`, 'utf8')).toContain('half done');
    expect(s.status?.context).toMatchObject({ source: 'statusline', windowTokens: WINDOW });
    expect(s.status!.context!.percent).toBeLessThan(50);
    // The compaction the fake was asked for carried the focus.
    const hooks = sc.events('ctx-a').flatMap((e) => (e.type === 'hook' ? [e] : []));
    const pre = hooks.find((e) => e.hook === 'PreCompact');
    expect(pre?.payload).toMatchObject({ trigger: 'manual', custom_instructions: 'keep the plan' });
    expect(hooks.some((e) => e.hook === 'PostCompact')).toBe(true);
    expect(hooks.some((e) => e.hook === 'SessionStart' && e.payload.source === 'compact')).toBe(true);
    const reasons = (await sc.h.events('ctx-a')).map((e) => e.reason as string);
    const order = ['ContextCheckpoint', 'HandoffWritten', 'CompactSent', 'Compacted'];
    expect(reasons.filter((r) => order.includes(r))).toEqual(order);
    expect(reasons).toContain('ContextWindow');
  }, 240_000);

  it('a compaction that fails → /clear → the rehydrate prompt with the handoff arrives at the model', async () => {
    refuseCompaction = true;
    const before = sc.fake.requests.length;
    await start('ctx-b');
    const s = await sc.h.waitFor(
      'RehydrateDelivered',
      async () => {
        const s = await session('ctx-b');
        return actions(s).includes('RehydrateDelivered') && s;
      },
      180_000,
    );
    expect(actions(s)).toEqual([
      'HandoffRequested',
      'HandoffWritten',
      'CompactSent',
      'CompactFailed',
      'ClearSent',
      'Cleared',
      'RehydrateDelivered',
    ]);
    // Confirmed by its UserPromptSubmit hook, which comes just before the request itself.
    const rehydrate = await sc.fake.waitFor(
      (r) => r.seq > before && r.kind === 'main' && userText(r.body).includes(HANDOFF_HEADING),
      30_000,
    );
    const text = userText(rehydrate.body);
    expect(text).toContain('half done');
    expect(text).toContain('Your context was cleared');
    // /clear started a new conversation: the request carries no earlier turn. (The prompt itself may
    // quote the task: its "Last checkpoint summary" does whenever the assessment checkpointed first.)
    const messages = rehydrate.body?.messages ?? [];
    expect(allUserText({ ...rehydrate.body, messages: messages.slice(0, -1) })).not.toContain('Do the task.');
    expect(messages.filter((m) => m.role === 'assistant')).toEqual([]);
    const reasons = (await sc.h.events('ctx-b')).map((e) => e.reason as string);
    const order = ['CompactFailed', 'ClearSent', 'Cleared', 'Rehydrated'];
    expect(reasons.filter((r) => order.includes(r))).toEqual(order);
    expect(s.status?.phase).toBe('Running');
  }, 240_000);
});
