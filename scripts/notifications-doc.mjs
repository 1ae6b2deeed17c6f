#!/usr/bin/env node
// Writes the routing table (controller/api/event-routing.ts, built into dist/) into docs/notifications.md.
// `npm run docs:notifications` builds first; test/unit/api/event-routing.test.ts fails when the doc is stale.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const { withRoutingTable } = await import(`${root}dist/controller/api/event-routing.js`);
const file = `${root}docs/notifications.md`;
const before = readFileSync(file, 'utf8');
const after = withRoutingTable(before);
if (after !== before) writeFileSync(file, after);
console.log(after === before ? 'docs/notifications.md is up to date' : 'docs/notifications.md: routing table written');
