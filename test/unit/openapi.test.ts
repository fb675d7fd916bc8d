import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { OPENAPI_FILE, renderOpenApiDocument } from '../../src/cli/openapi';
import { buildOpenApiDocument } from '../../src/openapi/document';
import { SERVICE_VERSION } from '../../src/process/version';
import { buildTestApp } from '../helpers/app';
import type { CapturedResponse } from '../helpers/capture';
import { openApiProblems, schemaProblem } from '../helpers/openapi-check';

const document = buildOpenApiDocument(SERVICE_VERSION) as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** An example value, the schema it illustrates, and where it is (a JSON pointer, as linters report it). */
interface Example {
  location: string;
  schema: Json;
  value: unknown;
}

/** Maps whose keys are names, not keywords: a property named "example" is not an example. */
const NAMED_SCHEMAS = new Set(['properties', 'patternProperties', '$defs', 'dependentSchemas']);

/**
 * Every example in a document, with the schema it illustrates. A media type, parameter or header illustrates its
 * `schema`: `example`, or `examples` as named Example objects. A schema illustrates itself: `examples` as a list,
 * or the older `example`. Example values are data, not document, so they are not searched further.
 */
function examplesIn(node: unknown, location = '#'): Example[] {
  if (Array.isArray(node)) return node.flatMap((item, index) => examplesIn(item, `${location}/${index}`));
  if (!isObject(node)) return [];
  const schema = isObject(node.schema) ? node.schema : node;
  const found: Example[] = [];
  if ('example' in node) found.push({ location: `${location}/example`, schema, value: node.example });
  if (Array.isArray(node.examples))
    found.push(...node.examples.map((value, index) => ({ location: `${location}/examples/${index}`, schema, value })));
  else if (isObject(node.examples)) {
    for (const [name, example] of Object.entries(node.examples))
      found.push({ location: `${location}/examples/${name}`, schema, value: isObject(example) ? example.value : undefined });
  }
  for (const [key, child] of Object.entries(node)) {
    const childLocation = `${location}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    if (key === 'example' || key === 'examples') continue;
    if (NAMED_SCHEMAS.has(key) && isObject(child))
      found.push(...Object.entries(child).flatMap(([name, schema]) => examplesIn(schema, `${childLocation}/${name}`)));
    else found.push(...examplesIn(child, childLocation));
  }
  return found;
}

/** What is wrong with each example, by the validator the response check uses. */
function exampleProblems(examples: Example[]): string[] {
  return examples.flatMap(({ location, schema, value }) => {
    // Only inline values are checked: an externalValue or a $ref to an Example object would slip through.
    const problem = value === undefined ? 'has no inline value to check' : schemaProblem(schema, value);
    return problem ? [`${location}: ${problem}`] : [];
  });
}

describe('the OpenAPI document', () => {
  it('is valid OpenAPI 3.1 (the committed file, which the next test keeps equal to the generated one)', () => {
    const output = execFileSync(process.execPath, [path.resolve(__dirname, '..', '..', 'scripts', 'validate-openapi.mjs')], {
      encoding: 'utf8',
    });
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

  it('has only examples that its own schemas accept, wherever they are', () => {
    const examples = examplesIn(document);
    // Each kind of place an example can be: a response, a named request example, a parameter, a schema's own list.
    expect(examples.map((example) => example.location)).toEqual(
      expect.arrayContaining([
        '#/paths/~1{version}~1booking~1{partnerid}~1{randomkey}/patch/responses/200/content/application~1json/example',
        '#/paths/~1v1~1tokens~1withdraw/post/requestBody/content/application~1json/examples/withdrawal',
        '#/paths/~1{version}~1booking~1{partnerid}~1{randomkey}/patch/parameters/2/example',
        '#/components/schemas/WithdrawRequest/properties/transaction_id/examples/0',
      ]),
    );
    expect(exampleProblems(examples)).toEqual([]);
  });

  it('states what a partner needs that no schema says: where the demo serves, how long a {randomkey} is kept, the rate limits', () => {
    const { servers, info, paths } = document as unknown as {
      servers: Array<{ url: string; variables: Record<string, { default: string }> }>;
      info: { description: string };
      paths: Record<string, Record<string, { parameters?: Array<{ name: string; description: string }> }>>;
    };
    const randomkeys = Object.values(paths)
      .flatMap((methods) => Object.values(methods))
      .flatMap(({ parameters = [] }) => parameters.filter(({ name }) => name === 'randomkey'));
    expect({
      server: servers[0].url.replace(/\{(\w+)\}/g, (_, name: string) => servers[0].variables[name].default),
      rateLimits: info.description.match(/RATE_LIMIT_PER_MINUTE requests a minute \(\d+ unless/)?.[0],
      addressLimit: info.description.match(/RATE_LIMIT_PER_ADDRESS_PER_MINUTE a minute \(\d+ by default\)/)?.[0],
      keysKept: info.description.match(/A key is kept 24 hours/)?.[0],
      everyRandomkeySaysHowLong: randomkeys.length > 0 && randomkeys.every(({ description }) => description.includes('Kept 24 hours')),
    }).toEqual({
      server: 'http://localhost:3000',
      rateLimits: 'RATE_LIMIT_PER_MINUTE requests a minute (6000 unless',
      addressLimit: 'RATE_LIMIT_PER_ADDRESS_PER_MINUTE a minute (600 by default)',
      keysKept: 'A key is kept 24 hours',
      everyRandomkeySaysHowLong: true,
    });
  });

  it('covers every route of the contract with the statuses each can answer', () => {
    const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    );
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
    expect(Object.keys(document.paths['/v1/tokens/withdraw'].post.responses)).toEqual([
      '200',
      '400',
      '401',
      '403',
      '405',
      '409',
      '413',
      '415',
      '422',
      '428',
      '429',
      '500',
      '503',
      '504',
    ]);
    expect(Object.keys(document.paths['/{version}/booking/{partnerid}/{randomkey}'].patch.responses)).toEqual([
      '200',
      '400',
      '401',
      '403',
      '404',
      '405',
      '409',
      '413',
      '415',
      '422',
      '429',
      '500',
      '503',
      '504',
    ]);
  });
});

describe('the example check finds what is wrong', () => {
  it.each([
    [
      'a response example its schema refuses',
      { schema: { $ref: '#/components/schemas/Success' }, example: { success: 'true', message: 'Success' } },
      '#/example: data/success must be boolean',
    ],
    [
      'a named example its schema refuses',
      { schema: { $ref: '#/components/schemas/Health' }, examples: { down: { value: { status: 'down' } } } },
      '#/examples/down: data/status must be equal to constant',
    ],
    [
      'a named example that only points elsewhere',
      { schema: { type: 'string' }, examples: { elsewhere: { externalValue: 'https://example.org/a.json' } } },
      '#/examples/elsewhere: has no inline value',
    ],
    [
      'a schema example its schema refuses',
      { type: 'string', pattern: '^\\d+$', examples: ['12', 'twelve'] },
      '#/examples/1: data must match pattern',
    ],
  ])('flags %s', (_what, node, problem) => {
    expect(exampleProblems(examplesIn(node)).join('\n')).toContain(problem);
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

  it('leaves the documentation page and its files out, but not their errors', () => {
    const script = {
      ...ok,
      method: 'GET',
      path: '/docs/init.js',
      headers: { 'content-type': 'application/javascript' },
      body: 'window.ui = 1;',
    };
    expect(openApiProblems(script)).toEqual([]);
    expect(openApiProblems({ ...script, status: 404, body: '{"error":"Not Found"}' }).join('\n')).toContain(
      'body is not the error envelope',
    );
  });

  it.each([
    ['an undocumented status', { status: 418 }, 'status not in the document'],
    ['a body that is not the documented one', { body: '{"success":"true","message":"Success"}' }, 'must be equal to constant'],
    ['an extra field in the body', { body: '{"success":true,"message":"Success","balance":"9"}' }, 'must NOT have additional properties'],
    ['another content type', { headers: { ...ok.headers, 'content-type': 'text/html' } }, 'content type text/html'],
    [
      'a missing required header',
      {
        status: 405,
        headers: { 'content-type': 'application/json' },
        body: '{"success":"false","errors":{"code":"405","message":"Method Not Allowed"}}',
      },
      'header Allow missing',
    ],
    [
      'a header the document does not declare',
      { method: 'GET', path: '/healthz', headers: { ...ok.headers, 'idempotent-replayed': 'true' }, body: '{"status":"ok"}' },
      'header idempotent-replayed not in the document',
    ],
    ['an unknown path answering 200', { path: '/v9/else' }, 'no operation in the document'],
  ])('flags %s', (_what, change, problem) => {
    expect(openApiProblems({ ...ok, ...change }).join('\n')).toContain(problem);
  });
});
