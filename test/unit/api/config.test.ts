/**
 * The config file and the choice of store (docs/contexts.md): what a good file resolves to, how a
 * bad one is reported (file:line:column, field), the precedence --context > ORCHCTL_STORE >
 * currentContext > the embedded default, and edits that keep comments and never write a bad file.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, parseConfig, readConfig } from '../../../controller/config/config.js';
import { deleteContext, setContext, useContext, writeConfigFile } from '../../../controller/config/config-edit.js';
import { describeChoice, usesEmbeddedDefault } from '../../../controller/config/config-location.js';
import { parseStoreUrl, resolveStore } from '../../../controller/config/config-resolve.js';

const GOOD = `# where my stores are
apiVersion: orchctl.io/v1alpha1
kind: Config
currentContext: laptop
contexts:
  - name: laptop # the embedded one, elsewhere
    store:
      sqlite:
        path: data/state.db
  - name: prod
    node: host-a
    store:
      etcd:
        endpoints: [https://10.0.0.1:2379, https://10.0.0.2:2379]
        prefix: /team-a
        tls: {ca: certs/ca.pem, cert: /etc/orchctl/client.pem, key: certs/client-key.pem}
        callTimeout: 3s
  - name: local-etcd
    store:
      etcd:
        endpoints: [http://127.0.0.1:2379, http://localhost:2381, "http://[::1]:2383"]
`;

const homes: string[] = [];
afterEach(() => {
  for (const h of homes.splice(0)) fs.rmSync(h, { recursive: true, force: true });
});

function home(config?: string): string {
  const h = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-config-'));
  homes.push(h);
  if (config !== undefined) fs.writeFileSync(path.join(h, 'config'), config);
  return h;
}

/** The problems a file's text is refused with, as the user reads them. */
function problems(text: string): string[] {
  try {
    parseConfig(text, '/h/config');
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
  throw new Error('accepted');
}

describe('a good config', () => {
  it('resolves each context, relative paths against the file, the prefix ending in a slash', () => {
    const h = home(GOOD);
    expect(resolveStore({ home: h, env: {} })).toEqual({
      location: { backend: 'sqlite', path: path.join(h, 'data/state.db') },
      source: 'config',
      context: 'laptop',
      configFile: path.join(h, 'config'),
    });
    expect(resolveStore({ home: h, context: 'prod', env: {} })).toEqual({
      location: {
        backend: 'etcd',
        endpoints: ['https://10.0.0.1:2379', 'https://10.0.0.2:2379'],
        prefix: '/team-a/',
        tls: {
          ca: path.join(h, 'certs/ca.pem'),
          cert: '/etc/orchctl/client.pem',
          key: path.join(h, 'certs/client-key.pem'),
        },
        callTimeoutMs: 3000,
      },
      source: 'flag',
      context: 'prod',
      node: 'host-a',
      configFile: path.join(h, 'config'),
    });
    expect(resolveStore({ home: h, context: 'local-etcd', env: {} }).location).toEqual({
      backend: 'etcd',
      endpoints: ['http://127.0.0.1:2379', 'http://localhost:2381', 'http://[::1]:2383'],
    });
  });

  it('an empty or comments-only file is an empty config, and the default store is used', () => {
    for (const text of ['', '# nothing yet\n', '\n\n']) {
      const h = home(text);
      expect(readConfig(path.join(h, 'config'))?.config).toEqual({});
      expect(resolveStore({ home: h, env: {} })).toMatchObject({
        location: { backend: 'sqlite', path: path.join(h, 'state.db') },
        source: 'default',
      });
    }
  });
});

describe('a bad config is refused with file:line:column and the field', () => {
  it.each([
    [
      'an unknown field',
      'contexts:\n  - name: a\n    store: {sqlite: {path: x}}\n    password: hunter2\n',
      ['/h/config:4:5 contexts[0].password: unknown field "contexts[0].password"'],
    ],
    [
      'a store with no path',
      'contexts:\n  - name: a\n    store:\n      sqlite: {}\n',
      ['/h/config:4:15 contexts[0].store.sqlite.path: Required value'],
    ],
    [
      'two backends',
      'contexts:\n  - name: a\n    store:\n      sqlite: {path: x}\n      etcd: {endpoints: [http://127.0.0.1:1]}\n',
      ['/h/config:4:7 contexts[0].store: exactly one of sqlite or etcd is required'],
    ],
    [
      'no backend',
      'contexts:\n  - name: a\n    store: {}\n',
      ['/h/config:3:12 contexts[0].store: exactly one of sqlite or etcd is required'],
    ],
    [
      'plaintext to another host',
      'contexts:\n  - name: a\n    store:\n      etcd:\n        endpoints:\n          - http://127.0.0.1:2379\n' +
        '          - http://10.0.0.7:2379\n',
      [
        '/h/config:7:13 contexts[0].store.etcd.endpoints[1]: plaintext to 10.0.0.7:2379 is refused ' +
          '(only loopback may be plain http): use https:// and tls',
      ],
    ],
    [
      'tls with an http endpoint, a cert without its key',
      'contexts:\n  - name: a\n    store:\n      etcd:\n        endpoints: [http://127.0.0.1:2379]\n' +
        '        tls: {cert: c.pem}\n',
      [
        '/h/config:6:14 contexts[0].store.etcd.tls.key: a client cert and key go together',
        '/h/config:5:21 contexts[0].store.etcd.endpoints[0]: tls is set: the endpoint must be https://',
      ],
    ],
    [
      'an endpoint that is no URL',
      'contexts:\n  - name: a\n    store: {etcd: {endpoints: [10.0.0.1:2379]}}\n',
      ['/h/config:3:32 contexts[0].store.etcd.endpoints[0]: must match the pattern "^https?://[^/\\\\s,]+$"'],
    ],
    [
      'a bad duration',
      'contexts:\n  - name: a\n    store: {etcd: {endpoints: [http://127.0.0.1:1], callTimeout: soon}}\n',
      ['/h/config:3:66 contexts[0].store.etcd.callTimeout: must be a duration like 45m'],
    ],
    [
      'duplicate names, a bad node name, a current context naming nothing',
      'currentContext: c\ncontexts:\n  - name: a\n    store: {sqlite: {path: x}}\n' +
        '  - name: a\n    node: Host_A\n    store: {sqlite: {path: y}}\n',
      [
        '/h/config:5:11 contexts[1].name: duplicate context name (also contexts[0])',
        '/h/config:6:11 contexts[1].node: Invalid value "Host_A": must be a lowercase RFC 1123 subdomain: ' +
          "lowercase letters, digits, '-' and '.', starting and ending with a letter or digit",
        '/h/config:1:17 currentContext: no context is named "c"',
      ],
    ],
    [
      'not YAML',
      'contexts: [\n',
      ['/h/config:2:1 invalid YAML: Flow sequence in block collection must be sufficiently'],
    ],
    ['two documents', 'contexts: []\n---\ncontexts: []\n', ['/h/config: one YAML document expected, found 2']],
  ])('%s', (_what, text, expected) => {
    const got = problems(text);
    expect(got.map((p, i) => (expected[i]?.endsWith('sufficiently') ? p.slice(0, expected[i].length) : p))).toEqual(
      expected,
    );
  });

  it('every command reading it fails with those lines; nothing falls back to another store', () => {
    const h = home('currentContext: a\ncontexts:\n  - name: a\n    store: {sqlite: {pth: x}}\n');
    expect(() => resolveStore({ home: h, env: {} })).toThrow(ConfigError);
    expect(() => resolveStore({ home: h, env: {} })).toThrow(/config:4:21 contexts\[0\]\.store\.sqlite\.path/);
  });
});

describe('which store: --context > ORCHCTL_STORE > currentContext > the embedded default', () => {
  it('takes each rule in order', () => {
    const h = home(GOOD);
    const env = { ORCHCTL_STORE: 'sqlite:/tmp/from-env.db' };
    expect(resolveStore({ home: h, context: 'prod', env })).toMatchObject({ source: 'flag', context: 'prod' });
    expect(resolveStore({ home: h, env })).toMatchObject({
      source: 'env',
      location: { backend: 'sqlite', path: '/tmp/from-env.db' },
    });
    expect(resolveStore({ home: h, env: {} })).toMatchObject({ source: 'config', context: 'laptop' });
    const bare = home();
    expect(resolveStore({ home: bare, env: {} })).toMatchObject({
      source: 'default',
      location: { backend: 'sqlite', path: path.join(bare, 'state.db') },
    });
  });

  it('reads no config when nothing could name a store, and says what names it', () => {
    const bare = home();
    expect(usesEmbeddedDefault({ home: bare, env: {} })).toBe(true);
    expect(usesEmbeddedDefault({ home: bare, env: { ORCHCTL_STORE: 'sqlite:x' } })).toBe(false);
    expect(usesEmbeddedDefault({ home: bare, context: 'x', env: {} })).toBe(false);
    expect(describeChoice({ home: bare, env: {} })).toBe(path.join(bare, 'state.db'));
    expect(describeChoice({ home: bare, context: 'prod', env: {} })).toBe(
      `context "prod" of ${path.join(bare, 'config')}`,
    );
    const h = home(GOOD);
    expect(usesEmbeddedDefault({ home: h, env: {} })).toBe(false);
  });

  it('an unknown --context is an error naming the file and the contexts there', () => {
    expect(() => resolveStore({ home: home(GOOD), context: 'nope', env: {} })).toThrow(
      /context "nope" not found in .*config \(contexts: laptop, prod, local-etcd\); create it with orchctl config/,
    );
    expect(() => resolveStore({ home: home(), context: 'nope', env: {} })).toThrow(/\(there is no such file\)/);
  });

  it('a current context that is not set leaves the default', () => {
    const h = home('contexts:\n  - name: a\n    store: {sqlite: {path: x}}\n');
    expect(resolveStore({ home: h, env: {} }).source).toBe('default');
  });
});

describe('ORCHCTL_STORE', () => {
  it.each([
    ['sqlite:/var/lib/orchctl/state.db', { backend: 'sqlite', path: '/var/lib/orchctl/state.db' }],
    ['sqlite:///abs/state.db', { backend: 'sqlite', path: '/abs/state.db' }],
    ['sqlite:rel/state.db', { backend: 'sqlite', path: '/work/rel/state.db' }],
    [
      'etcd://127.0.0.1:2379,127.0.0.1:2381',
      { backend: 'etcd', endpoints: ['http://127.0.0.1:2379', 'http://127.0.0.1:2381'] },
    ],
    ['etcd://localhost:2379/team-a', { backend: 'etcd', endpoints: ['http://localhost:2379'], prefix: '/team-a/' }],
    [
      'etcd://10.0.0.1:2379,10.0.0.2:2379/o/?ca=ca.pem&cert=/c.pem&key=k.pem&timeout=2s',
      {
        backend: 'etcd',
        endpoints: ['https://10.0.0.1:2379', 'https://10.0.0.2:2379'],
        prefix: '/o/',
        tls: { ca: '/work/ca.pem', cert: '/c.pem', key: '/work/k.pem' },
        callTimeoutMs: 2000,
      },
    ],
  ])('%s', (value, expected) => {
    expect(parseStoreUrl(value, '/work')).toEqual(expected);
  });

  it.each([
    ['postgres://x', /expected sqlite:PATH or etcd:\/\/HOST:PORT/],
    ['etcd://10.0.0.1:2379', /endpoints\[0\]: plaintext to 10.0.0.1:2379 is refused/],
    ['etcd://127.0.0.1:2379?user=root', /unknown parameter "user"/],
    ['etcd://127.0.0.1:2379?timeout=soon', /timeout must be a duration like 5s/],
    ['etcd://127.0.0.1:2379?cert=c.pem', /tls\.key: a client cert and key go together/],
  ])('%s is refused', (value, why) => {
    expect(() => parseStoreUrl(value, '/work')).toThrow(why);
    expect(() => parseStoreUrl(value, '/work')).toThrow(/^ORCHCTL_STORE="/);
  });
});

describe('edits', () => {
  const load = (text: string) => parseConfig(text, '/h/config');

  it('set-context creates and modifies, keeping comments and other fields', () => {
    const created = setContext(load(GOOD), 'ci', { store: { sqlite: { path: '/srv/ci.db' } }, node: 'ci-1' });
    expect(created.message).toBe('Context "ci" created.');
    expect(created.text).toContain('# where my stores are');
    expect(created.text).toContain('# the embedded one, elsewhere');
    expect(load(created.text).config.contexts?.at(-1)).toEqual({
      name: 'ci',
      store: { sqlite: { path: '/srv/ci.db' } },
      node: 'ci-1',
    });

    const modified = setContext(load(GOOD), 'prod', { etcd: { prefix: '/team-b/', callTimeout: '1s' }, node: '' });
    expect(modified.message).toBe('Context "prod" modified.');
    expect(load(modified.text).config.contexts?.[1]).toEqual({
      name: 'prod',
      store: {
        etcd: {
          endpoints: ['https://10.0.0.1:2379', 'https://10.0.0.2:2379'],
          prefix: '/team-b/',
          tls: { ca: 'certs/ca.pem', cert: '/etc/orchctl/client.pem', key: 'certs/client-key.pem' },
          callTimeout: '1s',
        },
      },
    });
  });

  it('set-context from nothing starts a file; a new context needs a store', () => {
    const r = setContext(undefined, 'dev', { etcd: { endpoints: ['http://127.0.0.1:2379'] } });
    expect(load(r.text).config).toEqual({
      apiVersion: 'orchctl.io/v1alpha1',
      kind: 'Config',
      contexts: [{ name: 'dev', store: { etcd: { endpoints: ['http://127.0.0.1:2379'] } } }],
    });
    expect(() => setContext(undefined, 'x', { node: 'n' })).toThrow(/context "x" does not exist: give --sqlite/);
    expect(() => setContext(load(GOOD), 'laptop', { etcd: { prefix: '/p' } })).toThrow(
      /context "laptop" uses sqlite: give --etcd-endpoints/,
    );
  });

  it('an edit that would make the file invalid is refused whole', () => {
    expect(() => setContext(load(GOOD), 'bad', { etcd: { endpoints: ['http://10.9.9.9:2379'] } })).toThrow(
      /\/h\/config contexts\[3\]\.store\.etcd\.endpoints\[0\]: plaintext to 10\.9\.9\.9:2379 is refused/,
    );
  });

  it('use-context and delete-context', () => {
    expect(useContext(load(GOOD), 'prod').text).toMatch(/^currentContext: prod$/m);
    expect(() => useContext(load(GOOD), 'nope')).toThrow('no context exists with the name: "nope"');
    const d = deleteContext(load(GOOD), 'laptop', '/h/config');
    expect(d.message).toMatch(/deleted context laptop from \/h\/config \(it was the current context/);
    expect(load(d.text).config.currentContext).toBeUndefined();
    expect(load(d.text).config.contexts?.map((c) => c.name)).toEqual(['prod', 'local-etcd']);
    expect(() => deleteContext(load(GOOD), 'nope', '/h/config')).toThrow('cannot delete context nope, not in');
  });

  it('writes atomically with mode 0600, its directory 0700', () => {
    const dir = path.join(home(), 'new-home');
    const file = path.join(dir, 'config');
    writeConfigFile(file, 'contexts: []\n');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
    fs.chmodSync(file, 0o644);
    writeConfigFile(file, 'contexts: []\n# again\n');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(dir)).toEqual(['config']);
  });
});
