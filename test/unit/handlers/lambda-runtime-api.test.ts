import { afterEach, describe, expect, it } from 'vitest';
import { LambdaRuntimeApi } from '../../support/lambda-runtime-api.js';

const BASE = '/2018-06-01/runtime';

describe('the loopback Lambda Runtime API (test/support), driven as a runtime client drives it', () => {
  let api: LambdaRuntimeApi;
  afterEach(() => api?.close());

  const next = () => fetch(`http://${api.address}${BASE}/invocation/next`);
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`http://${api.address}${BASE}${path}`, { method: 'POST', body: JSON.stringify(body), headers });

  it('hands a queued event to the next poll with the Lambda-Runtime headers, and returns what was posted', async () => {
    // Prepare
    api = await LambdaRuntimeApi.start('arn:aws:lambda:us-east-1:111122223333:function:probe');
    const invoked = api.invoke({ hello: 'world' }, { timeoutMs: 60_000 });
    // Act
    const polled = await next();
    const id = polled.headers.get('lambda-runtime-aws-request-id')!;
    const answer = await post(`/invocation/${id}/response`, { answer: 42 });
    // Assess
    expect(await polled.json()).toEqual({ hello: 'world' });
    expect(Number(polled.headers.get('lambda-runtime-deadline-ms'))).toBeGreaterThan(Date.now());
    expect(polled.headers.get('lambda-runtime-invoked-function-arn')).toBe(
      'arn:aws:lambda:us-east-1:111122223333:function:probe',
    );
    expect(polled.headers.get('lambda-runtime-trace-id')).toMatch(/^Root=1-/);
    expect(answer.status).toBe(202);
    expect(await invoked).toEqual({ requestId: id, ok: true, payload: { answer: 42 } });
  });

  it('holds a poll until an event comes (long poll), and keeps the posted error and its type header', async () => {
    // Prepare
    api = await LambdaRuntimeApi.start();
    const polled = next();
    await api.polled(1);
    // Act
    const invoked = api.invoke({ n: 1 });
    const id = (await polled).headers.get('lambda-runtime-aws-request-id')!;
    await post(
      `/invocation/${id}/error`,
      { errorType: 'CommitFailedError', errorMessage: '409', trace: ['CommitFailedError: 409'] },
      { 'Lambda-Runtime-Function-Error-Type': 'CommitFailedError' },
    );
    // Assess
    expect(await invoked).toEqual({
      requestId: id,
      ok: false,
      error: {
        errorType: 'CommitFailedError',
        errorMessage: '409',
        trace: ['CommitFailedError: 409'],
        errorTypeHeader: 'CommitFailedError',
      },
    });
  });

  it('answers 404 for a request id it never handed out', async () => {
    api = await LambdaRuntimeApi.start();
    const res = await post('/invocation/not-an-id/response', {});
    expect(res.status).toBe(404);
  });

  it('fails waiting and later invocations with the error posted to /init/error', async () => {
    // Prepare
    api = await LambdaRuntimeApi.start();
    const waiting = api.invoke({});
    // Act
    await post('/init/error', { errorType: 'Runtime.ImportModuleError', errorMessage: 'no index.mjs' });
    const later = await api.invoke({});
    // Assess
    for (const result of [await waiting, later]) {
      expect(result).toMatchObject({ ok: false, error: { errorType: 'Runtime.ImportModuleError' } });
    }
    expect(api.initError?.errorMessage).toBe('no index.mjs');
  });
});
