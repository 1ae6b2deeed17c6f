/**
 * The routing table (issue 25 item 1): the reason registry is complete (no Event is recorded with a
 * string reason outside it), every reason has a row, the shipped policy routes each reason to its
 * row's tier, and docs/notifications.md holds the table generated from the code.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ALL_REASONS } from '../../../controller/api/event-reasons.js';
import { REASON_ROUTES, routingTableMarkdown, withRoutingTable } from '../../../controller/api/event-routing.js';
import type { NotificationPolicy } from '../../../controller/api/notification.js';
import { CHANNEL_ALERT_REASONS, UNROUTED_KINDS } from '../../../controller/reconcilers/notifier/plan.js';
import { route } from '../../../controller/reconcilers/notifier/route.js';
import { ev } from '../reconcilers/notifier/fixtures.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const read = (f: string) => fs.readFileSync(path.join(ROOT, f), 'utf8');

function sources(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true }).flatMap((e) => {
    const rel = path.relative(ROOT, path.join(e.parentPath, e.name));
    return e.isFile() && e.name.endsWith('.ts') ? [rel] : [];
  });
}

/**
 * The ways the controller records an Event, each with the reason as a string literal (the context
 * steps' p.record takes a ContextActionType, mapped to a registry reason by a typed table).
 */
const RECORDING = [
  /\b(?:record|event)\(\s*(?:[\w.!]+,\s*)?'(?:Warning|Normal)',\s*'(\w+)'/g,
  /\b(?:type|eventType): '(?:Warning|Normal)',\s*reason: '(\w+)'/g,
  /\[\s*'(?:Warning|Normal)',\s*'(\w+)'/g,
  /\bnewEvent\([^)]*reason: '(\w+)'/g,
  /\bevent\((?:true|false|[\w.]+),\s*'(\w+)'/g,
];

describe('the Event reason registry', () => {
  it('no Event is recorded with a string reason: every writer names a registry constant', () => {
    const stray: string[] = [];
    for (const file of sources('controller')) {
      if (file.endsWith('api/event-reasons.ts')) continue;
      const text = read(file);
      for (const re of RECORDING)
        for (const m of text.matchAll(re)) stray.push(`${file}:${text.slice(0, m.index).split('\n').length}: ${m[1]}`);
    }
    expect(stray).toEqual([]);
  });

  it('every reason of the registry has a row, and every row is a reason of the registry', () => {
    expect(Object.keys(REASON_ROUTES).sort()).toEqual([...ALL_REASONS]);
    for (const r of Object.values(REASON_ROUTES)) expect(r.kinds.length).toBeGreaterThan(0);
  });
});

describe('the routing table', () => {
  const policy = parse(read('manifests/notifications/policy.yaml')) as NotificationPolicy;
  const cases = Object.entries(REASON_ROUTES).flatMap(([reason, r]) =>
    r.kinds.flatMap((kind) =>
      (['Normal', 'Warning'] as const).map(
        (type) => [reason, kind, type, type === 'Warning' ? (r.warningTier ?? r.tier) : r.tier] as const,
      ),
    ),
  );

  it.each(cases)(
    'the shipped policy routes %s on a %s (%s) to tier %i, as its row says',
    (reason, kind, type, tier) => {
      const routed = !UNROUTED_KINDS.has(kind) || CHANNEL_ALERT_REASONS.has(reason);
      const routes = routed ? route(policy.spec!, ev(reason, 'x', { kind, type })) : [];
      expect(Math.min(4, ...routes.map((r) => r.tier))).toBe(tier);
    },
  );

  it('docs/notifications.md holds the table generated from the code (npm run docs:notifications)', () => {
    const doc = read('docs/notifications.md');
    expect(withRoutingTable(doc)).toBe(doc);
    expect(doc).toContain(routingTableMarkdown());
  });
});
