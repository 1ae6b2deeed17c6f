/**
 * Admission of an LLM backend's settings, wherever one is configured (a SessionPolicy's judge, an
 * Autopilot's planner, a NotificationPolicy's digest.llm): an endpoint the API key would cross in
 * clear is refused (the rule of api/endpoint.ts), and so is a command given to a backend that never
 * runs one — it would be ignored, and whoever wrote it believes it runs.
 */
import { plaintextRefusal } from '../api/endpoint.js';
import type { FieldError, PathPart } from '../api/validate.js';

type Obj = Record<string, unknown>;

export function llmBackendErrors(settings: unknown, at: PathPart[]): FieldError[] {
  if (!settings || typeof settings !== 'object' || Array.isArray(settings)) return [];
  const c = settings as Obj;
  const errs: FieldError[] = [];
  const backend = typeof c.backend === 'string' ? c.backend : 'heuristic';
  if (c.command !== undefined && backend !== 'command')
    errs.push({ path: [...at, 'command'], message: `is only for the command backend (backend is ${backend})` });
  if (typeof c.endpoint === 'string') {
    let url: URL | undefined;
    try {
      url = new URL(c.endpoint);
    } catch {
      /* the schema's pattern says what a URL looks like */
    }
    const plaintext = url && plaintextRefusal(url);
    if (plaintext)
      errs.push({
        path: [...at, 'endpoint'],
        message: `${plaintext}: the API key would travel in clear; use https://`,
      });
  }
  return errs;
}
