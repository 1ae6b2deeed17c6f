/**
 * Which sessions a SessionPolicy selects, as `apply`, `describe` and `explain` say it
 * (docs/controller.md, "Selectors"): a missing selector selects none, `{}` every session.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { orchctl, tempHome } from '../support/cli.js';

const home = tempHome();
afterAll(() => fs.rmSync(path.dirname(home), { recursive: true, force: true }));

let n = 0;
function file(yaml: string): string {
  const f = path.join(path.dirname(home), `m-${++n}.yaml`);
  fs.writeFileSync(f, yaml);
  return f;
}
const policy = (name: string, spec: string) =>
  `apiVersion: orchctl.io/v1alpha1\nkind: SessionPolicy\nmetadata: {name: ${name}}\nspec: ${spec}\n---\n`;
const session = (name: string, labels: string) =>
  `apiVersion: orchctl.io/v1alpha1\nkind: AgentSession\nmetadata: {name: ${name}, labels: ${labels}}\n` +
  "spec: {workdir: ., agent: {command: ['true']}, prompt: x, desiredState: Stopped}\n---\n";

describe('SessionPolicy selector', () => {
  it('apply warns on stderr about a policy that applies to no session now, and still applies it', async () => {
    const r = await orchctl(home, [
      'apply',
      '-f',
      file(
        session('s1', '{team: web}') +
          policy('nosel', '{maxConcurrentSessions: 2}') +
          policy('everyone', '{selector: {}}') +
          policy('typo', '{selector: {matchLabels: {team: wbe}}}') +
          policy('web', '{selector: {matchLabels: {team: web}}, priority: 5}'),
      ),
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain('sessionpolicy.orchctl.io/nosel created');
    const warnings = r.stderr.trim().split('\n');
    expect(warnings).toEqual([
      expect.stringMatching(
        /^warning: sessionpolicy "nosel" applies to no session .*a missing selector selects nothing/,
      ),
      expect.stringMatching(/^warning: sessionpolicy "everyone" applies to no session .*governed by a higher-priority/),
      expect.stringMatching(/^warning: sessionpolicy "typo" applies to no session .*its selector matches none of/),
    ]);
    // Applied again unchanged: the same warnings (they are about now, not about the change).
    const again = await orchctl(home, [
      'apply',
      '-f',
      file(policy('web', '{selector: {matchLabels: {team: web}}, priority: 5}')),
    ]);
    expect(again.stderr).toBe('');
  });

  it('describe writes {} as every session, a missing selector as none, and lists what it governs', async () => {
    const all = (await orchctl(home, ['describe', 'sessionpolicy', 'everyone'])).stdout;
    expect(all).toMatch(/Selector: +\{\} \(every session in the namespace\)/);
    expect(all).toMatch(/^Governs: +<none>$/m);
    const web = (await orchctl(home, ['describe', 'sessionpolicy', 'web'])).stdout;
    expect(web).toMatch(/^Governs: +s1$/m);
    const none = (await orchctl(home, ['describe', 'sessionpolicy', 'nosel'])).stdout;
    expect(none).toMatch(/Selector: +none: selects no session/);
  });

  it('explain says what the code does: a missing selector selects none, {} every session', async () => {
    const r = await orchctl(home, ['explain', 'sessionpolicy.spec.selector']);
    const text = r.stdout.replace(/\s+/g, ' ');
    expect(text).toContain('`{}` (empty) selects every session in the namespace; a missing selector selects none');
    const ap = (await orchctl(home, ['explain', 'autopilot.spec.projectSelector'])).stdout.replace(/\s+/g, ' ');
    expect(ap).toContain('a missing selector selects none');
  });
});
