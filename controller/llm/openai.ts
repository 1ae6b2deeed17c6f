/**
 * OpenAI-compatible chat completions (`POST {endpoint}/chat/completions`): OpenAI itself, Ollama,
 * vLLM, llama.cpp's server, LM Studio... Structured output through `response_format:
 * {type: "json_schema", json_schema: {name, schema, strict: true}}`, which those servers turn into
 * constrained decoding (Ollama and llama.cpp compile the schema to a grammar). The answer is still
 * parsed and validated by the caller, since not every server enforces every keyword.
 * No temperature is sent: OpenAI's reasoning models reject any but the default.
 */
import { registerSecret } from '../api/redact.js';
import { LlmError, type LlmBackend, type LlmRequest, type LlmResponse } from './backend.js';
import { parseJsonAnswer, postJson } from './http.js';

export const OPENAI_DEFAULT_ENDPOINT = 'https://api.openai.com/v1';

export interface OpenAiOptions {
  model: string;
  endpoint?: string;
  /** Reads the key when a request is made (never stored on the backend). */
  apiKey: () => string | undefined;
}

interface ChatCompletion {
  model?: string;
  choices?: { message?: { content?: string | null; refusal?: string | null }; finish_reason?: string }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number };
}

export class OpenAiBackend implements LlmBackend {
  readonly name = 'openai';
  readonly model: string;
  private readonly url: string;

  constructor(private readonly opts: OpenAiOptions) {
    this.model = opts.model;
    this.url = `${(opts.endpoint ?? OPENAI_DEFAULT_ENDPOINT).replace(/\/+$/, '')}/chat/completions`;
  }

  async complete(req: LlmRequest): Promise<LlmResponse> {
    const key = this.opts.apiKey();
    registerSecret(key); // an error body that echoes it back is redacted wherever it goes
    // Local servers (Ollama, llama.cpp) need no key; OpenAI itself does.
    if (!key && !this.opts.endpoint)
      throw new LlmError(
        'config',
        'no API key for the openai backend (set the environment variable apiKeyEnv names, default OPENAI_API_KEY)',
      );
    const body = {
      model: this.model,
      messages: [
        { role: 'system', content: req.system },
        { role: 'user', content: req.prompt },
      ],
      response_format: { type: 'json_schema', json_schema: { name: req.schemaName, schema: req.schema, strict: true } },
      ...(req.maxTokens ? { max_tokens: req.maxTokens } : {}),
    };
    const { json } = await postJson(
      this.url,
      key ? { authorization: `Bearer ${key}` } : {},
      body,
      req.timeoutMs,
      req.signal,
    );
    const r = json as ChatCompletion;
    const choice = r.choices?.[0];
    if (!choice?.message)
      throw new LlmError(
        'bad_output',
        'the response has no choices[0].message',
        undefined,
        JSON.stringify(json).slice(0, 2000),
      );
    if (choice.message.refusal)
      throw new LlmError(
        'bad_output',
        `the model refused: ${choice.message.refusal.slice(0, 200)}`,
        undefined,
        choice.message.refusal,
      );
    const text = choice.message.content ?? '';
    if (choice.finish_reason === 'length')
      throw new LlmError('bad_output', 'the answer was cut off at the token limit', undefined, text);
    return {
      value: parseJsonAnswer(text),
      raw: text,
      model: r.model ?? this.model,
      usage: r.usage ? { inputTokens: r.usage.prompt_tokens, outputTokens: r.usage.completion_tokens } : undefined,
    };
  }
}
