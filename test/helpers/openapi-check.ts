import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { ValidateFunction } from 'ajv';
import { buildOpenApiDocument } from '../../src/openapi/document';
import type { CapturedResponse } from './capture';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const document = buildOpenApiDocument('test') as Json;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
const compiled = new Map<string, ValidateFunction>();

/**
 * The validator of one schema of the document. The document's component schemas ride along under the path the
 * document has them at, so a `#/components/schemas/...` reference anywhere in the schema resolves as in the document.
 */
function validatorFor(schema: Json): ValidateFunction {
  const key = JSON.stringify(schema);
  let validate = compiled.get(key);
  if (!validate) {
    validate = ajv.compile({ ...schema, components: { schemas: document.components.schemas } });
    compiled.set(key, validate);
  }
  return validate;
}

/** What is wrong with a value according to a schema of the document, or undefined when it is valid. */
export function schemaProblem(schema: Json, value: unknown): string | undefined {
  const validate = validatorFor(schema);
  return validate(value) ? undefined : ajv.errorsText(validate.errors);
}

const paths = Object.keys(document.paths).map((template) => ({
  template,
  // Express routes match in any case, as the receiver's router does.
  pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`, 'i'),
}));

/** The documentation page and its scripts and styles: served for browsers, not API operations, so not in the document. */
const BROWSER_PAGE = /^\/docs(\/|$)/i;

function resolveHeader(header: Json): Json {
  return typeof header.$ref === 'string' ? document.components.headers[header.$ref.split('/').pop() as string] : header;
}

/** What is wrong with one response according to the document, or nothing. */
export function openApiProblems(response: CapturedResponse): string[] {
  const where = `${response.method} ${response.path} -> ${response.status}`;
  const template = paths.find((candidate) => candidate.pattern.test(response.path))?.template;
  const operation = template ? document.paths[template][response.method.toLowerCase()] : undefined;
  // Unknown paths and other methods on a known path are not operations: they answer the envelope.
  const declared = operation?.responses?.[String(response.status)];
  if (!operation) {
    if (BROWSER_PAGE.test(response.path) && response.status === 200) return [];
    if (![404, 405, 400].includes(response.status)) return [`${where}: no operation in the document`];
    return schemaProblem({ $ref: '#/components/schemas/ErrorEnvelope' }, JSON.parse(response.body)) === undefined
      ? []
      : [`${where}: body is not the error envelope`];
  }
  if (!declared) return [`${where}: status not in the document`];
  const problems: string[] = [];
  const headers = (declared.headers ?? {}) as Record<string, Json>;
  for (const [name, header] of Object.entries(headers)) {
    if (resolveHeader(header).required && response.headers[name.toLowerCase()] === undefined)
      problems.push(`${where}: header ${name} missing`);
  }
  for (const name of ['idempotent-replayed', 'allow', 'retry-after', 'www-authenticate']) {
    if (response.headers[name] !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === name)) {
      problems.push(`${where}: header ${name} not in the document`);
    }
  }
  const [mediaType, media] = Object.entries((declared.content ?? {}) as Record<string, Json>)[0] ?? [];
  const contentType = String(response.headers['content-type'] ?? '');
  if (mediaType && mediaType !== '*/*' && !contentType.startsWith(mediaType))
    problems.push(`${where}: content type ${contentType}, documented ${mediaType}`);
  if (mediaType === 'application/json') {
    const problem = schemaProblem(media.schema, JSON.parse(response.body));
    if (problem) problems.push(`${where}: ${problem} in ${response.body.slice(0, 200)}`);
  }
  return problems;
}
