/**
 * Issue #6 end to end with the real Claude Code CLI (pinned, test cache) under the real
 * controller, against the scripted fake Messages API: the model keeps running a failing pytest
 * suite through Bash. The detector reads the failures from Claude Code's own transcript (the
 * real pytest output, exit status 1), the breaker opens with ApproachPivot after five, and the
 * intervention is pasted into the TUI through the verified send path — it arrives as a user
 * message in Claude Code's transcript and as the next request to the model.
 */
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assessmentConfig } from '../../controller/reconcilers/assessment/config.js';
import type { BreakerStatus } from '../../controller/reconcilers/assessment/status.js';
import { condition } from '../support/controller-harness.js';
import { agentOf, startClaudeScenario, type ClaudeScenario } from '../support/claude-session.js';
import { bashTurn, textTurn, toolResults, userText } from '../support/fake-anthropic.js';
import { ROOT } from '../support/cli.js';

let sc: ClaudeScenario;
const NAME = 'flaky';
const TEXT = assessmentConfig(undefined).breaker.texts.ApproachPivot;

beforeAll(async () => {
  // Bash allowed without asking, so the model's test runs go straight through.
  const template = YAML.parse(fs.readFileSync(path.join(ROOT, 'manifests/agents/claude-code.yaml'), 'utf8')) as {
    spec: { hooks?: Record<string, unknown> };
  };
  sc = await startClaudeScenario({
    agents: {
      'claude-bash': {
        hooks: {
          ...(template.spec.hooks ?? {}),
          settings: { permissions: { defaultMode: 'default', allow: ['Bash'] } },
        },
      },
    },
  });
  fs.writeFileSync(path.join(sc.h.repo, 'calc.py'), 'def mul(a, b):\n    return a + b\n');
  fs.writeFileSync(
    path.join(sc.h.repo, 'test_calc.py'),
    'from calc import mul\n\ndef test_mul():\n    assert mul(2, 3) == 6\n',
  );
  const run = 'python3 -m pytest -q -p no:cacheprovider';
  sc.fake.script(
    ...Array.from({ length: 5 }, (_, i) =>
      bashTurn(run, { text: i === 0 ? 'Running the tests.' : 'Still failing; running them again.' }),
    ),
    textTurn('The test still fails.'),
    textTurn('Understood: I will step back and ask what would help most.'),
  );
  await sc.h.apply([
    { apiVersion: 'orchctl.io/v1alpha1', kind: 'SessionPolicy', metadata: { name: 'default' }, spec: { selector: {} } },
  ]);
  await sc.h.apply([
    {
      apiVersion: 'orchctl.io/v1alpha1',
      kind: 'AgentSession',
      metadata: { name: NAME },
      spec: { agentRef: 'claude-bash', workdir: sc.h.repo, prompt: 'Make the pytest suite pass.' },
    },
  ]);
}, 15 * 60_000);

afterAll(async () => {
  await sc?.cleanup();
});

describe('the circuit breaker with Claude Code', () => {
  it('five failing pytest runs open the breaker; the transcript gets the ApproachPivot as a user message', async () => {
    const s = await sc.h.waitFor(
      'the intervention delivered',
      async () => {
        const s = await sc.h.session(NAME);
        const b = s?.status?.breaker as BreakerStatus | undefined;
        return (b?.history?.length ?? 0) > 0 && s;
      },
      180_000,
    );
    const b = s.status!.breaker as BreakerStatus;
    expect(b.history[0]).toMatchObject({
      type: 'ApproachPivot',
      delivered: true,
      result: 'Delivered',
      why: '5 consecutive failures (threshold 5), the last a TestFailure',
    });
    expect(condition(s, 'BreakerOpen')).toMatchObject({ status: 'True', reason: 'ApproachPivot' });

    // The model saw five failing runs of the real pytest …
    const results = sc.fake.mainRequests.flatMap((r) => toolResults(r.body));
    expect(results.filter((t) => t.isError && /1 failed/.test(String(t.content)))).toHaveLength(5);
    // … and then the intervention as the user's next message.
    const req = await sc.h.waitFor(
      'the intervention at the model',
      async () => sc.fake.mainRequests.find((r) => userText(r.body) === TEXT),
      60_000,
    );
    expect(req).toBeTruthy();
    // In Claude Code's own transcript, as a user message (string content, or text blocks).
    const transcript = agentOf(await sc.h.session(NAME)).transcript!;
    const userTexts = () =>
      fs
        .readFileSync(transcript, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; isMeta?: boolean; message?: { content?: unknown } })
        .filter((l) => l.type === 'user' && !l.isMeta)
        .map((l) =>
          typeof l.message?.content === 'string'
            ? l.message.content
            : Array.isArray(l.message?.content)
              ? (l.message!.content as { type: string; text?: string }[])
                  .filter((b) => b.type === 'text')
                  .map((b) => b.text)
                  .join('')
              : '',
        )
        .filter((t) => t && !t.startsWith('<'));
    await sc.h.waitFor('the intervention in the transcript', async () => userTexts().includes(TEXT), 30_000);
    expect(userTexts()).toEqual(['Make the pytest suite pass.', TEXT]);
    // The detector took it back as its own intervention, not as the user's frustration.
    const st = await sc.h.waitFor(
      'the detector past the intervention',
      async () => {
        const s = await sc.h.session(NAME);
        const d = s?.status?.detector as { userMessages?: number; counts?: Record<string, number> } | undefined;
        return (d?.userMessages ?? 0) >= 2 && d;
      },
      60_000,
    );
    expect(st.counts).toMatchObject({ TestFailure: 5 });
    expect(st.counts?.Frustration ?? 0).toBe(0);
    const reasons = (await sc.h.events(NAME)).map((e) => e.reason);
    expect(reasons).toEqual(expect.arrayContaining(['BreakerOpen', 'InterventionDelivered']));
  }, 300_000);
});
