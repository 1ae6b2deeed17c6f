// The fake Messages API speaks the protocol the real CLI expects (the CLI itself is exercised by
// scripts/claude-code/spike.ts; these tests pin the wire format without it).
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { FakeAnthropic, bashTurn, errorAnswer, textTurn, toolResults, userText } from './fake-anthropic.js';
import { apiKeyTail, makeClaudeHome, projectDirName, transcriptPath } from './claude-code.js';

interface SseEvent {
  event: string;
  data: Record<string, unknown>;
}

function parseSse(text: string): SseEvent[] {
  return text
    .split('\n\n')
    .filter((chunk) => chunk.trim())
    .map((chunk) => {
      const event = /^event: (.*)$/m.exec(chunk)?.[1] ?? '';
      const data = JSON.parse(/^data: (.*)$/m.exec(chunk)?.[1] ?? '{}') as Record<string, unknown>;
      return { event, data };
    });
}

const TOOLS = [{ name: 'Bash', input_schema: { type: 'object' } }];

function messages(fake: FakeAnthropic, body: Record<string, unknown>): Promise<Response> {
  return fetch(`${fake.url}/v1/messages?beta=true`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify(body),
  });
}

describe('fake Anthropic Messages API', () => {
  let fake: FakeAnthropic;
  beforeEach(async () => {
    fake = await FakeAnthropic.start();
  });
  afterEach(async () => {
    await fake.close();
  });

  it('streams a scripted tool_use turn as SSE in protocol order', async () => {
    fake.script(bashTurn('git commit -qm wip', { text: 'Committing.', id: 'toolu_1' }));
    const res = await messages(fake, {
      model: 'm',
      stream: true,
      tools: TOOLS,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'commit it' }] }],
    });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = parseSse(await res.text());
    const order = events.map((e) => e.event).filter((e, i, a) => e !== a[i - 1]);
    expect(order).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    for (const e of events) expect(e.data.type).toBe(e.event);
    const text = events
      .filter((e) => e.event === 'content_block_delta' && (e.data.delta as { type: string }).type === 'text_delta')
      .map((e) => (e.data.delta as { text: string }).text)
      .join('');
    expect(text).toBe('Committing.');
    const start = events.find(
      (e) => e.event === 'content_block_start' && (e.data.content_block as { type: string }).type === 'tool_use',
    );
    expect(start?.data).toMatchObject({
      index: 1,
      content_block: { type: 'tool_use', id: 'toolu_1', name: 'Bash', input: {} },
    });
    const json = events
      .filter((e) => e.event === 'content_block_delta' && e.data.index === 1)
      .map((e) => (e.data.delta as { type: string; partial_json: string }).partial_json)
      .join('');
    expect(JSON.parse(json)).toEqual({ command: 'git commit -qm wip', description: 'Run git' });
    expect(events.find((e) => e.event === 'message_delta')?.data).toMatchObject({
      delta: { stop_reason: 'tool_use' },
      usage: { output_tokens: expect.any(Number) },
    });
    expect(fake.requests[0]).toMatchObject({ kind: 'main', mainIndex: 1, answeredWith: 'scripted' });
    expect(userText(fake.requests[0].body)).toBe('commit it');
  });

  it('answers non-streaming requests with one JSON message, and side requests with schema-shaped JSON', async () => {
    fake.script(textTurn('hello'));
    const main = (await (
      await messages(fake, { model: 'm', tools: TOOLS, messages: [{ role: 'user', content: 'hi' }] })
    ).json()) as Record<string, unknown>;
    expect(main).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'm',
      content: [{ type: 'text', text: 'hello' }],
      stop_reason: 'end_turn',
    });

    const side = (await (
      await messages(fake, {
        model: 'haiku',
        tools: [],
        output_config: {
          format: {
            type: 'json_schema',
            schema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
          },
        },
        messages: [{ role: 'user', content: 'title this' }],
      })
    ).json()) as { content: Array<{ text: string }> };
    expect(JSON.parse(side.content[0].text)).toEqual({ title: 'Fake title' });
    expect(fake.requests.map((r) => r.kind)).toEqual(['main', 'side']);
    expect(fake.pending).toBe(0);
  });

  it('falls back to a text turn when nothing is scripted, and supports handlers and errors', async () => {
    fake.script(
      (req) => textTurn(`you said ${userText(req.body)}`),
      errorAnswer(429, 'rate_limit_error', 'slow down', { 'retry-after': '1' }),
    );
    const r1 = (await (
      await messages(fake, { tools: TOOLS, messages: [{ role: 'user', content: 'ping' }] })
    ).json()) as { content: Array<{ text: string }> };
    expect(r1.content[0].text).toBe('you said ping');
    const r2 = await messages(fake, { tools: TOOLS, messages: [{ role: 'user', content: 'again' }] });
    expect(r2.status).toBe(429);
    expect(r2.headers.get('retry-after')).toBe('1');
    expect(await r2.json()).toMatchObject({ type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } });
    const r3 = (await (
      await messages(fake, { tools: TOOLS, messages: [{ role: 'user', content: 'more' }] })
    ).json()) as { content: Array<{ text: string }> };
    expect(r3.content[0].text).toMatch(/nothing scripted/);
    expect(fake.mainRequests.map((r) => r.answeredWith)).toEqual(['scripted', 'error 429', 'unscripted']);
  });

  it('exposes tool results and waits for the n-th main request', async () => {
    const waiting = fake.waitForMain(2, 5_000);
    await messages(fake, { tools: TOOLS, messages: [{ role: 'user', content: 'go' }] });
    await messages(fake, {
      tools: TOOLS,
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'false' } }] },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 't1', content: 'Exit code 1', is_error: true },
            { type: 'text', text: '<system-reminder>\nx\n</system-reminder>' },
          ],
        },
      ],
    });
    const second = await waiting;
    expect(toolResults(second.body)).toEqual([{ toolUseId: 't1', isError: true, content: 'Exit code 1' }]);
    expect(userText(second.body)).toBe('');
    await expect(fake.waitForMain(3, 50)).rejects.toThrow(/no matching request/);
  });

  it('answers the start-up endpoints and refuses proxied egress', async () => {
    expect((await fetch(`${fake.url}/api/hello`, { method: 'HEAD' })).status).toBe(200);
    expect(
      await (await fetch(`${fake.url}/v1/messages/count_tokens`, { method: 'POST', body: '{"messages":[]}' })).json(),
    ).toMatchObject({ input_tokens: expect.any(Number) });
    expect(await (await fetch(`${fake.url}/v1/models`)).json()).toMatchObject({ data: [{ type: 'model' }] });
    expect((await fetch(`${fake.url}/api/event_logging/batch`, { method: 'POST', body: '{}' })).status).toBe(200);
    expect((await fetch(`${fake.url}/v2/nothing`)).status).toBe(404);

    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request({
        host: '127.0.0.1',
        port: fake.port,
        method: 'CONNECT',
        path: 'api.anthropic.com:443',
      });
      req.on('connect', (res, socket) => {
        socket.destroy();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(403);
    expect(fake.requests.at(-1)).toMatchObject({ kind: 'egress', method: 'CONNECT', path: 'api.anthropic.com:443' });
  });

  it('stall keeps the stream open until the client goes away', async () => {
    fake.script({ ...textTurn('partial'), stall: true });
    const ac = new AbortController();
    const res = await fetch(`${fake.url}/v1/messages`, {
      method: 'POST',
      body: JSON.stringify({ stream: true, tools: TOOLS, messages: [] }),
      signal: ac.signal,
    });
    const reader = res.body!.getReader();
    let seen = '';
    while (!seen.includes('content_block_stop')) seen += new TextDecoder().decode((await reader.read()).value);
    expect(seen).not.toContain('message_stop');
    ac.abort();
    await new Promise((r) => setTimeout(r, 50));
    expect(fake.requests[0].answeredWith).toMatch(/client went away/);
  });
});

describe('Claude Code test home', () => {
  it('encodes transcript directories like the CLI', () => {
    expect(projectDirName('/tmp/orchctl-claude-spike/project')).toBe('-tmp-orchctl-claude-spike-project');
    expect(projectDirName('/home/u/my.repo_x')).toBe('-home-u-my-repo-x');
    expect(projectDirName(`/${'a'.repeat(250)}`)).toBeUndefined();
    expect(transcriptPath('/c', '/w/p', 'S')).toBe(path.join('/c', 'projects', '-w-p', 'S.jsonl'));
    expect(apiKeyTail('sk-ant-test-0123456789abcdefghijklmnop')).toBe('6789abcdefghijklmnop');
  });

  it('writes the no-dialog config, a hooks settings file and a logging hook that always exits 0', () => {
    const home = makeClaudeHome({ projectDirs: ['/work/x'], baseUrl: 'http://127.0.0.1:1' });
    try {
      const config = JSON.parse(fs.readFileSync(path.join(home.configDir, '.claude.json'), 'utf8')) as Record<
        string,
        unknown
      >;
      expect(config).toMatchObject({
        hasCompletedOnboarding: true,
        theme: 'dark',
        customApiKeyResponses: { approved: [apiKeyTail(home.apiKey)], rejected: [] },
        projects: { '/work/x': { hasTrustDialogAccepted: true } },
      });
      const settings = JSON.parse(fs.readFileSync(home.settingsPath, 'utf8')) as {
        permissions: unknown;
        hooks: Record<string, Array<{ matcher?: string; hooks: Array<{ command: string }> }>>;
      };
      expect(settings.permissions).toEqual({ defaultMode: 'default' });
      expect(Object.keys(settings.hooks)).toContain('PermissionRequest');
      expect(settings.hooks.PreToolUse[0].matcher).toBe('*');
      const hook = settings.hooks.Stop[0].hooks[0].command;
      execFileSync(hook, { input: '{"hook_event_name":"Stop",\n"session_id":"s"}\n' });
      execFileSync(hook, { input: '' });
      const records = home.readHooks();
      expect(records).toHaveLength(1);
      expect(records[0].payload).toEqual({ hook_event_name: 'Stop', session_id: 's' });
      expect(home.env).toMatchObject({
        CLAUDE_CONFIG_DIR: home.configDir,
        ANTHROPIC_BASE_URL: 'http://127.0.0.1:1',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      });
      expect(home.args('S')).toEqual(['--session-id', 'S', '--settings', home.settingsPath]);
    } finally {
      home.cleanup();
    }
  });
});
