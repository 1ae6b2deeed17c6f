// docs/architecture.md must name every folder of controller/ and every reconciler folder (as
// `folder/`, in its layer block or its reconciler table), so a new one cannot land undocumented.
import fs from 'node:fs';

const doc = fs.readFileSync('docs/architecture.md', 'utf8');
const folders = (dir) =>
  fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name);
const missing = [
  ...folders('controller')
    .filter((f) => !new RegExp(`^  ${f}/ `, 'm').test(doc))
    .map((f) => `controller/${f}/ is not in the layer block`),
  ...folders('controller/reconcilers')
    .filter((f) => !doc.includes(`| \`${f}/\` |`))
    .map((f) => `controller/reconcilers/${f}/ is not in the reconciler table`),
];
if (missing.length) {
  console.error(`${missing.map((m) => `docs/architecture.md: ${m}`).join('\n')}\nDescribe it there.`);
  process.exit(1);
}
