/**
 * Git observation (seed 000's GitTracker, with argument arrays instead of shell strings).
 * Never throws: a missing directory, a non-git directory or an empty repository give a result
 * that says so. `progress()` is one `git log --numstat` process, and only when the repository
 * changed since the last look (the mtimes of .git/HEAD, the branch ref log and packed refs,
 * read with stat, not a process) — so a resync over idle sessions spawns no git at all.
 */
import { execa } from 'execa';
import fs from 'node:fs';
import path from 'node:path';

export interface GitProgress {
  isGitRepo: boolean;
  head?: string;
  branch?: string;
  commits: number;
  insertions: number;
  deletions: number;
  filesChanged: number;
  lastCommit?: { sha: string; subject: string; time: string };
}

/** What a Project's status shows of its repository (`tip()`). */
export type GitTip = Pick<GitProgress, 'isGitRepo' | 'branch' | 'lastCommit'>;

const EMPTY: GitProgress = { isGitRepo: false, commits: 0, insertions: 0, deletions: 0, filesChanged: 0 };

export class GitObserver {
  /** Number of git processes started; the benchmarks read it. */
  spawned = 0;
  private readonly cache = new Map<string, { stamp: string; result: GitProgress }>();

  private async git(dir: string, args: string[]): Promise<{ ok: boolean; out: string }> {
    this.spawned++;
    const r = await execa('git', ['-C', dir, ...args], {
      reject: false,
      timeout: 10_000,
      env: { GIT_OPTIONAL_LOCKS: '0' },
    });
    return { ok: r.exitCode === 0, out: String(r.stdout) };
  }

  /** The git dir of a work tree (handles worktrees, whose .git is a file). */
  private gitDir(dir: string): string | undefined {
    const dotgit = path.join(dir, '.git');
    try {
      const st = fs.statSync(dotgit);
      if (st.isDirectory()) return dotgit;
      const m = fs.readFileSync(dotgit, 'utf8').match(/^gitdir:\s*(.+)$/m);
      return m ? path.resolve(dir, m[1].trim()) : undefined;
    } catch {
      return undefined;
    }
  }

  /** The repository's fingerprint (stat only, no process); '' for no repository. */
  stampOf(dir: string): string {
    const gitDir = this.gitDir(dir);
    return gitDir ? this.stamp(gitDir) : '';
  }

  /** A cheap fingerprint of the repository state, from file metadata only. */
  private stamp(gitDir: string): string {
    const parts: string[] = [];
    // The branch's own ref too: a commit moves it even where no reflog is kept.
    let branchRef: string[] = [];
    try {
      const m = fs.readFileSync(path.join(gitDir, 'HEAD'), 'utf8').match(/^ref: (refs\/[^\s]+)/);
      if (m && !m[1].includes('..')) branchRef = [m[1]];
    } catch {
      /* no HEAD: the stamp says so below */
    }
    for (const f of ['HEAD', 'logs/HEAD', 'packed-refs', 'index', ...branchRef]) {
      try {
        const st = fs.statSync(path.join(gitDir, f));
        parts.push(`${st.mtimeMs}:${st.size}`);
      } catch {
        parts.push('-');
      }
    }
    return parts.join('|');
  }

  private readonly heads = new Map<string, { stamp: string; head: string | undefined }>();

  /** HEAD's commit; asked again only when the repository's stamp changed (launches share it). */
  async head(dir: string): Promise<string | undefined> {
    const gitDir = this.gitDir(dir);
    if (!gitDir) return undefined;
    const stamp = this.stamp(gitDir);
    const cached = this.heads.get(dir);
    if (cached && cached.stamp === stamp) return cached.head;
    const r = await this.git(dir, ['rev-parse', '--verify', '-q', 'HEAD']);
    const head = r.ok ? r.out.trim() || undefined : undefined;
    if (r.ok || r.out === '') this.heads.set(dir, { stamp, head });
    return head;
  }

  private readonly tips = new Map<string, { stamp: string; tip: GitTip }>();

  /** HEAD's commit and branch: one `git log -1`, asked again only when the repository's stamp changed. */
  async tip(dir: string): Promise<GitTip> {
    const gitDir = this.gitDir(dir);
    if (!gitDir) return { isGitRepo: false };
    const stamp = this.stamp(gitDir);
    const cached = this.tips.get(dir);
    if (cached && cached.stamp === stamp) return cached.tip;
    const r = await this.git(dir, ['log', '-1', '--no-color', '--format=%H%x1f%s%x1f%aI%x1f%D', 'HEAD', '--']);
    const [sha, subject, time, decorations] = r.out.trim().split('\x1f');
    // An empty repository has no HEAD yet: a repository without a last commit.
    const tip: GitTip =
      r.ok && sha
        ? { isGitRepo: true, branch: decorations?.match(/HEAD -> ([^,]+)/)?.[1], lastCommit: { sha, subject, time } }
        : { isGitRepo: true };
    this.tips.set(dir, { stamp, tip });
    return tip;
  }

  /** Commits and line counts since `headBefore` (all history when undefined). */
  async progress(dir: string, headBefore: string | undefined, opts: { force?: boolean } = {}): Promise<GitProgress> {
    const gitDir = this.gitDir(dir);
    if (!gitDir) return EMPTY;
    const key = `${dir}\0${headBefore ?? ''}`;
    const stamp = this.stamp(gitDir);
    const cached = this.cache.get(key);
    if (!opts.force && cached && cached.stamp === stamp) return cached.result;
    const result = await this.compute(dir, headBefore);
    this.cache.set(key, { stamp, result });
    return result;
  }

  private async compute(dir: string, headBefore: string | undefined): Promise<GitProgress> {
    // One process: commit headers (marked with \x1e) followed by their numstat lines, plus the branch.
    const range = headBefore ? [`${headBefore}..HEAD`] : ['HEAD'];
    const r = await this.git(dir, [
      'log',
      '--no-color',
      '--format=%x1e%H%x1f%s%x1f%aI%x1f%D',
      '--numstat',
      ...range,
      '--',
    ]);
    if (!r.ok) {
      // An empty repository has no HEAD yet; anything else is still a repository we can't read.
      return { ...EMPTY, isGitRepo: true };
    }
    let commits = 0;
    let insertions = 0;
    let deletions = 0;
    const files = new Set<string>();
    let last: GitProgress['lastCommit'];
    let branch: string | undefined;
    for (const block of r.out.split('\x1e')) {
      if (!block.trim()) continue;
      const [headerLine, ...stats] = block.split('\n');
      const [sha, subject, time, decorations] = headerLine.split('\x1f');
      commits++;
      if (!last) {
        last = { sha, subject, time };
        branch = decorations?.match(/HEAD -> ([^,]+)/)?.[1];
      }
      for (const s of stats) {
        const [add, del, file] = s.split('\t');
        if (file === undefined) continue;
        insertions += Number(add) || 0; // binary files show '-'
        deletions += Number(del) || 0;
        files.add(file);
      }
    }
    const head = last?.sha ?? headBefore;
    if (!branch && commits === 0) {
      const b = await this.git(dir, ['symbolic-ref', '-q', '--short', 'HEAD']);
      branch = b.ok ? b.out.trim() : undefined;
    }
    return {
      isGitRepo: true,
      head,
      branch,
      commits,
      insertions,
      deletions,
      filesChanged: files.size,
      lastCommit: last,
    };
  }

  async version(): Promise<string> {
    this.spawned++;
    const r = await execa('git', ['--version'], { reject: false });
    return String(r.stdout)
      .replace(/^git version\s*/, '')
      .trim();
  }

  /** Adds a worktree on a new (or existing) branch; idempotent for an existing path. */
  async addWorktree(
    repo: string,
    worktreePath: string,
    branch: string,
    baseRef: string,
  ): Promise<{ ok: boolean; message: string }> {
    if (fs.existsSync(path.join(worktreePath, '.git'))) return { ok: true, message: 'exists' };
    const exists = await this.git(repo, ['rev-parse', '--verify', '-q', `refs/heads/${branch}`]);
    const args = exists.ok
      ? ['worktree', 'add', worktreePath, branch]
      : ['worktree', 'add', '-b', branch, worktreePath, baseRef];
    this.spawned++;
    const r = await execa('git', ['-C', repo, ...args], { reject: false });
    return { ok: r.exitCode === 0, message: String(r.stderr).trim() };
  }

  async removeWorktree(repo: string, worktreePath: string): Promise<void> {
    if (!fs.existsSync(worktreePath)) return;
    await this.git(repo, ['worktree', 'remove', '--force', worktreePath]);
  }
}
