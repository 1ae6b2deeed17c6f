/**
 * A fake OpenAI-compatible chat-completions server (`POST /v1/chat/completions`, as OpenAI,
 * Ollama, vLLM and llama.cpp's server speak it) on 127.0.0.1, with scripted replies: a JSON
 * answer, garbage text, HTTP errors, 429 with Retry-After, and a hang.
 */
import { ScriptedApi, ScriptedServer, type RecordedRequest, type Reply } from './fake-judge-server.js';

export function chatCompletion(content: string, model = 'fake-judge-1', finish = 'stop'): Reply {
  return {
    kind: 'json',
    body: {
      id: 'chatcmpl-fake',
      object: 'chat.completion',
      created: 1700000000,
      model,
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: finish }],
      usage: { prompt_tokens: 812, completion_tokens: 96, total_tokens: 908 },
    },
  };
}

export const openai = {
  /** The assistant answers `value` as JSON text. */
  answer: (value: unknown, delayMs?: number): Reply => ({
    ...(chatCompletion(JSON.stringify(value)) as Extract<Reply, { kind: 'json' }>),
    delayMs,
  }),
  /** The assistant answers prose instead of JSON. */
  garbage: (): Reply => chatCompletion('I think the session went quite well overall, probably a 4.'),
  status: (status: number, message = 'upstream error'): Reply => ({
    kind: 'json',
    status,
    body: { error: { message, type: 'server_error' } },
  }),
  rateLimited: (retryAfterSeconds: number): Reply => ({
    kind: 'json',
    status: 429,
    headers: { 'retry-after': String(retryAfterSeconds) },
    body: { error: { message: 'Rate limit reached', type: 'rate_limit_error' } },
  }),
  hang: (): Reply => ({ kind: 'hang' }),
};

export class FakeOpenAI extends ScriptedApi {
  private constructor(server: ScriptedServer) {
    super(server);
  }

  /** `fallback` answers requests beyond the script (default: a 500, so unscripted calls are visible). */
  static async start(
    fallback: (req: RecordedRequest) => Reply = () => openai.status(500, 'unscripted request'),
  ): Promise<FakeOpenAI> {
    return new FakeOpenAI(
      await ScriptedServer.start(fallback, (req) =>
        req.method === 'POST' && req.path === '/v1/chat/completions'
          ? undefined
          : { kind: 'json', status: 404, body: { error: { message: `no route ${req.path}` } } },
      ),
    );
  }

  /** Up to /v1. */
  get endpoint(): string {
    return `${this.server.url}/v1`;
  }
}
