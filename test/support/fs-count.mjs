// Preloaded into a controller (NODE_OPTIONS=--import=<this file>) by the file-system cost tests: counts
// the calls that can create or replace a file or directory — openSync with a flag that creates (the
// appendFileSync and writeFileSync of node:fs go through it), mkdirSync, renameSync — by path, then
// calls through to the real node:fs. The counts go to $ORCHCTL_TEST_FS_COUNT as JSON when the process exits.
import fs from 'node:fs';

const out = process.env.ORCHCTL_TEST_FS_COUNT;
// Not inherited by what the controller starts (tmux, git, the agents).
delete process.env.NODE_OPTIONS;
delete process.env.ORCHCTL_TEST_FS_COUNT;
const counts = {};
const count = (op, file) => {
  const k = `${op} ${String(file)}`;
  counts[k] = (counts[k] ?? 0) + 1;
};
const creates = (flags) =>
  typeof flags === 'number' ? (flags & fs.constants.O_CREAT) !== 0 : /[awx]/.test(String(flags ?? 'r'));

const { openSync, mkdirSync, renameSync, writeFileSync } = fs;
fs.openSync = function (file, flags, ...rest) {
  if (creates(flags)) count('open', file);
  return openSync.call(this, file, flags, ...rest);
};
fs.mkdirSync = function (dir, ...rest) {
  count('mkdir', dir);
  return mkdirSync.call(this, dir, ...rest);
};
fs.renameSync = function (from, to) {
  count('rename', to);
  return renameSync.call(this, from, to);
};
if (out) process.on('exit', () => writeFileSync(out, JSON.stringify(counts)));
