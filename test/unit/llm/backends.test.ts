/**
 * The judge's backends against real servers on 127.0.0.1 (an OpenAI-compatible and an
 * Anthropic-compatible fake with scripted replies) and a scripted CLI for the command backend,
 * each through completeStructured (validation, one repair, bounded retries, Retry-After). Waits
 * between retries go through an injected sleep that records what it was asked to wait, so
 * Retry-After is checked without measuring time.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AnthropicBackend } from '../../../controller/llm/anthropic.js';
import { LlmError, type LlmBackend, type LlmRequest } from '../../../controller/llm/backend.js';
import { CommandBackend, unwrapCliOutput } from '../../../controller/llm/command.js';
import { resolveJudgeConfig, globalConcurrency } from '../../../controller/llm/config.js';
import { retryAfterMs } from '../../../controller/llm/http.js';
import { createBackend } from '../../../controller/llm/index.js';
import { Semaphore } from '../../../controller/llm/limiter.js';
import { OpenAiBackend } from '../../../controller/llm/openai.js';
import { completeStructured, type StructuredOptions } from '../../../controller/llm/structured.js';
import { VERDICT_SCHEMA, VERDICT_SCHEMA_NAME, type Verdict } from '../../../controller/llm/verdict.js';
import { anthropic, FakeJudgeAnthropic } from '../../support/fake-judge-anthropic.js';
import { GOOD_VERDICT, INVALID_VERDICT } from '../../support/fake-judge-server.js';
import { FakeOpenAI, openai } from '../../support/fake-openai.js';

const CLI = path.resolve(__dirname, '../../support/fake-judge-cli.mjs');

function request(over: Partial<LlmRequest> = {}): LlmRequest {
  return {
    purpose: 'judge',
    system: 'You judge runs.',
    prompt: 'OBJECTIVE EVIDENCE\n- run 1 ended Succeeded',
    schema: VERDICT_SCHEMA,
    schemaName: VERDICT_SCHEMA_NAME,
    timeoutMs: 5000,
    maxTokens: 512,
    ...over,
  };
}

/** Records requested waits instead of waiting. */
function recordingSleep() {
  const waits: number[] = [];
  return { waits, sleep: async (ms: number) => void waits.push(ms) };
}

async function kindOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'resolved';
  } catch (e) {
    if (e instanceof LlmError) return e.kind;
    throw e;
  }
}

const call = (b: LlmBackend, opts: Partial<StructuredOptions> = {}, req: Partial<LlmRequest> = {}) => {
  const s = recordingSleep();
  return {
    waits: s.waits,
    p: completeStructured<Verdict>(b, request(req), { maxRetries: 2, sleep: s.sleep, ...opts }),
  };
};

describe('openai backend against a fake OpenAI-compatible server', () => {
  let fake: FakeOpenAI;
  let backend: OpenAiBackend;
  beforeAll(async () => {
    fake = await FakeOpenAI.start();
  });
  afterAll(() => fake.close());
  afterEach(() => fake.server.reset());
  const make = (key?: string) =>
    new OpenAiBackend({ model: 'qwen2.5-coder:7b', endpoint: fake.endpoint, apiKey: () => key });

  it('sends chat completions with a strict json_schema response_format and returns the validated answer', async () => {
    fake.script(openai.answer(GOOD_VERDICT));
    backend = make('sk-test-123');
    const r = await call(backend).p;
    expect(r.value).toEqual(GOOD_VERDICT);
    expect(r.requests).toBe(1);
    expect(r.response.model).toBe('fake-judge-1');
    expect(r.response.usage).toEqual({ inputTokens: 812, outputTokens: 96 });
    const req = fake.requests[0];
    expect(req.path).toBe('/v1/chat/completions');
    expect(req.headers.authorization).toBe('Bearer sk-test-123');
    expect(req.body.model).toBe('qwen2.5-coder:7b');
    expect(req.body.messages.map((m: { role: string }) => m.role)).toEqual(['system', 'user']);
    expect(req.body.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: VERDICT_SCHEMA_NAME, schema: VERDICT_SCHEMA, strict: true },
    });
    expect(req.body.max_tokens).toBe(512);
  });

  it('sends no Authorization header when no key is configured (a local server)', async () => {
    fake.script(openai.answer(GOOD_VERDICT));
    await call(make(undefined)).p;
    expect(fake.requests[0].headers.authorization).toBeUndefined();
  });

  it('garbage text gets one repair request quoting the problem, then the valid answer is taken', async () => {
    fake.script(openai.garbage(), openai.answer(GOOD_VERDICT));
    const r = await call(make()).p;
    expect(r).toMatchObject({ value: GOOD_VERDICT, requests: 2, repaired: true });
    const repair = fake.requests[1].body.messages[1].content as string;
    expect(repair).toContain('could not be used');
    expect(repair).toContain('I think the session went quite well');
  });

  it('schema-invalid JSON: repaired once; if the repair is invalid too the call fails (no made-up score)', async () => {
    fake.script(openai.answer(INVALID_VERDICT), openai.answer(GOOD_VERDICT));
    expect((await call(make()).p).requests).toBe(2);
    fake.server.reset();
    fake.script(openai.answer(INVALID_VERDICT), openai.answer(INVALID_VERDICT), openai.answer(GOOD_VERDICT));
    expect(await kindOf(call(make()).p)).toBe('bad_output');
    expect(fake.requests).toHaveLength(2); // exactly one repair, the third reply is never asked for
    expect(fake.requests[1].body.messages[1].content).toMatch(
      /score must be <= 5|recommendation must be equal to one of the allowed values/,
    );
  });

  it('HTTP 500: retried with growing backoff, at most maxRetries times', async () => {
    fake.script(openai.status(500), openai.status(502), openai.status(503), openai.answer(GOOD_VERDICT));
    const c = call(make(), { maxRetries: 2, backoffMs: 100 });
    expect(await kindOf(c.p)).toBe('server');
    expect(fake.requests).toHaveLength(3);
    expect(c.waits).toEqual([100, 200]);
    fake.server.reset();
    fake.script(openai.status(500), openai.answer(GOOD_VERDICT));
    expect((await call(make()).p).requests).toBe(2);
  });

  it('429 with Retry-After: waits at least what the server asks, then succeeds', async () => {
    fake.script(openai.rateLimited(7), openai.answer(GOOD_VERDICT));
    const c = call(make(), { backoffMs: 100 });
    expect((await c.p).value).toEqual(GOOD_VERDICT);
    expect(c.waits).toEqual([7000]);
  });

  it('a hanging server: each request is cut at its time limit and retried, then the call times out', async () => {
    fake.script(openai.hang(), openai.hang(), openai.answer(GOOD_VERDICT));
    const c = call(make(), { maxRetries: 1 }, { timeoutMs: 300 });
    expect(await kindOf(c.p)).toBe('timeout');
    expect(fake.requests).toHaveLength(2);
  });

  it('4xx other than 408/429 is not retried', async () => {
    fake.script(openai.status(401, 'invalid api key'), openai.answer(GOOD_VERDICT));
    expect(await kindOf(call(make()).p)).toBe('client');
    expect(fake.requests).toHaveLength(1);
  });

  it('OpenAI itself (default endpoint) without a key is a configuration error before any request', async () => {
    const b = new OpenAiBackend({ model: 'gpt-4o-mini', apiKey: () => undefined });
    expect(await kindOf(b.complete(request()))).toBe('config');
  });

  it('keeps concurrent requests at the semaphore limit (the server counts them)', async () => {
    fake.server.maxInFlight = 0;
    const limiter = new Semaphore(() => 2);
    const b = make();
    for (let i = 0; i < 6; i++) fake.script(openai.answer(GOOD_VERDICT, 150));
    const results = await Promise.all(
      Array.from({ length: 6 }, () => limiter.run(() => completeStructured(b, request(), { maxRetries: 0 }))),
    );
    expect(results).toHaveLength(6);
    expect(fake.requests).toHaveLength(6);
    expect(fake.server.maxInFlight).toBe(2);
    expect(limiter.peak).toBe(2);
  });
});

describe('anthropic backend against a fake Messages API', () => {
  let fake: FakeJudgeAnthropic;
  beforeAll(async () => {
    fake = await FakeJudgeAnthropic.start();
  });
  afterAll(() => fake.close());
  afterEach(() => fake.server.reset());
  const make = (key: string | undefined = 'sk-ant-test') =>
    new AnthropicBackend({ model: 'claude-haiku-4-5', endpoint: fake.endpoint, apiKey: () => key });

  it('forces the tool whose input_schema is the verdict schema and takes its input', async () => {
    fake.script(anthropic.tool(GOOD_VERDICT));
    const r = await call(make()).p;
    expect(r.value).toEqual(GOOD_VERDICT);
    expect(r.response.usage).toEqual({ inputTokens: 900, outputTokens: 120 });
    const req = fake.requests[0];
    expect(req.path).toBe('/v1/messages');
    expect(req.headers['x-api-key']).toBe('sk-ant-test');
    expect(req.headers['anthropic-version']).toBe('2023-06-01');
    expect(req.body).toMatchObject({
      model: 'claude-haiku-4-5',
      max_tokens: 512,
      system: 'You judge runs.',
      tool_choice: { type: 'tool', name: VERDICT_SCHEMA_NAME },
    });
    expect(req.body.tools[0]).toMatchObject({ name: VERDICT_SCHEMA_NAME, input_schema: VERDICT_SCHEMA });
  });

  it('accepts JSON in a text block, repairs garbage once, fails on a second invalid answer', async () => {
    fake.script(anthropic.text('```json\n' + JSON.stringify(GOOD_VERDICT) + '\n```'));
    expect((await call(make()).p).value).toEqual(GOOD_VERDICT);
    fake.server.reset();
    fake.script(anthropic.text('Looks good to me.'), anthropic.tool(GOOD_VERDICT));
    expect(await call(make()).p).toMatchObject({ requests: 2, repaired: true });
    fake.server.reset();
    fake.script(anthropic.tool(INVALID_VERDICT), anthropic.tool(INVALID_VERDICT));
    expect(await kindOf(call(make()).p)).toBe('bad_output');
    expect(fake.requests).toHaveLength(2);
  });

  it('500 and 529 (overloaded) are retried; 429 honours Retry-After; the retries are bounded', async () => {
    fake.script(anthropic.status(529, 'overloaded_error'), anthropic.rateLimited(3), anthropic.tool(GOOD_VERDICT));
    const c = call(make(), { maxRetries: 2, backoffMs: 50 });
    expect((await c.p).requests).toBe(3);
    expect(c.waits).toEqual([50, 3000]);
    fake.server.reset();
    fake.script(anthropic.status(500), anthropic.status(500), anthropic.status(500), anthropic.status(500));
    expect(await kindOf(call(make(), { maxRetries: 3 }).p)).toBe('server');
    expect(fake.requests).toHaveLength(4);
  });

  it('a hang times out; a missing key is a configuration error without a request', async () => {
    fake.script(anthropic.hang());
    expect(await kindOf(call(make(), { maxRetries: 0 }, { timeoutMs: 300 }).p)).toBe('timeout');
    expect(fake.requests).toHaveLength(1);
    fake.server.reset();
    expect(await kindOf(call(make(''), { maxRetries: 2 }).p)).toBe('config');
    expect(fake.requests).toHaveLength(0);
  });
});

describe('command backend with a scripted CLI', () => {
  let dir: string;
  const make = (mode: string, extra: string[] = []) => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'orchctl-judge-cli-'));
    return new CommandBackend({ argv: [process.execPath, CLI, mode, dir, ...extra], model: 'sonnet' });
  };
  const calls = () => Number(fs.readFileSync(path.join(dir, 'calls'), 'utf8'));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("writes the prompt to stdin, puts {{schema}} and {{model}} in plain arguments, reads stdout's JSON", async () => {
    const b = make('valid', ['--json-schema', '{{schema}}', '--model', '{{model}}', 'literal $(touch pwned) `x`']);
    const r = await call(b).p;
    expect(r.value).toMatchObject({ score: 3, recommendation: 'continue' });
    const stdin = fs.readFileSync(path.join(dir, 'stdin-1.txt'), 'utf8');
    expect(stdin).toContain('You judge runs.');
    expect(stdin).toContain('OBJECTIVE EVIDENCE');
    const argv = JSON.parse(fs.readFileSync(path.join(dir, 'argv-1.json'), 'utf8'));
    expect(JSON.parse(argv[1])).toEqual(VERDICT_SCHEMA);
    expect(argv[3]).toBe('sonnet');
    expect(argv[4]).toBe('literal $(touch pwned) `x`'); // no shell: text stays text
    expect(fs.existsSync(path.join(process.cwd(), 'pwned'))).toBe(false);
  });

  it("parses Claude Code's --output-format json wrapper: structured_output first, else JSON in result", async () => {
    const r = await call(make('claude')).p;
    expect(r.value).toMatchObject({ score: 3 });
    expect(r.response.usage).toEqual({ inputTokens: 1500, outputTokens: 200 });
    expect((await call(make('claude-result')).p).value).toMatchObject({ outcome: 'partial' });
    expect(() => unwrapCliOutput('{"type":"result","is_error":true,"subtype":"error_max_turns","result":"x"}')).toThrow(
      LlmError,
    );
  });

  it('schema-invalid output gets one repair call; garbage twice fails as bad_output after two calls', async () => {
    const b = make('invalid-then-valid');
    expect(await call(b).p).toMatchObject({ requests: 2, repaired: true });
    expect(fs.readFileSync(path.join(dir, 'stdin-2.txt'), 'utf8')).toContain('could not be used');
    const g = make('garbage');
    expect(await kindOf(call(g).p)).toBe('bad_output');
    expect(calls()).toBe(2);
  });

  it('a failing exit is retried; an is_error wrapper is retried until the bound', async () => {
    expect((await call(make('fail-then-valid')).p).requests).toBe(2);
    const e = make('is-error');
    expect(await kindOf(call(e, { maxRetries: 2 }).p)).toBe('server');
    expect(calls()).toBe(3);
  });

  it('a hung CLI is killed at the time limit together with what it started', async () => {
    const b = make('hang');
    expect(await kindOf(call(b, { maxRetries: 0 }, { timeoutMs: 1500 }).p)).toBe('timeout');
    expect(calls()).toBe(1);
    const grandchild = Number(fs.readFileSync(path.join(dir, 'grandchild.pid'), 'utf8'));
    // Gone, or a zombie waiting for a reaper (containers whose pid 1 does not reap).
    const alive = () => {
      try {
        return fs.readFileSync(`/proc/${grandchild}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
      } catch {
        return false;
      }
    };
    for (let i = 0; i < 100 && alive(); i++) await new Promise((r) => setTimeout(r, 20));
    expect(alive()).toBe(false);
  });

  it('a program that does not exist is a configuration error, not retried', async () => {
    const b = new CommandBackend({ argv: ['/nonexistent/judge-cli'] });
    const c = call(b, { maxRetries: 3 });
    expect(await kindOf(c.p)).toBe('config');
    expect(c.waits).toEqual([]);
  });
});

describe('configuration and factory', () => {
  it('fills defaults, takes the smallest maxConcurrent as the global limit, and builds each backend', () => {
    expect(resolveJudgeConfig(undefined)).toMatchObject({
      enabled: true,
      backend: 'heuristic',
      timeoutMs: 60_000,
      maxRetries: 2,
      maxConcurrent: 2,
    });
    expect(resolveJudgeConfig({ backend: 'openai', timeout: '90s', maxRetries: 0, enabled: false })).toMatchObject({
      enabled: false,
      backend: 'openai',
      timeoutMs: 90_000,
      maxRetries: 0,
    });
    expect(globalConcurrency([])).toBe(2);
    expect(globalConcurrency([undefined, { maxConcurrent: 5 }, { maxConcurrent: 3 }])).toBe(3);
    expect(createBackend(resolveJudgeConfig({})).name).toBe('heuristic');
    expect(createBackend(resolveJudgeConfig({ backend: 'command', command: ['claude', '-p'] })).name).toBe('command');
    expect(() => createBackend(resolveJudgeConfig({ backend: 'openai' }))).toThrow(/judge.model/);
    expect(() => createBackend(resolveJudgeConfig({ backend: 'command' }))).toThrow(/judge.command/);
  });

  it('never makes a backend that would send its API key in plain http:// to another host', () => {
    const cfg = (endpoint: string) => resolveJudgeConfig({ backend: 'openai', model: 'm', endpoint });
    expect(() => createBackend(cfg('http://10.0.0.5:8080/v1'))).toThrow(
      /endpoint: plaintext to 10\.0\.0\.5:8080 is refused.*use https:\/\//,
    );
    expect(createBackend(cfg('http://127.0.0.1:11434/v1')).name).toBe('openai');
    expect(createBackend(cfg('https://llm.example.com/v1')).name).toBe('openai');
  });

  it('reads the API key from the named environment variable per request, never keeping it on the backend', async () => {
    const fake = await FakeJudgeAnthropic.start();
    try {
      const env: NodeJS.ProcessEnv = {};
      const b = createBackend(
        resolveJudgeConfig({ backend: 'anthropic', model: 'm', endpoint: fake.endpoint, apiKeyEnv: 'MY_JUDGE_KEY' }),
        { env },
      );
      expect(await kindOf(b.complete(request()))).toBe('config');
      env.MY_JUDGE_KEY = 'sk-secret-value';
      fake.script(anthropic.tool(GOOD_VERDICT));
      await b.complete(request());
      expect(fake.requests[0].headers['x-api-key']).toBe('sk-secret-value');
      expect(JSON.stringify(b)).not.toContain('sk-secret-value');
    } finally {
      await fake.close();
    }
  });

  it('reads Retry-After as seconds, as an HTTP date, and retry-after-ms', () => {
    expect(retryAfterMs(new Headers({ 'retry-after': '2' }))).toBe(2000);
    expect(retryAfterMs(new Headers({ 'retry-after-ms': '250' }))).toBe(250);
    expect(retryAfterMs(new Headers({ 'retry-after': new Date(10_000).toUTCString() }), 4_000)).toBe(6000);
    expect(retryAfterMs(new Headers({}))).toBeUndefined();
  });

  it('the semaphore admits FIFO, honours a lowered limit, and drops a waiter whose signal aborts', async () => {
    let limit = 2;
    const s = new Semaphore(() => limit);
    await s.acquire();
    await s.acquire();
    const order: number[] = [];
    const a = s.acquire().then(() => order.push(1));
    const ac = new AbortController();
    const b = s.acquire(ac.signal).catch(() => order.push(-2));
    const c = s.acquire().then(() => order.push(3));
    ac.abort();
    await b;
    limit = 1;
    s.release(); // 1 holder, limit 1: nobody admitted
    await Promise.resolve();
    expect(order).toEqual([-2]);
    s.release(); // 0 holders: the first waiter
    await a;
    expect(s.inFlight).toBe(1);
    s.release();
    await c;
    expect(order).toEqual([-2, 1, 3]);
  });
});
