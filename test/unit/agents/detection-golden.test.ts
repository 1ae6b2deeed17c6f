/**
 * Golden pane fixtures: every directory test/support/fixtures/<agent>/<version>/ classifies, with
 * the built-in template's profile for <version>, exactly as its expected.json says. A directory
 * whose version no profile lists fails loudly (DetectionVersionError), so a fixture set recorded
 * from a new CLI release cannot pass against patterns verified on another one.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import {
  classifyScreen,
  compileDetection,
  DetectionVersionError,
  selectProfile,
  validateDetection,
  type ScreenClass,
} from '../../../controller/agents/detection.js';
import { registry } from '../../../controller/config/crds.js';
import { readManifests } from '../../../controller/config/manifest.js';
import { prepareManifests } from '../../../controller/client/apply.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const FIXTURES = path.join(ROOT, 'test/support/fixtures');
const TEMPLATES = path.join(ROOT, 'manifests/agents');
const BUILTIN = ['aider', 'claude-code', 'codex', 'gemini-cli', 'shell'];

interface Expected {
  template: string;
  screens: Record<
    string,
    {
      state: ScreenClass['state'];
      dialog?: string;
      quotaExhausted?: boolean;
      interrupted?: boolean;
      inputReady?: boolean;
      promptIncludes?: string[];
    }
  >;
}

function template(file: string): { spec: { detection: Record<string, unknown> } } {
  return YAML.parse(fs.readFileSync(path.join(ROOT, file), 'utf8'));
}

/** Every <agent>/<version> directory that has an expected.json. */
function fixtureDirs(): string[] {
  const out: string[] = [];
  for (const agent of fs.readdirSync(FIXTURES).sort())
    for (const version of fs.readdirSync(path.join(FIXTURES, agent)).sort())
      if (fs.existsSync(path.join(FIXTURES, agent, version, 'expected.json')))
        out.push(path.join(FIXTURES, agent, version));
  return out;
}

/**
 * Classifies every screen of a fixture directory; returns the mismatches (throws
 * DetectionVersionError for an unlisted version).
 */
function checkFixtureDir(dir: string): string[] {
  const version = path.basename(dir);
  const expected = JSON.parse(fs.readFileSync(path.join(dir, 'expected.json'), 'utf8')) as Expected;
  const profile = selectProfile(
    compileDetection(template(expected.template).spec.detection, expected.template),
    version,
  );
  const problems: string[] = [];
  const screens = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.txt'))
    .sort();
  for (const f of screens) if (!expected.screens[f]) problems.push(`${f}: no entry in expected.json`);
  for (const [f, want] of Object.entries(expected.screens)) {
    if (!screens.includes(f)) {
      problems.push(`${f}: listed in expected.json but missing`);
      continue;
    }
    const got = classifyScreen(fs.readFileSync(path.join(dir, f), 'utf8'), profile);
    const pick = (c: Partial<ScreenClass>) => ({
      state: c.state,
      dialog: c.dialog,
      quotaExhausted: !!c.quotaExhausted,
      interrupted: !!c.interrupted,
      inputReady: !!c.inputReady,
    });
    const a = pick(got);
    const b = pick(want);
    if (JSON.stringify(a) !== JSON.stringify(b))
      problems.push(`${f}: got ${JSON.stringify(a)}, expected ${JSON.stringify(b)}`);
    for (const s of want.promptIncludes ?? [])
      if (!got.prompt?.includes(s))
        problems.push(`${f}: prompt ${JSON.stringify(got.prompt)} lacks ${JSON.stringify(s)}`);
    if ((got.state === 'waiting' || got.state === 'dialog') && !got.prompt)
      problems.push(`${f}: ${got.state} without prompt text`);
    if (got.prompt && Buffer.byteLength(got.prompt) > 1024) problems.push(`${f}: prompt longer than 1 KB`);
  }
  return problems;
}

describe('golden pane fixtures', () => {
  const dirs = fixtureDirs();

  it('every built-in template has a fixture directory per profile, named by the template agent', () => {
    expect(
      fs
        .readdirSync(TEMPLATES)
        .filter((f) => f.endsWith('.yaml'))
        .map((f) => f.replace(/\.yaml$/, ''))
        .sort(),
    ).toEqual(BUILTIN);
    for (const name of BUILTIN) {
      const det = template(`manifests/agents/${name}.yaml`).spec.detection as {
        agent: string;
        profiles: { versions: string[]; source: string }[];
      };
      expect(det.agent).toBe(name);
      for (const p of det.profiles) {
        expect(p.source, `${name}: profile ${p.versions.join(',')} names its fixtures`).toMatch(
          new RegExp(`^test/support/fixtures/${name}/[^/]+$`),
        );
        expect(fs.existsSync(path.join(ROOT, p.source, 'expected.json')), `${p.source}/expected.json`).toBe(true);
        for (const v of p.versions.filter((x) => !x.includes('*')))
          expect(fs.existsSync(path.join(FIXTURES, name, v, 'expected.json')), `fixtures for ${name} ${v}`).toBe(true);
      }
    }
    expect(dirs.map((d) => path.relative(FIXTURES, d).split(path.sep)[0])).toEqual(expect.arrayContaining(BUILTIN));
  });

  it.each(dirs.map((d) => [path.relative(FIXTURES, d), d]))('%s classifies as expected.json says', (_name, dir) => {
    expect(checkFixtureDir(dir)).toEqual([]);
  });

  it('the Claude Code fixtures are the pinned version', () => {
    const pin = JSON.parse(fs.readFileSync(path.join(ROOT, 'scripts/claude-code/pin.json'), 'utf8')) as {
      version: string;
    };
    const versions = fs
      .readdirSync(path.join(FIXTURES, 'claude-code'))
      .filter((v) => fs.existsSync(path.join(FIXTURES, 'claude-code', v, 'expected.json')));
    expect(versions).toEqual([pin.version]);
    const det = template('manifests/agents/claude-code.yaml').spec.detection;
    expect(selectProfile(compileDetection(det, 'claude-code.yaml')).versions).toContain(pin.version);
  });

  describe('a fixture set from a version no profile lists', () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-golden-'));
    afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

    it('fails loudly, naming the agent, the version and the verified versions', () => {
      const copy = path.join(tmp, 'claude-code', '2.1.999');
      fs.cpSync(path.join(FIXTURES, 'claude-code', '2.1.330'), copy, { recursive: true });
      let thrown: unknown;
      try {
        checkFixtureDir(copy);
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(DetectionVersionError);
      const msg = (thrown as Error).message;
      expect(msg).toContain('claude-code');
      expect(msg).toContain('2.1.999');
      expect(msg).toContain('verified: 2.1.330');
    });

    it('passes again once it is copied under the listed version (the check itself is sound)', () => {
      const copy = path.join(tmp, 'claude-code', '2.1.330');
      fs.cpSync(path.join(FIXTURES, 'claude-code', '2.1.330'), copy, { recursive: true });
      expect(checkFixtureDir(copy)).toEqual([]);
    });

    it('an expected.json that disagrees with a screen is reported', () => {
      const copy = path.join(tmp, 'codex', '0.169.0');
      fs.cpSync(path.join(FIXTURES, 'codex', '0.169.0'), copy, { recursive: true });
      const file = path.join(copy, 'expected.json');
      const exp = JSON.parse(fs.readFileSync(file, 'utf8')) as Expected;
      exp.screens['busy.txt'].state = 'idle';
      fs.writeFileSync(file, JSON.stringify(exp));
      expect(checkFixtureDir(copy)).toEqual([expect.stringMatching(/^busy\.txt: got .*"busy".*expected .*"idle"/)]);
    });
  });
});

describe('built-in Agent templates', () => {
  it('validate through the apply pipeline (CRD schema) and their detection data is well-formed', () => {
    const { docs, errors } = readManifests([path.relative(process.cwd(), TEMPLATES)], true);
    expect(errors.map((e) => e.message)).toEqual([]);
    const objects = prepareManifests(docs, registry()).map((p) => p.manifest);
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual(BUILTIN.map((n) => `Agent/${n}`));
    for (const o of objects)
      expect(
        validateDetection((o.spec as { detection?: unknown }).detection, 'spec.detection'),
        o.metadata.name,
      ).toEqual([]);
  });

  it('Claude Code: keys and dialogs as the spike found them', () => {
    const p = selectProfile(
      compileDetection(template('manifests/agents/claude-code.yaml').spec.detection, 'claude-code.yaml'),
      '2.1.330',
    );
    expect(p.contextWindowTokens).toBe(200000);
    expect(p.approveKeys).toEqual(['Enter']);
    expect(p.denyKeys).toEqual(['Escape']);
    const keys = Object.fromEntries(p.dialogs.map((d) => [d.name, d.answerKeys]));
    expect(keys).toMatchObject({
      'workspace-trust': ['Down', 'Enter'],
      'custom-api-key': ['Up', 'Enter'],
      'bypass-permissions': ['Down', 'Enter'],
      'auto-mode-opt-in': ['Down', 'Enter'],
    });
    expect(keys).toHaveProperty('mcp-server', undefined);
    expect(keys).toHaveProperty('login', undefined);
    const spec = YAML.parse(fs.readFileSync(path.join(TEMPLATES, 'claude-code.yaml'), 'utf8')).spec;
    expect(spec.stop.keys).toEqual(['C-c', 'C-c']);
    expect(spec.hooks).toEqual({ kind: 'claude-code', configDir: 'auto' });
  });
});
