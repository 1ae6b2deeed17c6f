/**
 * Backends from a SessionPolicy's judge configuration, and the one place API keys are read:
 * from the environment variable the configuration names, at the moment of each request, never
 * copied into an object, a log line or an error message.
 */
import { plaintextRefusal } from '../api/endpoint.js';
import { AnthropicBackend } from './anthropic.js';
import { LlmError, type LlmBackend } from './backend.js';
import { CommandBackend } from './command.js';
import { DEFAULT_API_KEY_ENV, type ResolvedJudgeConfig } from './config.js';
import { HeuristicBackend, type HeuristicHandler } from './heuristic.js';
import { OpenAiBackend } from './openai.js';

export { LlmError, type LlmBackend, type LlmRequest, type LlmResponse } from './backend.js';
export { completeStructured, type StructuredOptions, type StructuredResult } from './structured.js';
export { Semaphore } from './limiter.js';
export {
  globalConcurrency,
  judgeConfigOf,
  resolveJudgeConfig,
  type JudgeConfig,
  type ResolvedJudgeConfig,
} from './config.js';

export interface BackendFactoryOptions {
  env?: NodeJS.ProcessEnv;
  heuristicHandlers?: Record<string, HeuristicHandler>;
}

/** Throws LlmError('config') for a configuration that cannot work (no model, no command). */
export function createBackend(c: ResolvedJudgeConfig, opts: BackendFactoryOptions = {}): LlmBackend {
  const env = opts.env ?? process.env;
  const keyVar = c.apiKeyEnv ?? DEFAULT_API_KEY_ENV[c.backend];
  const apiKey = () => (keyVar ? env[keyVar] || undefined : undefined);
  // Admission refuses it; an object written around admission must not send the key in clear either.
  const plaintext = c.endpoint && URL.canParse(c.endpoint) ? plaintextRefusal(new URL(c.endpoint)) : undefined;
  if (plaintext && (c.backend === 'openai' || c.backend === 'anthropic'))
    throw new LlmError('config', `endpoint: ${plaintext}: the API key would travel in clear; use https://`);
  switch (c.backend) {
    case 'heuristic':
      return new HeuristicBackend(opts.heuristicHandlers);
    case 'command':
      if (!c.command?.length) throw new LlmError('config', 'judge.backend is command but judge.command is not set');
      return new CommandBackend({ argv: c.command, model: c.model });
    case 'openai':
      if (!c.model) throw new LlmError('config', 'judge.backend is openai but judge.model is not set');
      return new OpenAiBackend({ model: c.model, endpoint: c.endpoint, apiKey });
    case 'anthropic':
      if (!c.model) throw new LlmError('config', 'judge.backend is anthropic but judge.model is not set');
      return new AnthropicBackend({ model: c.model, endpoint: c.endpoint, apiKey });
  }
}
