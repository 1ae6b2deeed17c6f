/** kubectl JSONPath: printer-column paths and `-o jsonpath=` templates. */
import { describe, expect, it } from 'vitest';
import { evalPath, renderTemplate } from '../../../controller/cli/jsonpath.js';

const a = {
  kind: 'AgentSession',
  metadata: { name: 'fix-login', labels: { team: 'web', 'app.kubernetes.io/name': 'orchctl' } },
  spec: { agentRef: 'claude-code', command: ['claude', '-p'] },
  status: {
    phase: 'Running',
    restarts: 0,
    conditions: [
      { type: 'Ready', status: 'True' },
      { type: 'Progressing', status: 'False' },
    ],
  },
};
const b = {
  kind: 'AgentSession',
  metadata: { name: 'refactor' },
  spec: { agentRef: 'codex' },
  status: { phase: 'Pending' },
};
const list = { apiVersion: 'v1', kind: 'List', items: [a, b] };

describe('evalPath (printer columns)', () => {
  it('reads simple paths, with or without the leading dot or $', () => {
    expect(evalPath('.status.phase', a)).toEqual(['Running']);
    expect(evalPath('status.phase', a)).toEqual(['Running']);
    expect(evalPath('$.status.phase', a)).toEqual(['Running']);
    expect(evalPath('.status.restarts', a)).toEqual([0]);
  });

  it('filters lists the way CRD columns use it', () => {
    expect(evalPath('.status.conditions[?(@.type=="Ready")].status', a)).toEqual(['True']);
    expect(evalPath('.status.conditions[?(@.type=="Missing")].status', a)).toEqual([]);
  });

  it('returns nothing for a missing field and the whole object for "."', () => {
    expect(evalPath('.status.exitCode', a)).toEqual([]);
    expect(evalPath('.status.phase', {})).toEqual([]);
    expect(evalPath('.', b)).toEqual([b]);
  });

  it('supports wildcards and bracketed keys with dots', () => {
    expect(evalPath('.items[*].metadata.name', list)).toEqual(['fix-login', 'refactor']);
    expect(evalPath(".metadata.labels['app.kubernetes.io/name']", a)).toEqual(['orchctl']);
  });
});

describe('renderTemplate (-o jsonpath=)', () => {
  it('prints a field', () => {
    expect(renderTemplate('{.metadata.name}', a)).toBe('fix-login');
  });

  it('mixes literal text, quoted strings and several values', () => {
    expect(renderTemplate('name={.metadata.name} phase={.status.phase}{"\\n"}', a)).toBe(
      'name=fix-login phase=Running\n',
    );
    expect(renderTemplate('{.items[*].metadata.name}', list)).toBe('fix-login refactor');
    expect(renderTemplate('{"{literal}"}', a)).toBe('{literal}');
  });

  it('ranges over lists, nested too', () => {
    expect(renderTemplate('{range .items[*]}{.metadata.name}{"\\t"}{.spec.agentRef}{"\\n"}{end}', list)).toBe(
      'fix-login\tclaude-code\nrefactor\tcodex\n',
    );
    expect(
      renderTemplate(
        '{range .items[*]}{.metadata.name}:{range .status.conditions[*]}[{.type}={.status}]{end};{end}',
        list,
      ),
    ).toBe('fix-login:[Ready=True][Progressing=False];refactor:;');
  });

  it('prints maps and lists as JSON and missing values as nothing', () => {
    expect(renderTemplate('{.spec.command}', a)).toBe('["claude","-p"]');
    expect(renderTemplate('{.metadata.labels.team}', a)).toBe('web');
    expect(renderTemplate('[{.status.exitCode}]', a)).toBe('[]');
    expect(renderTemplate('{.status.restarts}', a)).toBe('0');
  });

  it('reports malformed templates', () => {
    expect(() => renderTemplate('{.metadata.name', a)).toThrow('unclosed action in template "{.metadata.name"');
    expect(() => renderTemplate('{range .items[*]}{.metadata.name}', list)).toThrow(
      '{range} without {end} in template',
    );
    expect(() => renderTemplate('{.metadata.name}{end}', a)).toThrow('{end} without {range} in template');
  });
});
