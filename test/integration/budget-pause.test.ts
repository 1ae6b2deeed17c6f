/**
 * A token budget end to end (issue 15 item 5): the real controller, tmux and two agents that write
 * what Claude Code writes (test/fixtures/assessment/fake-agent.mjs: a transcript announced by the
 * SessionStart hook, usage on every assistant line, the Stop hook at the end of the turn). One
 * SessionPolicy governs both; neither crosses maxTokens alone, together they do: both are paused at
 * their idle point, the policy and each session get a BudgetExceeded Event, status.usage of each
 * equals its transcript's usage sums and status.budget their total; a third session waits
 * (admission BudgetExceeded). Raising the budget resumes both with the continue message.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentSession, SessionPolicy } from '../../controller/api/kinds.js';
import { TranscriptBuilder } from '../support/assessment-transcript.js';
import { condition, makeHarness, shellSession, type Harness } from '../support/controller-harness.js';

const FAKE_AGENT = path.resolve(import.meta.dirname, '../fixtures/assessment/fake-agent.mjs');

let h: Harness;
beforeEach(async () => {
  h = await makeHarness();
});
afterEach(async () => {
  await h.cleanup();
});

const policy = (maxTokens: number) => ({
  apiVersion: 'orchctl.io/v1alpha1',
  kind: 'SessionPolicy',
  metadata: { name: 'team' },
  spec: { selector: { matchLabels: { team: 'a' } }, budget: { maxTokens, window: '1h', action: 'Pause' } },
});

/** A turn: a prompt, an answer and the last answer, as Claude Code writes them (usage on each message). */
function turn(text: string): TranscriptBuilder {
  return new TranscriptBuilder(new Date().toISOString(), 200).user(text).say('Looking at it.').endTurn('Done.');
}

/** The usage sums of a transcript, apart from the controller: each message id's last figures once. */
function sums(b: TranscriptBuilder) {
  const byId = new Map<string, Record<string, number>>();
  for (const l of b.lines) {
    const m = l.message as { id?: string; usage?: Record<string, number> } | undefined;
    if (l.type === 'assistant' && m?.id && m.usage) byId.set(m.id, m.usage);
  }
  const sum = (k: string) => [...byId.values()].reduce((a, u) => a + (u[k] ?? 0), 0);
  return { inputTokens: sum('input_tokens'), outputTokens: sum('output_tokens') };
}

function session(name: string, script: string) {
  const s = shellSession(name, '', h.repo, {}, { command: [process.execPath, FAKE_AGENT, script, '50', '50'] }) as {
    metadata: Record<string, unknown>;
  };
  s.metadata.labels = { team: 'a' };
  return s;
}

describe('a token budget across sessions', () => {
  it('two sessions cross maxTokens together: paused at idle, BudgetExceeded, usage from the transcripts', async () => {
    const turns = { a: turn('Fix the login form.'), b: turn('Write the changelog.') };
    const want = { a: sums(turns.a), b: sums(turns.b) };
    const total = (w: { inputTokens: number; outputTokens: number }) => w.inputTokens + w.outputTokens;
    // Each alone stays under the budget; the two together cross it.
    const max = Math.floor((total(want.a) + total(want.b)) * 0.75);
    expect(total(want.a)).toBeLessThan(max);
    expect(total(want.b)).toBeLessThan(max);
    const docs: object[] = [policy(max)];
    for (const [name, b] of Object.entries(turns)) {
      const script = path.join(h.dir, `${name}.script`);
      fs.writeFileSync(script, b.agentScript());
      docs.push(session(name, script));
    }
    await h.apply(docs);
    h.start();

    const paused: Record<string, AgentSession> = {};
    for (const name of ['a', 'b'])
      paused[name] = await h.waitFor(
        `${name} paused`,
        async () => {
          const s = await h.session(name);
          return s?.status?.pause?.reason === 'BudgetExceeded' ? s : undefined;
        },
        30_000,
      );
    for (const name of ['a', 'b'] as const) {
      const st = paused[name].status!;
      // Paused at its idle point: the turn had ended (the Stop hook), the run lives on.
      expect(st.phase).toBe('Running');
      expect(st.agent?.state).toBe('idle');
      expect(st.agent?.turns).toBe(1);
      expect(st.reason).toBe('BudgetExceeded');
      expect(st.usage).toMatchObject({ run: 1, ...want[name], cacheReadTokens: 0, cacheCreationTokens: 0 });
      expect(st.usage?.totalTokens).toBe(total(want[name]));
      expect(st.usage?.hourly?.reduce((n, x) => n + x.tokens, 0)).toBe(total(want[name]));
      expect(condition(paused[name], 'Paused')).toMatchObject({ status: 'True', reason: 'BudgetExceeded' });
      const events = (await h.events(name)).filter((e) => e.reason === 'BudgetExceeded');
      expect(events).toHaveLength(1);
      expect(events[0].message).toMatch(
        /^paused at an idle point: SessionPolicy "team" budget exceeded \(\S+\/\S+ in 1h\)$/,
      );
    }

    const team = (await h.store.get({ kind: 'SessionPolicy', namespace: 'default', name: 'team' })) as SessionPolicy;
    const used = total(want.a) + total(want.b);
    expect(team.status?.budget).toMatchObject({ usedTokens: used, exceeded: true, priced: false });
    const policyEvents = (await h.events('team')).filter((e) => e.reason === 'BudgetExceeded');
    expect(policyEvents).toHaveLength(1);
    expect(policyEvents[0].type).toBe('Warning');
    expect(policyEvents[0].message).toMatch(/used in 1h by 2 sessions: they pause at their next idle point/);
    const table = await h.orchctl(['get', 'sessionpolicies']);
    expect(table.stdout).toMatch(/USED\/BUDGET/);
    expect(table.stdout).toContain(team.status!.budget!.display);
    const sessions = await h.orchctl(['get', 'sessions']);
    expect(sessions.stdout).toMatch(/\na\s+BudgetExceeded\s/);

    // A new session under the exceeded budget is not admitted.
    const script = path.join(h.dir, 'c.script');
    fs.writeFileSync(script, turn('Tidy up.').agentScript());
    await h.apply([session('c', script)]);
    const waiting = await h.waitFor('c waits', async () => {
      const s = await h.session('c');
      return condition(s, 'Admitted')?.reason === 'BudgetExceeded' ? s : undefined;
    });
    expect(waiting.status?.phase).toBe('Pending');

    // The budget is raised: both resume with the continue message (it reaches the agent as a prompt).
    await h.apply([policy(used * 10)]);
    for (const name of ['a', 'b'])
      await h.waitFor(
        `${name} resumed`,
        async () => {
          const s = await h.session(name);
          return s?.status?.pause === undefined && s?.status?.reason === 'Running' ? s : undefined;
        },
        30_000,
      );
    for (const name of ['a', 'b']) {
      const t = fs.readFileSync(path.join(h.home, `sessions/default/${name}/1/transcript.jsonl`), 'utf8');
      expect(t).toContain('"content":"Continue where you left off."');
      expect((await h.events(name)).map((e) => e.reason)).toContain('Resumed');
    }
    expect((await h.events('team')).map((e) => e.reason)).toContain('BudgetAvailable');
  }, 120_000);

  it('enforce Hard: a busy agent is interrupted at the limit and paused mid-turn, the overshoot recorded', async () => {
    // A turn that never ends (no Stop hook): with the default idle point it would never be paused.
    const b = new TranscriptBuilder(new Date().toISOString(), 200)
      .user('Refactor the whole module.')
      .say('Reading the code.')
      .say('Still working on it.');
    const used = sums(b).inputTokens + sums(b).outputTokens;
    const max = Math.floor(used / 2);
    const script = path.join(h.dir, 'long.script');
    fs.writeFileSync(script, b.agentScript());
    const hard = policy(max) as { spec: { budget: Record<string, unknown> } };
    hard.spec.budget.enforce = 'Hard';
    const s = shellSession(
      'long',
      '',
      h.repo,
      {},
      // Its interrupt keys type a line the fake agent records as a prompt: the keys are seen arriving.
      { command: [process.execPath, FAKE_AGENT, script, '50', '50'], interruptKeys: ['i', 'Enter'] },
    ) as { metadata: Record<string, unknown> };
    s.metadata.labels = { team: 'a' };
    await h.apply([hard, s]);
    h.start();

    const paused = await h.waitFor(
      'long paused mid-turn',
      async () => {
        const x = await h.session('long');
        return x?.status?.pause?.interruptedAt ? x : undefined;
      },
      30_000,
    );
    expect(paused.status?.pause?.reason).toBe('BudgetExceeded');
    expect(paused.status?.agent?.turns ?? 0).toBe(0); // its turn had not ended
    const events = (await h.events('long')).filter((e) => e.reason === 'BudgetExceeded');
    expect(events).toHaveLength(1);
    expect(events[0].message).toMatch(
      new RegExp(
        String.raw`^interrupted mid-turn and paused \(enforce Hard\): SessionPolicy "team" budget exceeded ` +
          String.raw`\(\S+/\S+ in 1h\); overshoot \+\S+ tokens$`,
      ),
    );
    const transcript = path.join(paused.status!.workspace!, 'transcript.jsonl');
    await h.waitFor('the interrupt keys reached the agent', async () =>
      fs.readFileSync(transcript, 'utf8').includes('"content":"i"'),
    );
    // Told once on the policy (count 1: the figures keep changing while the crossing is written).
    const team = (await h.events('team')).filter((e) => e.reason === 'BudgetExceeded');
    expect(team).toHaveLength(1);
    expect(team[0].count ?? 1).toBe(1);
    expect(team[0].message).toMatch(/busy ones are interrupted and pause now/);
  }, 60_000);
});
