/**
 * What partners' client generators make of docs/openapi.json: openapi-typescript (types) and @hey-api/openapi-ts (an
 * SDK) generate from it into a temporary directory, and tsc checks a file of calls against both. Every request
 * example of the document compiles; every wrong call (a field of the wrong JSON type, an unknown field, a required
 * field left out, the wrong event) is a type error, marked `@ts-expect-error` so that tsc fails when one compiles;
 * and no request body may be typed `unknown` (or `any`), which would let every wrong call through.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '..', '..');
const DOCUMENT = path.join(ROOT, 'docs', 'openapi.json');
/** The tools run on this process's Node (the project's), whatever the shell's PATH finds first. */
const tool = (name: string, args: string[], cwd: string) =>
  run(process.execPath, [path.join(ROOT, 'node_modules', '.bin', name), ...args], { cwd, maxBuffer: 16 * 1024 * 1024 });

type Json = Record<string, unknown>;
interface Operation {
  operationId: string;
  requestBody?: { content: { 'application/json': { schema: Json; examples?: Record<string, { value: Json }> } } };
}

/** hey-api's name of an operation's types: `modifyBooking` -> `ModifyBookingData`. */
const heyApiData = (operationId: string) => `${operationId[0].toUpperCase()}${operationId.slice(1)}Data`;

/** A body type of each generator, by the operation's path and method. */
function bodyTypes(template: string, method: string, operationId: string): Array<[string, string]> {
  return [
    ['openapi-typescript', `NonNullable<paths[${JSON.stringify(template)}]['${method}']['requestBody']>['content']['application/json']`],
    ['hey-api', `heyApi.${heyApiData(operationId)}['body']`],
  ];
}

/** The required fields of a body schema, or of the oneOf branch whose event the example names. */
function requiredFields(schemas: Record<string, Json>, schema: Json, example: Json): string[] {
  const resolve = (candidate: Json): Json => (candidate.$ref ? schemas[String(candidate.$ref).split('/').pop() as string] : candidate);
  const resolved = resolve(schema);
  const branches = (resolved.oneOf as Json[] | undefined)?.map((branch) => resolve(branch.allOf ? (branch.allOf as Json[])[0] : branch));
  if (!branches) return (resolved.required as string[]) ?? [];
  const names = (branch: Json) => (branch.properties ?? {}) as Record<string, Json>;
  const own = branches.find((branch) =>
    ['read_event', 'token_event'].some((event) => {
      const property = names(branch)[event];
      const values = (property?.enum as unknown[]) ?? (property?.const !== undefined ? [property.const] : []);
      return values.includes(example[event]);
    }),
  );
  return (own?.required as string[]) ?? [];
}

/** Right and wrong bodies from each request example of the document, against each generator's type of that body. */
function callsFromTheDocument(document: Json): string[] {
  const schemas = (document.components as { schemas: Record<string, Json> }).schemas;
  const lines: string[] = [];
  let n = 0;
  for (const [template, methods] of Object.entries(document.paths as Record<string, Record<string, Operation>>)) {
    for (const [method, operation] of Object.entries(methods)) {
      const content = operation.requestBody?.content['application/json'];
      if (!content) continue;
      for (const [generator, type] of bodyTypes(template, method, operation.operationId)) {
        const where = `${operation.operationId} (${generator})`;
        lines.push(`typedBody<${type}>(); // ${where}: not unknown`);
        for (const [name, { value: example }] of Object.entries(content.examples ?? {})) {
          const wrongs: Array<[string, Json]> = [[`an unknown field`, { ...example, not_a_field_of_it: 'x' }]];
          for (const [field, value] of Object.entries(example)) {
            if (typeof value === 'string') wrongs.push([`${field} as a boolean`, { ...example, [field]: true }]);
          }
          for (const field of requiredFields(schemas, content.schema, example)) {
            const { [field]: _left, ...without } = example;
            wrongs.push([`without ${field}`, without]);
          }
          lines.push(`const right${(n += 1)}: ${type} = ${JSON.stringify(example)}; // ${where}: example ${name}`);
          for (const [wrong, body] of wrongs) {
            lines.push(`// @ts-expect-error ${where}: example ${name}, ${wrong}`);
            lines.push(`const wrong${(n += 1)}: ${type} = ${JSON.stringify(body)};`);
          }
        }
      }
    }
  }
  return lines;
}

/** Calls through hey-api's SDK, as a partner writes them: Modify Booking and Modify Token, right and wrong. */
const SDK_CALLS = `
const bookingPath = { version: 'v1', partnerid: 'PDR28', randomkey: 'client-check-01' } as const;
const booking = { share_secret: 'sk', booking_event: 'modify', source_id: 'PDR28', booking_id: '1396' } as const;
export const sdkCalls = [
  sdk.modifyBooking({ path: bookingPath, body: { ...booking, guests_count: '3' } }),
  sdk.modifyBooking({ path: bookingPath, body: { ...booking, check_out: '18-02-2024', margin_category: 'fixed' } }),
  // @ts-expect-error guests_count is a string, as every booking field
  sdk.modifyBooking({ path: bookingPath, body: { ...booking, guests_count: 4 } }),
  // @ts-expect-error a misspelt field
  sdk.modifyBooking({ path: bookingPath, body: { ...booking, guest_count: '4' } }),
  // @ts-expect-error margin_category is % or fixed
  sdk.modifyBooking({ path: bookingPath, body: { ...booking, margin_category: 'percent' } }),
  // @ts-expect-error booking_event is modify
  sdk.modifyBooking({ path: bookingPath, body: { ...booking, booking_event: 'new', guests_count: '3' } }),
  // @ts-expect-error booking_id is required
  sdk.modifyBooking({ path: bookingPath, body: { share_secret: 'sk', booking_event: 'modify', source_id: 'PDR28', guests_count: '3' } }),
  // @ts-expect-error a field sent as null
  sdk.modifyBooking({ path: bookingPath, body: { ...booking, pre_auth: null } }),
  sdk.modifyToken({
    path: { version: 'v1', partnerid: 'PDR28', randomkey: 'client-check-02' },
    body: { share_secret: 'sk', token_event: 'modify', source_id: 'PDR28', destination_id: 'ID001', token_id: 1010, token_name: 'Card' },
  }),
  // @ts-expect-error token_name is a string, and the body's identity is required
  sdk.modifyToken({ path: { version: 'v1', partnerid: 'PDR28', randomkey: 'client-check-03' }, body: { token_name: 7 } }),
  // @ts-expect-error token_status is active or freezed
  sdk.modifyToken({ path: { version: 'v1', partnerid: 'PDR28', randomkey: 'client-check-04' }, body: { share_secret: 'sk', token_event: 'modify', source_id: 'PDR28', destination_id: 'ID001', token_id: '1010', token_status: 'deleted' } }),
];
`;

const TSCONFIG = {
  compilerOptions: {
    strict: true,
    noEmit: true,
    target: 'ES2022',
    module: 'preserve',
    moduleResolution: 'bundler',
    lib: ['ES2022', 'DOM'],
    types: [],
    skipLibCheck: true,
  },
  files: ['calls.ts'],
};

describe('the clients partners generate from docs/openapi.json', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'openapi-clients-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('type every request body strictly with openapi-typescript and hey-api: each example compiles, each wrong call does not', async () => {
    const document = JSON.parse(await readFile(DOCUMENT, 'utf8')) as Json;
    await tool('openapi-typescript', [DOCUMENT, '--output', path.join(dir, 'openapi-typescript', 'schema.d.ts')], dir);
    await tool('openapi-ts', ['--input', DOCUMENT, '--output', path.join(dir, 'hey-api')], dir);
    const calls = [
      "import type { paths } from './openapi-typescript/schema';",
      "import type * as heyApi from './hey-api/types.gen';",
      "import * as sdk from './hey-api/sdk.gen';",
      '/** Refuses a type that accepts anything: `unknown extends T` holds only for unknown and any. */',
      'declare function typedBody<T>(...notUnknown: unknown extends T ? [never] : []): void;',
      ...callsFromTheDocument(document),
      SDK_CALLS,
    ].join('\n');
    await writeFile(path.join(dir, 'calls.ts'), calls);
    await writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG));
    const lines = calls.split('\n');
    const checked = await tool('tsc', ['--project', dir], dir).then(
      () => ['no type errors'],
      // Each error with the line it is about: for an unused @ts-expect-error, the call it expected to be wrong.
      (error: { stdout?: string }) =>
        (error.stdout ?? String(error))
          .split('\n')
          .filter(Boolean)
          .map((line) => line.replace(/^calls\.ts\((\d+),\d+\)/, (_, at: string) => lines[Number(at) - 1].trim())),
    );
    expect(checked).toEqual(['no type errors']);
  });
});
