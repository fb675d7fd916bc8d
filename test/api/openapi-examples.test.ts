/**
 * The document says its request examples make "Try it out" work against the demo: each example, sent alone to a
 * fresh demo (the demo seed on a fresh memory store, today's clock, as `npm start` serves it), is accepted; and so
 * is every example sent in the document's order to one demo, as a reader trying them one after the other does.
 */
import request from 'supertest';
import { buildOpenApiDocument } from '../../src/openapi/document';
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
}
interface Example {
  name: string;
  method: 'get' | 'post' | 'patch' | 'delete';
  path: string;
  body: Json;
}

/** Every request example of the document, in its order, with the path its parameters' examples give. */
function documentExamples(): Example[] {
  const document = buildOpenApiDocument('test') as { paths: Record<string, Record<string, Operation>> };
  return Object.entries(document.paths).flatMap(([template, methods]) =>
    Object.entries(methods).flatMap(([method, operation]) =>
      Object.entries(operation.requestBody?.content['application/json'].examples ?? {}).map(([name, { value }]) => {
        const path = (operation.parameters ?? [])
          .filter((parameter) => parameter.in === 'path')
          .reduce((filled, { name: parameter, examples, example, schema }) => {
            const value = examples?.[name]?.value ?? example ?? schema.enum?.[0];
            return filled.replace(`{${parameter}}`, String(value));
          }, template);
        return { name: `${method.toUpperCase()} ${template} ${name}`, method: method as Example['method'], path, body: value };
      }),
    ),
  );
}

/** What `npm start` serves with no settings but the store: the demo seed, at today's date. */
async function freshDemo(kind: StoreKind): Promise<TestApp> {
  const store = await kind.create();
  await store.loadSeed(readSeedFile(DEMO_SEED_FILE));
  return buildTestApp(kind, { store, now: () => new Date() });
}

async function send(demo: TestApp, { name, method, path, body }: Example) {
  const answer = await request(demo.server)[method](path).send(body);
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
