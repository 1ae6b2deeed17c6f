/**
 * Secrets out of every text orchctl stores, logs or prints. An error body from an LLM endpoint,
 * a tool's stderr or an agent's output may echo a key back; before such text goes into a status,
 * an Event, a log line or a CLI message it passes through redact(): every value registered as
 * secret (API keys read from the environment, the agent's env values) is replaced, and so is
 * anything shaped like a key (`sk-…`, `Bearer …`, `x-api-key: …`) whether registered or not.
 */

export const REDACTED = '[REDACTED]';
/** Shorter values are not registered: replacing "1" or "true" everywhere would garble text. */
const MIN_SECRET_LENGTH = 8;

const secrets = new Set<string>();
let matcher: RegExp | undefined;

const SHAPES: RegExp[] = [
  /\bsk-[A-Za-z0-9_-]{8,}/g, // Anthropic and OpenAI style keys
  /\b(Bearer)\s+[A-Za-z0-9._~+/=-]{8,}/gi,
  /\b(x-api-key|api[_-]?key|access[_-]?token)(["']?\s*[:=]\s*["']?)[^\s"',;}&]{8,}/gi,
];

/** Names of environment variables that hold secrets by convention. */
export const SECRET_NAME = /(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)S?$/i;

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export function registerSecret(value: string | undefined): void {
  if (!value || value.length < MIN_SECRET_LENGTH || secrets.has(value)) return;
  secrets.add(value);
  // Longest first, so a secret that contains another is replaced whole.
  matcher = new RegExp(
    [...secrets]
      .sort((a, b) => b.length - a.length)
      .map(escapeRegExp)
      .join('|'),
    'g',
  );
}

/** Registers the values of variables whose names say they are secrets (…_API_KEY, …_TOKEN…). */
export function registerSecretsFromEnv(env: NodeJS.ProcessEnv = process.env): void {
  for (const [name, value] of Object.entries(env)) if (SECRET_NAME.test(name)) registerSecret(value);
}

export function redact(text: string): string {
  if (!text) return text;
  let out = matcher ? text.replace(matcher, REDACTED) : text;
  out = out.replace(SHAPES[0], REDACTED);
  out = out.replace(SHAPES[1], (_m, scheme: string) => `${scheme} ${REDACTED}`);
  out = out.replace(SHAPES[2], (_m, name: string, sep: string) => `${name}${sep}${REDACTED}`);
  return out;
}

/** redact() over every string in a JSON-like value (a status, an Event); returns a new value. */
export function redactDeep<T>(value: T): T {
  if (typeof value === 'string') return redact(value) as T;
  if (Array.isArray(value)) return value.map((v) => redactDeep(v)) as T;
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = redactDeep(v);
    return out as T;
  }
  return value;
}
