/**
 * The console's static files, read once at start: its own script and stylesheet (files, never
 * inline, as the Content-Security-Policy wants) and xterm.js from its npm package.
 */
import type { FastifyInstance } from 'fastify';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { packageRoot } from '../config/paths.js';

/** controller/console/assets of the package, whether this runs from the sources, dist/controller or the bundle. */
function assetsDir(): string {
  return path.join(packageRoot(), 'controller/console/assets');
}

export function registerAssets(app: FastifyInstance): void {
  const dir = assetsDir();
  const xterm = path.dirname(createRequire(import.meta.url).resolve('@xterm/xterm/package.json'));
  const files: Record<string, [string, string]> = {
    'console.js': [path.join(dir, 'console.js'), 'text/javascript'],
    'console.css': [path.join(dir, 'console.css'), 'text/css'],
    'xterm.js': [path.join(xterm, 'lib/xterm.js'), 'text/javascript'],
    'xterm.css': [path.join(xterm, 'css/xterm.css'), 'text/css'],
  };
  const loaded = new Map(Object.entries(files).map(([n, [f, type]]) => [n, { body: fs.readFileSync(f), type }]));
  app.get<{ Params: { file: string } }>('/assets/:file', async (req, reply) => {
    const a = loaded.get(req.params.file);
    if (!a) return reply.code(404).send('not found\n');
    return reply.header('cache-control', 'private, max-age=300').type(`${a.type}; charset=utf-8`).send(a.body);
  });
}
