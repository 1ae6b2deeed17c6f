#!/usr/bin/env node
// Install the pinned Claude Code CLI (scripts/claude-code/pin.json) into test/.cache/claude-code/
// <version> and print its binary's path — `scripts/agents/install.mjs claude-code`, kept under this
// name for the tests and docs that call it. Options and behaviour: scripts/agents/install.mjs.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from '../agents/install.mjs';

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main('claude-code', process.argv.slice(2));
}
