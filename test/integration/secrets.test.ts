/**
 * Secrets, with a real controller, real tmux and the store file: an agent's environment values
 * never appear on any process's command line (the tmux server keeps its first client's argv for
 * its whole life), valueFrom reads them from the controller's environment or a file so the
 * manifest holds none, and an LLM endpoint that echoes its key back in an error gets that key
 * into no object, Event, log line or CLI output.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Evaluation } from '../../controller/reconcilers/judge/types.js';
import { FakeOpenAI } from '../support/fake-openai.js';
import { condition, makeHarness, phaseOf, shellSession, type Harness } from '../support/controller-harness.js';

let h: Harness;
let fake: FakeOpenAI | undefined;
beforeEach(async () => {
  h = await makeHarness();
});
afterEach(async () => {
  await h.cleanup();
  await fake?.close();
  fake = undefined;
});

/** Every process's command line on the machine that contains `needle`. */
function argvsContaining(needle: string): string[] {
  const hits: string[] = [];
  for (const p of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const argv = fs.readFileSync(`/proc/${p}/cmdline`, 'utf8');
      if (argv.includes(needle)) hits.push(`${p}: ${argv.replace(/\0/g, ' ')}`);
    } catch {
      /* gone */
    }
  }
  return hits;
}

/** Every stored row (objects and the change history) as text. */
function storeText(dbFile: string): string {
  const db = new Database(dbFile, { readonly: true });
  try {
    const rows = [...db.prepare('SELECT data FROM objects').all(), ...db.prepare('SELECT data FROM changes').all()] as {
      data: string;
    }[];
    return rows.map((r) => r.data).join('\n');
  } finally {
    db.close();
  }
}

describe('agent environment', () => {
  it('values reach the agent but no argv; valueFrom reads the controller env and a file', async () => {
    const inline = `inline-${process.pid}-a1b2c3d4e5`;
    const fromEnv = `fromenv-${process.pid}-f6a7b8c9d0`;
    const fromFile = `fromfile-${process.pid}-1e2d3c4b5a`;
    const secretFile = path.join(h.dir, 'token.txt');
    fs.writeFileSync(secretFile, `${fromFile}\n`, { mode: 0o600 });
    h.env.ORCHCTL_TEST_SECRET = fromEnv;
    const script =
      'printf "%s|%s|%s|%s" "$API_TOKEN" "$FROM_ENV" "$FROM_FILE" "$ORCHCTL_ENV_DIR" > "$ORCHCTL_WORKSPACE/seen"; ' +
      'exec sleep 600';
    await h.apply([
      shellSession('env', script, h.repo, {
        env: [
          { name: 'API_TOKEN', value: inline },
          { name: 'FROM_ENV', valueFrom: { env: 'ORCHCTL_TEST_SECRET' } },
          { name: 'FROM_FILE', valueFrom: { file: secretFile } },
        ],
      }),
    ]);
    h.start();
    const s = await h.waitFor('Running', async () => {
      const x = await h.session('env');
      return phaseOf(x) === 'Running' && x;
    });
    const seen = path.join(s.status!.workspace!, 'seen');
    await h.waitFor('the agent wrote what it saw', async () => fs.existsSync(seen) && fs.statSync(seen).size > 0);
    // Values exact (the file's trailing newline dropped); the private directory is gone.
    expect(fs.readFileSync(seen, 'utf8')).toBe(`${inline}|${fromEnv}|${fromFile}|`);
    expect(fs.existsSync(path.join(s.status!.workspace!, 'env'))).toBe(false);
    for (const secret of [inline, fromEnv, fromFile]) expect(argvsContaining(secret), secret).toEqual([]);
    // The values from valueFrom are in no object or Event (the inline one is the user's own spec).
    const text = storeText(path.join(h.home, 'state.db'));
    expect(text).not.toContain(fromEnv);
    expect(text).not.toContain(fromFile);
  }, 60_000);

  it('a valueFrom that cannot be read fails the start with the variable named and launches nothing', async () => {
    await h.apply([
      shellSession('missing', 'exec sleep 600', h.repo, {
        env: [{ name: 'TOKEN', valueFrom: { env: 'ORCHCTL_TEST_NOT_SET' } }],
      }),
    ]);
    h.start();
    const s = await h.waitFor('the start failed', async () => {
      const x = await h.session('missing');
      return x?.status?.reason === 'EnvSourceNotFound' && x;
    });
    expect(s.status!.message).toContain(
      "env TOKEN: valueFrom.env ORCHCTL_TEST_NOT_SET is not set in the controller's environment",
    );
    expect(await h.tmuxSessions()).toEqual([]);
  }, 60_000);

  it('apply refuses value and valueFrom together, naming the field', async () => {
    const r = await h.orchctl(
      ['apply', '-f', '-'],
      JSON.stringify(
        shellSession('both', 'true', h.repo, { env: [{ name: 'T', value: 'x', valueFrom: { env: 'HOME' } }] }),
      ),
    );
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('spec.env[0].valueFrom: may not be set together with value');
    expect(await h.session('both')).toBeUndefined();
  });
});

describe('an LLM endpoint that echoes its key', () => {
  it('leaves the key in no object, Event, controller log line or CLI output', async () => {
    const key = `judgekey-${process.pid}-9f8e7d6c5b4a`;
    fake = await FakeOpenAI.start((req) => ({
      kind: 'json',
      status: 401,
      body: {
        error: {
          message: `Incorrect API key provided: ${key} (header was "${req.headers.authorization}")`,
          type: 'invalid_request_error',
        },
      },
    }));
    h.env.ORCHCTL_JUDGE_KEY = key;
    await h.apply([
      {
        apiVersion: 'orchctl.io/v1alpha1',
        kind: 'SessionPolicy',
        metadata: { name: 'default' },
        spec: {
          judge: {
            backend: 'openai',
            endpoint: fake.endpoint,
            model: 'fake',
            apiKeyEnv: 'ORCHCTL_JUDGE_KEY',
            maxRetries: 0,
          },
        },
      },
      shellSession('judged', 'echo done; exit 0', h.repo),
    ]);
    h.start();
    const failed = await h.waitFor(
      'the evaluation failed',
      async () => {
        const evs = (await h.store.list('Evaluation', { namespace: 'default' })).items as Evaluation[];
        return evs.find((e) => e.status?.conditions?.some((c) => c.type === 'JudgeFailed' && c.status === 'True'));
      },
      30_000,
    );
    expect(fake.requests.length).toBeGreaterThan(0);
    expect(fake.requests[0].headers.authorization).toBe(`Bearer ${key}`); // the key was really sent (and echoed)
    expect(JSON.stringify(failed.status)).toContain('[REDACTED]');
    const cli = await h.orchctl(['judge', 'judged', '--wait', '--timeout', '20s']);
    const describe = await h.orchctl(['describe', 'agentsession', 'judged']);
    const events = await h.orchctl(['get', 'events', '-o', 'yaml']);
    await h.stopController();
    for (const [where, text] of [
      ['store', storeText(path.join(h.home, 'state.db'))],
      ['controller log', h.controllerLog.join('\n')],
      ['orchctl judge', cli.stdout + cli.stderr],
      ['orchctl describe', describe.stdout + describe.stderr],
      ['orchctl get events', events.stdout + events.stderr],
    ])
      expect(text, where).not.toContain(key);
    expect(condition(await h.session('judged'), 'Succeeded')?.status).toBe('True');
  }, 90_000);
});
