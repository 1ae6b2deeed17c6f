import fs from 'node:fs';
import path from 'node:path';
import { registry } from '../../api/crds.js';
import { editorSchema, umbrellaSchema } from '../../api/schema.js';
import { out } from '../output.js';

/** Writes the editor JSON Schemas (one per kind plus all.json) generated from crds/. */
export function writeSchemas(dir: string): string[] {
  const reg = registry();
  fs.mkdirSync(dir, { recursive: true });
  const written: string[] = [];
  for (const k of reg.kinds) {
    const f = path.join(dir, `${k.kind.toLowerCase()}_v1alpha1.json`);
    fs.writeFileSync(f, JSON.stringify(editorSchema(k), null, 2) + '\n');
    written.push(f);
  }
  const all = path.join(dir, 'all.json');
  fs.writeFileSync(all, JSON.stringify(umbrellaSchema(reg.kinds), null, 2) + '\n');
  written.push(all);
  return written;
}

export async function schemaCommand(kindName: string | undefined, opts: { outputDir?: string }): Promise<void> {
  if (kindName) {
    out(JSON.stringify(editorSchema(registry().resolve(kindName)), null, 2) + '\n');
    return;
  }
  for (const f of writeSchemas(opts.outputDir ?? 'schemas')) out(`wrote ${f}\n`);
}
