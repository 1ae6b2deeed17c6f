/**
 * Data is never code: prompts, paths, environment values and tmux target characters are carried
 * literally through tmux (argument arrays, files, buffers), never through a shell built from data.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { makeHarness, phaseOf, shellSession, type Harness } from '../support/controller-harness.js';

let h: Harness;
beforeEach(async () => {
  h = await makeHarness();
});
afterEach(async () => {
  await h.cleanup();
});

it('prompts, paths and env values with $(), backticks, ;, quotes, newlines and : . are carried literally', async () => {
  const marker = path.join(h.dir, 'pwned');
  const evil = [
    `$(touch ${marker}-dollar)`,
    `\`touch ${marker}-tick\`;`,
    `touch ${marker}-semi 'sq' "dq" a:b.c %1 #{session_name}`,
  ].join(' ');
  const prompt = `${evil}\nsecond line ${evil}`;
  const weirdDir = path.join(h.dir, `dir ${evil.replace(/\//g, '_')}`);
  fs.mkdirSync(weirdDir, { recursive: true });
  // The agent writes back exactly what it was given, byte for byte.
  const copyArgs =
    'printf "%s" "$1" > arg.txt; printf "%s" "$EVIL" > env.txt; pwd > pwd.txt; cat "$ORCHCTL_PROMPT_FILE" > file.txt';
  await h.apply([
    shellSession(
      'by-argument',
      copyArgs,
      weirdDir,
      { prompt, env: [{ name: 'EVIL', value: evil }] },
      { promptDelivery: 'argument', command: ['sh', '-c', copyArgs, 'agent'] },
    ),
    shellSession('by-stdin', 'cat > stdin.txt', path.join(h.repo), { prompt }, { promptDelivery: 'stdin' }),
  ]);
  h.start();
  await h.waitFor(
    'both Succeeded',
    async () =>
      phaseOf(await h.session('by-argument')) === 'Succeeded' && phaseOf(await h.session('by-stdin')) === 'Succeeded',
  );
  const read = (dir: string, f: string) => fs.readFileSync(path.join(dir, f), 'utf8');
  expect(read(weirdDir, 'arg.txt')).toBe(`${prompt}\n`);
  expect(read(weirdDir, 'env.txt')).toBe(evil);
  expect(read(weirdDir, 'pwd.txt').trim()).toBe(weirdDir);
  expect(read(weirdDir, 'file.txt')).toBe(`${prompt}\n`);
  expect(read(h.repo, 'stdin.txt')).toBe(`${prompt}\n`);
  for (const suffix of ['dollar', 'tick', 'semi'])
    expect(fs.existsSync(`${marker}-${suffix}`), `marker ${suffix}`).toBe(false);
  // The workdir path reached status untouched too.
  expect((await h.session('by-argument'))!.status!.workdir).toBe(weirdDir);
});

it('an ORCHCTL_HOME with shell metacharacters still gets its output log, and nothing runs', async () => {
  await h.cleanup();
  const evilHome = `home $(touch MARKER) '\`;#{pane_id}`;
  h = await makeHarness({ homeName: evilHome });
  const marker = path.join(h.dir, 'home-pwned');
  h.env.ORCHCTL_HOME = h.home = path.join(h.dir, evilHome.replace('MARKER', marker.replace(/\//g, '_')));
  // (the harness store was opened on the unreplaced name; use the CLI to read status instead)
  await h.apply([shellSession('logged', 'echo "hello from the pane"', h.repo)]);
  h.start();
  const s = await h.waitFor('Succeeded', async () => {
    const r = await h.orchctl(['get', 'agentsession', 'logged', '-o', 'json']);
    const s = r.exitCode === 0 ? JSON.parse(r.stdout) : undefined;
    return s?.status?.phase === 'Succeeded' && s;
  });
  expect(s.status.workspace.startsWith(h.home)).toBe(true);
  expect(fs.readFileSync(path.join(s.status.workspace, 'output.log'), 'utf8')).toContain('hello from the pane');
  expect(fs.existsSync(marker)).toBe(false);
});

it('names that would be tmux targets or paths are rejected at apply time', async () => {
  for (const name of ['a:b', 'a.b', '../x', 'x;rm', 'A']) {
    const r = await h.orchctl(['apply', '-f', '-'], JSON.stringify(shellSession(name, 'true', h.repo)));
    expect(r.exitCode, name).toBe(1);
    expect(r.stderr, name).toContain('metadata.name');
  }
});
