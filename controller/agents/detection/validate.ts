/** Shape validation of an Agent's `spec.detection` (used by admission at apply). */
import { checkPattern } from '../../api/patterns.js';
import { type Region, REGIONS, STATES, type Obj, isObj } from './types.js';

// ---------------------------------------------------------------------------------------------
// Shape validation (hand-written: the CRD keeps `detection` preserve-unknown, so the messages
// here are what a user sees for a typo in a template).

type Errs = { path: string; message: string }[];

const KEY_NAME = /^[^\s\x00-\x1f]+$/;
const DIALOG_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const VERSION = /^[0-9A-Za-z*][0-9A-Za-z.*+-]*$/;

/** Fields a profile may set; every one but `versions` may also be set at the top level as a default. */
const PROFILE_FIELDS = [
  'versions',
  'provenance',
  'source',
  'approveKeys',
  'denyKeys',
  'contextWindowTokens',
  'tailLines',
  'header',
  'ignore',
  'input',
  'dialogs',
  'waiting',
  'busy',
  'idle',
  'quota',
  'interrupted',
  'prompt',
  'otherwise',
  'failures',
] as const;
const TOP_FIELDS = ['agent', 'profiles', ...PROFILE_FIELDS.filter((f) => f !== 'versions')];
const PATTERN_FIELDS = ['regex', 'flags', 'region', 'within', 'since', 'box'];

function unknownKeys(o: Obj, allowed: readonly string[], at: string, errs: Errs): void {
  for (const k of Object.keys(o))
    if (!allowed.includes(k))
      errs.push({ path: `${at}.${k}`, message: `unknown field (allowed: ${allowed.join(', ')})` });
}

function checkRegex(src: unknown, at: string, errs: Errs, flags = ''): void {
  if (typeof src !== 'string' || !src)
    return void errs.push({ path: at, message: 'must be a non-empty string (a JavaScript regular expression)' });
  try {
    new RegExp(src, 'm' + flags);
  } catch (e) {
    const detail = (e as Error).message.replace(/^Invalid regular expression: \/.*\/[a-z]*: /, '');
    return void errs.push({ path: at, message: `invalid regular expression ${JSON.stringify(src)}: ${detail}` });
  }
  const problem = checkPattern(src);
  if (problem) errs.push({ path: at, message: problem });
}

function checkInt(v: unknown, at: string, errs: Errs, min: number, max: number): void {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
    errs.push({ path: at, message: `must be an integer from ${min} to ${max}` });
}

function checkKeys(v: unknown, at: string, errs: Errs): void {
  if (!Array.isArray(v)) return void errs.push({ path: at, message: 'must be a list of tmux key names, e.g. [Enter]' });
  for (const [i, k] of v.entries())
    if (typeof k !== 'string' || !KEY_NAME.test(k))
      errs.push({ path: `${at}[${i}]`, message: 'must be a tmux key name (no spaces), e.g. Enter, Down, C-c' });
}

function checkPatternList(v: unknown, at: string, errs: Errs): void {
  if (!Array.isArray(v))
    return void errs.push({
      path: at,
      message: 'must be a list of patterns (a regex string or {regex, flags, region, within, box})',
    });
  for (const [i, p] of v.entries()) {
    const pa = `${at}[${i}]`;
    if (typeof p === 'string') {
      checkRegex(p, pa, errs);
      continue;
    }
    if (!isObj(p)) {
      errs.push({ path: pa, message: 'must be a regex string or an object with regex' });
      continue;
    }
    unknownKeys(p, PATTERN_FIELDS, pa, errs);
    if (p.flags !== undefined && (typeof p.flags !== 'string' || !/^[isu]*$/.test(p.flags)))
      errs.push({ path: `${pa}.flags`, message: 'may only hold i, s and u (m is always on)' });
    checkRegex(p.regex, `${pa}.regex`, errs, typeof p.flags === 'string' && /^[isu]*$/.test(p.flags) ? p.flags : '');
    if (p.region !== undefined && !REGIONS.includes(p.region as Region))
      errs.push({ path: `${pa}.region`, message: `must be one of ${REGIONS.join(', ')}` });
    if (p.within !== undefined) checkInt(p.within, `${pa}.within`, errs, 1, 1000);
    if (p.since !== undefined) checkRegex(p.since, `${pa}.since`, errs);
    if (p.box !== undefined && p.box !== 'present' && p.box !== 'absent')
      errs.push({ path: `${pa}.box`, message: 'must be present or absent' });
  }
}

function checkPromptRule(v: unknown, at: string, errs: Errs): void {
  if (!isObj(v)) return void errs.push({ path: at, message: 'must be an object {after | from, lines}' });
  unknownKeys(v, ['after', 'from', 'lines'], at, errs);
  if (v.after !== undefined) checkRegex(v.after, `${at}.after`, errs);
  if (v.from !== undefined) checkRegex(v.from, `${at}.from`, errs);
  if (v.lines !== undefined) checkInt(v.lines, `${at}.lines`, errs, 1, 200);
}

function checkProfileFields(p: Obj, at: string, errs: Errs): void {
  if (p.provenance !== undefined && p.provenance !== 'recorded' && p.provenance !== 'reconstructed')
    errs.push({ path: `${at}.provenance`, message: 'must be recorded or reconstructed' });
  if (p.source !== undefined && typeof p.source !== 'string')
    errs.push({ path: `${at}.source`, message: 'must be a string' });
  if (p.approveKeys !== undefined) checkKeys(p.approveKeys, `${at}.approveKeys`, errs);
  if (p.denyKeys !== undefined) checkKeys(p.denyKeys, `${at}.denyKeys`, errs);
  if (p.contextWindowTokens !== undefined) checkInt(p.contextWindowTokens, `${at}.contextWindowTokens`, errs, 1, 1e9);
  if (p.tailLines !== undefined) checkInt(p.tailLines, `${at}.tailLines`, errs, 1, 1000);
  if (p.header !== undefined) {
    const h = p.header;
    if (!isObj(h)) errs.push({ path: `${at}.header`, message: 'must be an object {match, lines, within}' });
    else {
      unknownKeys(h, ['match', 'lines', 'within'], `${at}.header`, errs);
      checkRegex(h.match, `${at}.header.match`, errs);
      if (h.lines !== undefined) checkInt(h.lines, `${at}.header.lines`, errs, 1, 100);
      if (h.within !== undefined) checkInt(h.within, `${at}.header.within`, errs, 1, 100);
    }
  }
  if (p.ignore !== undefined) {
    if (!Array.isArray(p.ignore)) errs.push({ path: `${at}.ignore`, message: 'must be a list of regex strings' });
    else for (const [i, r] of p.ignore.entries()) checkRegex(r, `${at}.ignore[${i}]`, errs);
  }
  if (p.input !== undefined) {
    const x = p.input;
    if (!isObj(x)) errs.push({ path: `${at}.input`, message: 'must be an object {line, within, border, empty}' });
    else {
      unknownKeys(x, ['line', 'within', 'border', 'empty'], `${at}.input`, errs);
      checkRegex(x.line, `${at}.input.line`, errs);
      if (x.within !== undefined) checkInt(x.within, `${at}.input.within`, errs, 1, 1000);
      if (x.border !== undefined) checkRegex(x.border, `${at}.input.border`, errs);
      if (x.empty !== undefined) {
        if (!Array.isArray(x.empty))
          errs.push({ path: `${at}.input.empty`, message: 'must be a list of regex strings' });
        else for (const [i, r] of x.empty.entries()) checkRegex(r, `${at}.input.empty[${i}]`, errs);
      }
    }
  }
  if (p.dialogs !== undefined) {
    if (!Array.isArray(p.dialogs))
      errs.push({ path: `${at}.dialogs`, message: 'must be a list of {name, match, answerKeys, prompt}' });
    else {
      const seen = new Set<string>();
      for (const [i, d] of p.dialogs.entries()) {
        const da = `${at}.dialogs[${i}]`;
        if (!isObj(d)) {
          errs.push({ path: da, message: 'must be an object {name, match, answerKeys, prompt}' });
          continue;
        }
        unknownKeys(d, ['name', 'match', 'answerKeys', 'prompt'], da, errs);
        if (typeof d.name !== 'string' || !DIALOG_NAME.test(d.name))
          errs.push({ path: `${da}.name`, message: 'must be a lowercase name such as workspace-trust' });
        else if (seen.has(d.name)) errs.push({ path: `${da}.name`, message: `duplicate dialog name ${d.name}` });
        else seen.add(d.name);
        if (d.match === undefined)
          errs.push({ path: `${da}.match`, message: 'is required (patterns that identify the dialog)' });
        else checkPatternList(d.match, `${da}.match`, errs);
        if (d.answerKeys !== undefined) checkKeys(d.answerKeys, `${da}.answerKeys`, errs);
        if (d.prompt !== undefined) checkPromptRule(d.prompt, `${da}.prompt`, errs);
      }
    }
  }
  for (const k of ['waiting', 'busy', 'idle', 'quota', 'interrupted'] as const)
    if (p[k] !== undefined) checkPatternList(p[k], `${at}.${k}`, errs);
  if (p.prompt !== undefined) checkPromptRule(p.prompt, `${at}.prompt`, errs);
  if (p.otherwise !== undefined && !(STATES as readonly string[]).includes(p.otherwise as string))
    errs.push({ path: `${at}.otherwise`, message: `must be one of ${STATES.join(', ')}` });
  if (p.failures !== undefined) checkFailures(p.failures, `${at}.failures`, errs);
}

const REASON = /^[A-Z][A-Za-z0-9]{1,63}$/;

/** `failures`: [{reason, regex, flags?, hint?}] — a run's last output → a status reason. */
function checkFailures(list: unknown, at: string, errs: Errs): void {
  if (!Array.isArray(list) || list.length > 32)
    return void errs.push({ path: at, message: 'must be a list of at most 32 {reason, regex, flags, hint}' });
  for (const [i, f] of list.entries()) {
    const fa = `${at}[${i}]`;
    if (!isObj(f)) {
      errs.push({ path: fa, message: 'must be an object {reason, regex, flags, hint}' });
      continue;
    }
    unknownKeys(f, ['reason', 'regex', 'flags', 'hint'], fa, errs);
    if (typeof f.reason !== 'string' || !REASON.test(f.reason))
      errs.push({ path: `${fa}.reason`, message: 'must be a CamelCase reason such as AgentCannotConnect' });
    if (f.flags !== undefined && (typeof f.flags !== 'string' || !/^[is]*$/.test(f.flags)))
      errs.push({ path: `${fa}.flags`, message: 'may hold only i and s' });
    checkRegex(f.regex, `${fa}.regex`, errs, typeof f.flags === 'string' ? f.flags : '');
    if (f.hint !== undefined && (typeof f.hint !== 'string' || f.hint.length > 500))
      errs.push({ path: `${fa}.hint`, message: 'must be a string of at most 500 characters' });
  }
}

/**
 * Apply-time validation of `spec.detection` (empty list = valid). `at` prefixes every error path,
 * e.g. "spec.detection".
 */
export function validateDetection(detection: unknown, at: string): { path: string; message: string }[] {
  const errs: Errs = [];
  if (detection === undefined || detection === null) return errs;
  if (!isObj(detection)) return [{ path: at, message: 'must be an object with a profiles list' }];
  unknownKeys(detection, TOP_FIELDS, at, errs);
  if (detection.agent !== undefined && (typeof detection.agent !== 'string' || !detection.agent))
    errs.push({ path: `${at}.agent`, message: 'must be a non-empty string' });
  checkProfileFields(detection, at, errs);
  const profiles = detection.profiles;
  if (profiles === undefined)
    errs.push({
      path: `${at}.profiles`,
      message: 'is required: a list of profiles, each with the CLI versions it was verified on',
    });
  else if (!Array.isArray(profiles)) errs.push({ path: `${at}.profiles`, message: 'must be a list' });
  else {
    const owner = new Map<string, number>();
    for (const [i, p] of profiles.entries()) {
      const pa = `${at}.profiles[${i}]`;
      if (!isObj(p)) {
        errs.push({ path: pa, message: 'must be an object with versions' });
        continue;
      }
      unknownKeys(p, PROFILE_FIELDS, pa, errs);
      if (!Array.isArray(p.versions) || !p.versions.length)
        errs.push({
          path: `${pa}.versions`,
          message:
            'is required: a non-empty list of the CLI versions these patterns were verified on, e.g. ["2.1.330"]',
        });
      else
        for (const [j, v] of p.versions.entries()) {
          if (typeof v !== 'string' || !VERSION.test(v)) {
            errs.push({
              path: `${pa}.versions[${j}]`,
              message: 'must be a version such as 2.1.330 (a * matches any characters)',
            });
            continue;
          }
          if (owner.has(v))
            errs.push({
              path: `${pa}.versions[${j}]`,
              message: `version ${v} is already listed by profiles[${owner.get(v)}]`,
            });
          else owner.set(v, i);
        }
      checkProfileFields(p, pa, errs);
    }
  }
  return errs;
}
