import express from 'express';
import request from 'supertest';
import { beginRequestContext, RequestContext, requestContext } from '../../src/middleware/request-context';
import type { Account } from '../../src/store/store';

const ACCOUNT = { sourceId: 'ACME' } as Account;

describe('the request context', () => {
  it('refuses to give a stage before the step that writes it ran, naming that step', () => {
    const context = new RequestContext('r1', 0);
    expect(() => context.body).toThrow('readJsonBody() did not run before this step');
    expect(() => context.signature).toThrow('verifySignature() did not run before this step');
    expect(() => context.account).toThrow('authenticate() did not run before this step');
    expect([context.bodyIfRead, context.accountIfAuthenticated]).toEqual([undefined, undefined]);
  });

  it('gives each stage once its step wrote it', () => {
    const context = new RequestContext('r1', 0);
    const body = { raw: Buffer.from('{}'), parsed: {} };
    const signature = { webhookId: 'msg_1', signedByAccount: true, namedAccount: { sourceId: 'ACME', account: ACCOUNT } };
    context.body = body;
    context.signature = signature;
    context.account = ACCOUNT;
    expect([context.body, context.bodyIfRead, context.signature, context.account, context.accountIfAuthenticated]).toEqual([
      body,
      body,
      signature,
      ACCOUNT,
      ACCOUNT,
    ]);
  });

  it('fails loudly for a step mounted before beginRequestContext, and gives each request a context of its own after it', async () => {
    const early = express();
    early.get('/', (_req, res) => {
      try {
        requestContext(res);
        res.send('found');
      } catch (error) {
        res.send((error as Error).message);
      }
    });
    await request(early).get('/').expect(200, 'beginRequestContext() did not run before this step');

    const ids: string[] = [];
    const later = express();
    later.use(beginRequestContext);
    later.get('/', (_req, res) => {
      ids.push(requestContext(res).requestId);
      res.end();
    });
    await request(later).get('/').set('X-Request-Id', 'first');
    await request(later).get('/').set('X-Request-Id', 'second');
    expect(ids).toEqual(['first', 'second']);
  });
});
