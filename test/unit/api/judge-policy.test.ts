/**
 * The SessionPolicy `judge` section through the real `orchctl apply`: a good configuration is
 * stored with its defaults; bad ones are refused with the file, line and field named and nothing
 * written — including an attempt to put an API key into the object.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { orchctl, tempHome } from '../../support/cli.js';

const home = tempHome();
afterAll(() => fs.rmSync(path.dirname(home), { recursive: true, force: true }));

function manifest(judge: string): string {
  const file = path.join(path.dirname(home), `policy-${Math.random().toString(36).slice(2)}.yaml`);
  fs.writeFileSync(
    file,
    'apiVersion: orchctl.io/v1alpha1\nkind: SessionPolicy\nmetadata:\n  name: judged\n' +
      `spec:\n  judge:\n${judge.replace(/^/gm, '    ')}\n  selector: {}\n`,
  );
  return file;
}

describe('SessionPolicy judge configuration', () => {
  it('accepts every backend with its settings and fills in the defaults', async () => {
    const f = manifest(
      'backend: command\ncommand: [claude, -p, --output-format, json, --json-schema, "{{schema}}"]\n' +
        'timeout: 90s\nmaxConcurrent: 1',
    );
    const r = await orchctl(home, ['apply', '-f', f]);
    expect(r.stderr).toBe('');
    const got = JSON.parse((await orchctl(home, ['get', 'sessionpolicy', 'judged', '-o', 'json'])).stdout);
    expect(got.spec.judge).toEqual({
      backend: 'command',
      command: ['claude', '-p', '--output-format', 'json', '--json-schema', '{{schema}}'],
      timeout: '90s',
      maxConcurrent: 1,
      enabled: true,
      maxRetries: 2,
    });
    const o = manifest(
      'backend: openai\nmodel: qwen2.5-coder:7b\nendpoint: http://127.0.0.1:11434/v1\napiKeyEnv: OLLAMA_KEY',
    );
    expect((await orchctl(home, ['apply', '-f', o])).exitCode).toBe(0);
  });

  it.each([
    ['apiKey: sk-live-123', /spec\.judge\.apiKey: .*(not allowed|unknown field)/],
    ['backend: gemini', /spec\.judge\.backend: .*heuristic.*command.*openai.*anthropic/],
    ['timeout: soon', /spec\.judge\.timeout: must be a duration like 45m/],
    ['maxConcurrent: 0', /spec\.judge\.maxConcurrent: .*1/],
    ['apiKeyEnv: "sk-live 123"', /spec\.judge\.apiKeyEnv/],
    ['endpoint: "file:///etc/passwd"', /spec\.judge\.endpoint/],
  ])('refuses %s with the field named, and writes nothing', async (bad, message) => {
    const f = manifest(bad);
    const r = await orchctl(home, ['apply', '-f', f]);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toContain(`${f}:7:`);
    expect(r.stderr).toContain('no objects were changed');
    const stored = JSON.parse((await orchctl(home, ['get', 'sessionpolicy', 'judged', '-o', 'json'])).stdout);
    expect(stored.spec.judge).toMatchObject({ backend: 'openai', model: 'qwen2.5-coder:7b' });
  });
});
