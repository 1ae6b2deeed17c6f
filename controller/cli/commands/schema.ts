import fs from 'node:fs';
import path from 'node:path';
import { registry } from '../../config/crds.js';
import { REPORT_SCHEMA, REPORT_SCHEMA_FILE } from '../../api/report.js';
import { editorSchema, umbrellaSchema } from '../../api/schema.js';
import { out } from '../output.js';

/** Writes the editor JSON Schemas (one per kind plus all.json) generated from crds/, and the agent report's. */
export function writeSchemas(dir: string): string[] {
  const reg = registry();
  fs.mkdirSync(dir, { recursive: true });
  const written: string[] = [];
  for (const k of reg.kinds) {
    const f = path.join(dir, `${k.kind.toLowerCase()}_v1alpha1.json`);
    fs.writeFileSync(f, JSON.stringify(editorSchema(k), null, 2) + '\n');
    written.push(f);
  }
  // Not a kind: the file agents write (api/report.ts), shipped beside the kinds for editors.
  const report = path.join(dir, REPORT_SCHEMA_FILE);
  fs.writeFileSync(report, JSON.stringify(REPORT_SCHEMA, null, 2) + '\n');
  written.push(report);
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
