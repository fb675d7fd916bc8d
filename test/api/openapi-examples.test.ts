/**
 * The document says its request examples make "Try it out" work against the demo: each example, sent alone to a
 * fresh demo (the demo seed on a fresh memory store, today's clock, as `npm start` serves it), is accepted; and so
 * is every example sent in the document's order to one demo, as a reader trying them one after the other does.
 */
import request from 'supertest';
import { buildOpenApiDocument } from '../../src/openapi/document';
import { DEMO_SECRET_KEY } from '../../src/operations/demo-examples';
import { DEMO_SEED_FILE, readSeedFile } from '../../src/seed/file';
import { buildTestApp, storeKinds, type StoreKind, type TestApp } from '../helpers/app';

type Json = Record<string, unknown>;
interface Parameter {
  name: string;
  in: string;
  example?: string;
  examples?: Record<string, { value: string }>;
  schema: { enum?: string[] };
}
interface Operation {
  parameters?: Parameter[];
  requestBody?: { content: { 'application/json': { examples?: Record<string, { value: Json }> } } };
  security?: Array<Record<string, unknown>>;
}
interface Example {
  name: string;
  method: 'get' | 'post' | 'patch' | 'delete';
  path: string;
  body?: Json;
  /** The account's secret as a bearer token (the feed): the demo account's, which its examples name. */
  bearer?: string;
}

/** A path with its parameters' examples (an example's own where they differ by example) and its query's. */
function filledPath(template: string, { parameters = [] }: Operation, name: string): string {
  const path = parameters
    .filter((parameter) => parameter.in === 'path')
    .reduce((filled, { name: parameter, examples, example, schema }) => {
      const value = examples?.[name]?.value ?? example ?? schema.enum?.[0];
      return filled.replace(`{${parameter}}`, String(value));
    }, template);
  const query = new URLSearchParams(
    parameters
      .filter((parameter) => parameter.in === 'query' && parameter.example !== undefined)
      .map(({ name: key, example }): [string, string] => [key, String(example)]),
  );
  return query.size === 0 ? path : `${path}?${query}`;
}

/** Every request example of the document, in its order: each body example, and the bodiless feed's query example. */
function documentExamples(): Example[] {
  const document = buildOpenApiDocument('test') as { paths: Record<string, Record<string, Operation>> };
  return Object.entries(document.paths).flatMap(([template, methods]) =>
    Object.entries(methods).flatMap(([method, operation]): Example[] => {
      const named = (name: string) => ({ name: `${method.toUpperCase()} ${template} ${name}`, method: method as Example['method'] });
      if (operation.security?.some((scheme) => 'accountBearer' in scheme)) {
        return [{ ...named('query'), path: filledPath(template, operation, 'query'), bearer: DEMO_SECRET_KEY }];
      }
      return Object.entries(operation.requestBody?.content['application/json'].examples ?? {}).map(([name, { value }]) => ({
        ...named(name),
        path: filledPath(template, operation, name),
        body: value,
      }));
    }),
  );
}

/** What `npm start` serves with no settings but the store: the demo seed, at today's date. */
async function freshDemo(kind: StoreKind): Promise<TestApp> {
  const store = await kind.create();
  await store.loadSeed(readSeedFile(DEMO_SEED_FILE));
  return buildTestApp(kind, { store, now: () => new Date() });
}

async function send(demo: TestApp, { name, method, path, body, bearer }: Example) {
  const sent = request(demo.server)[method](path);
  const answer = await (bearer === undefined ? sent : sent.set('Authorization', `Bearer ${bearer}`)).send(body);
  return { name, status: answer.status, answer: answer.status === 200 ? 'accepted' : answer.text };
}

const accepted = ({ name }: Example) => ({ name, status: 200, answer: 'accepted' });

describe.each(storeKinds().map((kind) => [kind.name, kind] as const))(
  'the OpenAPI request examples, against the demo on the %s store',
  (_name, kind) => {
    const examples = documentExamples();

    it('has examples to send', () => {
      expect(examples.length).toBeGreaterThan(20);
    });

    it('accepts each example sent alone to a fresh demo', async () => {
      const answers = [];
      for (const example of examples) {
        const demo = await freshDemo(kind);
        answers.push(await send(demo, example));
        await demo.store.close();
      }
      expect(answers).toEqual(examples.map(accepted));
    });

    it("accepts every example sent in the document's order to one demo", async () => {
      const demo = await freshDemo(kind);
      const answers = [];
      for (const example of examples) answers.push(await send(demo, example));
      await demo.store.close();
      expect(answers).toEqual(examples.map(accepted));
    });
  },
);
