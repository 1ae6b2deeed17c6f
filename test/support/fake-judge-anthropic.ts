/**
 * A fake Anthropic Messages API for the judge (non-streaming `POST /v1/messages`) on 127.0.0.1.
 * test/support/fake-anthropic.ts drives Claude Code's streaming conversation; the judge makes one
 * plain request with a forced tool, which this answers with scripted replies: a tool_use block,
 * a text block, HTTP errors (500, 529 overloaded), 429 with Retry-After, and a hang. It checks the
 * headers the API requires (x-api-key, anthropic-version) and answers 401 without them.
 */
import { ScriptedApi, ScriptedServer, type RecordedRequest, type Reply } from './fake-judge-server.js';

export function message(content: unknown[], stopReason = 'end_turn', model = 'claude-fake-judge'): Reply {
  return {
    kind: 'json',
    body: {
      id: 'msg_fake',
      type: 'message',
      role: 'assistant',
      model,
      content,
      stop_reason: stopReason,
      stop_sequence: null,
      usage: { input_tokens: 900, output_tokens: 120 },
    },
  };
}

export const anthropic = {
  /** The forced tool is called with `input`. */
  tool: (input: unknown, name = 'session_evaluation', delayMs?: number): Reply => ({
    ...(message([{ type: 'tool_use', id: 'toolu_fake', name, input }], 'tool_use') as Extract<Reply, { kind: 'json' }>),
    delayMs,
  }),
  text: (text: string): Reply => message([{ type: 'text', text }]),
  status: (status: number, type = 'api_error'): Reply => ({
    kind: 'json',
    status,
    body: { type: 'error', error: { type, message: `${type} (fake)` } },
  }),
  rateLimited: (retryAfterSeconds: number): Reply => ({
    kind: 'json',
    status: 429,
    headers: { 'retry-after': String(retryAfterSeconds) },
    body: { type: 'error', error: { type: 'rate_limit_error', message: 'rate limited (fake)' } },
  }),
  hang: (): Reply => ({ kind: 'hang' }),
};

export class FakeJudgeAnthropic extends ScriptedApi {
  private constructor(server: ScriptedServer) {
    super(server);
  }

  static async start(
    fallback: (req: RecordedRequest) => Reply = () => anthropic.status(500),
  ): Promise<FakeJudgeAnthropic> {
    return new FakeJudgeAnthropic(
      await ScriptedServer.start(fallback, (req) => {
        if (req.method !== 'POST' || req.path !== '/v1/messages')
          return {
            kind: 'json',
            status: 404,
            body: { type: 'error', error: { type: 'not_found_error', message: req.path } },
          };
        if (!req.headers['x-api-key'] || !req.headers['anthropic-version'])
          return anthropic.status(401, 'authentication_error');
        return undefined;
      }),
    );
  }

  get endpoint(): string {
    return this.server.url;
  }
}
