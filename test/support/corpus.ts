/**
 * The labelled signal corpus (test/corpus/README.md): real screens, hook streams, transcripts and
 * commands recorded from the real CLIs, each with the state a person would name. This module loads
 * them and classifies each through the SAME functions the controller uses — classifyScreen with the
 * built-in Agent's profile (and what orchctl typed), foldEvents + agentState for hook streams, the
 * driver's transcript reader + foldEvents + contextStep for transcripts, the assessment detector's signals for
 * commands — for test/unit/corpus.test.ts and the `corpus` benchmark (bench/modules/corpus.ts).
 *
 * Sources:
 *  - test/corpus/<agent>/<class>/<name>.json, the label file, next to its data file
 *    <name>.screen.txt | <name>.hooks.jsonl | <name>.transcript.jsonl (a `command` sample keeps its
 *    input in the label file);
 *  - test/support/fixtures/<agent>/<version>/expected.json: the recorded pane fixtures, imported
 *    with their labels;
 *  - test/fixtures/commands/compound.json when present: a table of compound commands with their
 *    expected signals (`{commands: [{command, output? | outputFile?, exitCode, signals: [...]}]}`).
 */
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { jsonlTranscript } from '../../controller/agents/claude-code.js';
import { classifyScreen, detectionFor, type DetectionProfile } from '../../controller/agents/detection.js';
import { driverFor } from '../../controller/agents/drivers.js';
import type { AgentSpec } from '../../controller/api/kinds.js';
import { assessmentConfig } from '../../controller/reconcilers/assessment/config.js';
import { detect, newDetectorState } from '../../controller/reconcilers/assessment/detector.js';
import {
  agentState,
  contextStep,
  foldEvents,
  newObservation,
} from '../../controller/reconcilers/session/agent-state.js';
import { type AgentEvent, LOG_START, type ToolResultEvent } from '../../controller/store/eventlog.js';
import { toolOutput } from './assessment-transcript.js';

const DETECTOR = assessmentConfig(undefined).detector;

/** The repository (this file also runs compiled, from dist/test/support/, for the benchmark). */
function repoRoot(): string {
  let d = import.meta.dirname;
  while (!fs.existsSync(path.join(d, 'package.json')) && path.dirname(d) !== d) d = path.dirname(d);
  return d;
}
export const ROOT = repoRoot();
export const CORPUS = path.join(ROOT, 'test/corpus');
const FIXTURES = path.join(ROOT, 'test/support/fixtures');
const COMPOUND = path.join(ROOT, 'test/fixtures/commands/compound.json');

export type SampleKind = 'screen' | 'hooks' | 'transcript' | 'command';

/**
 * The classes a person names. Screens and hook streams: busy, idle, waiting (a permission prompt or
 * a question), dialog (a startup dialog), unknown (nothing recognisable), rate-limited,
 * interrupted, exited. Transcripts: turns (turn boundaries), context (a context-window figure),
 * rate-limited, interrupted. Commands: command.
 */
export const CLASSES = [
  'busy',
  'idle',
  'waiting',
  'dialog',
  'unknown',
  'rate-limited',
  'interrupted',
  'exited',
  'turns',
  'context',
  'command',
] as const;
export type SampleClass = (typeof CLASSES)[number];

/** What is asserted of a sample: its class, and these fields when the label gives them. */
export interface Label {
  class: SampleClass;
  // screens
  state?: string;
  dialog?: string;
  quotaExhausted?: boolean;
  interrupted?: boolean;
  inputReady?: boolean;
  // hook streams and transcripts
  turns?: number;
  quota?: boolean;
  permission?: boolean;
  /** Context window: the percent (one decimal) and the reportEvery (10) % steps crossed from 0. */
  contextPercent?: number;
  contextSteps?: number[];
  // commands: the detector's signals for the tool call, in order (a compound command can carry several)
  signals?: string[];
}

export interface Sample {
  /** test/corpus-relative id: <agent>/<class>/<name>, or fixtures:<agent>/<version>/<file>. */
  id: string;
  kind: SampleKind;
  agent: string;
  /** CLI version it was recorded from (selects the detection profile). */
  version?: string;
  label: Label;
  /** How it was recorded: "recorded from claude-code 2.1.330 on <date> by <how>". */
  source: string;
  /** The data: a capture, JSONL text, or the command's input. */
  data: string;
  command?: { command: string; output?: string; exitCode?: number; isError?: boolean };
  /** Texts orchctl typed into the pane before the capture (their echo is not the agent's output). */
  typed?: string[];
  /** The transcript's context window (default: the Agent's profile, else 200 000). */
  windowTokens?: number;
}

export interface Predicted {
  class: SampleClass;
  fields: Partial<Label>;
}

/** The label file (<name>.json) of a corpus sample. */
interface LabelFile {
  kind: SampleKind;
  label: Omit<Label, 'class'> & { class?: SampleClass };
  source: string;
  version?: string;
  typed?: string[];
  windowTokens?: number;
  command?: Sample['command'];
  /** Why the label is what it is, where that is not obvious. */
  note?: string;
}

const DATA_EXT: Record<Exclude<SampleKind, 'command'>, string> = {
  screen: '.screen.txt',
  hooks: '.hooks.jsonl',
  transcript: '.transcript.jsonl',
};

function walk(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? walk(p) : [p];
  });
}

/** Every sample: the corpus, the imported fixtures and (when present) the compound-command table. */
export function loadCorpus(): Sample[] {
  return [...corpusSamples(), ...fixtureSamples(), ...compoundSamples()];
}

function corpusSamples(): Sample[] {
  const out: Sample[] = [];
  for (const file of walk(CORPUS)
    .filter((f) => f.endsWith('.json'))
    .sort()) {
    const rel = path.relative(CORPUS, file);
    const parts = rel.split(path.sep);
    if (parts.length !== 3) throw new Error(`${rel}: a label file belongs at <agent>/<class>/<name>.json`);
    const [agent, cls, base] = parts;
    const name = base.slice(0, -'.json'.length);
    const lf = JSON.parse(fs.readFileSync(file, 'utf8')) as LabelFile;
    if (!CLASSES.includes(cls as SampleClass)) throw new Error(`${rel}: unknown class directory ${cls}`);
    if (lf.label.class && lf.label.class !== cls) throw new Error(`${rel}: label.class ${lf.label.class} ≠ ${cls}`);
    if (!lf.source) throw new Error(`${rel}: no source (how and from what it was recorded)`);
    let data = '';
    if (lf.kind !== 'command') {
      const dataFile = path.join(path.dirname(file), `${name}${DATA_EXT[lf.kind]}`);
      if (!fs.existsSync(dataFile)) throw new Error(`${rel}: its data file ${path.basename(dataFile)} is missing`);
      data = fs.readFileSync(dataFile, 'utf8');
    } else if (!lf.command?.command) throw new Error(`${rel}: a command sample needs command.command`);
    out.push({
      id: `${agent}/${cls}/${name}`,
      kind: lf.kind,
      agent,
      version: lf.version,
      label: { ...lf.label, class: cls as SampleClass },
      source: lf.source,
      data,
      command: lf.command,
      typed: lf.typed,
      windowTokens: lf.windowTokens,
    });
  }
  return out;
}

/** The class a screen reading is: a limit first, then dialog, waiting, interrupted, else its state. */
export function screenClass(c: { state: string; quotaExhausted?: boolean; interrupted?: boolean }): SampleClass {
  if (c.quotaExhausted) return 'rate-limited';
  if (c.state === 'dialog' || c.state === 'waiting') return c.state;
  if (c.interrupted) return 'interrupted';
  return c.state as SampleClass;
}

/** The recorded pane fixtures of test/support/fixtures, with their expected.json as labels. */
function fixtureSamples(): Sample[] {
  const out: Sample[] = [];
  for (const agent of fs.existsSync(FIXTURES) ? fs.readdirSync(FIXTURES).sort() : []) {
    for (const version of fs.readdirSync(path.join(FIXTURES, agent)).sort()) {
      const dir = path.join(FIXTURES, agent, version);
      const expectedFile = path.join(dir, 'expected.json');
      if (!fs.existsSync(expectedFile)) continue;
      const expected = JSON.parse(fs.readFileSync(expectedFile, 'utf8')) as {
        screens: Record<string, Omit<Label, 'class'> & { state: string; promptIncludes?: string[] }>;
      };
      for (const [file, want] of Object.entries(expected.screens)) {
        const { promptIncludes: _, ...fields } = want;
        out.push({
          id: `fixtures:${agent}/${version}/${file}`,
          kind: 'screen',
          agent,
          version,
          label: { ...fields, class: screenClass(fields) },
          source: `recorded from ${agent} ${version} (test/support/fixtures/${agent}/${version}/README.md)`,
          data: fs.readFileSync(path.join(dir, file), 'utf8'),
        });
      }
    }
  }
  return out;
}

/** The compound-command table (another branch adds it), as `command` samples. */
function compoundSamples(): Sample[] {
  if (!fs.existsSync(COMPOUND)) return [];
  const rows = JSON.parse(fs.readFileSync(COMPOUND, 'utf8')) as unknown;
  const list = Array.isArray(rows) ? rows : ((rows as { commands?: unknown[] }).commands ?? []);
  return list.map((r, i) => {
    const row = r as {
      name?: string;
      command: string;
      output?: string;
      exitCode?: number;
      expected?: Omit<Label, 'class'>;
      outputFile?: string;
      signals?: string[];
    };
    if (typeof row.command !== 'string') throw new Error(`${COMPOUND}: row ${i} has no command`);
    return {
      id: `compound:${row.name ?? i}`,
      kind: 'command' as const,
      agent: 'any',
      label: { ...(row.expected ?? {}), signals: row.signals ?? [], class: 'command' as const },
      source: 'test/fixtures/commands/compound.json',
      data: '',
      command: {
        command: row.command,
        output: row.outputFile ? toolOutput(row.outputFile).output : row.output,
        exitCode: row.exitCode,
      },
    };
  });
}

// ---- classification: the controller's own functions ------------------------------------------

const agents = new Map<string, AgentSpec>();
/** The built-in Agent (manifests/agents/<agent>.yaml); `generic`: an Agent without detection data. */
export function agentSpec(agent: string): AgentSpec {
  let spec = agents.get(agent);
  if (!spec) {
    if (agent === 'generic') spec = { command: ['some-cli'] };
    else {
      const file = path.join(ROOT, 'manifests/agents', `${agent}.yaml`);
      spec = (YAML.parse(fs.readFileSync(file, 'utf8')) as { spec: AgentSpec }).spec;
    }
    agents.set(agent, spec);
  }
  return spec;
}

function profile(s: Sample): DetectionProfile {
  const p = detectionFor(agentSpec(s.agent), s.agent === 'generic' ? undefined : s.version);
  if (!p) throw new Error(`${s.id}: agent ${s.agent} has no detection profile`);
  return p;
}

const jsonLines = (text: string): Record<string, unknown>[] =>
  text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/** Hook payloads (as the hook command receives them on stdin) → the events the agent feed appends. */
function hookEvents(text: string): AgentEvent[] {
  const t0 = Date.parse('2026-01-01T00:00:00Z');
  return jsonLines(text).map((payload, i) => ({
    seq: i + 1,
    ts: new Date(t0 + i * 1000).toISOString(),
    run: 1,
    source: 'hook' as const,
    type: 'hook' as const,
    hook: String(payload.hook_event_name),
    payload,
  }));
}

/** Transcript lines → events through the Agent's driver's reader (the generic JSONL one otherwise). */
function transcriptEvents(s: Sample): AgentEvent[] {
  const reader = driverFor(agentSpec(s.agent)).transcript ?? jsonlTranscript;
  const st = reader.newState();
  let seq = 0;
  return jsonLines(s.data).flatMap((line) =>
    reader.events(line, 1, st).map((e) => ({ ...e, seq: ++seq }) as AgentEvent),
  );
}

/** Classifies one sample as the controller would. */
export function classify(s: Sample): Predicted {
  switch (s.kind) {
    case 'screen': {
      const c = classifyScreen(s.data, profile(s), { typed: s.typed });
      return {
        class: screenClass(c),
        fields: {
          state: c.state,
          dialog: c.dialog,
          quotaExhausted: c.quotaExhausted,
          interrupted: c.interrupted,
          inputReady: c.inputReady,
        },
      };
    }
    case 'hooks': {
      const events = hookEvents(s.data);
      const notice = driverFor(agentSpec(s.agent)).transcript?.limitNotice;
      const obs = foldEvents(newObservation(1, LOG_START), events, { seq: events.length, offset: 0 }, notice);
      const now = Date.parse(events.at(-1)?.ts ?? '2026-01-01T00:00:00Z') + 1000;
      const st = agentState({ obs, now, stalledAfterMs: 600_000, startedAt: now - 60_000 });
      const cls: SampleClass = obs.quota ? 'rate-limited' : obs.interrupted ? 'interrupted' : (st.state as SampleClass);
      return {
        class: cls,
        fields: { state: st.state, turns: obs.turns, quota: !!obs.quota, permission: !!obs.permission },
      };
    }
    case 'transcript': {
      const events = transcriptEvents(s);
      const notice = driverFor(agentSpec(s.agent)).transcript?.limitNotice;
      const obs = foldEvents(newObservation(1, LOG_START), events, { seq: events.length, offset: 0 }, notice);
      const window = s.windowTokens ?? profile(s).contextWindowTokens ?? 200_000;
      const step = obs.contextTokens !== undefined ? contextStep(obs.contextTokens, window, 0) : undefined;
      const percent =
        obs.contextTokens !== undefined ? Math.round((obs.contextTokens / window) * 1000) / 10 : undefined;
      const cls: SampleClass = obs.quota
        ? 'rate-limited'
        : obs.interrupted
          ? 'interrupted'
          : s.label.class === 'context'
            ? 'context'
            : 'turns';
      const turns = events.filter((e) => e.type === 'assistant_message' && e.stopReason === 'end_turn').length;
      return {
        class: cls,
        fields: {
          turns,
          quota: !!obs.quota,
          interrupted: !!obs.interrupted,
          contextPercent: percent,
          // The Events a controller records from a zero figure (`steps`; before issue 24, only `step`).
          contextSteps: step ? ((step as { steps?: number[] }).steps ?? [step.step]) : [],
        },
      };
    }
    case 'command': {
      const c = s.command!;
      const ev: ToolResultEvent = {
        seq: 1,
        ts: '2026-01-01T00:00:00Z',
        run: 1,
        source: 'transcript',
        type: 'tool_result',
        tool: 'Bash',
        command: c.command,
        output: c.output ?? '',
        isError: c.isError ?? (c.exitCode !== undefined && c.exitCode !== 0),
        ...(c.exitCode !== undefined ? { exitCode: c.exitCode } : {}),
      };
      return { class: 'command', fields: { signals: detect(newDetectorState(1), ev, DETECTOR).signals } };
    }
  }
}

/** The label's fields the prediction gets wrong (the class first), as "field: want ≠ got". */
export function mismatches(s: Sample, p: Predicted): string[] {
  const out: string[] = [];
  if (p.class !== s.label.class) out.push(`class: ${s.label.class} ≠ ${p.class}`);
  for (const [k, want] of Object.entries(s.label)) {
    if (k === 'class') continue;
    const got = p.fields[k as keyof Label];
    if (JSON.stringify(got ?? null) !== JSON.stringify(want ?? null))
      out.push(`${k}: ${JSON.stringify(want)} ≠ ${JSON.stringify(got)}`);
  }
  return out;
}

export interface CorpusScore {
  samples: number;
  correct: number;
  accuracy: number;
  /** Per expected class: samples, correct (class and every labelled field), accuracy. */
  perClass: Record<string, { samples: number; correct: number; accuracy: number }>;
  /** confusion[expected][predicted] = count (predicted class only). */
  confusion: Record<string, Record<string, number>>;
  failures: { id: string; why: string[] }[];
}

/** Accuracy per class and the confusion table of a classification run over `samples`. */
export function scoreCorpus(samples: Sample[], classifyFn: (s: Sample) => Predicted = classify): CorpusScore {
  const perClass: CorpusScore['perClass'] = {};
  const confusion: CorpusScore['confusion'] = {};
  const failures: CorpusScore['failures'] = [];
  let correct = 0;
  for (const s of samples) {
    let p: Predicted;
    try {
      p = classifyFn(s);
    } catch (e) {
      p = { class: 'unknown', fields: {} };
      failures.push({ id: s.id, why: [`threw: ${(e as Error).message}`] });
    }
    const why = mismatches(s, p);
    perClass[s.label.class] ??= { samples: 0, correct: 0, accuracy: 0 };
    confusion[s.label.class] ??= {};
    const c = perClass[s.label.class];
    const row = confusion[s.label.class];
    c.samples++;
    row[p.class] = (row[p.class] ?? 0) + 1;
    if (!why.length) {
      c.correct++;
      correct++;
    } else if (!failures.some((f) => f.id === s.id)) failures.push({ id: s.id, why });
  }
  for (const c of Object.values(perClass)) c.accuracy = Math.round((c.correct / c.samples) * 10_000) / 10_000;
  return {
    samples: samples.length,
    correct,
    accuracy: samples.length ? Math.round((correct / samples.length) * 10_000) / 10_000 : 0,
    perClass,
    confusion,
    failures,
  };
}
