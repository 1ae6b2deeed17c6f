/**
 * The Anthropic Messages API (`POST {endpoint}/v1/messages`, anthropic-version 2023-06-01).
 *
 * Structured output by a *forced tool*: the request offers one tool whose `input_schema` is the
 * answer's JSON Schema and sets `tool_choice: {type: "tool", name}`, so the model must answer
 * with a tool_use block whose `input` is the JSON object. This works on every Claude model and
 * API version, unlike the newer `output_config.format` json_schema mode, which needs a recent
 * model (and a beta header on older API versions). The tool input is not guaranteed to honour
 * every schema keyword (enums, bounds), so the caller validates it and asks for one repair.
 * A text-only answer is accepted too if it contains the JSON.
 */
import { registerSecret } from '../api/redact.js';
import { LlmError, type LlmBackend, type LlmRequest, type LlmResponse } from './backend.js';
import { parseJsonAnswer, postJson } from './http.js';

export const ANTHROPIC_DEFAULT_ENDPOINT = 'https://api.anthropic.com';
export const ANTHROPIC_VERSION = '2023-06-01';

export interface AnthropicOptions {
  model: string;
  endpoint?: string;
  apiKey: () => string | undefined;
}

interface MessagesResponse {
  model?: string;
  stop_reason?: string;
  content?: ({ type: 'text'; text: string } | { type: 'tool_use'; name: string; input: unknown } | { type: string })[];
  usage?: { input_tokens?: number; output_tokens?: number };
}

export class AnthropicBackend implements LlmBackend {
  readonly name = 'anthropic';
  readonly model: string;
  private readonly url: string;

  constructor(private readonly opts: AnthropicOptions) {
    this.model = opts.model;
    this.url = `${(opts.endpoint ?? ANTHROPIC_DEFAULT_ENDPOINT).replace(/\/+$/, '').replace(/\/v1$/, '')}/v1/messages`;
  }

  async complete(req: LlmRequest): Promise<LlmResponse> {
    const key = this.opts.apiKey();
    registerSecret(key); // an error body that echoes it back is redacted wherever it goes
    if (!key)
      throw new LlmError(
        'config',
        'no API key for the anthropic backend ' +
          '(set the environment variable apiKeyEnv names, default ANTHROPIC_API_KEY)',
      );
    const tool = req.schemaName.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64);
    const body = {
      model: this.model,
      max_tokens: req.maxTokens ?? 1024,
      system: req.system,
      messages: [{ role: 'user', content: req.prompt }],
      tools: [
        {
          name: tool,
          description: 'Record the evaluation. Call this exactly once with the complete verdict.',
          input_schema: req.schema,
        },
      ],
      tool_choice: { type: 'tool', name: tool },
    };
    const { json } = await postJson(
      this.url,
      { 'x-api-key': key, 'anthropic-version': ANTHROPIC_VERSION },
      body,
      req.timeoutMs,
      req.signal,
    );
    const r = json as MessagesResponse;
    const usage = r.usage ? { inputTokens: r.usage.input_tokens, outputTokens: r.usage.output_tokens } : undefined;
    const use = r.content?.find((b): b is { type: 'tool_use'; name: string; input: unknown } => b.type === 'tool_use');
    if (use) return { value: use.input, raw: JSON.stringify(use.input), model: r.model ?? this.model, usage };
    const text = (r.content ?? [])
      .filter((b): b is { type: 'text'; text: string } => b.type === 'text')
      .map((b) => b.text)
      .join('');
    if (r.stop_reason === 'max_tokens')
      throw new LlmError('bad_output', 'the answer was cut off at max_tokens', undefined, text);
    if (!text)
      throw new LlmError(
        'bad_output',
        'the response has neither a tool_use nor a text block',
        undefined,
        JSON.stringify(json).slice(0, 2000),
      );
    return { value: parseJsonAnswer(text), raw: text, model: r.model ?? this.model, usage };
  }
}
