import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { OPENAPI_FILE, renderOpenApiDocument } from '../../src/cli/openapi';
import { buildOpenApiDocument } from '../../src/openapi';
import { SERVICE_VERSION } from '../../src/version';
import { buildTestApp } from '../helpers/app';
import type { CapturedResponse } from '../helpers/capture';
import { openApiProblems } from '../helpers/openapi-check';

const document = buildOpenApiDocument(SERVICE_VERSION) as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };

describe('the OpenAPI document', () => {
  it('is valid OpenAPI 3.1 (the committed file, which the next test keeps equal to the generated one)', () => {
    const output = execFileSync(process.execPath, [path.resolve(__dirname, '..', '..', 'scripts', 'validate-openapi.mjs')], { encoding: 'utf8' });
    expect(output).toBe('docs/openapi.json is valid OpenAPI 3.1\n');
  });

  it('is committed as generated: run `npm run openapi` after changing a schema or route', () => {
    expect(readFileSync(OPENAPI_FILE, 'utf8')).toBe(renderOpenApiDocument());
  });

  it('is served at GET /openapi.json', async () => {
    const t = await buildTestApp();
    const response = await request(t.server).get('/openapi.json');
    expect(response.status).toBe(200);
    expect(response.body).toEqual(JSON.parse(JSON.stringify(document)));
  });

  it('covers every route of the contract with the statuses each can answer', () => {
    const operations = Object.entries(document.paths).flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`));
    expect(operations).toEqual(
      expect.arrayContaining([
        'POST /v1/tokens/status-change',
        'POST /v1/tokens/withdraw',
        'GET /v1/tokens/withdraw',
        'POST /v1/events',
        'PATCH /{version}/booking/{partnerid}/{randomkey}',
        'GET /healthz',
        'GET /readyz',
      ]),
    );
    expect(Object.keys(document.paths['/v1/tokens/withdraw'].post.responses)).toEqual(
      ['200', '400', '401', '405', '409', '413', '415', '422', '428', '429', '500', '503', '504'],
    );
    expect(Object.keys(document.paths['/{version}/booking/{partnerid}/{randomkey}'].patch.responses)).toEqual(
      ['200', '400', '401', '403', '404', '405', '409', '413', '415', '422', '429', '500', '503', '504'],
    );
  });
});

describe('the response check against the document finds what is wrong', () => {
  const ok: CapturedResponse = {
    method: 'POST',
    path: '/v1/tokens/withdraw',
    status: 200,
    headers: { 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'r1' },
    body: '{"success":true,"message":"Success"}',
  };

  it('accepts a documented answer', () => {
    expect(openApiProblems(ok)).toEqual([]);
  });

  it.each([
    ['an undocumented status', { status: 418 }, 'status not in the document'],
    ['a body that is not the documented one', { body: '{"success":"true","message":"Success"}' }, 'must be equal to constant'],
    ['an extra field in the body', { body: '{"success":true,"message":"Success","balance":"9"}' }, 'must NOT have additional properties'],
    ['another content type', { headers: { ...ok.headers, 'content-type': 'text/html' } }, 'content type text/html'],
    ['a missing required header', { status: 405, headers: { 'content-type': 'application/json' }, body: '{"success":"false","errors":{"code":"405","message":"Method Not Allowed"}}' }, 'header Allow missing'],
    ['a header the document does not declare', { method: 'GET', path: '/healthz', headers: { ...ok.headers, 'idempotent-replayed': 'true' }, body: '{"status":"ok"}' }, 'header idempotent-replayed not in the document'],
    ['an unknown path answering 200', { path: '/v9/else' }, 'no operation in the document'],
  ])('flags %s', (_what, change, problem) => {
    expect(openApiProblems({ ...ok, ...change }).join('\n')).toContain(problem);
  });
});
