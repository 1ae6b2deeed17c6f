/**
 * Apply-time admission of patterns, through the real bin/orchctl: a SessionPolicy with an
 * invalid regex or a catastrophic-backtracking candidate among its detector or task-boundary
 * patterns, or an Agent / inline agent with bad detection patterns, is refused with
 * file:line:column, the field and the reason — and nothing is written.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { orchctl, tempHome } from '../support/cli.js';

let home: string;
let dir: string;
beforeEach(() => {
  home = tempHome();
  dir = path.dirname(home);
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const write = (name: string, text: string) => {
  const f = path.join(dir, name);
  fs.writeFileSync(f, text);
  return f;
};

const POLICY = `apiVersion: orchctl.io/v1alpha1
kind: SessionPolicy
metadata:
  name: strict
spec:
  selector: {}
  detector:
    frustrationPatterns:
      - '\\btry again\\b'
      - '(unclosed'
      - '^(a+)+$'
    correctionPatterns:
      - '(no|nope)+ way'
  checkpoints:
    taskBoundaryPatterns:
      - '(?i)\\bdone\\b'
      - '(.|\\s)*finished'
  breaker:
    cooldown: 0s
`;

describe('apply refuses bad patterns', () => {
  it('names file:line:column, the field and why, for each bad pattern, and writes nothing', async () => {
    const f = write('policy.yaml', POLICY);
    const r = await orchctl(home, ['apply', '-f', f]);
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toBe('');
    const lines = r.stderr.split('\n').filter(Boolean);
    expect(lines.slice(0, 2)).toEqual([
      `error: ${f}:10:9 (document 1) spec.detector.frustrationPatterns[1]: ` +
        'invalid regular expression "(unclosed": Unterminated group',
      `error: ${f}:11:9 (document 1) spec.detector.frustrationPatterns[2]: ` +
        'regular expression "^(a+)+$" may backtrack catastrophically: ' +
        'the repeated group "(a+)+" contains the repetition "a+" (nested quantifiers); ' +
        'repeat a single, fixed-length piece instead, e.g. "(ab)+" or "\\w+"',
    ]);
    expect(r.stderr).toContain(
      `${f}:13:9 (document 1) spec.detector.correctionPatterns[0]: ` +
        'regular expression "(no|nope)+ way" may backtrack catastrophically: in the repeated group "(no|nope)+" ' +
        'alternatives 1 and 2 can start with the same character (overlapping alternation)',
    );
    expect(r.stderr).toContain(
      `${f}:17:9 (document 1) spec.checkpoints.taskBoundaryPatterns[1]: ` +
        'regular expression "(.|\\s)*finished" may backtrack catastrophically',
    );
    expect(r.stderr).toContain(`${f}:19:15 (document 1) spec.breaker.cooldown: must be a positive duration like 5m`);
    expect(r.stderr.trimEnd().split('\n').at(-1)).toBe('error: no objects were changed (5 errors)');
    expect(r.stderr).not.toMatch(/^\s+at /m);
    const get = await orchctl(home, ['get', 'sessionpolicies']);
    expect(get.stderr).toContain('No resources found');
  });

  it('--dry-run refuses the same way; the fixed policy applies', async () => {
    const f = write('policy.yaml', POLICY);
    expect((await orchctl(home, ['apply', '-f', f, '--dry-run=client'])).exitCode).toBe(1);
    const fixed = write(
      'fixed.yaml',
      POLICY.replace("'(unclosed'", "'\\bstill broken\\b'")
        .replace("'^(a+)+$'", () => "'^a+$'")
        .replace("'(no|nope)+ way'", "'\\bno+pe?\\b way'")
        .replace("'(.|\\s)*finished'", "'\\bfinished\\b'")
        .replace('cooldown: 0s', 'cooldown: 15m'),
    );
    const r = await orchctl(home, ['apply', '-f', fixed]);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('sessionpolicy.orchctl.io/strict created\n');
  });

  it('an unknown field in the breaker section is refused by the schema', async () => {
    const f = write(
      'typo.yaml',
      'apiVersion: orchctl.io/v1alpha1\nkind: SessionPolicy\nmetadata: {name: typo}\n' +
        'spec:\n  breaker:\n    failureTreshold: 3\n',
    );
    const r = await orchctl(home, ['apply', '-f', f]);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(
      `${f}:6:5 (document 1) spec.breaker.failureTreshold: unknown field "spec.breaker.failureTreshold"`,
    );
  });

  it("Agent detection patterns and an inline agent's are checked too", async () => {
    const agent = `apiVersion: orchctl.io/v1alpha1
kind: Agent
metadata: {name: odd}
spec:
  command: [odd-cli]
  detection:
    profiles:
      - versions: ['1.0']
        busy: ['(x+x+)+y']
---
apiVersion: orchctl.io/v1alpha1
kind: AgentSession
metadata: {name: s}
spec:
  workdir: /tmp
  agent:
    command: [odd-cli]
    detection:
      profiles:
        - versions: ['1.0']
          idle: ['[z-a]']
`;
    const f = write('agent.yaml', agent);
    const r = await orchctl(home, ['apply', '-f', f]);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(
        `${f.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:9:\\d+ \\(document 1\\) ` +
          'spec\\.detection\\.profiles\\[0\\]\\.busy\\[0\\]: .*nested quantifiers',
      ),
    );
    expect(r.stderr).toContain(
      '(document 2) spec.agent.detection.profiles[0].idle[0]: ' +
        'invalid regular expression "[z-a]": Range out of order in character class',
    );
  });
});
