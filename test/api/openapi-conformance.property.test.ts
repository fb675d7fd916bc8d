import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import request from 'supertest';
import { buildOpenApiDocument } from '../../src/openapi/document';
import { buildTestApp, type TestApp } from '../helpers/app';
import { ACME, TOKENS } from '../helpers/fixtures';
import { PROPERTY_TEST_TIMEOUT_MS, withinBudget } from '../helpers/property';

// Each test runs one long property (test/helpers/property.ts).
jest.setTimeout(PROPERTY_TEST_TIMEOUT_MS);

/**
 * The document and the service agree: bodies generated from the document's own request schemas, valid and
 * mutated, are refused with a 400 by the service exactly when the schema refuses them. The only 400s a
 * schema-valid body may get are the rules the operations' descriptions state in words, as JSON Schema cannot:
 * two dates compared, or a rule read on the stored booking or token.
 */
type Schema = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const document = buildOpenApiDocument('test') as Schema;
const components = document.components.schemas as Record<string, Schema>;
const ajv = new Ajv2020({ strict: false });
addFormats(ajv);
const validatorOf = (schema: Schema) => ajv.compile({ ...schema, components: { schemas: components } });

/** The rules the descriptions state in words: two dates compared, and Modify's margin rule on the stored booking. */
const DATES_COMPARED = [/^must not be before /, /^must not be after the token's expiry date/];
const MARGIN_RULE = /^must be at most 100 when margin_category is "%"$/;
const RULES_IN_WORDS: Record<string, RegExp[]> = { patch: [...DATES_COMPARED, MARGIN_RULE] };

const resolve = (schema: Schema): Schema => (schema.$ref ? components[String(schema.$ref).split('/').pop() as string] : schema);

/** The properties a body of this schema has, whichever branch of /v1/events' oneOf or allOf it takes. */
function bodySchemas(schema: Schema): Schema[] {
  const resolved = resolve(schema);
  if (resolved.oneOf) return resolved.oneOf.flatMap(bodySchemas);
  if (resolved.allOf) return bodySchemas(resolved.allOf[0]);
  return [resolved];
}

/** Values the schema allows, drawn from its own keywords. */
function valuesOf(schema: Schema): fc.Arbitrary<unknown> {
  if (schema.anyOf) return fc.oneof(...schema.anyOf.map(valuesOf));
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  if (schema.type === 'integer') return fc.integer({ min: schema.minimum, max: schema.maximum });
  // fast-check cannot generate from a lookahead (a positive amount's pattern starts with one): values from the
  // pattern without it, some of which the schema refuses, as the property allows.
  const pattern = (schema.pattern ?? schema.allOf?.[0]?.pattern)?.replace(/^\^\(\?=[^()]*\)/, '^');
  if (schema.type === 'string' && pattern && schema.maxLength === undefined) return fc.stringMatching(new RegExp(pattern));
  return fc.string({ minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 12, 12) });
}

/** Wrong values, near the rules' edges (zero amounts, impossible dates, NUL, the token_id limits), and wrong types. */
const wrongValues = fc.oneof(
  fc.constantFrom(
    '',
    '0',
    '0.00',
    '100',
    '100.00',
    '100.01',
    '99.99',
    '1.234',
    '-1',
    '31-02-2024',
    '29-02-2024',
    '29-02-1900',
    '29-02-2000',
    '00-00-0000',
    '01-01-0999',
  ),
  fc.constantFrom(
    'a\u0000b',
    '0123',
    '1'.repeat(32),
    '1'.repeat(33),
    'credited',
    'deleted',
    'modify',
    'token.loaded_created',
    'token.unloaded_created',
    '%',
    'fixed',
  ),
  fc.constantFrom(0, 1, -1, 1.5, 2 ** 53, Number.MAX_SAFE_INTEGER, null, true, [], {}),
  fc.string({ maxLength: 8 }),
);

/** A body from a schema: its required fields, some optional ones, each a value it allows. */
function validBodies(schema: Schema): fc.Arbitrary<Record<string, unknown>> {
  const properties = schema.properties as Record<string, Schema>;
  const required = new Set<string>(schema.required ?? []);
  const fields = Object.fromEntries(Object.entries(properties).map(([name, property]) => [name, valuesOf(property)]));
  return fc.record(fields, { requiredKeys: [...required] });
}

/** A body of the schema with one or two fields changed to a wrong value, taken out, or added under another name. */
function mutatedBodies(schema: Schema): fc.Arbitrary<Record<string, unknown>> {
  const names = [...Object.keys(schema.properties), 'status', 'token_stats', 'note'];
  const mutation = fc.record({ name: fc.constantFrom(...names), value: fc.option(wrongValues, { nil: undefined }) });
  return fc.tuple(validBodies(schema), fc.array(mutation, { minLength: 1, maxLength: 2 })).map(([body, mutations]) => {
    const mutated: Record<string, unknown> = { ...body };
    for (const { name, value } of mutations) {
      if (value === undefined) delete mutated[name];
      else mutated[name] = value;
    }
    return mutated;
  });
}

/** The account and token every body names most of the time, so bodies also get past the schema. */
function aimedAtTheFixture(body: Record<string, unknown>): Record<string, unknown> {
  const aimed: Record<string, unknown> = { ...body };
  if (typeof aimed.source_id === 'string') aimed.source_id = ACME.source_id;
  if (typeof aimed.share_public === 'string') aimed.share_public = ACME.share_public;
  if (typeof aimed.share_secret === 'string') aimed.share_secret = ACME.share_secret;
  if (typeof aimed.destination_id === 'string') aimed.destination_id = TOKENS.active.destination_id;
  return aimed;
}

const ADMIN_TOKEN = 'admin-test-token-0123456789';
/** Sent with every body: the partners' routes read no Authorization header, the admin routes need it. */
const ADMIN_BEARER = { Authorization: `Bearer ${ADMIN_TOKEN}` };

const operations = Object.entries(document.paths as Record<string, Record<string, Schema>>).flatMap(([template, methods]) =>
  Object.entries(methods)
    .filter(([, operation]) => operation.requestBody)
    .map(([method, operation]) => ({ method, template, schema: operation.requestBody.content['application/json'].schema as Schema })),
);

describe('the OpenAPI document and the service agree on every request body', () => {
  let t: TestApp;
  let key = 0;
  beforeAll(async () => {
    // The admin routes that take a body (webhooks out's replay) are checked too: with the token, as ops send it.
    t = await buildTestApp(undefined, { config: { adminToken: ADMIN_TOKEN } });
  });
  afterAll(async () => {
    await t.store.close();
  });

  it.each(operations.map((operation) => [`${operation.method.toUpperCase()} ${operation.template}`, operation]))(
    '%s',
    async (_name, { method, template, schema }) => {
      const validate = validatorOf(schema);
      const bodies = fc.oneof(...bodySchemas(schema).flatMap((body) => [validBodies(body), mutatedBodies(body)])).map(aimedAtTheFixture);
      await fc.assert(
        fc.asyncProperty(bodies, async (body) => {
          key += 1;
          const path = template
            .replace('{version}', 'v1')
            .replace('{partnerid}', ACME.source_id)
            .replace('{randomkey}', `conformance-${key}`);
          const response = await request(t.server)[method as 'post'](path).set(ADMIN_BEARER).send(body);
          const details: Array<{ message: string }> = response.body.errors?.details ?? [];
          // The margin rule is the schema's own where the body sets both of its fields (if/then); only against a stored
          // booking's is it a rule in words.
          const marginInBody = body.margin_category === '%' && body.transaction_margin !== undefined;
          const inWords = (RULES_IN_WORDS[method] ?? DATES_COMPARED).filter((rule) => !(marginInBody && rule === MARGIN_RULE));
          const ruleInWords =
            response.status === 400 && details.length > 0 && details.every(({ message }) => inWords.some((rule) => rule.test(message)));
          const refused = response.status === 400 && !ruleInWords;
          const schemaValid = validate(body);
          expect({ body, schema: schemaValid ? 'valid' : ajv.errorsText(validate.errors), refused, answer: response.text }).toEqual({
            body,
            schema: schemaValid ? 'valid' : expect.any(String),
            refused: !schemaValid,
            answer: response.text,
          });
        }),
        withinBudget(60),
      );
    },
  );
});

describe('the OpenAPI document and the service agree on the admin events query', () => {
  const ADMIN_TOKEN = 'admin-conformance-token';
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp(undefined, { config: { adminToken: ADMIN_TOKEN } });
  });
  afterAll(async () => {
    await t.store.close();
  });

  it('GET /admin/events: a 400 exactly when a parameter is outside its schema', async () => {
    const parameters = document.paths['/admin/events'].get.parameters as Array<{ name: string; schema: Schema }>;
    const validators = new Map(parameters.map(({ name, schema }) => [name, validatorOf(schema)]));
    const queryText = fc.oneof(
      fc.constantFrom('0', '1', '1000', '1001', '0100', '9999', '', 'a\u0000b', '1'.repeat(33), 'accepted', 'maybe'),
      fc.string({ maxLength: 6 }),
    );
    const queries = fc.record(
      Object.fromEntries(parameters.map(({ name, schema }) => [name, fc.oneof(valuesOf(schema).map(String), queryText)])),
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(queries, async (query) => {
        const response = await request(t.server).get('/admin/events').query(query).set('Authorization', `Bearer ${ADMIN_TOKEN}`);
        const schemaValid = Object.entries(query).every(([name, value]) => (validators.get(name) as ReturnType<typeof validatorOf>)(value));
        expect({ query, refused: response.status === 400, answer: response.status === 400 ? response.text : response.status }).toEqual({
          query,
          refused: !schemaValid,
          answer: schemaValid ? 200 : expect.any(String),
        });
      }),
      withinBudget(100),
    );
  });
});
