/**
 * A phase's handoff to the next: handoff.md from its run's workspace (bounded, terminal escapes
 * out) and its report's notes (only from a valid status.json), under "## Handoff from phase X".
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentSession } from '../../../../controller/api/session.js';
import { composePhasePrompt, readHandoff } from '../../../../controller/reconcilers/pipeline/handoff.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function workspace(files: Record<string, string>): AgentSession {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-handoff-'));
  dirs.push(dir);
  for (const [f, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, f), text);
  return {
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'AgentSession',
    metadata: { name: 's' },
    status: { run: 2, workspace: dir },
  };
}

describe('handoff', () => {
  it('handoff.md and the report notes go under the phase heading, below the task', () => {
    const s = workspace({
      'handoff.md': '# State\r\nAPI done.\u001b[2J\u0007\nNext: the UI.\n',
      'status.json': JSON.stringify({ status: 'complete', notes: 'all\n green' }),
    });
    const h = readHandoff('design', s, 8192);
    expect(h).toEqual({
      phase: 'design',
      run: 2,
      text: '# State\nAPI done.[2J\nNext: the UI.',
      truncated: false,
      notes: 'all green',
    });
    expect(composePhasePrompt('Task: build it\n', [h])).toBe(
      'Task: build it\n\n## Handoff from phase design\n\n# State\nAPI done.[2J\nNext: the UI.\n\n' +
        'Notes from its progress report: all green\n',
    );
  });

  it('bounded: a long handoff.md is cut and says so; a corrupt status.json gives no notes', () => {
    const s = workspace({ 'handoff.md': 'x'.repeat(10_000), 'status.json': '{"status": ' });
    const h = readHandoff('a', s, 100);
    expect(h.text).toHaveLength(100);
    expect(h.truncated).toBe(true);
    expect(h.notes).toBeUndefined();
    expect(composePhasePrompt('T', [h])).toMatch(/cut here: the rest of handoff\.md is in the workspace of phase a/);
  });

  it('nothing left behind: the section says so; no dependencies: the task as it is', () => {
    const h = readHandoff('a', workspace({}), 100);
    expect(composePhasePrompt('T', [h])).toBe(
      'T\n\n## Handoff from phase a\n\nPhase a completed (run 2) and left no handoff.md.\n',
    );
    expect(composePhasePrompt('T', [])).toBe('T');
  });
});
