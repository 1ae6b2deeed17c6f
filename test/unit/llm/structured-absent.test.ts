/**
 * A field added to a strict schema after models and `backend: command` scripts were written is
 * required-but-nullable (OpenAI's strict mode lists every property as required); completeStructured
 * reads it as null when an answer leaves it out, instead of failing the answer and asking for a repair.
 */
import { expect, it } from 'vitest';
import type { LlmBackend, LlmRequest, LlmResponse } from '../../../controller/llm/backend.js';
import { completeStructured } from '../../../controller/llm/structured.js';

const schema = {
  type: 'object',
  additionalProperties: false,
  required: ['summary', 'later'],
  properties: { summary: { type: 'string' }, later: { type: ['string', 'null'] } },
};
const req: LlmRequest = {
  purpose: 'test',
  system: 's',
  prompt: 'p',
  schema,
  schemaName: 'answer',
  timeoutMs: 1000,
  maxTokens: 64,
};
const backend = (value: unknown) => {
  let calls = 0;
  const b = {
    complete: async () => {
      calls++;
      return { value: structuredClone(value), raw: JSON.stringify(value) } as unknown as LlmResponse;
    },
  } as unknown as LlmBackend;
  return { b, calls: () => calls };
};

it('an answer without a field listed absentAsNull has it as null, in one request', async () => {
  const x = backend({ summary: 'ok' });
  const r = await completeStructured(x.b, req, { maxRetries: 0, absentAsNull: ['later'] });
  expect(r.value).toEqual({ summary: 'ok', later: null });
  expect(x.calls()).toBe(1);
});

it('without absentAsNull the same answer does not match the schema', async () => {
  const x = backend({ summary: 'ok' });
  await expect(completeStructured(x.b, req, { maxRetries: 0 })).rejects.toThrow(/later/);
  expect(x.calls()).toBe(2); // one repair request
});
