/** redact() (controller/api/redact.ts): registered secrets and key-shaped text never pass. */
import { describe, expect, it } from 'vitest';
import { redact, redactDeep, registerSecret, registerSecretsFromEnv } from '../../../controller/api/redact.js';

describe('redact', () => {
  it('replaces registered values, longest first, and leaves short values alone', () => {
    registerSecret('tok-1234567890');
    registerSecret('tok-1234567890-extended');
    registerSecret('short');
    expect(redact('a tok-1234567890-extended b tok-1234567890 c short')).toBe('a [REDACTED] b [REDACTED] c short');
  });

  it('replaces key-shaped text whether registered or not', () => {
    expect(redact('invalid key sk-ant-api03-abcdefghijkl given')).toBe('invalid key [REDACTED] given');
    expect(redact('header Authorization: Bearer abc.def-ghi_jkl')).toBe('header Authorization: Bearer [REDACTED]');
    expect(redact('{"x-api-key": "zzzzzzzzzzzz"}')).toBe('{"x-api-key": "[REDACTED]"}');
    expect(redact('api_key=qqqqqqqqqqqq&x=1')).toBe('api_key=[REDACTED]&x=1');
  });

  it('registers the values of secret-named environment variables only', () => {
    registerSecretsFromEnv({
      MY_SERVICE_TOKEN: 'svc-token-value-1',
      EDITOR: 'vim-with-long-name',
      OPENAI_API_KEY: 'plainkey-abcdef12',
    });
    expect(redact('svc-token-value-1 / vim-with-long-name / plainkey-abcdef12')).toBe(
      '[REDACTED] / vim-with-long-name / [REDACTED]',
    );
  });

  it('walks objects and arrays, keeping non-strings', () => {
    registerSecret('deep-secret-value');
    expect(redactDeep({ a: ['x deep-secret-value'], n: 3, b: { c: 'deep-secret-value' }, t: true })).toEqual({
      a: ['x [REDACTED]'],
      n: 3,
      b: { c: '[REDACTED]' },
      t: true,
    });
  });
});
