/**
 * A phase's handoff to the next, as it travels between hosts: the phase's node reads handoff.md
 * from the run's workspace (bounded, a stat per pass, again only when it changed) and mirrors it
 * into status.handoff (terminal escapes out), beside its report's notes (status.report.notes, only
 * from a valid status.json); the pipeline builds "## Handoff from phase X" from the session's
 * status alone, within its share of the bound.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentSession } from '../../../../controller/api/session.js';
import { readHandoffFile } from '../../../../controller/observers/handoff.js';
import { MAX_REPORT_BYTES, readReport } from '../../../../controller/observers/report.js';
import { composePhasePrompt, readHandoff } from '../../../../controller/reconcilers/pipeline/handoff.js';
import { applyHandoff } from '../../../../controller/reconcilers/session/handoff.js';
import { applyReport } from '../../../../controller/reconcilers/session/report.js';

const NOW = '2026-01-01T12:00:00.000Z';
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function workspace(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-handoff-'));
  dirs.push(dir);
  for (const [f, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, f), text);
  return dir;
}

/** What the phase's node writes to status for run 2 of a session whose workspace is `dir`. */
function mirrored(dir: string): AgentSession {
  const r = readReport(dir, undefined);
  return {
    apiVersion: 'orchctl.io/v1alpha1',
    kind: 'AgentSession',
    metadata: { name: 's' },
    status: {
      run: 2,
      handoff: applyHandoff(undefined, 2, readHandoffFile(dir, undefined), NOW),
      ...(r ? { report: applyReport(undefined, 2, r, MAX_REPORT_BYTES, NOW).report } : {}),
    },
  };
}

describe('handoff', () => {
  it('handoff.md and the report notes go under the phase heading, below the task', () => {
    const s = mirrored(
      workspace({
        'handoff.md': '# State\r\nAPI done.\u001b[2J\u0007\nNext: the UI.\n',
        'status.json': JSON.stringify({ status: 'complete', notes: 'all\n green' }),
      }),
    );
    expect(s.status?.handoff).toMatchObject({ run: 2, text: '# State\nAPI done.[2J\nNext: the UI.\n', at: NOW });
    expect(s.status?.report?.notes).toBe('all green');
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

  it('bounded twice: 8 KiB in status, then the phase share; a corrupt status.json gives no notes', () => {
    const s = mirrored(workspace({ 'handoff.md': 'é'.repeat(6000), 'status.json': '{"status": ' }));
    expect(s.status?.handoff).toMatchObject({ bytes: 12_000, truncated: true });
    expect(Buffer.byteLength(s.status!.handoff!.text)).toBe(8192);
    const h = readHandoff('a', s, 101);
    expect(h.text).toBe('é'.repeat(50)); // cut at 101 bytes, the split character dropped
    expect(h.truncated).toBe(true);
    expect(h.notes).toBeUndefined();
    expect(composePhasePrompt('T', [h])).toMatch(/cut here: the rest of handoff\.md is in the workspace of phase a/);
  });

  it('read again only when the file changed; a symlink is not followed; another run is not handed on', () => {
    const dir = workspace({ 'handoff.md': 'first' });
    const first = readHandoffFile(dir, undefined)!;
    expect(readHandoffFile(dir, first.stamp)).toBeUndefined();
    fs.writeFileSync(path.join(dir, 'handoff.md'), 'second, longer');
    expect(readHandoffFile(dir, first.stamp)?.text).toBe('second, longer');
    const secret = workspace({ 'secret.txt': 'do not read' });
    const linked = workspace({});
    fs.symlinkSync(path.join(secret, 'secret.txt'), path.join(linked, 'handoff.md'));
    expect(readHandoffFile(linked, undefined)).toBeUndefined();

    const s = mirrored(dir);
    s.status!.run = 3; // a new run that wrote none yet: the last run's is not its handoff
    expect(readHandoff('a', s, 100)).toEqual({ phase: 'a', run: 3 });
  });

  it('nothing left behind: the section says so; no dependencies: the task as it is', () => {
    const h = readHandoff('a', mirrored(workspace({})), 100);
    expect(composePhasePrompt('T', [h])).toBe(
      'T\n\n## Handoff from phase a\n\nPhase a completed (run 2) and left no handoff.md.\n',
    );
    expect(composePhasePrompt('T', [])).toBe('T');
  });
});
